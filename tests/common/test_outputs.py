"""How outputs are written (dualflow/atomic_write.py): devices, FIFOs, standard output and links
written through or followed, never replaced; modes kept; no temporary file after an error or a
signal; output folders replaced as a unit; bad output paths refused before any work."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from paths import REPO

from dualflow.cli import main
from dualflow.common.atomic_write import atomic_folder, atomic_write
from dualflow.common.errors import DualflowError

SAMPLE = REPO / "dualflow" / "kernels" / "samples" / "vadd.reg.s"


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---- item 1: what the path names ----------------------------------------------------------

def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, [b"one ", "two"])
    reader.join(timeout=120)
    assert got == [b"one two"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_character_device_is_written_through():
    before = os.stat("/dev/null")
    atomic_write("/dev/null", "nothing to see")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_dev) == (before.st_ino, before.st_dev)


def test_symlink_is_followed_and_its_target_replaced(tmp_path):
    target = tmp_path / "data" / "real.txt"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    assert leftovers(tmp_path) == [] and leftovers(target.parent) == []


def test_symlink_to_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    link = tmp_path / "l"
    link.symlink_to(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(link, b"x")
    reader.join(timeout=120)
    assert got == [b"x"] and link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dash_is_standard_output(capsys):
    print("before")
    atomic_write("-", ["a", b"b\n"])
    assert capsys.readouterr().out == "before\nab\n"


def test_cli_dash_writes_the_binary_to_standard_output(capfdbinary):
    assert main(["asm", str(SAMPLE), "-o", "-"]) == 0
    out = capfdbinary.readouterr().out
    assert b"wrote" not in out and len(out) > 100


def test_path_that_is_standard_output_is_not_replaced(tmp_path):
    # `--json /dev/stdout` with standard output redirected to a file: the file gets the output in
    # order and is not replaced (as root this used to replace the /dev/stdout link)
    out = tmp_path / "out.txt"
    code = ("from dualflow.common.atomic_write import atomic_write; print('first', flush=True); "
            "atomic_write('/dev/stdout', 'second\\n')")
    with open(out, "w") as sink:
        subprocess.run([sys.executable, "-c", code], stdout=sink, check=True)
    assert out.read_text() == "first\nsecond\n"
    assert os.path.islink("/dev/stdout")


def _under_a_file(path: Path) -> Path:
    path.parent.joinpath("file").write_text("x")
    return path.parent / "file" / "out"


@pytest.mark.parametrize("make, message", [
    (lambda p: p.mkdir() or p, "is a folder"),
    (_under_a_file, "is not a folder"),
])
def test_refused_paths_leave_nothing(tmp_path, make, message):
    path = make(tmp_path / "out")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(DualflowError, match=message):
        atomic_write(path, "x")
    assert sorted(os.listdir(tmp_path)) == before


# ---- item 2: modes ------------------------------------------------------------------------

def test_overwriting_keeps_the_old_files_mode(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write(path, "new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_text() == "new"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_umasks_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "new.txt", "x")
        with atomic_folder(tmp_path / "dir", "m") as tmp:
            atomic_write(tmp / "m", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "dir").stat().st_mode) == 0o777 & ~umask


# ---- item 3: signals ----------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from dualflow.common.atomic_write import {call}

    def slow():
        for i in range(10000):
            if i == 3:
                print("writing", flush=True)
            yield f"line {{i}}\\n"
            time.sleep(0.01)
    {body}
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("call, body", [
    ("atomic_write", "atomic_write(sys.argv[1] + '/out.txt', slow())"),
    ("atomic_folder", "with atomic_folder(sys.argv[1] + '/dir', 'm') as d:\n"
                      "        (d / 'm').write_text('new')\n"
                      "        for _ in slow(): pass"),
], ids=["file", "folder"])
def test_signal_during_a_write_leaves_no_temporary(tmp_path, sig, call, body):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "m").write_text("old")
    proc = subprocess.Popen([sys.executable, "-c", WRITER.format(call=call, body=body), str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "writing\n"
    proc.send_signal(sig)
    _, err = proc.communicate()
    if sig == signal.SIGINT:
        assert proc.returncode in (-sig, 128 + sig) and "KeyboardInterrupt" in err  # Python's own way
    else:
        assert proc.returncode in (128 + sig, -sig), err
    assert sorted(os.listdir(tmp_path)) == ["dir"]
    assert sorted(os.listdir(tmp_path / "dir")) == ["m"] and (tmp_path / "dir" / "m").read_text() == "old"


def test_signal_handlers_are_restored(tmp_path):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    atomic_write(tmp_path / "x", "x")
    with atomic_folder(tmp_path / "d", "m"):
        pass
    assert {s: signal.getsignal(s) for s in before} == before


# ---- item 4: folders ----------------------------------------------------------------------

def test_folder_interrupted_midway_keeps_the_old_content(tmp_path):
    folder = tmp_path / "res"
    folder.mkdir()
    (folder / "m").write_text("old")
    (folder / "plot.png").write_text("old plot")
    with pytest.raises(RuntimeError), atomic_folder(folder, "m") as tmp:
        atomic_write(tmp / "m", "new")
        raise RuntimeError("injected")
    assert sorted(os.listdir(tmp_path)) == ["res"]
    assert (folder / "m").read_text() == "old" and (folder / "plot.png").read_text() == "old plot"


def test_folder_success_replaces_the_whole_content(tmp_path):
    folder = tmp_path / "res"
    folder.mkdir(mode=0o750)
    folder.chmod(0o750)
    (folder / "m").write_text("old")
    (folder / "stale.png").write_text("from the previous run")
    with atomic_folder(folder, "m") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".res.")
        atomic_write(tmp / "m", "new")
        (tmp / "sub").mkdir()
    assert sorted(os.listdir(folder)) == ["m", "sub"] and (folder / "m").read_text() == "new"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750
    assert sorted(os.listdir(tmp_path)) == ["res"]


def test_folder_with_other_files_is_not_replaced(tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    with pytest.raises(DualflowError, match="no m"), atomic_folder(tmp_path, "m"):
        pass
    assert sorted(os.listdir(tmp_path)) == ["mine.txt"]


def test_overhead_interrupted_leaves_the_old_folder(tmp_path, capsys, monkeypatch):
    from dualflow.kernels import overhead

    out = tmp_path / "ov"
    assert main(["overhead", "vadd", "--size", "tiny", "-o", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "overhead.json" in first and "distance_cdf.png" in first
    (out / "stale.csv").write_text("from an older run")

    def broken_plot(*args):
        raise RuntimeError("injected")

    monkeypatch.setattr(overhead, "plot_cdf", broken_plot)
    with pytest.raises(RuntimeError):
        main(["overhead", "vadd", "--size", "tiny", "--dmax", "16", "-o", str(out)])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {**first, "stale.csv": b"from an older run"}
    assert sorted(os.listdir(tmp_path)) == ["ov"]
    monkeypatch.undo()
    assert main(["overhead", "vadd", "--size", "tiny", "--dmax", "16", "-o", str(out)]) == 0
    assert sorted(os.listdir(out)) == sorted(first)  # the stale file is gone
    assert json.loads((out / "overhead.json").read_text())["config"]["dmax"] == 16


def test_reproduce_interrupted_leaves_the_old_folder(tmp_path, capsys, monkeypatch):
    from dualflow.experiments import reproduce

    out = tmp_path / "res"
    out.mkdir()
    (out / "meta.json").write_text("{}")
    (out / "figure9_10.png").write_text("old")
    calls = []

    def job(j):
        calls.append(j)
        if len(calls) == 2:
            raise RuntimeError("injected")
        return reproduce.run_job(j)

    monkeypatch.setattr(reproduce, "run_job", job)
    with pytest.raises(RuntimeError):
        main(["reproduce", "nn", "--size", "tiny", "--warps", "64", "-j", "1", "-o", str(out)])
    assert sorted(os.listdir(tmp_path)) == ["res"]
    assert sorted(os.listdir(out)) == ["figure9_10.png", "meta.json"]


# ---- item 12: output paths ----------------------------------------------------------------

def test_output_same_as_input_is_refused(tmp_path, capsys):
    src = tmp_path / "x.s"
    src.write_text(SAMPLE.read_text())
    rc, out, err = run(capsys, "asm", src, "-o", src)
    assert rc == 1 and "is the input" in err and "Traceback" not in err
    assert src.read_text() == SAMPLE.read_text()
    rc, _, err = run(capsys, "convert", src, "-o", tmp_path / "." / "x.s")
    assert rc == 1 and "is the input" in err and src.read_text() == SAMPLE.read_text()


@pytest.mark.parametrize("argv", [
    ["asm", str(SAMPLE), "-o", ""],
    ["convert", str(SAMPLE), "-o", ""],
    ["trace", "vadd", "-o", ""],
    ["demo", "--n", "32", "--json", ""],
    ["bench", "run", "nn", "--size", "tiny", "--json", ""],
    ["sim", "nn", "--size", "tiny", "--json", ""],
    ["overhead", "vadd", "--size", "tiny", "-o", ""],
    ["reproduce", "nn", "--size", "tiny", "-o", ""],
])
def test_empty_output_path_is_refused(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 1 and "the path is empty" in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_output_under_a_file_says_so(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    rc, _, err = run(capsys, "asm", SAMPLE, "-o", tmp_path / "f" / "x.bin")
    assert rc == 1 and f"parent {tmp_path / 'f'} is not a folder" in err and "File exists" not in err
    rc, _, err = run(capsys, "overhead", "vadd", "--size", "tiny", "-o", tmp_path / "f" / "dir")
    assert rc == 1 and "is not a folder" in err


def test_reproduce_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    rc, _, err = run(capsys, "reproduce", "nn", "--size", "tiny", "-o", tmp_path)
    assert rc == 1 and "no meta.json" in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_the_working_folder_is_never_replaced(tmp_path, monkeypatch):
    (tmp_path / "m").write_text("an earlier run")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DualflowError, match="working folder"), atomic_folder(".", "m"):
        pass
    assert sorted(os.listdir(tmp_path)) == ["m"]


def test_writes_from_another_thread(tmp_path):
    errors = []

    def write():
        try:
            atomic_write(tmp_path / "t.txt", "from a thread")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    worker = threading.Thread(target=write)
    worker.start()
    worker.join(timeout=120)
    assert errors == [] and (tmp_path / "t.txt").read_text() == "from a thread"

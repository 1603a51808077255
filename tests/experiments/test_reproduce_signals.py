"""``dualflow reproduce`` stopped part way (issue 17, item 5): Ctrl-C, SIGTERM or SIGHUP to the
parent cancels the queued jobs and stops the workers at once; a worker killed as the
out-of-memory killer would is one line naming the job, with a non-zero exit."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO
#: 13 jobs (2 figure runs, the default variant form's, 10 study points) of 0.4-1.4 s each on two
#: workers: about 7 s when nothing stops them.
ARGV = ["reproduce", "nn", "--size", "small", "--preset", "paper-rtx3080", "--warps", "8,16,32,48,64", "-j", "2"]


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (from /proc; zombies excluded)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            out.append(int(entry))
    return out


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def run_and_stop(tmp_path: Path, stop) -> tuple[int, float, list[str], list[int]]:
    """Start ``dualflow reproduce``, wait for its first finished job, call ``stop(proc, workers)``;
    returns the status, the jobs finished by the exit (the progress bar's largest count), the lines
    of standard error that are not the progress bar, and the workers still alive shortly after.
    A run stopped at once finishes far fewer than its 13 jobs (counted, not timed: a busy machine
    slows the stop, not what it leaves undone)."""
    proc = subprocess.Popen([sys.executable, "-m", "dualflow", *ARGV, "-o", str(tmp_path / "out")], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        buf, fd = b"", proc.stderr.fileno()
        while b" 1/13 " not in buf:
            assert proc.poll() is None, buf
            if select.select([fd], [], [], 1)[0]:
                buf += os.read(fd, 65536)
        workers = children(proc.pid)
        assert workers
        stop(proc, workers)
        _, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        time.sleep(0.2)
        left = alive(workers) if "workers" in locals() else []
        for pid in left:  # a failing run must not leave them behind
            os.kill(pid, signal.SIGKILL)
    text = (buf + err).decode()
    lines = [line for line in text.split("\n") if line and not line.startswith("\rreproduce")]
    finished = max(int(n) for n in re.findall(r" (\d+)/13 ", text))
    return proc.returncode, finished, lines, left


@pytest.mark.parametrize("sig, whom, status", [
    (signal.SIGINT, "group", 130),   # Ctrl-C at a terminal reaches the parent and its workers
    (signal.SIGTERM, "parent", 143),
    (signal.SIGHUP, "parent", 129),
])
def test_a_signal_stops_reproduce_and_its_workers_at_once(tmp_path, sig, whom, status):
    def stop(proc, workers):
        for pid in ([proc.pid, *workers] if whom == "group" else [proc.pid]):
            os.kill(pid, sig)

    rc, finished, lines, left = run_and_stop(tmp_path, stop)
    assert rc == status
    assert finished < 13, f"finished {finished} of 13 jobs before it stopped"
    assert lines == [f"dualflow: stopped by {signal.Signals(sig).name}"]
    assert left == []


def test_a_killed_worker_is_one_line(tmp_path):
    rc, finished, lines, left = run_and_stop(tmp_path, lambda proc, workers: os.kill(workers[0], signal.SIGKILL))
    assert rc == 1
    assert finished < 13
    assert len(lines) == 1, lines
    assert lines[0].startswith("dualflow: error: reproduce: a simulation worker process died while running ")
    assert left == []


def test_a_worker_sends_its_parent_one_atomic_pipe_write(tmp_path):
    """A worker killed while it writes a longer message to the result pipe leaves the parent
    reading it forever: the full result goes to disk in the worker, the pipe carries a summary
    that one write() delivers whole (PIPE_BUF)."""
    import json
    import pickle

    from dualflow.experiments import reproduce
    from dualflow.experiments.design_points import DFLOW

    job = reproduce.Job("warps", "nn", DFLOW, "tiny", 1, "paper-rtx3080", 64, 1)
    res = reproduce.run_and_keep(job, tmp_path)
    assert len(pickle.dumps(res)) < select.PIPE_BUF
    assert res["row"]["cycles"] == res["cycles"] > 0 and res["thread_instructions"] > 0
    full = json.loads((tmp_path / f"{job.tag}.json").read_text())
    assert full["timing"]["cycles"]["value"] == res["cycles"]

"""`dualflow sim` and `dualflow reproduce` from the command line: outputs, files, and bad input."""

from __future__ import annotations

import csv
import inspect
import json

import numpy as np
import pytest
from paths import REPO

from dualflow.cli import main


def test_sim_prints_summary_and_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["sim", "nn", "--size", "tiny", "--mode", "dflow", "--set", "num_sms=2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "nn (tiny) on paper-rtx3080, dflow" in text and "cycles" in text and "IPC" in text
    result = json.loads(out.read_text())
    assert result["mode"] == "dflow"
    assert result["config"]["num_sms"] == 2  # the effective configuration travels with the result
    assert result["timing"]["cycles"]["unit"] == "cycles"
    assert result["timing"]["cycles"]["value"] > 0
    assert "l1" in result["timing"]["memory"]


@pytest.mark.parametrize("args, message", [
    (["sim", "nn", "--size", "tiny", "--set", "sm.max_threads"], "key=value"),
    (["sim", "nn", "--size", "tiny", "--set", "sm.nope=3"], "no field 'nope'"),
    (["sim", "nn", "--size", "huge"], "unknown size"),
    (["sim", "nosuch", "--size", "tiny"], "unknown workload"),
    (["sim", "nn", "--size", "tiny", "--set", "sm.max_threads=128"], "does not fit an SM"),
    (["reproduce", "nn", "--size", "huge"], "no size 'huge'"),
])
def test_bad_input_is_one_clear_line(args, message, capsys, tmp_path):
    assert main(args + (["-o", str(tmp_path / "x")] if args[0] == "reproduce" else [])) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()



def test_reproduce_without_cacti_fails_before_simulating(tmp_path, capsys, monkeypatch):
    """Pricing the energy tables needs CACTI (or its cached macros): reproduce says so before
    its simulations, not after them."""
    from dualflow.experiments import reproduce
    from dualflow.synth import cacti_build, sram

    monkeypatch.setattr(cacti_build, "installed_cacti_dir", lambda: tmp_path / "no-cacti")
    monkeypatch.setattr(sram, "cache_dir", lambda: tmp_path / "sram")

    def simulate(*args, **kwargs):
        raise AssertionError("a simulation started before the CACTI check")
    monkeypatch.setattr(reproduce, "run_all", simulate)
    assert main(["reproduce", "nn", "--size", "tiny", "-j", "1", "-o", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "CACTI is not built" in err and "make cacti" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()

def test_reproduce_writes_tables_and_plots(tmp_path, capsys):
    out = tmp_path / "res"
    # gaussian's Fan1 blocks have 16 warps: its 8-warp points cannot exist and are reported, not run
    assert main(["reproduce", "nn", "gaussian", "--size", "tiny", "--warps", "8,64", "-j", "1", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Figures 9 and 10" in text and "Warps-per-SM study" in text
    for name in ("figure9_10", "warps_study", "warps_study_match", "runs"):
        assert (out / f"{name}.csv").exists() and (out / f"{name}.json").exists()
    assert (out / "figure9_10.png").stat().st_size > 1000
    assert (out / "warps_study.png").stat().st_size > 1000
    assert (out / "figure9_10-ampere-rtx3070.png").stat().st_size > 1000
    fig = list(csv.DictReader((out / "figure9_10.csv").read_text().splitlines()))
    # figures 9 and 10 on both presets, the workloads in the order given
    assert [(r["preset"], r["workload"]) for r in fig] == [
        (p, w) for p in ("paper-rtx3080", "ampere-rtx3070") for w in ("nn", "gaussian")]
    for r in fig:
        assert float(r["speedup"]) == pytest.approx(int(r["base_cycles"]) / int(r["dflow_cycles"]), rel=1e-3)
        for key in ("base_occupancy", "dflow_occupancy", "base_active_sms", "dflow_active_sms"):
            assert 0 < float(r[key]) <= 1
        # the default variant form beside the original, in BASE's register file: its share at full
        # occupancy (32 and 42 entries per thread on these presets), or BASE's registers where more
        assert float(r["variant_speedup"]) == pytest.approx(int(r["base_cycles"]) / int(r["variant_cycles"]), rel=1e-3)
        share = {"paper-rtx3080": 65536 // 2048, "ampere-rtx3070": 65536 // 1536}[r["preset"]]
        assert int(r["variant_rf_entries"]) <= max(int(r["base_rf_entries"]), share)
    assert "occupancy" in text and "active SMs" in text and "default variant form" in text
    points = json.loads((out / "warps_study.json").read_text())
    assert {(p["workload"], p["mode"], p["warps"]) for p in points} == {
        (w, m, n) for w in ("nn", "gaussian") for m in ("base", "dflow") for n in (8, 64)} - {
        ("gaussian", "base", 8), ("gaussian", "dflow", 8)}
    runs_table = list(csv.DictReader((out / "runs.csv").read_text().splitlines()))
    infeasible = [r for r in runs_table if r["check"].startswith("infeasible")]
    assert {(r["workload"], r["warps"]) for r in infeasible} == {("gaussian", "8")}
    runs = sorted((out / "runs").glob("*/*.json"))
    assert len(runs) == 20  # 2 x 2 x 3 figure runs, 2 x 2 x 2 study points (2 of them infeasible)
    one = json.loads(runs[0].read_text())
    assert "config" in one and "timing" in one


def test_reproduce_help_states_the_defaults_the_code_uses(capsys):
    from dualflow.experiments.reproduce import FIGURE_WORKLOADS, PRESETS, WARPS, reproduce

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert f"(default {','.join(map(str, WARPS))})" in text
    assert f"(default: {' '.join(FIGURE_WORKLOADS)};" in text
    assert f"default: {' and '.join(PRESETS)})" in text
    assert "(default paper:" in text and inspect.signature(reproduce).parameters["size"].default == "paper"


def test_reproduce_suites_split_the_figure_workloads(tmp_path, capsys):
    from dualflow.experiments.reproduce import FIGURE_WORKLOADS, SUITES
    from dualflow.kernels.registry import COMPILED, HAND_WRITTEN

    assert set(SUITES["hand-written"]) == set(HAND_WRITTEN) and set(SUITES["compiled"]) == set(COMPILED)
    assert SUITES["hand-written"] + SUITES["compiled"] == SUITES["all"] == FIGURE_WORKLOADS
    assert main(["reproduce", "nn", "--suite", "compiled", "-o", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "name workloads or give --suite, not both" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


VADD = REPO / "dualflow" / "kernels" / "samples" / "vadd.reg.s"


@pytest.mark.parametrize("mode", ["base", "dflow"])
def test_sim_runs_an_assembly_file_with_inputs_and_outputs(mode, tmp_path, capsys):
    a, b = np.arange(1000, dtype=np.float32), np.full(1000, 0.5, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "c.npy", np.zeros(1000, dtype=np.float32))
    out = tmp_path / "out" / "c.npy"
    argv = ["sim", str(VADD), "--mode", mode, "--grid", "8", "--block", "128", "--value", "n=1000",
            "--input", f"a={tmp_path / 'a.npy'}", "--input", f"b={tmp_path / 'b.npy'}",
            "--input", f"c={tmp_path / 'c.npy'}", "--output", f"c={out}", "--json", str(tmp_path / "r.json")]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"vadd ({VADD}, grid 8, block 128) on paper-rtx3080, {mode}")
    assert "cycles" in text and "IPC" in text and f"wrote {out} (c)" in text
    c = np.load(out)
    assert c.dtype == np.float32 and np.array_equal(c, a + b)
    result = json.loads((tmp_path / "r.json").read_text())
    assert (result["kernel"], result["grid"], result["block"], result["mode"]) == ("vadd", [8], [128], mode)
    assert result["timing"]["cycles"]["value"] > 0
    assert "functional" in result and result["config"]["mode"] == mode


def test_sim_of_a_file_matches_the_python_api(tmp_path, capsys):
    from dualflow.isa import assemble_file
    from dualflow.machine.presets import preset
    from dualflow.models.timing.device import TimingDevice

    assert main(["sim", str(VADD), "--block", "64", "--value", "n=50", "--buffer-words", "64",
                 "--json", str(tmp_path / "r.json")]) == 0
    cycles = json.loads((tmp_path / "r.json").read_text())["timing"]["cycles"]["value"]
    device = TimingDevice(preset("paper-rtx3080"))
    rng = np.random.default_rng(1)  # the random buffers: --buffer-words words each, drawn in order
    bufs = [device.upload(rng.integers(0, 1 << 32, size=64, dtype=np.uint64).astype(np.uint32)) for _ in range(3)]
    device.launch(assemble_file(VADD).only, 1, 64, [*bufs, 50])
    assert device.timing[0].cycles == cycles


@pytest.mark.parametrize("extra, message", [
    (["--kernel", "nope"], "nope"),
    (["--grid", "2x"], "--grid '2x': expected N, XxY or XxYxZ"),
    (["--block", "abc"], "--block 'abc': expected N, XxY or XxYxZ"),
    (["--value", "n=ten"], "--value n=ten: expected NAME=INT"),
    (["--value", "q=1"], "q is not one of the kernel's parameters (a, b, c, n)"),
    (["--value", "n=1", "--value", "n=2"], "--value n=...: given twice"),
    (["--input", "a"], "--input 'a': expected NAME=FILE.npy"),
    (["--input", "a=missing.npy"], "--input a=missing.npy: cannot read"),
    (["--input", "a=f64.npy"], "--input a=f64.npy: holds float64 values; memory words are 32-bit"),
    (["--input", "a=notnpy.npy"], "--input a=notnpy.npy: not a NumPy .npy file"),
    (["--input", "n=i32.npy", "--value", "n=3"], "parameter n: given both --value and --input"),
    (["--output", "n=x.npy", "--value", "n=3"], "--output n=...: n is an integer (--value), not a buffer"),
    (["--output", "z=x.npy"], "--output z=...: z is not one of the kernel's parameters"),
    (["--buffer-words", "0"], "--buffer-words must be positive, not 0"),
    (["--size", "tiny"], "--size: an option of a workload, not of an assembly file"),
    (["--block", "4096"], "block of 4096 threads exceeds the limit"),
])
def test_sim_of_a_file_bad_input_is_one_clear_line(extra, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "f64.npy", np.ones(4))
    np.save(tmp_path / "i32.npy", np.ones(4, dtype=np.int32))
    (tmp_path / "notnpy.npy").write_text("hello")
    assert main(["sim", str(VADD), *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x.npy").exists()


def test_sim_of_a_dflow_file_on_a_base_gpu(tmp_path, capsys):
    src = tmp_path / "d.s"
    src.write_text(".kernel d\n.form dflow\n s2r %tid.x\n exit\n")
    assert main(["sim", str(src)]) == 1
    assert "kernel 'd' is DFLOW form; a base GPU runs REG-form kernels" in capsys.readouterr().err
    assert main(["sim", str(src), "--mode", "dflow"]) == 0


def test_sim_of_a_workload_rejects_file_options(capsys):
    assert main(["sim", "nn", "--block", "64", "--value", "n=3", "--buffer-words", "8"]) == 1
    err = capsys.readouterr().err
    assert "--block, --value, --buffer-words: options of an assembly file (FILE.s), not of workload nn" in err

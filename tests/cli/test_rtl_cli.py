"""``dualflow rtl generate``, ``dualflow cosim`` and ``dualflow synth`` from the command line: outputs,
and bad input reported as one error line with a non-zero exit, never a traceback."""

from __future__ import annotations

import json

import pytest

from dualflow.cli import main
from dualflow.kernels.directed import PROGRAMS


@pytest.mark.parametrize("argv,message", [
    (["rtl", "generate", "--warp-size", "5", "-o", "x.v"], "core parameter warp_size must be 4, 8, 16 or 32, not 5"),
    (["rtl", "generate", "--ring", "16", "--dmax", "20", "-o", "x.v"],
     "core parameter dmax must be an integer in 1..ring-1"),
    (["synth", "--warps", "3"], "core parameter warps must be a power of two in 2..64, not 3"),
    (["cosim", "missing.s"], "cannot read missing.s: No such file or directory"),
    (["cosim"], "cosim: give one of an assembly file, --workload NAME, --random N or --random-program SEED"),
    (["cosim", "--workload", "bfs", "--value", "edges=3"], "workload bfs: no parameter edges (have: nodes)"),
    (["cosim", "--workload", "nope"], "unknown workload"),
])
def test_bad_input_is_one_error_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x.v").exists()


def test_cosim_rejects_unknown_value_and_dflow_on_base(capsys, tmp_path):
    src = tmp_path / "prog.s"
    src.write_text(PROGRAMS["early_exit"].source)
    assert main(["cosim", str(src), "--warp-size", "4", "--warps", "4", "--value", "m=3"]) == 1
    assert "m is not one of the kernel's parameters (out, n)" in capsys.readouterr().err
    dflow = tmp_path / "d.s"
    dflow.write_text(".kernel d\n.form dflow\n s2r %tid.x\n exit\n")
    assert main(["cosim", str(dflow), "--mode", "base", "--warp-size", "4", "--warps", "2"]) == 1
    assert "a base core runs REG-form kernels" in capsys.readouterr().err


def test_generate_writes_verilog_with_parameters(tmp_path, capsys):
    out = tmp_path / "core.v"
    assert main(["rtl", "generate", "--mode", "base", "--warp-size", "4", "--warps", "2", "--scheduler", "lrr",
                 "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("// dualflow_core_base:")
    header = json.loads(text.splitlines()[1].split("CoreParams: ", 1)[1])
    assert header["warp_size"] == 4 and header["warps"] == 2 and header["scheduler"] == "lrr"
    assert "module dualflow_core_base(" in text
    assert "wrote" in capsys.readouterr().out


def test_cosim_command_runs_a_program(tmp_path, capsys):
    src = tmp_path / "early_exit.s"
    src.write_text(PROGRAMS["early_exit"].source)
    rc = main(["cosim", str(src), "--mode", "dflow", "--warp-size", "4", "--warps", "4", "--register-banks", "4",
               "--collector-units", "4", "--block", "16", "--value", "n=11", "--seed", "3",
               "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "PASS early_exit" in out and "model records matched" in out
    report = json.loads((tmp_path / "rep" / "early_exit-seed3.json").read_text())
    assert report["ok"] and report["seed"] == 3


def test_cosim_converts_with_a_variant(capsys):
    """``--variant reserved-ssy``: reduce's if-regions reserve their advance instead of padding,
    and the core runs the conversion as the golden model does."""
    records = {}
    for variant in ([], ["--variant", "reserved-ssy"]):
        rc = main(["cosim", "dualflow/kernels/samples/reduce.reg.s", "--mode", "dflow", *variant,
                   "--value", "n=64", "--grid", "2", "--block", "32"])
        out = capsys.readouterr().out
        assert rc == 0 and "PASS reduce" in out, out
        records[bool(variant)] = int(out.split(" of ")[1].split()[0])
    assert records[True] < records[False]  # the pads the variant drops are not run


def test_cosim_refuses_a_variant_the_core_does_not_implement(capsys):
    """``uniform-operands`` runs only on a core built with it (``--uniform-operands``): without,
    refused before any simulation, with a message naming the variant and the option."""
    rc = main(["cosim", "dualflow/kernels/samples/reduce.reg.s", "--mode", "dflow", "--variant", "uniform-operands",
               "--value", "n=64", "--grid", "2", "--block", "32"])
    err = capsys.readouterr().err
    assert rc == 1 and "uses .variant uniform-operands, which this RTL core does not implement" in err
    assert "--uniform-operands" in err and "Traceback" not in err


def test_cosim_runs_uniform_operands_on_a_core_built_with_them(capsys):
    """The converter's uniform operands (reduce: its parameters and %ntid.x, %ctaid.x) run on a
    core built with ``--uniform-operands`` as in the golden model, in fewer instructions."""
    records = {}
    for variant in ([], ["--variant", "uniform-operands", "--uniform-operands"]):
        rc = main(["cosim", "dualflow/kernels/samples/reduce.reg.s", "--mode", "dflow", *variant,
                   "--value", "n=64", "--grid", "2", "--block", "32"])
        out = capsys.readouterr().out
        assert rc == 0 and "PASS reduce" in out, out
        records[bool(variant)] = int(out.split(" of ")[1].split()[0])
    assert records[True] < records[False]  # the ldc and s2r the variant removes are not run


def test_uniform_operands_core_is_dflow_only(capsys):
    rc = main(["rtl", "generate", "--mode", "base", "--uniform-operands", "-o", "/dev/null"])
    err = capsys.readouterr().err
    assert rc == 1 and "uniform_operands" in err and "DFLOW" in err and "Traceback" not in err


def test_cosim_program_takes_grid_and_input_and_names_the_kernel(tmp_path, capsys):
    import numpy as np

    src = tmp_path / "prog.s"  # the file's name is not the kernel's
    src.write_text(PROGRAMS["early_exit"].source)
    start = tmp_path / "out.npy"
    np.save(start, np.full(16, 7, dtype=np.int32))
    rc = main(["cosim", str(src), "--warp-size", "4", "--warps", "2", "--grid", "2", "--block", "8",
               "--value", "n=5", "--input", f"out={start}", "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "PASS early_exit" in out and "prog" not in out
    report = json.loads((tmp_path / "rep" / "early_exit-seed1.json").read_text())
    assert report["ok"]


@pytest.mark.parametrize("extra, message", [
    (["--grid", "0"], "--grid '0': expected N, XxY or XxYxZ"),
    (["--input", "out=none.npy"], "--input out=none.npy: cannot read"),
    (["--input", "n=x.npy", "--value", "n=3"], "--input n=x.npy: cannot read"),
    (["--block", "4x4x4"], "block of 64 threads exceeds the core's 2 warps x 4 lanes"),
])
def test_cosim_program_bad_launch_options(extra, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.s").write_text(PROGRAMS["early_exit"].source)
    assert main(["cosim", "prog.s", "--warp-size", "4", "--warps", "2", *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cosim_workload_rejects_program_options(capsys):
    assert main(["cosim", "--workload", "bfs", "--grid", "2"]) == 1
    assert "--grid: options of an assembly file, not of --workload" in capsys.readouterr().err

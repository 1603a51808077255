"""``dualflow compile`` and CUDA files given to ``sim`` and ``convert``: the README's example."""

from __future__ import annotations

import numpy as np
from paths import REPO

from dualflow.cli import main

SAXPY = REPO / "examples" / "saxpy.cu"


def test_compile_writes_reg_assembly_and_reports_registers(tmp_path, capsys):
    out = tmp_path / "saxpy.s"
    assert main(["compile", str(SAXPY), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("saxpy: ") and " registers, " in text and "PTX -> " in text
    asm = out.read_text()
    assert ".kernel saxpy" in asm and ".param a x y n" in asm and "; ptx:" in asm


def test_sim_runs_the_readme_example_in_both_modes(tmp_path, capsys):
    x, y = np.arange(256, dtype=np.float32), np.ones(256, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    cycles = {}
    for mode in ("base", "dflow"):
        out = tmp_path / f"y_{mode}.npy"
        assert main(["sim", str(SAXPY), "--grid", "2", "--block", "128", "--value", "a=0x40000000",
                     "--value", "n=256", "--input", f"x={tmp_path / 'x.npy'}", "--input", f"y={tmp_path / 'y.npy'}",
                     "--output", f"y={out}", "--mode", mode, "--preset", "paper-rtx3080"]) == 0
        np.testing.assert_array_equal(np.load(out), 2 * x + 1)
        line = capsys.readouterr().out.splitlines()[1]
        cycles[mode] = int(line.split()[1].replace(",", ""))
    assert all(c > 0 for c in cycles.values())


def test_convert_takes_cuda(tmp_path, capsys):
    out = tmp_path / "saxpy.dflow.s"
    assert main(["convert", str(SAXPY), "-o", str(out)]) == 0
    assert ".form dflow" in out.read_text()


def test_a_clang_error_is_one_message_and_status_1(tmp_path, capsys):
    bad = tmp_path / "bad.cu"
    bad.write_text('#include "dualflow_cuda.h"\nextern "C" __global__ void k(int *o) { o[0] = missing; }\n')
    assert main(["compile", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "dualflow: error: clang failed" in err and "bad.cu:2:" in err and "Traceback" not in err

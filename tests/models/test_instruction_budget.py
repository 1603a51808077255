"""The instruction budget (issue 17, item 8): by default a launch may retire ``BUDGET_PER_WARP``
warp instructions per warp of the launch (an endless loop stops in seconds, not in days);
``--max-instructions`` sets it on sim, trace, bench run and cosim; cosim bounds the golden model
by ``--max-cycles`` too, so an endless loop ends in both."""

from __future__ import annotations

import pytest

from dualflow.cli import main
from dualflow.common.errors import KernelFault
from dualflow.isa import assemble
from dualflow.machine import functional
from dualflow.machine.functional import BUDGET_PER_WARP, FunctionalConfig
from dualflow.models.device import Device
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CosimCase, _job, golden_budget

LOOP = ".kernel spin\n.form reg\nL:\n    bra L\n"


def spin():
    (kernel,) = assemble(LOOP)
    return kernel


def test_default_budget_is_per_warp_of_the_launch(monkeypatch):
    assert FunctionalConfig().per_warp_budget and FunctionalConfig(max_warp_instructions=None).per_warp_budget
    assert FunctionalConfig().instruction_budget(3) == 3 * BUDGET_PER_WARP
    assert FunctionalConfig(max_warp_instructions=7).instruction_budget(3) == 7
    monkeypatch.setattr(functional, "BUDGET_PER_WARP", 50)  # the rule, at a size a test can run
    dev = Device(FunctionalConfig(warp_size=8))
    with pytest.raises(KernelFault, match="more than 150 warp instructions .the default, 50 for each of the "
                                          "launch's 3 warps"):
        dev.launch(spin(), 1, 24)


@pytest.mark.parametrize("argv", [
    ["sim", "{loop}", "--max-instructions", "10"],
    ["sim", "{dloop}", "--mode", "dflow", "--max-instructions", "10"],
    ["bench", "run", "vadd", "--size", "tiny", "--max-instructions", "10"],
    ["sim", "vadd", "--size", "tiny", "--max-instructions", "10"],
    ["trace", "vadd", "--max-instructions", "10", "-o", "{out}"],
])
def test_max_instructions_option(argv, tmp_path, capsys):
    loop = tmp_path / "loop.s"
    loop.write_text(LOOP)
    dloop = tmp_path / "dloop.s"
    dloop.write_text(LOOP.replace(".form reg", ".form dflow"))
    out = tmp_path / "t.jsonl"
    rc = main([a.format(loop=loop, dloop=dloop, out=out) for a in argv])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and "instruction budget exceeded: more than 10 warp instructions" in err, err
    assert "--max-instructions" in err and not out.exists()


def test_cosim_bounds_the_golden_model_by_max_cycles():
    """The golden model of an endless loop stops after --max-cycles instructions per block (the core
    retires at most one a cycle), instead of running on after the RTL gave up."""
    params = CoreParams(mode="base", warp_size=4, warps=2)
    case = CosimCase("spin", spin(), block=8, max_cycles=300, grid=2)
    assert golden_budget(case, 4) == 600
    assert golden_budget(CosimCase("spin", spin(), block=8, max_cycles=300, max_instructions=50), 4) == 50
    *_, fault = _job(params, case)
    assert fault is not None and "more than 600 warp instructions" in str(fault)

"""The RTL SIMT core against the golden functional model, instruction by instruction.

Each test assembles directed programs (dualflow/kernels/directed.py), runs the functional model
with a trace and the generated Verilog core under Icarus (global memory answered with random
latency and out of order), and compares the retirement traces per warp in program order
(dualflow/testbench/trace_compare.py) and the final global memory. Both modes. Every program on the
``l4w4`` parameter set, held to the suite's expected results, is the RTL level of
tests/kernels/test_directed_programs.py; here: the other parameter sets, the expect-fail check, and the
slow sweep over three parameter sets, every program and several seeds.
"""

from __future__ import annotations

import pytest
from rtl_param_sets import PARAM_SETS

from dualflow.common.errors import ConfigError
from dualflow.isa import Form
from dualflow.kernels.directed import PROGRAMS, kernel
from dualflow.rtl.params import CoreParams
from dualflow.testbench.core.directed import directed_case, expectation_mismatches
from dualflow.testbench.cosim import CosimCase, run_cosim


def _cases(params: CoreParams, names, seeds) -> list[CosimCase]:
    return [directed_case(name, params, seed=seed) for seed in seeds for name in names]


def _check(results, params: CoreParams) -> None:
    """Every case matched the golden model and left the directed suite's expected results."""
    problems = [r.summary() for r in results if not r.ok]
    problems += [m for r in results for m in expectation_mismatches(r, params)]
    assert not problems, "\n\n".join(problems)
    for r in results:
        assert r.compare.matched == r.compare.model_records > 0


@pytest.mark.parametrize("set_name", ["l8w2", "l4w8"])
@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_other_parameter_sets(mode: str, set_name: str):
    """The other two parameter sets (8 lanes, LRR, 3 collector units; 8 warps, ring 64, 32 parameter
    words, 8 stack entries, 4 requests in flight, 2 shared banks) in the default
    suite, on divergence and a lane-dependent loop; the full sweep over every program and three
    seeds is ``test_core_sweep`` (slow)."""
    params = CoreParams(mode=mode, **PARAM_SETS[set_name])
    _check(run_cosim(params, _cases(params, ["diverge", "loop"], seeds=[2])), params)


def test_injected_error_is_caught():
    """Expect-fail: the bench flips one bit of one RTL record; the comparison must fail on it."""
    params = CoreParams(mode="dflow", **PARAM_SETS["l4w4"])
    (result,) = run_cosim(params, _cases(params, ["diverge"], seeds=[2]), inject=True)
    assert not result.ok
    assert [m.fields for m in result.compare.mismatches] == [["values"]]
    assert result.compare.matched == result.compare.model_records - 1


TWO_SOURCES = """
.kernel two_sources
.param out
    s2r r0, %tid.x
    iadd r1, r0, 7
    iadd r2, r0, r1         ; two register sources: with one bank, one waits for the other (so does stg)
    ldc r3, out
    ishl r4, r0, 2
    iadd r3, r3, r4
    stg [r3], r2
    exit
"""


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_bank_conflicts_are_counted(mode: str):
    """The core counts register-file read requests that lose their bank, per request and cycle
    (the timing model's ``rf_bank_conflicts``): with one bank, each warp's instructions with two
    register sources ask it twice at once, so there is at least one conflict per such instruction
    and warp; the cosim summary reports the count."""
    from dualflow.isa import assemble
    from dualflow.isa.convert import convert_kernel

    k = assemble(TWO_SOURCES).only
    params = CoreParams(mode=mode, warp_size=4, warps=2, register_banks=1, collector_units=2)
    if params.mode.form is Form.DFLOW:
        k, _ = convert_kernel(k, dmax=params.dmax, ring=params.ring)
    two_source = sum(1 for ins in k.code if ins.a and ins.b and not ins.bimm)  # iadd, iadd, stg
    (r,) = run_cosim(params, [CosimCase("two_sources", k, 8, lambda dev: [dev.alloc(32)])])
    assert r.ok and r.compare.matched == r.compare.model_records > 0, r.summary()
    assert r.bank_conflicts >= two_source * params.warps > 0
    assert f"{r.bank_conflicts} register bank conflicts" in r.summary()


def test_case_that_does_not_fit_is_rejected():
    params = CoreParams(mode="dflow", warp_size=4, warps=2)
    with pytest.raises(ConfigError, match="exceeds the core's 2 warps x 4 lanes"):
        run_cosim(params, _cases(params, ["alu"], seeds=[1]))
    with pytest.raises(ConfigError, match="REG form; a dflow core"):
        run_cosim(params, [CosimCase("alu", kernel("alu", Form.REG), 8)])


@pytest.mark.slow
@pytest.mark.parametrize("set_name", list(PARAM_SETS))
@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_core_sweep(mode: str, set_name: str):
    params = CoreParams(mode=mode, **PARAM_SETS[set_name])
    _check(run_cosim(params, _cases(params, list(PROGRAMS), seeds=[1, 2, 3])), params)

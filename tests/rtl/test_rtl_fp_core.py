"""The FP32 pipeline and the SFU inside the core (dualflow/rtl/fp/stages.py, dualflow/rtl/units.py): the GT200 point
that a long ``fdiv`` in the separate special-function unit does not hold back other warps' FP adds.

Warp 0 divides (``fdiv``, ``sfu_latency`` cycles in the SFU); warp 1 runs seven ``fadd``s in the
FP32 pipeline meanwhile. Both warps' records match the golden model, and in the retirement trace
(``CaseResult.retire_cycles``: the core cycle of each record) several of warp 1's adds retire
while the ``fdiv`` is in flight: after it entered the SFU and before it retires.
"""

from __future__ import annotations

import pytest

from dualflow.isa import Form, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CosimCase, run_cosim

FDIV_AND_FADDS = """
.kernel fdiv_and_fadds
.param out
    s2r r0, %tid.x
    s2r r1, %warpid
    i2f r2, r0
    fadd r3, r2, 1
    ldc r4, out
    ishl r5, r0, 2
    iadd r4, r4, r5
    brnz r1, ADDS            ; uniform per warp: no divergence
    fdiv r6, r2, r3          ; warp 0: x / (x + 1) in the SFU
    stg [r4], r6
    exit
ADDS:
    fadd r6, r2, 0.5         ; warp 1: four independent adds, then their sum
    fadd r7, r3, 2
    fadd r8, r2, 3
    fadd r9, r3, 4
    fadd r6, r6, r7
    fadd r8, r8, r9
    fadd r6, r6, r8
    stg [r4], r6
    exit
"""

CORE = dict(warp_size=8, warps=16, register_banks=4, collector_units=4, alu_latency=2, fp_latency=4,
            sfu_latency=21, sfu_interval=8)


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_fp_adds_retire_while_another_warp_divides(mode: str):
    params = CoreParams(mode=mode, **CORE)
    k = assemble(FDIV_AND_FADDS).only
    if params.mode.form is Form.DFLOW:
        k, _ = convert_kernel(k, dmax=params.dmax, ring=params.ring)
    (r,) = run_cosim(params, [CosimCase("fdiv_and_fadds", k, 2 * params.warp_size, lambda dev: [dev.alloc(64)])])
    assert r.ok and r.compare.matched == r.compare.model_records > 0, r.summary()
    order = [(rec.warp, rec.op, cycle) for rec, cycle in zip(r.rtl.records, r.retire_cycles)]
    (div_at,) = [cycle for warp, op, cycle in order if op == "fdiv"]
    adds = [cycle for warp, op, cycle in order if warp == 1 and op == "fadd"]
    assert len(adds) == 8 and r.cycles > div_at  # the shared fadd before the branch, then seven
    # The fdiv entered the SFU at least sfu_latency cycles before its result could retire.
    during = [c for c in adds if div_at - params.sfu_latency < c < div_at]
    print(f"{mode}: fdiv retired at cycle {div_at}; warp 1's fadds at {adds}; {len(during)} during the fdiv")
    assert len(during) >= 3, (div_at, adds)
    # Trace order: those adds come before the fdiv in the retirement order.
    div_index = next(i for i, (_w, op, _c) in enumerate(order) if op == "fdiv")
    assert sum(1 for w, op, _c in order[:div_index] if w == 1 and op == "fadd") >= len(during) + 1


FDIV_PER_WARP = """
.kernel fdiv_per_warp
.param out
    s2r r0, %tid.x
    i2f r2, r0
    fadd r3, r2, 1
    fdiv r6, r2, r3          ; every warp: x / (x + 1) in an SFU
    ldc r4, out
    ishl r5, r0, 2
    iadd r4, r4, r5
    stg [r4], r6
    exit
"""

#: The 4 x 4 core of the random-program tests (the same build for one SFU).
SMALL = dict(warp_size=4, warps=4)


def _fdiv_cycles(params: CoreParams) -> tuple[list[int], int]:
    k = assemble(FDIV_PER_WARP).only
    if params.mode.form is Form.DFLOW:
        k, _ = convert_kernel(k, dmax=params.dmax, ring=params.ring)
    case = CosimCase("fdiv_per_warp", k, params.warps * params.warp_size, lambda dev: [dev.alloc(64)])
    (r,) = run_cosim(params, [case])
    assert r.ok and r.compare.matched == r.compare.model_records > 0, r.summary()
    return sorted(c for rec, c in zip(r.rtl.records, r.retire_cycles) if rec.op == "fdiv"), r.cycles


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_two_sfus_divide_for_two_warps_at_once(mode: str):
    """``sfu_count`` (``UnitConfig.count``): one SFU takes a warp's ``fdiv`` every ``sfu_interval``
    cycles, so four warps' results retire about three intervals apart from first to last (a result
    that waits for writeback moves by a cycle or two); two SFUs divide for two warps at once, and
    the last result retires an interval sooner."""
    one = CoreParams(mode=mode, **SMALL)
    two = CoreParams(mode=mode, **SMALL, sfu_count=2)
    (div1, cycles1), (div2, cycles2) = _fdiv_cycles(one), _fdiv_cycles(two)
    gaps2 = [b - a for a, b in zip(div2, div2[1:])]
    print(f"{mode}: one SFU: fdivs retire at {div1} ({cycles1} cycles); two: at {div2} ({cycles2} cycles)")
    assert len(div1) == len(div2) == one.warps
    assert div1[-1] - div1[0] >= (one.warps - 1) * one.sfu_interval - 2
    assert sum(g < 3 for g in gaps2) == 2 and div2[-1] <= div1[-1] - one.sfu_interval

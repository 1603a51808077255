"""The divergence analysis (``dualflow/isa/convert/divergence.py``): a region whose branches are all
warp-uniform keeps its lanes together, so a value its loop computes crosses its join as at any
join, not through local memory; a region with a lane-dependent branch is left as it was. The
converted kernels compute what the REG kernels compute, at every Dmax of the property test."""

from __future__ import annotations

import numpy as np
import pytest

from dualflow.isa import Variant, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.isa.convert.divergence import analysed_cfg
from dualflow.testbench.randprog.generator import Launch, make_inputs, run

DMAX_RING = [(12, 13), (31, 32)]
LAUNCHES = [Launch(32, 32, 2), Launch(4, 16, 4)]
ALL = frozenset({Variant.HANDS, Variant.RESERVED_SSY, Variant.UNIFORM_OPERANDS})


def _sum_loop(bound: str, reuse: bool = False) -> str:
    """Each thread sums k for k = 0 .. (bound) - 1 in a loop inside a guard (``if bound > 0``),
    then stores the sum plus its index after the guard's join. ``reuse``: the loop counter's
    register later holds a loaded value, as a compiler's allocation would have it."""
    later = "    ldg r10, [r5]\n    iadd r11, r11, r10\n" if reuse else ""
    return f""".kernel sums
.form reg
.param in out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ldc r4, out
    ishl r7, r3, 2
    iadd r5, r4, r7
    {bound}
    mov r11, 0
    isetp.lt r8, r6, 1
    ssy JOIN
    brnz r8, SKIP
    mov r10, 0
LOOP:
    iadd r11, r11, r10
    iadd r10, r10, 1
    isetp.lt r9, r10, r6
    brnz r9, LOOP
    sync
SKIP:
    sync
JOIN:
{later}    iadd r11, r11, r3
    stg [r5], r11
    exit
"""


UNIFORM = _sum_loop("ldc r6, n")  # trip count a parameter: every lane leaves together
# ... with a lane-dependent if in the loop's body: its lanes meet again at its own join, inside
# the loop, so the guard's region stays uniform (pathfinder's and hotspot's step loops)
INNER_IF = UNIFORM.replace("    iadd r10, r10, 1\n", """    iand r12, r0, 1
    ssy EVEN
    brz r12, SKIPADD
    iadd r11, r11, r10
SKIPADD:
    sync
EVEN:
    iadd r10, r10, 1
""")
UNIFORM_REUSED = _sum_loop("ldc r6, n", reuse=True)
LANE_DEPENDENT = _sum_loop("iand r6, r0, 7")  # trip count tid mod 8


@pytest.mark.parametrize("source, uniform", [(UNIFORM, True), (UNIFORM_REUSED, True), (LANE_DEPENDENT, False),
                                             (INNER_IF, True)],
                         ids=["parameter", "register-reused", "lane-dependent", "inner-if"])
def test_a_region_is_uniform_when_every_branch_it_owns_is(source, uniform):
    cfg = analysed_cfg(assemble(source).only)
    (region,) = [r for r in cfg.regions.values() if r.cyclic]
    assert region.uniform is uniform and region.lanes_leave_apart is not uniform
    assert all(not r.uniform for r in cfg.regions.values() if not r.cyclic)  # the inner if's (lane-dependent)


def test_a_value_written_in_a_divergent_region_varies_after_its_join():
    """The guard's branch is uniform, but the loop's bound is set inside a divergent if before it:
    lanes that took the if hold another bound, so the loop's exit branch varies."""
    source = UNIFORM.replace("    ssy JOIN\n", """    iand r12, r0, 1
    ssy ODD
    brz r12, EVEN
    iadd r6, r6, 3
EVEN:
    sync
ODD:
    ssy JOIN
""")
    cfg = analysed_cfg(assemble(source).only)
    guard = next(r for r in cfg.regions.values() if r.cyclic)
    assert not guard.uniform


@pytest.mark.parametrize("dmax, ring", DMAX_RING, ids=[f"dmax{d}" for d, _ in DMAX_RING])
@pytest.mark.parametrize("source", [UNIFORM, UNIFORM_REUSED, LANE_DEPENDENT, INNER_IF],
                         ids=["parameter", "register-reused", "lane-dependent", "inner-if"])
@pytest.mark.parametrize("variants", [frozenset(), ALL], ids=["original", "all"])
def test_converted_kernels_compute_what_reg_computes(source, dmax, ring, variants):
    reg = assemble(source).only
    dflow, report = convert_kernel(reg, dmax=dmax, ring=ring, variants=variants)
    for launch in LAUNCHES:
        for n in (0, 1, 5):
            inputs = make_inputs(n + 7)
            assert np.array_equal(run(dflow, launch, n, 1, inputs), run(reg, launch, n, 1, inputs))


def test_the_sum_of_a_uniform_loop_crosses_its_join_without_local_memory():
    """In the default variant form at Dmax 31: the lane-dependent loop's sum is stored on each
    group's way to the join and reloaded after it (rule 3); the uniform loop's is laid out as at
    any join (it was stored and reloaded too before the analysis)."""
    for source, through_memory in ((UNIFORM, False), (INNER_IF, False), (LANE_DEPENDENT, True)):
        _, report = convert_kernel(assemble(source).only, dmax=31, ring=32, variants=ALL)
        assert ("spill" in report.causes and "reload" in report.causes) is through_memory

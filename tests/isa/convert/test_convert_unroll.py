"""Unrolling of loops by two (``dualflow/isa/convert/unroll.py``): the unrolled REG kernel runs exactly
like the original for every trip count, lane-dependent ones included, loops with if-regions,
barriers and an exit test in the middle included, and the converter keeps it only where it
saves back-edge relays."""

from __future__ import annotations

import numpy as np

from dualflow.isa import Opcode, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.isa.convert.unroll import Loop, unroll, unrollable_loops
from dualflow.testbench.randprog.generator import Launch, make_inputs, run

# Each lane loops (tid % 7) + 1 times: odd and even trip counts in one warp, lanes leaving at
# every iteration (the divergent-loop idiom: the exit falls through to the region's sync). Two
# invariants (r6, r7) live through the loop cost a relay per iteration unless it is unrolled.
DIVERGENT = """
.kernel divergent_trips
.form reg
.param in out n
    s2r r0, %tid.x
    iand r1, r0, 7
    iadd r1, r1, 1
    ldc r6, in
    ldc r7, out
    ldg r8, [r6+4]
    mov r2, 0
    mov r3, 0
    ssy JOIN
LOOP:
    imad r3, r2, r2, r3
    iadd r3, r3, r8
    iadd r2, r2, 1
    isetp.lt r4, r2, r1
    brnz r4, LOOP
    sync
JOIN:
    ishl r5, r0, 2
    iadd r5, r7, r5
    stg [r5], r3
    stg [r5+128], r2
    exit
"""

# A uniform loop whose exit is not a lone sync or exit: the first copy leaves through a `bra`.
UNIFORM = """
.kernel uniform_trips
.form reg
.param in out n
    s2r r0, %tid.x
    ldc r1, n
    ldc r6, in
    ldc r7, out
    mov r2, 0
    mov r3, 0
LOOP:
    ldg r8, [r6]
    iadd r3, r3, r8
    iadd r6, r6, 4
    iadd r2, r2, 1
    isetp.lt r4, r2, r1
    brnz r4, LOOP
    ishl r5, r0, 2
    iadd r5, r7, r5
    stg [r5], r3
    exit
"""

# A uniform loop of several blocks: an if-region with a lane-dependent branch, a barrier, the
# exit test in the middle and a `bra` back edge (pathfinder's shape), then a bottom-tested loop
# holding an if-region (reduce's shape). Four invariants live through both.
MULTI_BLOCK = """
.kernel multi_block
.form reg
.param in out n
.shared 256
    s2r r0, %tid.x
    ldc r1, n
    ldc r6, in
    ldc r7, out
    ishl r9, r0, 2
    iand r10, r0, 3
    mov r2, 0
    mov r3, 0
TOP:
    isetp.lt r4, r10, r2
    ssy JOINED
    brz r4, SKIP
    ldg r8, [r6+8]
    iadd r3, r3, r8
    imad r3, r3, r10, r2
SKIP:
    sync
JOINED:
    sts [r9], r3
    bar
    isetp.ge r4, r2, r1
    brnz r4, OUT
    lds r8, [r9]
    iadd r3, r3, r8
    iadd r2, r2, 1
    bra TOP
OUT:
    mov r2, 0
BOTTOM:
    isetp.lt r4, r0, r2
    ssy NEXT
    brz r4, STEP
    iadd r3, r3, r10
    ixor r3, r3, r9
STEP:
    sync
NEXT:
    iadd r2, r2, 1
    isetp.lt r4, r2, r1
    brnz r4, BOTTOM
    iadd r5, r7, r9
    stg [r5], r3
    exit
"""


def _outputs(kernel, n: int) -> np.ndarray:
    return run(kernel, Launch(1, 32, 1), n, 2, make_inputs(3))


def test_unrolled_reg_kernel_runs_like_the_original():
    for text in (DIVERGENT, UNIFORM):
        kernel = assemble(text).only
        loops = unrollable_loops(kernel, 64)
        assert len(loops) == 1
        done = unroll(kernel, loops)
        body = loops[0].end - loops[0].start + 1
        assert len(done.kernel.code) == len(kernel.code) + body + 1
        assert done.origin.count(None) == (0 if text is DIVERGENT else 1)  # only the exit's bra is new
        for n in (1, 2, 3, 8):
            assert np.array_equal(_outputs(done.kernel, n), _outputs(kernel, n))
        # Four copies: trip counts 1..8 leave from every copy.
        four = unroll(kernel, [Loop(loops[0].start, loops[0].end, 4)])
        assert len(four.kernel.code) == len(kernel.code) + 3 * (body + 1)
        assert four.loops == {loops[0].start: 4}
        for n in (1, 2, 3, 4, 5, 8):
            assert np.array_equal(_outputs(four.kernel, n), _outputs(kernel, n))


def test_converter_unrolls_where_it_saves_relays():
    for text in (DIVERGENT, UNIFORM):
        kernel = assemble(text).only
        for dmax, ring in [(12, 13), (16, 20), (31, 32), (100, 128)]:
            dk, report = convert_kernel(kernel, dmax=dmax, ring=ring)
            for n in (1, 2, 3, 8):
                assert np.array_equal(_outputs(dk, n), _outputs(kernel, n)), (text, dmax, n)
            nonnop = sum(1 for ins in kernel.code if ins.op is not Opcode.NOP)
            assert report.causes.count("orig") - report.duplicated == nonnop == report.static_reg
            assert {pc for c, pc in zip(report.causes, report.source_pc) if c == "orig"} == set(range(len(kernel.code)))
    dk, report = convert_kernel(assemble(DIVERGENT).only, dmax=31, ring=32)
    assert report.duplicated >= 15  # the loop body was written four times (its exits are lone syncs)


def test_multi_block_loops_unroll_like_the_original():
    kernel = assemble(MULTI_BLOCK).only
    loops = unrollable_loops(kernel, 64)
    assert len(loops) == 2
    for chosen in (loops[:1], loops[1:], loops):
        done = unroll(kernel, chosen)
        assert len(done.kernel.code) == len(kernel.code) + sum(lp.end - lp.start + 1 for lp in chosen) + (
            1 if any(kernel.code[lp.end].op is not Opcode.BRA for lp in chosen) else 0)
        for n in (0, 1, 2, 5):
            assert np.array_equal(_outputs(done.kernel, n), _outputs(kernel, n)), (chosen, n)
    for dmax, ring in [(12, 13), (16, 20), (31, 32), (63, 64), (100, 128)]:
        dk, report = convert_kernel(kernel, dmax=dmax, ring=ring)
        for n in (0, 1, 2, 5):
            assert np.array_equal(_outputs(dk, n), _outputs(kernel, n)), (dmax, n)
    dk, report = convert_kernel(kernel, dmax=63, ring=64)
    assert report.duplicated >= 10  # a loop of several blocks was written twice

"""The converter never emits a ``bra`` to the next instruction (an instruction and a fetch stall
each time it runs, for nothing): not in any registered workload's kernels (pathfinder's unrolled
loop, whose ``bra`` back edge the first copy continues through, had one), nor in the property
test's generated programs, at every Dmax the property test uses."""

from __future__ import annotations

import pytest

from dualflow.isa import Form, Kernel, Opcode, assemble
from dualflow.isa.convert import convert_kernel, convert_module
from dualflow.kernels.registry import HAND_WRITTEN, WORKLOADS
from dualflow.testbench.randprog.generator import RandomSource, generate

#: (Dmax, ring) as in tests/isa/convert/test_convert_property.py.
DMAX_RING = [(12, 13), (16, 20), (31, 32), (100, 128)]
PROGRAMS = 30


def jumps_to_next(kernel: Kernel) -> list[int]:
    return [pc for pc, ins in enumerate(kernel.code) if ins.op is Opcode.BRA and ins.bimm and ins.imm == pc + 1]


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))  # the converter's training set
def test_workloads_have_no_branch_to_the_next_pc(name):
    module, reports = convert_module(WORKLOADS[name]().module(Form.REG))
    for kernel in module:
        assert not jumps_to_next(kernel), (name, kernel.name, jumps_to_next(kernel))
        assert len(reports[kernel.name].causes) == len(kernel.code) == len(reports[kernel.name].loop_of)


@pytest.mark.parametrize("dmax, ring", DMAX_RING, ids=[f"dmax{d}" for d, _ in DMAX_RING])
def test_generated_programs_have_no_branch_to_the_next_pc(dmax, ring):
    for seed in range(PROGRAMS):
        kernel = assemble(generate(RandomSource(seed)).text).only
        out, report = convert_kernel(kernel, dmax=dmax, ring=ring)
        assert not jumps_to_next(out), (seed, jumps_to_next(out))
        assert len(report.causes) == len(out.code) == len(report.loop_of) == len(report.source_pc)


def test_a_loop_with_a_bra_back_edge_unrolled_has_none():
    # The exit test sits inside the loop (as in pathfinder): the back edge is a `bra`, and the
    # first of two copies falls into the second.
    kernel = assemble("""
.kernel mid_exit
.form reg
.param out n
    s2r r0, %tid.x
    ldc r1, n
    ldc r7, out
    mov r2, 0
    mov r3, 0
LOOP:
    iadd r3, r3, r0
    iadd r3, r3, r7
    iadd r2, r2, 1
    isetp.ge r4, r2, r1
    brnz r4, DONE
    imul r3, r3, r1
    bra LOOP
DONE:
    ishl r5, r0, 2
    iadd r5, r7, r5
    stg [r5], r3
    exit
""").only
    out, report = convert_kernel(kernel)
    assert any(loop.copies > 1 for loop in report.loops)  # the case in question: it was unrolled
    assert not jumps_to_next(out)

"""A join's first reader of a lane-dependent loop's result moved into the region's exit paths
(``dualflow/isa/convert/sink.py``): where it may move, that the REG kernel computes the same with it
moved, and that the converter keeps the move only where it saves the copy per group of lanes."""

from __future__ import annotations

import numpy as np
import pytest

from dualflow.isa import Form, assemble
from dualflow.isa.convert import VARIANTS, convert_kernel
from dualflow.isa.convert.sink import sink_into_exits
from dualflow.isa.opcodes import Opcode, Variant
from dualflow.kernels.registry import WORKLOADS
from dualflow.testbench.randprog.generator import Launch, make_inputs, run

LAUNCHES = [Launch(32, 32, 2), Launch(4, 16, 4)]


def _unit_weights(cfg) -> dict[int, float]:
    return {}


# Thread i sums k*k for k = 0, 1, ... while k <= i & 7, leaving early once the sum passes 40:
# a lane-dependent loop with two exits, each closing the region with its own sync. The join's
# readers of the sum (imul) and then of the counter (iadd, which also reads what the imul wrote)
# both move onto both exits.
TWO_EXITS = """
.kernel two_exits
.form reg
.param in out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ldc r5, out
    ishl r7, r3, 2
    iadd r5, r5, r7
    iand r6, r3, 7
    mov r10, 0
    mov r8, 0
    ssy JOIN
LOOP:
    imad r10, r8, r8, r10
    iadd r8, r8, 1
    isetp.gt r9, r10, 40
    brnz r9, EARLY
    isetp.le r9, r8, r6
    brnz r9, LOOP
    sync
EARLY:
    sync
JOIN:
    imul r11, r10, 3
    iadd r11, r11, r8
    stg [r5], r11
    exit
"""


def two_exits_expected(i: int) -> int:
    acc, k = 0, 0
    while True:
        acc += k * k
        k += 1
        if acc > 40 or k > i & 7:
            return 3 * acc + k


def _out(kernel, launch: Launch) -> np.ndarray:
    return run(kernel, launch, launch.threads, 1, make_inputs(0))


def test_the_join_reader_moves_onto_every_exit_path_and_computes_the_same():
    reg = assemble(TWO_EXITS).only
    sunk = sink_into_exits(reg, _unit_weights)
    assert sunk is not None and sunk.moved == 2
    code = sunk.kernel.code
    syncs = [pc for pc, ins in enumerate(code) if ins.op is Opcode.SYNC]
    imul, iadd = len(reg.code) - 4, len(reg.code) - 3  # the join's first two instructions
    assert [sunk.origin[pc - 2:pc] for pc in syncs] == [[imul, iadd]] * 2
    ssy = next(ins for ins in code if ins.op is Opcode.SSY)
    assert code[ssy.imm].op is Opcode.STG
    assert sunk.extra == 2.0  # each: two copies where there was one, each run once
    assert sunk.kernel.labels[ssy.imm] == "JOIN"
    for launch in LAUNCHES:
        expected = np.array([two_exits_expected(i) for i in range(launch.threads)], np.uint32)
        assert np.array_equal(_out(reg, launch), expected)
        assert np.array_equal(_out(sunk.kernel, launch), expected)


@pytest.mark.parametrize("variants", [frozenset(), frozenset({Variant.HANDS}), VARIANTS],
                         ids=["original", "hands", "all"])
@pytest.mark.parametrize("ring", [16, 32])
def test_converted_with_or_without_the_move_it_computes_the_same(variants, ring):
    reg = assemble(TWO_EXITS).only
    out, _ = convert_kernel(reg, ring=ring, dmax=min(ring - 1, 31), variants=variants)
    for launch in LAUNCHES:
        expected = np.array([two_exits_expected(i) for i in range(launch.threads)], np.uint32)
        assert np.array_equal(_out(out, launch), expected)


def test_divloop_with_hands_writes_the_join_reader_on_its_exit_path_instead_of_a_copy():
    reg = WORKLOADS["divloop"]().module(Form.REG).only
    out, report = convert_kernel(reg, variants=frozenset({Variant.HANDS}))
    assert "relay-join" not in report.static_overhead()
    i2f = [pc for pc, ins in enumerate(out.code) if ins.op is Opcode.I2F]
    assert len(i2f) == 1 and out.code[i2f[0] + 1].op is Opcode.SYNC


@pytest.mark.parametrize("join, why", [
    ("    vote.any r11, r10\n    stg [r5], r11\n", "a vote reads the active lanes"),
    ("    iadd r10, r10, 1\n    imul r11, r10, 3\n    stg [r5], r11\n", "the join writes the sum first"),
    ("    imul r11, r10, 3\n    iadd r11, r11, r10\n    stg [r5], r11\n", "the sum is read again"),
    ("    imul r11, r6, 3\n    stg [r5], r11\n", "reads no value of the loop"),
    ("    ldc r11, n\n    iadd r11, r11, r10\n    stg [r5], r11\n", "reads what the join loads"),
], ids=["vote", "written-first", "read-again", "not-carried", "loaded"])
def test_a_join_reader_stays_where_moving_it_would_change_or_save_nothing(join, why):
    text = TWO_EXITS[:TWO_EXITS.index("JOIN:\n") + len("JOIN:\n")] + join + "    exit\n"
    assert sink_into_exits(assemble(text).only, _unit_weights) is None, why

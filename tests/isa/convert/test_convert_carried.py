"""The converter's carried hand (dualflow/isa/convert/carried.py): the values an innermost loop carries
from one iteration to the next, written once per iteration, sit on hand t at distances that are
the same in every iteration, so a long loop body needs no relay for them."""

from __future__ import annotations

from programs import launch_out

from dualflow.isa import Opcode, Variant, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.isa.convert.carried import CARRIED_HAND, find
from dualflow.isa.convert.cfg import build_cfg
from dualflow.isa.convert.surgery import isolate_critical_edges

HANDS = frozenset({Variant.HANDS})

#: Each thread runs n iterations of a body of 20 values (longer than LONG_SPAN) that carries i
#: (r2: read before its update, and by the loop's test after it) and p (r4: read after its
#: update), and stores the iteration's value to out[tid] (the last iteration's stays).
_CHAIN = "\n".join(f"    iadd r{11 + i}, r{10 + i}, {i + 1}" for i in range(16))
LONG_BODY = f""".kernel k
.param out n
    s2r r0, %tid.x
    ldc r1, n
    ishl r9, r0, 2
    ldc r27, out
    iadd r9, r9, r27
    mov r2, 0
    mov r4, 1
LOOP:
    iadd r10, r2, r0
{_CHAIN}
    iadd r4, r4, r2
    iadd r3, r26, r4
    stg [r9], r3
    iadd r2, r2, 1
    isetp.lt r8, r2, r1
    brnz r8, LOOP
    exit
"""


def _reference(t: int, n: int) -> int:
    p = 1
    for i in range(n):
        p += i
        value = i + t + sum(range(1, 17)) + p
    return value


def test_the_loops_carried_values_written_once_per_iteration_qualify_in_update_order():
    cfg = build_cfg(assemble(LONG_BODY).only)
    isolate_critical_edges(cfg)
    carried = find(cfg, {})
    assert carried is not None and carried.regs == [4, 2]  # p is updated first


def test_a_long_loop_body_reads_its_carried_values_on_hand_t_with_no_relay():
    k, report = convert_kernel(assemble(LONG_BODY).only, ring=24, variants=HANDS)
    assert Variant.HANDS in k.variants and len(k.rings) >= 2 and sum(k.rings) <= 24
    in_loop = [(ins, c) for ins, c, at in zip(k.code, report.causes, report.loop_of) if at is not None]
    assert in_loop and all(c == "orig" for _, c in in_loop)
    assert sum(ins.dst_hand == CARRIED_HAND for ins, _ in in_loop) == 2  # p and i, once per iteration
    got = launch_out(k, 1, 32, 32, extra_params=(5,))[2]
    assert got.tolist() == [_reference(t, 5) for t in range(32)]


def test_without_the_carried_hand_the_same_budget_relays_in_the_loop():
    """The check above can fail: hand s alone (the original form, same budget, hand s's Dmax) pays
    in the loop."""
    k, report = convert_kernel(assemble(LONG_BODY).only, dmax=16, ring=24)
    assert any(c != "orig" for c, at in zip(report.causes, report.loop_of) if at is not None)


#: A short loop (3 values per iteration) whose sum s (r3) and counter k (r4) the preheader's own
#: ``mov``s start, and whose exit block reads the last sum before the lanes reconverge.
SHORT = """.kernel k
.param out n
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, out
    iadd r1, r1, r2
    iand r5, r0, 3
    mov r3, 0
    mov r4, 0
    ssy JOIN
LOOP:
    iadd r3, r3, r4
    iadd r4, r4, 1
    isetp.le r6, r4, r5
    brnz r6, LOOP
    mov r7, r3
    sync
JOIN:
    stg [r1], r7
    exit
"""


def test_a_short_loops_carried_values_start_where_the_preheader_computes_them():
    cfg = build_cfg(assemble(SHORT).only)
    isolate_critical_edges(cfg)
    assert find(cfg, {}) is None  # not worth a hand by default: 3 values per iteration
    carried = find(cfg, {}, least=0)
    assert carried is not None and carried.regs == [3, 4]  # r3 read at the exit too
    k, report = convert_kernel(assemble(SHORT).only, ring=16, variants=HANDS)
    on_t = [ins for ins in k.code if ins.dst and ins.dst_hand == CARRIED_HAND]
    assert [ins.op for ins in on_t[:2]] == [Opcode.MOV, Opcode.MOV]  # the ``mov 0``s: no copy, no pad
    assert report.static_overhead() == {}
    got = launch_out(k, 1, 32, 32, extra_params=(0,))[2]
    assert got.tolist() == [sum(range((t & 3) + 1)) for t in range(32)]


#: A halving loop as clang writes ``for (h = n << (tid & 3); ...; h >>= 1)`` with its test on the
#: old stride: the new one is computed into r6 (S), the old one is still read after it (the
#: ``ixor`` and the test), and a latch copy ``mov r3, r6`` (C) carries it. The trip count depends on
#: the lane.
HALVING = """.kernel k
.param out n
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, out
    iadd r1, r1, r2
    ldc r3, n
    iand r4, r0, 3
    ishl r3, r3, r4
    iadd r5, r0, 7
    ssy JOIN
LOOP:
    ishr r6, r3, 1
    iadd r5, r5, r6
    ixor r5, r5, r3
    usetp.gt r7, r3, 1
    mov r3, r6
    brnz r7, LOOP
    sync
JOIN:
    stg [r1], r5
    exit
"""


def _halving(t: int, n: int) -> int:
    h, acc = n << (t & 3), t + 7
    while True:
        acc = ((acc + (h >> 1)) ^ h) & 0xFFFFFFFF
        if h <= 1:
            return acc
        h >>= 1


def test_a_latch_copy_of_a_carried_value_is_coalesced_on_hand_t():
    """S writes the update on hand t, the copy is dropped (reported as removed), the old stride
    is read at its own distance after S, and the code computes what REG computes."""
    kernel = assemble(HALVING).only
    cfg = build_cfg(kernel)
    isolate_critical_edges(cfg)
    carried = find(cfg, {})  # a short loop, worth the hand for the copy it saves
    assert carried is not None and carried.regs == [3] and carried.source == {3: 6}
    copy = next(pc for pc, ins in enumerate(kernel.code) if ins.op is Opcode.MOV and ins.dst == 4 and ins.b == 7)
    k, report = convert_kernel(kernel, ring=16, variants=HANDS)
    assert copy in report.removed and copy not in report.source_pc
    in_loop = [ins for ins, at in zip(k.code, report.loop_of) if at is not None]
    assert not any(ins.op is Opcode.MOV for ins in in_loop)
    assert sum(ins.dst_hand == CARRIED_HAND for ins in in_loop) == 1  # the new stride, once per iteration
    for n in (1, 6, 64):
        got = launch_out(k, 1, 32, 32, extra_params=(n,))[2]
        assert got.tolist() == [_halving(t, n) for t in range(32)]


def test_a_copy_whose_source_is_read_after_the_loop_is_not_coalesced():
    """The check above can fail: where the copy's source lives on past the loop, S cannot be the
    update (the copy stays, and the short loop is not worth the hand)."""
    text = HALVING.replace("    stg [r1], r5\n", "    iadd r5, r5, r6\n    stg [r1], r5\n")
    cfg = build_cfg(assemble(text).only)
    isolate_critical_edges(cfg)
    assert find(cfg, {}) is None
    carried = find(cfg, {}, least=0)
    assert carried is None or not carried.source


def test_a_value_copied_into_two_carried_registers_is_coalesced_into_one():
    """S can write one update: the second copy of the same source stays a copy (and a register
    of its own on the hand), and the code still computes what REG computes."""
    text = HALVING.replace("    iadd r5, r0, 7\n", "    iadd r5, r0, 7\n    ldc r8, n\n").replace(
        "    mov r3, r6\n", "    mov r3, r6\n    ixor r5, r5, r8\n    mov r8, r6\n")
    kernel = assemble(text).only
    cfg = build_cfg(kernel)
    isolate_critical_edges(cfg)
    carried = find(cfg, {})
    assert carried is not None and carried.source == {3: 6}
    k, _ = convert_kernel(kernel, ring=16, variants=HANDS)
    for n in (1, 6):
        got = launch_out(k, 1, 32, 32, extra_params=(n,))[2]
        want = []
        for t in range(32):
            h, acc, m = n << (t & 3), t + 7, n
            while True:
                acc = ((acc + (h >> 1)) ^ h ^ m) & 0xFFFFFFFF
                stop = h <= 1
                h >>= 1
                m = h
                if stop:
                    break
            want.append(acc)
        assert got.tolist() == want

"""Early exits from several nesting levels that share one exit block (``dualflow/isa/convert/cfg.py``):
the block, and the code after it, is reached with different stacks of open ``ssy`` regions, so
the CFG walk gives it one copy per stack; the converted kernel computes what the REG kernel
computes for the lanes that take each exit, at every Dmax of the property test (Dmax 12, ring 13:
relays and spills). A block whose ``sync`` would close different regions depending on the path
is still refused."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dualflow.isa import Kernel, assemble
from dualflow.isa.convert import ConvertError, convert_kernel
from dualflow.isa.convert.cfg import build_cfg
from dualflow.testbench.randprog.generator import Launch, make_inputs, run

#: (Dmax, ring) as in tests/isa/convert/test_convert_property.py.
DMAX_RING = [(12, 13), (16, 20), (31, 32), (100, 128)]
DMAX_IDS = [f"dmax{d}" for d, _ in DMAX_RING]
LAUNCHES = [Launch(32, 32, 2), Launch(4, 16, 4)]
THREADS = 64

# Thread i: odd threads run a loop inside the region (r10 += 3 while r10 < 12) and leave from
# inside it once r10 passes i; then every thread with bit 1 of i set leaves from the outer level.
# Both exits share EXIT, which stores 1000 * level + r10 (level in r12).
TWO_LEVEL = """
.kernel two_level_exit
.form reg
.param in out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ldc r5, out
    ishl r7, r3, 2
    iadd r5, r5, r7
    mov r10, 0
    mov r12, 1
    iand r8, r3, 1
    ssy JOIN
    brz r8, SKIP
LOOP:
    iadd r10, r10, 3
    isetp.gt r9, r10, r3
    brnz r9, EXIT
    isetp.lt r9, r10, 12
    brnz r9, LOOP
SKIP:
    sync
JOIN:
    mov r12, 2
    iand r8, r3, 2
    brnz r8, EXIT
    iadd r10, r10, 500
    stg [r5], r10
    exit
EXIT:
    imul r11, r12, 1000
    iadd r11, r11, r10
    stg [r5], r11
    exit
"""


def two_level_expected(i: int) -> int:
    r10 = 0
    if i % 2:
        while True:
            r10 += 3
            if r10 > i:
                return 1000 + r10  # the inner exit
            if r10 >= 12:
                break
    return 2000 + r10 if i & 2 else r10 + 500


# Three levels leave through one tail: from inside an inner if (open: outer, inner), from the
# outer if (open: outer) and from the top (none). The tail branches within itself: lanes with
# bit 4 of i set store a second word first. Two words per thread.
THREE_LEVEL_BRANCHY_TAIL = """
.kernel three_level_exit
.form reg
.param in out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ldc r5, out
    ishl r7, r3, 3
    iadd r5, r5, r7
    mov r10, 1
    iand r8, r3, 1
    ssy JOIN
    brz r8, SKIP
    iand r9, r3, 2
    ssy INNER
    brz r9, ELSE
    imul r10, r10, 5
    iand r8, r3, 8
    brnz r8, EXIT
    sync
ELSE:
    iadd r10, r10, 9
    sync
INNER:
    iadd r10, r10, 1
    iand r8, r3, 4
    brnz r8, EXIT
    sync
SKIP:
    sync
JOIN:
    iand r8, r3, 32
    brnz r8, EXIT
    stg [r5], r10
    exit
EXIT:
    imul r11, r10, 7
    iand r9, r3, 16
    brz r9, STORE
    iadd r12, r11, 1000
    stg [r5+4], r12
STORE:
    stg [r5], r11
    exit
"""


def three_level_expected(i: int) -> tuple[int, int]:
    r10, leave = 1, False
    if i & 1:
        if i & 2:
            r10 *= 5
            leave = bool(i & 8)
        else:
            r10 += 9
        if not leave:
            r10 += 1
            leave = bool(i & 4)
    leave = leave or bool(i & 32)
    if not leave:
        return r10, 0xA5A5A5A5
    r11 = 7 * r10
    return r11, (r11 + 1000 if i & 16 else 0xA5A5A5A5)


# The shared tail holds an if/else of its own: each copy of the tail opens its own region.
TAIL_WITH_IF = """
.kernel tail_with_if
.form reg
.param in out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ldc r5, out
    ishl r7, r3, 2
    iadd r5, r5, r7
    mov r10, 1
    iand r8, r3, 1
    ssy JOIN
    brz r8, SKIP
    iadd r10, r10, 4
    iand r9, r3, 2
    brnz r9, EXIT
    sync
SKIP:
    sync
JOIN:
    iand r8, r3, 4
    brnz r8, EXIT
    stg [r5], r10
    exit
EXIT:
    imul r11, r10, 7
    iand r9, r3, 8
    ssy TJOIN
    brz r9, TELSE
    iadd r11, r11, 1000
    sync
TELSE:
    iadd r11, r11, 3
    sync
TJOIN:
    stg [r5], r11
    exit
"""


def tail_with_if_expected(i: int) -> int:
    r10 = 1
    if i & 1:
        r10 += 4
        if i & 2:
            return 7 * r10 + (1000 if i & 8 else 3)
    if i & 4:
        return 7 * r10 + (1000 if i & 8 else 3)
    return r10


def _run(kernel: Kernel, launch: Launch, slots: int) -> np.ndarray:
    return run(kernel, launch, THREADS, slots, make_inputs(0)).reshape(THREADS, slots)


def _copies(kernel: Kernel) -> dict[int, list[tuple[int, ...]]]:
    """First pc of each copied block -> the region stacks its original and copies are entered with."""
    cfg = build_cfg(kernel)
    stacks: dict[int, list[tuple[int, ...]]] = {}
    for b in cfg.blocks:
        if b.copy_of is not None:
            stacks.setdefault(b.first_pc, [cfg.blocks[b.copy_of].stack]).append(b.stack)
    return stacks


def _translations(report, pcs) -> list[int]:
    """How many times each of these REG pcs was translated."""
    counts = Counter(pc for cause, pc in zip(report.causes, report.source_pc) if cause == "orig")
    return [counts[pc] for pc in pcs]


def _pcs_from(kernel: Kernel, label: str) -> list[int]:
    start = next(pc for pc, name in kernel.labels.items() if name == label)
    return list(range(start, len(kernel.code)))


def test_two_level_exit_copies_the_tail_once():
    kernel = assemble(TWO_LEVEL).only
    exit_pc = _pcs_from(kernel, "EXIT")[0]
    assert _copies(kernel) == {exit_pc: [(0,), ()]}  # inside the region, and outside it


@pytest.mark.parametrize("launch", LAUNCHES, ids=str)
@pytest.mark.parametrize("dmax, ring", DMAX_RING, ids=DMAX_IDS)
def test_two_level_exit_converts_and_agrees(dmax, ring, launch):
    kernel = assemble(TWO_LEVEL).only
    ref = _run(kernel, launch, 1)[:, 0]
    assert ref.tolist() == [two_level_expected(i) for i in range(THREADS)]
    assert {v // 1000 for v in ref.tolist()} == {0, 1, 2}  # normal lanes, inner and outer exits
    dk, report = convert_kernel(kernel, dmax=dmax, ring=ring)
    assert np.array_equal(_run(dk, launch, 1)[:, 0], ref)
    assert _translations(report, _pcs_from(kernel, "EXIT")) == [2, 2, 2, 2]  # one per stack


def test_three_level_exit_copies_each_tail_block_per_extra_stack():
    kernel = assemble(THREE_LEVEL_BRANCHY_TAIL).only
    tail = _pcs_from(kernel, "EXIT")
    copies = _copies(kernel)
    store = _pcs_from(kernel, "STORE")[0]
    # Three tail blocks (the exit, the extra store, STORE), three stacks: two copies of each.
    assert sorted(copies) == [tail[0], tail[3], store]
    assert all(sorted(stacks) == [(), (0,), (0, 1)] for stacks in copies.values())


@pytest.mark.parametrize("dmax, ring", DMAX_RING, ids=DMAX_IDS)
def test_three_level_exit_converts_and_agrees(dmax, ring):
    kernel = assemble(THREE_LEVEL_BRANCHY_TAIL).only
    ref = _run(kernel, LAUNCHES[0], 2)
    assert [tuple(row) for row in ref.tolist()] == [three_level_expected(i) for i in range(THREADS)]
    dk, report = convert_kernel(kernel, dmax=dmax, ring=ring)
    assert np.array_equal(_run(dk, LAUNCHES[0], 2), ref)
    # One translation per stack; STORE (a store and exit) is tiny: in the two copies inside
    # regions, the branch's edge into it is split with one more copy of it (surgery.py).
    assert _translations(report, _pcs_from(kernel, "EXIT")) == [3, 3, 3, 3, 3, 5, 5]


@pytest.mark.parametrize("dmax, ring", DMAX_RING, ids=DMAX_IDS)
def test_tail_with_its_own_if_converts_and_agrees(dmax, ring):
    kernel = assemble(TAIL_WITH_IF).only
    cfg = build_cfg(kernel)
    tail_ssy = _pcs_from(kernel, "EXIT")[2]
    assert sum(1 for r in cfg.regions.values() if r.pc == tail_ssy) == 2  # a region per copy of the tail
    ref = _run(kernel, LAUNCHES[0], 1)[:, 0]
    assert ref.tolist() == [tail_with_if_expected(i) for i in range(THREADS)]
    dk, _ = convert_kernel(kernel, dmax=dmax, ring=ring)
    assert np.array_equal(_run(dk, LAUNCHES[0], 1)[:, 0], ref)


# B's sync closes `ssy J`'s region when reached from the outer if, `ssy K`'s from the inner one.
SYNC_IN_TWO_REGIONS = """\
.kernel bad
    s2r r0, %laneid
    iand r1, r0, 1
    ssy J
    brz r1, B
    ssy K
    brz r1, B
    sync
B:
    sync
K:
    sync
J:
    exit
"""

# An ssy in a loop whose region never closes: every iteration would open one more.
SSY_IN_LOOP_WITHOUT_SYNC = """\
.kernel bad
    s2r r0, %laneid
    mov r1, 0
L:
    ssy J
    iadd r1, r1, 1
    isetp.lt r2, r1, r0
    brnz r2, L
    exit
J:
    exit
"""


@pytest.mark.parametrize("text, pc, line", [(SYNC_IN_TWO_REGIONS, 7, 10), (SSY_IN_LOOP_WITHOUT_SYNC, 2, 5)],
                         ids=["sync-in-two-regions", "ssy-in-loop-without-sync"])
def test_unstructured_reconvergence_is_still_refused(text, pc, line):
    kernel = assemble(text, "bad.s").only
    with pytest.raises(ConvertError, match="unstructured reconvergence") as err:
        convert_kernel(kernel)
    assert f"kernel 'bad', pc {pc} (bad.s:{line})" in str(err.value)

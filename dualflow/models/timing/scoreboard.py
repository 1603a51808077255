"""Dependency tracking of one warp, in the two modes the paper compares.

BASE (``RegisterScoreboard``): the classic GPU scoreboard. An instruction may issue only when
none of its source registers (true dependency, RAW) and not its destination register (false
dependency, WAW) has a write in flight. Its operands are therefore ready when it enters a
collector unit, and instructions of a warp dispatch in order.

D-FLOW (``RingScoreboard``): operands are ring positions. Issue never waits for a source: the
collector unit waits for it (true dependencies only; there are no false ones, since every
producer writes a fresh position). What remains is the ring guard: a producer at position p
overwrites slot p mod R, which held position p - R, so it may not issue while (a) the producer of
the slot's current value has not written back (two writes in flight to one slot), or (b) a
collector unit of this warp still has to read position p - R. Distances never exceed Dmax < R,
so no instruction that has not issued yet can need position p - R.

D-FLOW with ``Variant.HANDS`` (``HandsScoreboard``): one ring per hand, each with its RP. The
rings' slots are numbered into one slot space of ``capacity`` entries per warp, hand h's slot s
being ``base_h + s`` (``base_h`` the sum of the rings before h), which is also the register-file
entry the bank mapping sees. A source (h, d) is position RP_h - d of hand h; a producer on hand
h writes position RP_h, slot ``base_h + RP_h mod N_h``, and its ring guard concerns that slot's
previous value, position RP_h - N_h of the same hand, only: the other hands' readers never hold
it back.
"""

from __future__ import annotations

from .program import StaticInstruction

#: Readiness cycle of a value whose producer has not written back.
PENDING = 1 << 62


class RegisterScoreboard:
    """BASE: pending writes per register. An instruction issues only when its operands are
    final, so its collector unit may read them at once (even when it overwrites a source)."""

    __slots__ = ("pending",)

    def __init__(self, regs: int):
        self.pending = [0] * max(regs, 1)

    def blocked(self, ins: StaticInstruction) -> bool:
        """True dependency on a source, or a false (WAW) dependency on the destination."""
        if ins.dst >= 0 and self.pending[ins.dst]:
            return True
        return any(self.pending[r] for r in ins.sources)

    def issue(self, ins: StaticInstruction) -> None:
        if ins.dst >= 0:
            self.pending[ins.dst] += 1

    def writeback(self, dst: int, cycle: int) -> None:
        self.pending[dst] -= 1


class RingScoreboard:
    """D-FLOW: per ring slot, the cycle its current value becomes readable (``PENDING`` while
    its producer is in flight), and the positions collector units still have to read."""

    __slots__ = ("ring", "ready", "unread")

    def __init__(self, ring: int):
        self.ring = ring
        self.ready = [0] * ring
        self.unread: dict[int, int] = {}  # position -> reads still outstanding in collector units

    def guard_blocks(self, position: int) -> bool:
        """Would a producer at ``position`` overwrite a value still needed or still in flight?"""
        return self.slot_busy(position % self.ring)

    def slot_busy(self, slot: int) -> bool:
        """Is ``slot``'s value in flight, or has a collector unit still to read it? Any position of
        the slot counts, as in the RTL's guard: usually position - ring, but a divergent path
        whose RP was rewound at its SIMT-stack entry reissues the positions another lane group
        wrote, whose readers may not have read them yet."""
        return self.ready[slot] == PENDING or any(key % self.ring == slot for key in self.unread)

    def issue(self, position: int) -> None:
        self.ready[position % self.ring] = PENDING

    def waits(self, rp: int, distances: tuple[int, ...], cycle: int) -> bool:
        """Would an instruction at ``rp`` reading ``distances`` wait in its collector unit?"""
        return any(self.ready[(rp - d) % self.ring] > cycle for d in distances)

    def add_reader(self, position: int) -> None:
        self.unread[position] = self.unread.get(position, 0) + 1

    def read_done(self, position: int) -> None:
        left = self.unread[position] - 1
        if left:
            self.unread[position] = left
        else:
            del self.unread[position]

    def writeback(self, slot: int, cycle: int) -> None:
        self.ready[slot] = cycle + 1


class HandsScoreboard(RingScoreboard):
    """D-FLOW, ``Variant.HANDS``: ``RingScoreboard`` over the slot space of every hand's ring
    (``ring`` is the capacity, ``ready`` one entry per slot). A value at position p of hand h is
    keyed ``p * capacity + slot``: one key per (hand, position), and the key mod the capacity is
    its slot, as a position mod the ring is in one ring (so ``add_reader``, ``read_done`` and
    ``writeback`` are ``RingScoreboard``'s)."""

    __slots__ = ("rings", "bases")

    def __init__(self, rings: tuple[int, ...]):
        super().__init__(sum(rings))
        self.rings = tuple(rings)
        self.bases = tuple(sum(rings[:h]) for h in range(len(rings)))

    def slot(self, hand: int, position: int) -> int:
        """The slot (in the warp's slot space) of position ``position`` of hand ``hand``."""
        return self.bases[hand] + position % self.rings[hand]

    def key(self, hand: int, position: int) -> int:
        """The key of position ``position`` of hand ``hand`` (``unread``'s, operands')."""
        return position * self.ring + self.slot(hand, position)

    def hand_guard_blocks(self, hand: int, position: int) -> bool:
        """Would a producer at ``position`` of ``hand`` overwrite a value still needed or still
        in flight (its slot's value, ``slot_busy``)?"""
        return self.slot_busy(self.slot(hand, position))

    def hand_issue(self, hand: int, position: int) -> int:
        """A producer at ``position`` of ``hand`` issues: its slot, now pending."""
        slot = self.slot(hand, position)
        self.ready[slot] = PENDING
        return slot

    def hand_waits(self, rps: list[int], distances: tuple[int, ...], hands: tuple[int, ...], cycle: int) -> bool:
        """Would an instruction issued with the hands' RPs ``rps``, reading ``distances`` back on
        ``hands``, wait in its collector unit?"""
        return any(self.ready[self.slot(h, rps[h] - d)] > cycle for d, h in zip(distances, hands))

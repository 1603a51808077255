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
        pending = self.pending
        if ins.dst >= 0 and pending[ins.dst]:
            return True
        return any(pending[r] for r in ins.sources)

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
        slot = position % self.ring
        return self.ready[slot] == PENDING or (position - self.ring) in self.unread

    def issue(self, position: int) -> None:
        self.ready[position % self.ring] = PENDING

    def waits(self, rp: int, distances: tuple[int, ...], cycle: int) -> bool:
        """Would an instruction at ``rp`` reading ``distances`` wait in its collector unit?"""
        ready, ring = self.ready, self.ring
        return any(ready[(rp - d) % ring] > cycle for d in distances)

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

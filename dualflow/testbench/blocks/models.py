"""Transaction-level Python models of the RTL core's storage and dependency blocks.

Each model is the bench's reference: it gets the same inputs the DUT saw in a cycle and says
what the DUT must answer (handshakes, grants, data, state). They are written from the
docstrings of ``dualflow.rtl.regfile``, ``collector``, ``scoreboard``, ``register_pointer`` and
``simt_stack`` (the contract), not from the RTL. ``inject`` switches on one deliberate model bug
per model, used by the expect-fail tests to prove the checkers can fail. The register file's bank
mapping and the warp scheduler's order are the machine's and the timing model's own rules
(``dualflow.machine.register_bank``, ``dualflow.models.timing.warp_order``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.machine import register_bank
from dualflow.models.timing.warp_order import warp_order

MASK32 = 0xFFFF_FFFF


# ====================================================================== register file
class RegisterFileModel:
    """Banked register file with per-bank round-robin read arbitration and write priority."""

    def __init__(self, *, warps: int, lanes: int, banks: int, entries: int, read_ports: int, write_ports: int,
                 inject: bool = False):
        self.warps, self.lanes, self.banks, self.entries = warps, lanes, banks, entries
        self.read_ports, self.write_ports, self.inject = read_ports, write_ports, inject
        self.values: dict[tuple[int, int], list[int]] = {}
        self.ptr = [0] * banks

    def bank(self, warp: int, index: int) -> int:
        return register_bank(index, warp, self.banks)

    def value(self, warp: int, index: int) -> list[int]:
        return self.values.get((warp, index), [0] * self.lanes)

    def write_ready(self, writes: list[tuple[int, int] | None]) -> list[bool]:
        """Port j is ready unless a lower port writes the same bank this cycle."""
        taken: set[int] = set()
        ready = []
        for w in writes:
            b = self.bank(*w) if w is not None else None
            ready.append(b not in taken if b is not None else True)
            if b is not None:
                taken.add(b)
        return ready

    def arbitrate(self, reads: list[tuple[int, int] | None], busy: set[int]) -> list[bool]:
        """Grants this cycle (and advance the pointers): per bank the first requester at or after
        the bank's pointer, wrapping; a bank written this cycle grants nothing."""
        grants = [False] * self.read_ports
        n = self.read_ports
        for b in range(self.banks):
            if b in busy:
                continue
            wants = [i for i, r in enumerate(reads) if r is not None and self.bank(*r) == b]
            if not wants:
                continue
            after = [i for i in wants if i >= self.ptr[b]]
            pick = (after or wants)[0]
            grants[pick] = True
            self.ptr[b] = (pick + 1) % n
        return grants

    def write(self, warp: int, index: int, mask: int, data: list[int]) -> None:
        old = self.value(warp, index)
        # The injected bug: lane enables ignored.
        self.values[(warp, index)] = [d if (mask >> lane & 1 or self.inject) else o
                                      for lane, (o, d) in enumerate(zip(old, data))]


# ====================================================================== warp scheduler
class WarpSchedulerModel:
    """``rtl.scheduler.WarpScheduler``: the timing model's warp order (``policy``) over the warp
    indices, with the RTL's state: ``last`` resets to warp 0 and moves to the granted warp when it
    issues (see dualflow/models/timing/warp_order.py for how this state differs from the timing model's)."""

    def __init__(self, *, warps: int, policy: str, two_level: bool = False):
        self.order = warp_order(policy)
        self.warps = list(range(warps))
        self.two_level = two_level
        self.last = 0

    def grant(self, ready: int, prefer: int = 0) -> int | None:
        """The warp granted for ``ready`` (and, two-level, ``prefer``) bit vectors; None if none is ready."""
        return self.order.choose(self.warps, self.warps[self.last], lambda w: ready >> w & 1,
                                 (lambda w: prefer >> w & 1) if self.two_level else None)

    def step(self, ready: int, prefer: int, issue: bool) -> None:
        """End of a cycle: the grant, if any, issued when ``issue``."""
        granted = self.grant(ready, prefer)
        if granted is not None and issue:
            self.last = granted


# ====================================================================== register pointers
class RegisterPointerModel:
    """Per-warp RP counters of ``bits`` bits: set (priority) or advance."""

    def __init__(self, *, warps: int, bits: int, inject: bool = False):
        self.rp = [0] * warps
        self.mask = (1 << bits) - 1
        self.inject = inject

    def step(self, advance: tuple[int, int] | None, set_: tuple[int, int] | None) -> None:
        if advance is not None and not (set_ is not None and set_[0] == advance[0]):
            w, count = advance
            self.rp[w] = (self.rp[w] + count + (1 if self.inject and count > 3 else 0)) & self.mask
        if set_ is not None:
            self.rp[set_[0]] = set_[1] & self.mask


class HandPointerModel:
    """Per-warp, per-hand RPs of ``bits`` bits (docs/isa.md, hands): an advance moves one hand's
    RP, a set (priority, the SIMT stack's resume) replaces every hand's of a warp; hand h's
    position p is entry ``hand_base[h] + p mod ring_h``."""

    def __init__(self, *, warps: int, rings: tuple[int, ...], bits: int, inject: bool = False):
        self.rings, self.inject = rings, inject
        self.base = [sum(rings[:h]) for h in range(len(rings))]
        self.rp = [[0] * len(rings) for _ in range(warps)]
        self.mask = (1 << bits) - 1

    def entry(self, warp: int, hand: int, distance: int = 0) -> int:
        ring = self.rings[hand] * (2 if self.inject and hand else 1)  # the bug: a side hand's ring doubled
        return self.base[hand] + (self.rp[warp][hand] - distance) % ring

    def step(self, advance: tuple[int, int, int] | None, set_: tuple[int, list[int]] | None) -> None:
        if advance is not None and not (set_ is not None and set_[0] == advance[0]):
            w, h, count = advance
            self.rp[w][h] = (self.rp[w][h] + count) & self.mask
        if set_ is not None:
            self.rp[set_[0]] = [v & self.mask for v in set_[1]]


# ====================================================================== scoreboard
class ScoreboardModel:
    """Pending-write bits per (warp, entry); a register scoreboard: RAW+WAW check; a slot
    scoreboard (``slots``, a ring register file): the ring guard."""

    def __init__(self, *, warps: int, entries: int, slots: bool, inject: bool = False):
        self.warps, self.entries, self.slots, self.inject = warps, entries, slots, inject
        self.pending = [[False] * entries for _ in range(warps)]

    def effective(self, warp: int, index: int, cleared: set[tuple[int, int]]) -> bool:
        """Pending, unless a writeback clears it in this very cycle (the bypass)."""
        return self.pending[warp][index] and (warp, index) not in cleared

    def check(self, warp: int, srcs: list[int | None], dst: int | None, cleared: set[tuple[int, int]],
              reads: set[tuple[int, int]]) -> tuple[bool, list[bool]]:
        """(blocked, per-source pending) of warp's candidate instruction."""
        src_pending = [s is not None and self.effective(warp, s, cleared) for s in srcs]
        if self.slots:
            blocked = dst is not None and (self.effective(warp, dst, cleared)
                                           or ((warp, dst) in reads and not self.inject))
        else:
            waw = dst is not None and self.effective(warp, dst, cleared)
            blocked = any(src_pending) or (waw and not self.inject)
        return blocked, src_pending

    def step(self, issue: tuple[int, int] | None, cleared: set[tuple[int, int]]) -> None:
        for w, i in cleared:
            self.pending[w][i] = False
        if issue is not None:  # set after clear: a same-cycle issue wins
            self.pending[issue[0]][issue[1]] = True


# ====================================================================== SIMT stack
SYNC, DIV = 0, 1
OP_SSY, OP_DIV, OP_SYNC, OP_EXIT = 0, 1, 2, 3
STATUS_RESUME, STATUS_DONE, STATUS_TRAP = 0, 1, 2
TRAP_NONE, TRAP_OVERFLOW, TRAP_NO_SSY, TRAP_EMPTY = 0, 1, 2, 3


@dataclass
class StackEntry:
    kind: int
    pc: int
    mask: int
    rp: int | list[int]  #: with hands, one RP per hand


@dataclass
class StackResult:
    """The answer to a SYNC or EXIT (pc, mask, rp when resuming), or a trap."""

    status: int
    pc: int = 0
    mask: int = 0
    rp: int | list[int] = 0  #: with hands, one RP per hand
    trap: int = TRAP_NONE
    popped: int = 0  # entries taken off the stack (for the latency check)


def rp_max(a: int, b: int, bits: int) -> int:
    """The later of two RP values of one warp, compared modulo 2**bits (docs/isa.md)."""
    half = 1 << (bits - 1)
    return a if ((a - b) & ((1 << bits) - 1)) < half else b


@dataclass
class SimtStackModel:
    """Per-warp divergence stacks, operation by operation as ``dualflow/models/executor.py`` does them.
    With ``hands`` > 1 an RP is a list of one RP per hand (docs/isa.md, ``hands``): ssy's reserved
    advance goes to the hand it names, sync takes the later RP hand by hand."""

    warps: int
    depth: int
    rp_bits: int
    ring: bool  # a ring register file: entries carry the warp's RP
    inject: bool = False
    hands: int = 1
    stacks: list[list[StackEntry]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stacks = [[] for _ in range(self.warps)]

    def push(self, warp: int, kind: int, pc: int, mask: int, rp: int | list[int], advance: int = 0,
             hand: int = 0) -> int:
        """ssy / divergent branch; returns the trap cause (TRAP_OVERFLOW when full). ``advance``:
        ssy's reserved advance (``reserved-ssy``), the entry's rp is ``rp + advance`` (on ``hand``)."""
        stack = self.stacks[warp]
        if len(stack) >= self.depth:
            return TRAP_OVERFLOW
        top = 1 << self.rp_bits
        if not self.ring:
            entry_rp: int | list[int] = 0
        elif self.hands > 1:
            entry_rp = [(r + (advance if h == hand else 0)) % top for h, r in enumerate(rp)]
        else:
            entry_rp = (rp + advance) % top
        stack.append(StackEntry(kind, pc, mask, entry_rp))
        return TRAP_NONE

    def sync(self, warp: int, rp: int | list[int], alive: int) -> StackResult:
        stack = self.stacks[warp]
        if not any(e.kind == SYNC for e in stack):
            return StackResult(STATUS_TRAP, trap=TRAP_NO_SSY)
        if self.ring:
            for e in reversed(stack):
                if e.kind == SYNC:
                    # The injected bug: the path's RP replaces the entry's instead of the maximum.
                    if self.hands > 1:
                        e.rp = list(rp) if self.inject else [rp_max(a, b, self.rp_bits) for a, b in zip(e.rp, rp)]
                    else:
                        e.rp = rp if self.inject else rp_max(e.rp, rp, self.rp_bits)
                    break
        return self.resume(warp, alive)

    def exit(self, warp: int, alive: int) -> StackResult:
        return self.resume(warp, alive)

    def resume(self, warp: int, alive: int) -> StackResult:
        stack = self.stacks[warp]
        popped = 0
        while stack:
            e = stack.pop()
            popped += 1
            live = e.mask & alive
            if live:
                return StackResult(STATUS_RESUME, e.pc, live, e.rp if self.ring else 0, popped=popped)
        if alive:
            return StackResult(STATUS_TRAP, trap=TRAP_EMPTY, popped=popped)
        return StackResult(STATUS_DONE, popped=popped)

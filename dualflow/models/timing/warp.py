"""Timing-side state of a resident thread block and its warps.

The architectural state (registers or ring, RP, SIMT stack, memory) lives in the functional
executor; a ``Warp`` holds what only timing needs: its instruction buffer and fetch pc, its
scoreboard, and counts of instructions in flight. ``step`` executes the warp's next instruction
in the functional model at issue, which supplies addresses and branch outcomes.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from dualflow.machine.mode import ScoreboardKind
from dualflow.models.executor import BatchExecutor

from .collector import Operand
from .scoreboard import HandsScoreboard, RegisterScoreboard, RingScoreboard


class Cta:
    """A thread block resident on an SM, with the resources it holds."""

    __slots__ = ("block", "warps", "threads", "shared_bytes", "registers")

    def __init__(self, block: int, threads: int, shared_bytes: int, registers: int):
        self.block, self.threads, self.shared_bytes, self.registers = block, threads, shared_bytes, registers
        self.warps: list[Warp] = []


class Warp:
    """One resident warp."""

    __slots__ = ("cta", "ex", "w", "g", "slot", "age", "sched", "ibuf", "fetch_pc", "fetch_stalled",
                 "inflight", "mem_inflight", "board", "exited", "finished", "name", "slots", "start", "waiting_cus",
                 "stall", "stall_until", "sched_clean")

    def __init__(self, cta: Cta, ex: BatchExecutor, w: int, slot: int, age: int, sched: int, *,
                 scoreboard: ScoreboardKind, entries: int, rings: tuple[int, ...] | None = None):
        self.cta, self.ex, self.w, self.slot, self.age, self.sched = cta, ex, w, slot, age, sched
        self.g = np.array([w])
        self.ibuf: deque[tuple[int, int]] = deque()  # (pc, cycle from which it may issue)
        self.fetch_pc = 0
        self.fetch_stalled = False  # a redirecting instruction was fetched and has not completed
        self.inflight = 0  # issued, not completed
        self.mem_inflight = 0  # memory instructions issued, not completed
        self.slots = scoreboard is ScoreboardKind.SLOTS  # a ready time per ring slot, not per register
        # (``rings``: a ``Variant.HANDS`` kernel's, one per hand; ``entries`` is then their sum)
        self.board: RegisterScoreboard | RingScoreboard = (
            RegisterScoreboard(entries) if not self.slots else RingScoreboard(entries) if rings is None
            else HandsScoreboard(rings))
        self.exited = False  # every lane has executed exit
        self.finished = False  # exited and nothing in flight
        self.waiting_cus = 0  # D-FLOW: collector units holding an operand not yet written back
        self.stall: str | None = None  # why it could not issue, while only an event can change that
        self.stall_until = 0  # ... or until this cycle (an instruction still being decoded)
        self.sched_clean: list[int] = []  # the SM's per-scheduler validity of its last answer
        self.start = 0  # first cycle it may fetch (block launch latency)
        self.name = f"block {cta.block} warp {int(ex.wid[w])}"

    @property
    def pc(self) -> int:
        return int(self.ex.pc[self.w])

    @property
    def rp(self) -> int:
        return int(self.ex.rp[self.w])

    @property
    def at_barrier(self) -> bool:
        return bool(self.ex.waiting[self.w])

    def operand_read(self, op: Operand) -> None:
        if self.slots:
            self.board.read_done(op.key)
            self.stall = None  # the ring guard may have waited for this read
            self.sched_clean[self.sched] = 0

"""Statistics of the performance model, each with its unit; derived rates computed at dump time.

``SmCounters`` are the raw event counts one SM accumulates (plain ints, cheap to bump every
cycle). ``TimingStats`` is the JSON-ready result of one launch or of several merged: a flat
dict of counters plus the formulas for IPC, occupancy and rates, written with units as
``{"name": {"value": v, "unit": u, "description": d}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.isa.opcodes import UnitClass

#: Why a scheduler issued nothing in a cycle, in precedence order: the cycle is charged to the
#: reason of the warp that came closest to issuing.
STALL_REASONS = ("issued", "collector_full", "ring_guard", "scoreboard", "memory_fence", "barrier",
                 "ibuffer", "drain", "idle")
STALL_DOC = {
    "issued": "an instruction issued",
    "collector_full": "the next instruction was ready but no collector unit was free",
    "ring_guard": "D-FLOW: the producer would overwrite a ring slot still in flight or still to be read",
    "scoreboard": "BASE: a source (RAW) or the destination (WAW) has a write in flight",
    "memory_fence": "membar waits for the warp's memory instructions to complete",
    "barrier": "every warp waits at a block barrier",
    "ibuffer": "no decoded instruction (fetch latency, or a branch not yet resolved)",
    "drain": "warps exited, waiting for their last instructions to complete",
    "idle": "no warp assigned to the scheduler",
}
CLASSES = tuple(c.value for c in UnitClass)


class SmCounters:
    """Raw counts of one SM."""

    def __init__(self, schedulers: int, banks: int):
        self.stalls = {r: 0 for r in STALL_REASONS}
        self.schedulers = schedulers
        self.warp_instructions = {c: 0 for c in CLASSES}
        self.thread_instructions = {c: 0 for c in CLASSES}
        self.active_cycles = 0  # cycles with at least one resident warp
        self.collector_busy = 0  # sum over cycles of occupied collector units
        self.resident_warps = 0  # sum over cycles of resident warps
        self.barriers = 0

    def stall(self, reason: str, scheduler: int) -> None:
        self.stalls[reason] += 1

    def skip(self, gap: int, reasons: list[str], collector_busy: int, warps: int) -> None:
        """Account ``gap`` cycles in which nothing changed: each repeats the last one."""
        for r in reasons:
            self.stalls["idle" if r == "issued" else r] += gap
        self._occupancy(gap, collector_busy, warps)

    def cycle(self, collector_busy: int, warps: int) -> None:
        self._occupancy(1, collector_busy, warps)

    def _occupancy(self, n: int, collector_busy: int, warps: int) -> None:
        if warps:
            self.active_cycles += n
        self.collector_busy += n * collector_busy
        self.resident_warps += n * warps

    def issued(self, unit: str, threads: int) -> None:
        """``unit``: the unit class's name (``UnitClass.value``)."""
        self.warp_instructions[unit] += 1
        self.thread_instructions[unit] += threads


def _stat(value, unit: str, description: str) -> dict:
    return {"value": value, "unit": unit, "description": description}


@dataclass
class TimingStats:
    """Timing result of one launch (or a merge of several)."""

    kernel: str
    launches: int
    cycles: int
    num_sms: int
    max_warps_per_sm: int
    collector_units: int
    warp_instructions: dict[str, int]
    thread_instructions: dict[str, int]
    stalls: dict[str, int]
    rf_reads: list[int]
    rf_writes: list[int]
    rf_bank_conflicts: int
    sm_active_cycles: int
    collector_busy: int
    resident_warps: int
    barriers: int
    memory: dict = field(default_factory=dict)

    @property
    def total_warp_instructions(self) -> int:
        return sum(self.warp_instructions.values())

    @property
    def ipc(self) -> float:
        """Warp instructions per cycle, whole GPU."""
        return self.total_warp_instructions / self.cycles if self.cycles else 0.0

    def merge(self, other: TimingStats) -> TimingStats:
        """Launches run one after another: cycles and counts add."""
        def add(a: dict, b: dict) -> dict:
            return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}

        return TimingStats(
            kernel=self.kernel if self.kernel == other.kernel else "total",
            launches=self.launches + other.launches, cycles=self.cycles + other.cycles, num_sms=self.num_sms,
            max_warps_per_sm=self.max_warps_per_sm, collector_units=self.collector_units,
            warp_instructions=add(self.warp_instructions, other.warp_instructions),
            thread_instructions=add(self.thread_instructions, other.thread_instructions),
            stalls=add(self.stalls, other.stalls),
            rf_reads=[a + b for a, b in zip(self.rf_reads, other.rf_reads)],
            rf_writes=[a + b for a, b in zip(self.rf_writes, other.rf_writes)],
            rf_bank_conflicts=self.rf_bank_conflicts + other.rf_bank_conflicts,
            sm_active_cycles=self.sm_active_cycles + other.sm_active_cycles,
            collector_busy=self.collector_busy + other.collector_busy,
            resident_warps=self.resident_warps + other.resident_warps,
            barriers=self.barriers + other.barriers,
            memory=merge_memory(self.memory, other.memory))

    def to_dict(self) -> dict:
        sm_cycles = self.cycles * self.num_sms
        reads = sum(self.rf_reads)
        return {
            "kernel": self.kernel,
            "launches": _stat(self.launches, "launches", "kernel launches"),
            "cycles": _stat(self.cycles, "cycles", "SM clock cycles from the first launch to the last block's end"),
            "ipc": _stat(round(self.ipc, 4), "warp-instructions/cycle", "whole GPU"),
            "warp_instructions": _stat(dict(sorted(self.warp_instructions.items())), "warp-instructions",
                                       "issued, by unit class"),
            "thread_instructions": _stat(dict(sorted(self.thread_instructions.items())), "thread-instructions",
                                         "issued active lanes, by unit class"),
            "stalls": _stat({r: self.stalls.get(r, 0) for r in STALL_REASONS}, "scheduler-cycles",
                            "what each warp scheduler did each cycle: " +
                            "; ".join(f"{k}: {v}" for k, v in STALL_DOC.items())),
            "rf_reads": _stat(self.rf_reads, "accesses", "register-file operand reads per bank, all SMs"),
            "rf_writes": _stat(self.rf_writes, "accesses", "register-file writebacks per bank, all SMs"),
            "rf_bank_conflicts": _stat(self.rf_bank_conflicts, "requests",
                                       "operand reads deferred because their bank was taken that cycle"),
            "rf_bank_conflict_rate": _stat(round(self.rf_bank_conflicts / reads, 4) if reads else 0.0,
                                           "conflicts/read", "rf_bank_conflicts / rf_reads"),
            "collector_occupancy": _stat(
                round(self.collector_busy / (sm_cycles * self.collector_units), 4) if sm_cycles else 0.0,
                "fraction", "mean occupied collector units / collector units, over all SM cycles"),
            "achieved_occupancy": _stat(
                round(self.resident_warps / (self.sm_active_cycles * self.max_warps_per_sm), 4)
                if self.sm_active_cycles else 0.0,
                "fraction", "mean resident warps / maximum warps per SM, over cycles an SM had work"),
            "sm_active_cycles": _stat(self.sm_active_cycles, "SM-cycles", "cycles in which an SM had a resident warp"),
            "barriers": _stat(self.barriers, "warp-instructions", "bar instructions issued"),
            "memory": self.memory,
        }


def merge_memory(a: dict, b: dict) -> dict:
    """Add two memory-statistics trees leaf by leaf, then recompute the derived rates."""
    from .memory.system import derive

    return derive(_add_trees(a, b))


def _add_trees(a: dict, b: dict) -> dict:
    if not a:
        return b
    if not b:
        return a
    out = {}
    for key in a.keys() | b.keys():
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            out[key] = x if y is None else y
        elif isinstance(x, dict) and "value" in x and isinstance(x["value"], (int, float)):
            out[key] = dict(x, value=x["value"] + y["value"])
        elif isinstance(x, dict):
            out[key] = _add_trees(x, y)
        else:
            out[key] = x
    return out


def diff_memory(after: dict, before: dict) -> dict:
    """Counts accumulated between two snapshots of the memory system's statistics."""
    from .memory.system import derive

    return derive(_subtract_trees(after, before))


def _subtract_trees(after: dict, before: dict) -> dict:
    out = {}
    for key, x in after.items():
        y = before.get(key)
        if isinstance(x, dict) and "value" in x and isinstance(x["value"], (int, float)) and y is not None:
            out[key] = dict(x, value=x["value"] - y["value"])
        elif isinstance(x, dict) and y is not None:
            out[key] = _subtract_trees(x, y)
        else:
            out[key] = x
    return out

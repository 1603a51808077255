"""Statistics of the performance model, each declared once with its unit, description and merge
rule (``dualflow.models.statistic``); derived rates are formulas evaluated when written.

``SmCounters`` are the raw event counts one SM accumulates (plain ints and dicts, cheap to bump
every cycle): one attribute per ``TimingStats`` counter whose source is ``counters.<name>``.
Counters with another source (the operand collector's per-bank reads) are read where they are
kept. ``TimingStats`` is the result of one launch or of several merged; ``to_dict`` writes it as
``{"name": {"value": v, "unit": u, "description": d}}``.

Adding a statistic: declare it in ``TimingStats`` (for a per-SM count, with ``source``), and,
for a count the SM keeps, bump ``counters.<name>`` where the event happens in ``sm.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from dualflow.isa.opcodes import UnitClass
from dualflow.machine.config import GpuConfig

from ..statistic import Statistics, add, copy_counts, counter, derived, label, setting, subtract, tree
from .memory.statistics import derive

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


def merge_memory(a: dict, b: dict) -> dict:
    """Add two memory-statistics trees leaf by leaf, then recompute the derived rates."""
    return derive(_add_trees(a, b))


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


@dataclass
class TimingStats(Statistics):
    """Timing result of one launch (or a merge of several), written in this order.

    ``source``: of a counter, where each SM keeps it (an attribute path on ``Sm``; summed over the
    SMs, counted from the launch's start); of a setting, its ``GpuConfig`` field.
    """

    kernel: str = label("total")
    launches: int = counter("launches", "kernel launches")
    cycles: int = counter("cycles", "SM clock cycles from the first launch to the last block's end")
    ipc = derived("warp-instructions/cycle", "whole GPU",
                  lambda s: _ratio(s.total_warp_instructions, s.cycles), digits=4)
    warp_instructions: dict[str, int] = counter("warp-instructions", "issued, by unit class", keys=CLASSES,
                                                sort=True, source="counters.warp_instructions")
    thread_instructions: dict[str, int] = counter("thread-instructions", "issued active lanes, by unit class",
                                                  keys=CLASSES, sort=True, source="counters.thread_instructions")
    stalls: dict[str, int] = counter(
        "scheduler-cycles", "what each warp scheduler did each cycle: " + "; ".join(
            f"{k}: {v}" for k, v in STALL_DOC.items()), keys=STALL_REASONS, source="counters.stalls")
    rf_reads: list[int] = counter("accesses", "register-file operand reads per bank, all SMs",
                                  source="collector.reads")
    rf_writes: list[int] = counter("accesses", "register-file writebacks per bank, all SMs",
                                   source="collector.writes")
    rf_bank_conflicts: int = counter("requests", "operand reads deferred because their bank was taken that cycle",
                                     source="collector.conflicts")
    rf_bank_conflict_rate = derived("conflicts/read", "rf_bank_conflicts / rf_reads",
                                    lambda s: _ratio(s.rf_bank_conflicts, sum(s.rf_reads)), digits=4)
    collector_occupancy = derived(
        "fraction", "mean occupied collector units / collector units, over all SM cycles",
        lambda s: _ratio(s.collector_busy, s.cycles * s.num_sms * s.collector_units), digits=4)
    achieved_occupancy = derived(
        "fraction", "mean resident warps / maximum warps per SM, over cycles an SM had work",
        lambda s: _ratio(s.resident_warps, s.sm_active_cycles * s.max_warps_per_sm), digits=4)
    sm_active_cycles: int = counter("SM-cycles", "cycles in which an SM had a resident warp",
                                    source="counters.sm_active_cycles")
    barriers: int = counter("warp-instructions", "bar instructions issued", source="counters.barriers")
    ibuffer_flushes: int = counter("flushes", "instruction buffers flushed because a branch went elsewhere than the "
                                   "instructions fetched past it (sm.fetch_past_branches)",
                                   source="counters.ibuffer_flushes")
    collector_busy: int = counter("unit-cycles", "sum over SM cycles of occupied collector units", written=False,
                                  source="counters.collector_busy")
    resident_warps: int = counter("warp-cycles", "sum over SM cycles of resident warps", written=False,
                                  source="counters.resident_warps")
    num_sms: int = setting(source="num_sms")
    max_warps_per_sm: int = setting(source="sm.max_warps")
    collector_units: int = setting(source="sm.collector_units")
    memory: dict = tree(merge_memory, default_factory=dict)

    @property
    def total_warp_instructions(self) -> int:
        return sum(self.warp_instructions.values())

    @classmethod
    def of_launch(cls, kernel: str, config: GpuConfig, counts: dict, *, cycles: int,
                  memory: dict | DeferredTree) -> TimingStats:
        """One launch's statistics: ``counts`` from ``launch_counts``, the settings from ``config``."""
        settings = {name: attrgetter(stat.source)(config) for name, stat in cls.declarations().items()
                    if stat.kind == "setting"}
        return cls(kernel=kernel, launches=1, cycles=cycles, memory=memory, **settings, **counts)


class DeferredTree:
    """A statistics tree built when first read: ``build(*args)``. ``TimingStats.memory`` may be
    given one (the compiled engine keeps a launch's memory counters flat and builds their tree
    only when the statistics are read: the tree of one launch took longer to build than a small
    launch's timing core took to run). ``build`` and ``args`` must not change afterwards."""

    __slots__ = ("build", "args")

    def __init__(self, build: Callable[..., dict], *args: Any):
        self.build, self.args = build, args


def _memory(stats: TimingStats) -> dict:
    value = stats.__dict__["memory"]
    if type(value) is DeferredTree:
        value = stats.__dict__["memory"] = value.build(*value.args)
    return value


def _set_memory(stats: TimingStats, value: dict | DeferredTree) -> None:
    stats.__dict__["memory"] = value


# After @dataclass: its __init__ assigns the field, its __eq__, __repr__ and ``Statistics``
# read it, all through this property; the value (tree or DeferredTree) stays in __dict__.
TimingStats.memory = property(_memory, _set_memory, doc="The memory system's statistics tree "
                              "(``memory/statistics.py``), built on first read when given as a ``DeferredTree``.")


#: The per-SM counters: (statistic, where an ``Sm`` keeps it).
SM_SOURCES = tuple((name, attrgetter(stat.source)) for name, stat in TimingStats.declarations().items()
                   if stat.kind == "counter" and stat.source is not None)

#: The counters ``SmCounters`` keeps: (attribute, keys of a per-key count or None).
_KEPT_BY_SM = tuple((stat.source.removeprefix("counters."), stat.keys) for stat in TimingStats.declarations().values()
                    if stat.kind == "counter" and stat.source is not None and stat.source.startswith("counters."))


class SmCounters:
    """Raw counts of one SM since it was built: one attribute per ``TimingStats`` counter whose
    source is ``counters.<name>`` (an int, or a dict of ints per key)."""

    def __init__(self) -> None:
        for name, keys in _KEPT_BY_SM:
            setattr(self, name, dict.fromkeys(keys, 0) if keys is not None else 0)

    def skip(self, gap: int, reasons: list[str], collector_busy: int, warps: int) -> None:
        """Account ``gap`` cycles in which nothing changed: each repeats the last one."""
        for r in reasons:
            self.stalls["idle" if r == "issued" else r] += gap
        self._occupancy(gap, collector_busy, warps)

    def cycle(self, collector_busy: int, warps: int) -> None:
        self._occupancy(1, collector_busy, warps)

    def _occupancy(self, n: int, collector_busy: int, warps: int) -> None:
        if warps:
            self.sm_active_cycles += n
        self.collector_busy += n * collector_busy
        self.resident_warps += n * warps

    def issued(self, unit: str, threads: int) -> None:
        """``unit``: the unit class's name (``UnitClass.value``)."""
        self.warp_instructions[unit] += 1
        self.thread_instructions[unit] += threads


def sm_totals(sms: list) -> dict:
    """Every per-SM counter summed over ``sms``: a snapshot (fresh containers)."""
    totals = {}
    for name, get in SM_SOURCES:
        total = copy_counts(get(sms[0]))
        for sm in sms[1:]:
            total = add(total, get(sm))
        totals[name] = total
    return totals


def launch_counts(sms: list, before: dict) -> dict:
    """The per-SM counters accumulated since the snapshot ``before`` (``sm_totals`` at the launch's start)."""
    return subtract(sm_totals(sms), before)


def _add_trees(a: dict, b: dict) -> dict:
    if not a:
        return b
    if not b:
        return a
    out = {}
    for key in a | b:  # a dict union keeps the trees' key order (a set would not, run to run)
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

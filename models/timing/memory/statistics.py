"""The memory system's statistics, declared once: group, name, unit, description and source.

``MemorySystem.stats()`` is the tree built from these declarations (``build_tree``): groups
``l1``, ``shared``, ``interconnect``, ``l2``, ``dram``, ``loads``, each statistic a leaf
``{"value", "unit", "description"}``, derived ones (rates, averages) with a ``formula`` too, and
``l1.per_sm`` mapping the SM number (a string) to that SM's leaves.

A launch's statistics are the difference of two snapshots. Building two trees per launch and
subtracting them leaf by leaf costs about a millisecond, most of a small launch in the compiled
engine; ``snapshot`` takes the same values as a flat list (the tree's counted leaves in order,
then the per-SM ones), and ``launch_tree(after, before)`` builds one tree from the differences.
That is the tree ``derive(subtract(build_tree(after), build_tree(before)))`` leaf for leaf: each
leaf is the difference of the same two values (the DRAM cycles are rounded before, as in the
tree), and the derived leaves are recomputed from the differences.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple


class MemoryStat(NamedTuple):
    """One leaf of the tree: counted (``value`` reads it off a ``MemorySystem``) or derived
    (``formula``, computed by ``derive``)."""

    group: str
    name: str
    unit: str
    description: str
    value: Callable[[Any], int | float] | None = None
    formula: str = ""


def _dram_cycles(name: str) -> Callable[[Any], float]:
    get = attrgetter(f"_dram.{name}")
    return lambda ms: round(get(ms), 3)  # rounded in the tree: a launch's value is a difference of these


def _stat(group: str, name: str, source: str, unit: str, description: str) -> MemoryStat:
    """A counted statistic read from the attribute path ``source`` of the ``MemorySystem``."""
    return MemoryStat(group, name, unit, description, attrgetter(source))


def _rate(group: str, name: str, unit: str, description: str, formula: str) -> MemoryStat:
    return MemoryStat(group, name, unit, description, None, formula)


#: Where ``l1.per_sm`` goes among the l1 leaves (after this one).
_PER_SM_AFTER = ("l1", "load_hit_rate")
#: ``l1.per_sm[sm]``'s leaves: name, unit, description (values: ``sm_accesses``, ``sm_transactions``).
PER_SM = (("accesses", "warp-accesses", "global and local warp accesses"),
          ("transactions", "transactions", "load and store transactions"))

#: Every statistic but the per-SM ones, in the tree's order.
MEMORY_STATS = (
    MemoryStat("l1", "accesses", "warp-accesses", "global and local warp accesses",
               lambda ms: sum(ms.sm_accesses)),
    _stat("l1", "load_transactions", "l1_load_tx", "transactions", "load transactions (lines) looked up"),
    _stat("l1", "store_transactions", "l1_store_tx", "transactions", "store transactions (lines)"),
    _stat("l1", "load_hits", "l1_hits", "transactions", "loads whose sectors were all present"),
    _stat("l1", "load_misses", "l1_misses", "transactions", "loads that sent a request to L2 (each allocates MSHRs)"),
    _stat("l1", "bypassed", "l1_bypassed", "transactions",
          "misses of spaces the L1 does not cache (caches_global/caches_local False)"),
    _stat("l1", "sector_misses", "l1_sector_misses", "transactions",
          "misses whose line was resident but lacked sectors (subset of load_misses)"),
    _stat("l1", "missed_sectors", "l1_missed_sectors", "sectors", "sectors requested from L2 by misses"),
    _stat("l1", "mshr_merges", "l1_merges", "transactions",
          "loads served by a fill already in flight (merged into its MSHRs)"),
    _stat("l1", "mshr_full_stalls", "l1_mshr_stalls", "events", "misses that waited for a free MSHR"),
    _stat("l1", "mshr_stall_cycles", "l1_mshr_stall_cycles", "cycles", "port cycles lost waiting for free MSHRs"),
    _stat("l1", "merge_limit_stalls", "l1_merge_stalls", "events",
          "loads that found an in-flight fill already at max_merges"),
    _stat("l1", "merge_limit_stall_cycles", "l1_merge_stall_cycles", "cycles",
          "port cycles lost waiting for such fills"),
    _stat("l1", "store_hits", "l1_store_hits", "transactions", "stores whose line was resident"),
    _stat("l1", "store_misses", "l1_store_misses", "transactions", "stores whose line was not resident"),
    _stat("l1", "writebacks", "l1_writebacks", "lines", "dirty (local) lines evicted or flushed and written to L2"),
    _stat("l1", "writeback_sectors", "l1_writeback_sectors", "sectors", "sectors those writebacks carried"),
    _stat("l1", "flushes", "l1_flushes", "events", "invalidations of all L1s (flush_l1)"),
    _rate("l1", "load_hit_rate", "hits/transaction", "L1 load hit rate", "load_hits / load_transactions"),
    _stat("shared", "accesses", "smem_accesses", "warp-accesses", "shared-memory warp accesses"),
    _stat("shared", "bank_rounds", "smem_rounds", "rounds",
          "bank access rounds: sum of conflict degrees (each round reads every bank once)"),
    _stat("shared", "conflict_rounds", "smem_conflict_rounds", "rounds",
          "extra rounds caused by bank conflicts: sum of (degree - warp_parts)"),
    MemoryStat("shared", "port_cycles", "cycles", "port cycles held: bank_rounds x bank_interval",
               lambda ms: ms.smem_rounds * ms._smem_interval),
    _rate("shared", "conflict_rate", "rounds/access", "extra bank rounds per access", "conflict_rounds / accesses"),
    _stat("interconnect", "requests", "_icnt.requests", "packets", "SM -> L2 packets (reads, writes, writebacks)"),
    _stat("interconnect", "replies", "_icnt.replies", "packets", "L2 -> SM data replies"),
    _stat("interconnect", "request_flits", "_icnt.request_flits", "flits", "flits of the requests"),
    _stat("interconnect", "reply_flits", "_icnt.reply_flits", "flits", "flits of the replies"),
    _stat("interconnect", "port_wait_cycles", "_icnt.wait_cycles", "cycles",
          "packet cycles spent waiting for a busy slice port"),
    _stat("l2", "reads", "l2_reads", "requests", "read requests (L1 misses)"),
    _stat("l2", "read_hits", "l2_read_hits", "requests", "reads whose sectors were all present"),
    _stat("l2", "read_misses", "l2_read_misses", "requests", "reads that went to DRAM"),
    _stat("l2", "missed_sectors", "l2_missed_sectors", "sectors", "sectors read from DRAM"),
    _stat("l2", "mshr_merges", "l2_merges", "requests", "reads served by a DRAM fill already in flight"),
    _stat("l2", "merge_limit_stalls", "l2_merge_stalls", "events", "reads that found a fill already at max_merges"),
    _stat("l2", "mshr_full_stalls", "l2_mshr_stalls", "events", "misses that waited for a free MSHR"),
    _stat("l2", "stall_cycles", "l2_stall_cycles", "cycles", "cycles slices' inputs were blocked by both"),
    _stat("l2", "writes", "l2_writes", "requests", "write requests (stores, L1 writebacks)"),
    _stat("l2", "write_hits", "l2_write_hits", "requests", "writes whose line was resident"),
    _stat("l2", "write_misses", "l2_write_misses", "requests", "writes that allocated a line"),
    _stat("l2", "writebacks", "l2_writebacks", "lines", "dirty lines evicted to DRAM"),
    _rate("l2", "read_hit_rate", "hits/request", "L2 read hit rate", "read_hits / reads"),
    _stat("dram", "reads", "_dram.reads", "requests", "read bursts (one per L2 read miss)"),
    _stat("dram", "writes", "_dram.writes", "requests", "write bursts (one per dirty L2 eviction)"),
    _stat("dram", "read_bytes", "_dram.read_bytes", "bytes", "bytes read"),
    _stat("dram", "write_bytes", "_dram.write_bytes", "bytes", "bytes written"),
    MemoryStat("dram", "busy_cycles", "channel-cycles",
               "core cycles the channels' data buses were busy, summed over channels", _dram_cycles("busy_cycles")),
    MemoryStat("dram", "wait_cycles", "cycles", "request cycles spent waiting for a busy channel",
               _dram_cycles("wait_cycles")),
    _stat("loads", "accesses", "loads", "warp-accesses", "global and local warp loads with an active lane"),
    _stat("loads", "latency_cycles", "load_latency", "cycles", "sum over loads of (done - request cycle)"),
    _rate("loads", "average_latency", "cycles", "mean load latency", "latency_cycles / accesses"),
)

_COUNTED = tuple(s.value for s in MEMORY_STATS if s.formula == "")


def _ratio(a: float, b: float) -> float:
    return round(a / b, 4) if b else 0.0


#: Derived statistics: (group, name) -> (numerator path, denominator paths summed), recomputed by ``derive``.
_DERIVED = {
    ("l1", "load_hit_rate"): (("l1", "load_hits"), (("l1", "load_transactions"),)),
    ("l2", "read_hit_rate"): (("l2", "read_hits"), (("l2", "reads"),)),
    ("shared", "conflict_rate"): (("shared", "conflict_rounds"), (("shared", "accesses"),)),
    ("loads", "average_latency"): (("loads", "latency_cycles"), (("loads", "accesses"),)),
}
assert set(_DERIVED) == {(s.group, s.name) for s in MEMORY_STATS if s.formula}


def derive(tree: dict) -> dict:
    """Recompute the derived statistics (leaves with a ``formula``) of a statistics tree in place.

    ``MemorySystem.stats`` already returns them computed; call this after adding or subtracting
    trees leaf by leaf (which makes derived values meaningless). Returns ``tree``.
    """
    for (group, name), (num, dens) in _DERIVED.items():
        if group in tree and name in tree[group]:
            numerator = tree[num[0]][num[1]]["value"]
            denominator = sum(tree[d[0]][d[1]]["value"] for d in dens)
            tree[group][name]["value"] = _ratio(numerator, denominator)
    return tree


def snapshot(ms) -> list:
    """The counted statistics of the ``MemorySystem`` ``ms`` as a flat list: ``MEMORY_STATS``'
    counted ones in order, then ``sm_accesses``, then ``sm_transactions``."""
    return [get(ms) for get in _COUNTED] + ms.sm_accesses + ms.sm_transactions


def build_tree(values: list, num_sms: int) -> dict:
    """The statistics tree of a ``snapshot`` (or of a difference of two), derived leaves computed."""
    tree: dict[str, dict] = {}
    counted = iter(values)
    for stat in MEMORY_STATS:
        group = tree.setdefault(stat.group, {})
        if stat.formula:
            group[stat.name] = {"value": 0.0, "unit": stat.unit, "description": stat.description,
                                "formula": stat.formula}
        else:
            group[stat.name] = {"value": next(counted), "unit": stat.unit, "description": stat.description}
        if (stat.group, stat.name) == _PER_SM_AFTER:
            group["per_sm"] = per_sm = {}
            (a_name, a_unit, a_text), (t_name, t_unit, t_text) = PER_SM
            first = len(_COUNTED)
            for i in range(num_sms):
                per_sm[str(i)] = {
                    a_name: {"value": values[first + i], "unit": a_unit, "description": a_text},
                    t_name: {"value": values[first + num_sms + i], "unit": t_unit, "description": t_text}}
    return derive(tree)


def launch_tree(after: list, before: list, num_sms: int) -> dict:
    """The tree of what was counted between two ``snapshot``s (see the module docstring)."""
    return build_tree([a - b for a, b in zip(after, before, strict=True)], num_sms)

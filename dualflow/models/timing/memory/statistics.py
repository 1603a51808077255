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

import functools
import operator
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple


class MemoryStat(NamedTuple):
    """One leaf of the tree: counted (``value`` reads it off a ``MemorySystem``) or derived
    (``formula``, computed by ``derive``)."""

    unit: str
    description: str
    value: Callable[[Any], int | float] | None = None
    formula: str = ""


def _counted(source: str | Callable[[Any], int | float], unit: str, description: str) -> MemoryStat:
    """A counted statistic: the ``MemorySystem`` attribute path ``source``, or a function of it."""
    return MemoryStat(unit, description, attrgetter(source) if isinstance(source, str) else source)


def _derived(formula: str, unit: str, description: str) -> MemoryStat:
    return MemoryStat(unit, description, None, formula)


def _dram_cycles(name: str) -> Callable[[Any], float]:
    get = attrgetter(f"_dram.{name}")
    return lambda ms: round(get(ms), 3)  # rounded in the tree: a launch's value is a difference of these


#: Where ``l1.per_sm`` goes among the l1 leaves (after this one).
_PER_SM_AFTER = ("l1", "load_hit_rate")
#: ``l1.per_sm[sm]``'s leaves: name, unit, description (values: ``sm_accesses``, ``sm_transactions``).
PER_SM = (("accesses", "warp-accesses", "global and local warp accesses"),
          ("transactions", "transactions", "load and store transactions"))

#: Every statistic but the per-SM ones, by group, in the tree's order.
MEMORY_STATS: dict[str, dict[str, MemoryStat]] = {
    "l1": {
        "accesses": _counted(lambda ms: sum(ms.sm_accesses), "warp-accesses", "global and local warp accesses"),
        "load_transactions": _counted("l1_load_tx", "transactions", "load transactions (lines) looked up"),
        "store_transactions": _counted("l1_store_tx", "transactions", "store transactions (lines)"),
        "load_hits": _counted("l1_hits", "transactions", "loads whose sectors were all present"),
        "load_misses": _counted("l1_misses", "transactions",
                                "loads that sent a request to L2 (each allocates MSHRs)"),
        "bypassed": _counted("l1_bypassed", "transactions",
                             "misses of spaces the L1 does not cache (caches_global/caches_local False)"),
        "sector_misses": _counted("l1_sector_misses", "transactions",
                                  "misses whose line was resident but lacked sectors (subset of load_misses)"),
        "missed_sectors": _counted("l1_missed_sectors", "sectors", "sectors requested from L2 by misses"),
        "mshr_merges": _counted("l1_merges", "transactions",
                                "loads served by a fill already in flight (merged into its MSHRs)"),
        "mshr_full_stalls": _counted("l1_mshr_stalls", "events", "misses that waited for a free MSHR"),
        "mshr_stall_cycles": _counted("l1_mshr_stall_cycles", "cycles", "port cycles lost waiting for free MSHRs"),
        "merge_limit_stalls": _counted("l1_merge_stalls", "events",
                                       "loads that found an in-flight fill already at max_merges"),
        "merge_limit_stall_cycles": _counted("l1_merge_stall_cycles", "cycles",
                                             "port cycles lost waiting for such fills"),
        "store_hits": _counted("l1_store_hits", "transactions", "stores whose line was resident"),
        "store_misses": _counted("l1_store_misses", "transactions", "stores whose line was not resident"),
        "writebacks": _counted("l1_writebacks", "lines",
                               "dirty (local) lines evicted or flushed and written to L2"),
        "writeback_sectors": _counted("l1_writeback_sectors", "sectors", "sectors those writebacks carried"),
        "flushes": _counted("l1_flushes", "events", "invalidations of all L1s (flush_l1)"),
        "load_hit_rate": _derived("load_hits / load_transactions", "hits/transaction", "L1 load hit rate"),
    },
    "shared": {
        "accesses": _counted("smem_accesses", "warp-accesses", "shared-memory warp accesses"),
        "bank_rounds": _counted("smem_rounds", "rounds",
                                "bank access rounds: sum of conflict degrees (each round reads every bank once)"),
        "conflict_rounds": _counted("smem_conflict_rounds", "rounds",
                                    "extra rounds caused by bank conflicts: sum of (degree - warp_parts)"),
        "port_cycles": _counted(lambda ms: ms.smem_rounds * ms._smem_interval, "cycles",
                                "port cycles held: bank_rounds x bank_interval"),
        "conflict_rate": _derived("conflict_rounds / accesses", "rounds/access", "extra bank rounds per access"),
    },
    "interconnect": {
        "requests": _counted("_icnt.requests", "packets", "SM -> L2 packets (reads, writes, writebacks)"),
        "replies": _counted("_icnt.replies", "packets", "L2 -> SM data replies"),
        "request_flits": _counted("_icnt.request_flits", "flits", "flits of the requests"),
        "reply_flits": _counted("_icnt.reply_flits", "flits", "flits of the replies"),
        "port_wait_cycles": _counted("_icnt.wait_cycles", "cycles",
                                     "packet cycles spent waiting for a busy slice port"),
    },
    "l2": {
        "reads": _counted("l2_reads", "requests", "read requests (L1 misses)"),
        "read_hits": _counted("l2_read_hits", "requests", "reads whose sectors were all present"),
        "read_misses": _counted("l2_read_misses", "requests", "reads that went to DRAM"),
        "missed_sectors": _counted("l2_missed_sectors", "sectors", "sectors read from DRAM"),
        "mshr_merges": _counted("l2_merges", "requests", "reads served by a DRAM fill already in flight"),
        "merge_limit_stalls": _counted("l2_merge_stalls", "events",
                                       "reads that found a fill already at max_merges"),
        "mshr_full_stalls": _counted("l2_mshr_stalls", "events", "misses that waited for a free MSHR"),
        "stall_cycles": _counted("l2_stall_cycles", "cycles", "cycles slices' inputs were blocked by both"),
        "writes": _counted("l2_writes", "requests", "write requests (stores, L1 writebacks)"),
        "write_hits": _counted("l2_write_hits", "requests", "writes whose line was resident"),
        "write_misses": _counted("l2_write_misses", "requests", "writes that allocated a line"),
        "writebacks": _counted("l2_writebacks", "lines", "dirty lines evicted to DRAM"),
        "read_hit_rate": _derived("read_hits / reads", "hits/request", "L2 read hit rate"),
    },
    "dram": {
        "reads": _counted("_dram.reads", "requests", "read bursts (one per L2 read miss)"),
        "writes": _counted("_dram.writes", "requests", "write bursts (one per dirty L2 eviction)"),
        "read_bytes": _counted("_dram.read_bytes", "bytes", "bytes read"),
        "write_bytes": _counted("_dram.write_bytes", "bytes", "bytes written"),
        "busy_cycles": _counted(_dram_cycles("busy_cycles"), "channel-cycles",
                                "core cycles the channels' data buses were busy, summed over channels"),
        "wait_cycles": _counted(_dram_cycles("wait_cycles"), "cycles",
                                "cycles bursts waited for a busy data bus, beyond their bank's timing"),
        "row_hits": _counted("_dram.row_hits", "requests", "reads and writes to their bank's open row"),
        "row_misses": _counted("_dram.row_misses", "requests",
                               "reads and writes that activated a row (row_hits + row_misses = reads + writes)"),
        "row_conflicts": _counted("_dram.row_conflicts", "requests",
                                  "row misses that first closed another open row (precharge; subset of row_misses)"),
        "reordered_hits": _counted("_dram.reordered_hits", "requests",
                                   "frfcfs: row hits served to a bank's previous row before its committed "
                                   "precharge (subset of row_hits); queued-frfcfs: row hits served ahead of an "
                                   "older request of their bank"),
        "row_hit_rate": _derived("row_hits / (row_hits + row_misses)", "hits/request", "DRAM row-buffer hit rate"),
    },
    "loads": {
        "accesses": _counted("loads", "warp-accesses", "global and local warp loads with an active lane"),
        "latency_cycles": _counted("load_latency", "cycles", "sum over loads of (done - request cycle)"),
        "average_latency": _derived("latency_cycles / accesses", "cycles", "mean load latency"),
    },
}

_COUNTED = tuple(stat.value for group in MEMORY_STATS.values() for stat in group.values() if not stat.formula)


def _ratio(a: float, b: float) -> float:
    return round(a / b, 4) if b else 0.0


#: Derived statistics: (group, name) -> (numerator path, denominator paths summed), recomputed by ``derive``.
_DERIVED = {
    ("l1", "load_hit_rate"): (("l1", "load_hits"), (("l1", "load_transactions"),)),
    ("l2", "read_hit_rate"): (("l2", "read_hits"), (("l2", "reads"),)),
    ("shared", "conflict_rate"): (("shared", "conflict_rounds"), (("shared", "accesses"),)),
    ("loads", "average_latency"): (("loads", "latency_cycles"), (("loads", "accesses"),)),
    ("dram", "row_hit_rate"): (("dram", "row_hits"), (("dram", "row_hits"), ("dram", "row_misses"))),
}
assert set(_DERIVED) == {(g, n) for g, group in MEMORY_STATS.items() for n, stat in group.items() if stat.formula}


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
    """The counted statistics of the ``MemorySystem`` ``ms`` as a flat list: the counted ones of
    ``MEMORY_STATS`` in order, then ``sm_accesses``, then ``sm_transactions``."""
    return [get(ms) for get in _COUNTED] + ms.sm_accesses + ms.sm_transactions


def build_tree(values: list, num_sms: int) -> dict:
    """The statistics tree of a ``snapshot`` (or of a difference of two), derived leaves computed."""
    tree: dict[str, dict] = {}
    counted = iter(values)
    for group_name, stats in MEMORY_STATS.items():
        group = tree[group_name] = {}
        for name, stat in stats.items():
            if stat.formula:
                group[name] = {"value": 0.0, "unit": stat.unit, "description": stat.description,
                               "formula": stat.formula}
            else:
                group[name] = {"value": next(counted), "unit": stat.unit, "description": stat.description}
            if (group_name, name) == _PER_SM_AFTER:
                group["per_sm"] = _per_sm(values[len(_COUNTED):], num_sms)
    return derive(tree)


def _per_sm(values: list, num_sms: int) -> dict:
    (a_name, a_unit, a_text), (t_name, t_unit, t_text) = PER_SM
    return {sm: {a_name: {"value": a, "unit": a_unit, "description": a_text},
                 t_name: {"value": t, "unit": t_unit, "description": t_text}}
            for sm, a, t in zip(_sm_names(num_sms), values[:num_sms], values[num_sms:2 * num_sms])}


@functools.cache
def _sm_names(num_sms: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(num_sms))


def launch_tree(after: list, before: list, num_sms: int) -> dict:
    """The tree of what was counted between two ``snapshot``s (see the module docstring)."""
    if len(after) != len(before):
        raise ValueError(f"launch_tree: snapshots of {len(after)} and {len(before)} values")
    return build_tree(list(map(operator.sub, after, before)), num_sms)

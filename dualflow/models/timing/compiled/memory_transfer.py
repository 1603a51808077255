"""Exact state transfer between a reference ``MemorySystem`` and a compiled ``MemoryState``.

The compiled engine runs a launch on the reference engine when it cannot pre-run it (faults,
races); the memory system's state must cross over and back unchanged: every cached line with
its place in the LRU order and its per-sector ready/merges, valid and dirty masks, the MSHR
files, the SM ports, the interconnect and DRAM timelines, the DRAM banks, the counters and the
current cycle, and with queued DRAM controllers what they still have to do
(``memory_queue_transfer.py``; between launches, when no access is in flight).
The configuration-derived scalars are read from the reference as well, so the compiled system
uses the reference's own rules for them (DRAM latency rounding, flit counts, IPOLY tables).

This module reads the reference's private attributes (``MemorySystem._l1`` and the like): it is
the one place that knows both representations.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from dualflow.models.timing.memory.cache import INVALID, Line, MshrFile, SectorCache
from dualflow.models.timing.memory.system import MemorySystem
from dualflow.models.timing.memory.timeline import Timeline

from .memory_parts import timeline_intervals
from .memory_queue_transfer import queue_from_reference, queue_into_reference
from .memory_state import (
    BANK_ROWS,
    BANK_TIMES,
    COUNTERS,
    DRAM_CYCLES,
    DRAM_LOG_COLUMNS,
    LINE_DIRTY,
    LINE_LATEST,
    LINE_READY,
    LINE_VALID,
    CacheArrays,
    MemoryState,
    MshrFiles,
    Timelines,
    new_cache,
    new_mshrs,
    new_state,
    new_timelines,
)

#: Intervals a compiled timeline holds before it first grows.
_TIMELINE_CAPACITY = 16
#: DRAM requests a recording state holds before its log first grows.
_DRAM_LOG_CAPACITY = 1024


def _cache_from(caches: list[SectorCache], max_merges: int, queued: bool) -> CacheArrays:
    sets, ways, sectors = caches[0].num_sets, caches[0].ways, caches[0].sectors
    rows = len(caches) * sets
    # no fill is pending between launches (memory_queue_transfer.py refuses a state with one)
    fill = np.full((rows, ways, sectors) if queued else (0, 0, 0), -1, np.int64)
    tag = np.full((rows, ways), -1, np.int64)
    lru = np.zeros((rows, ways), np.int64)
    record = np.zeros((rows, ways, LINE_READY + 2 * sectors), np.int64)
    record[:, :, LINE_LATEST:LINE_READY + sectors] = INVALID
    lines = np.zeros(rows, np.int64)
    clock = 0
    for c, cache in enumerate(caches):
        for s, resident in enumerate(cache.sets):
            row = c * sets + s
            lines[row] = len(resident)
            for way, (index, line) in enumerate(resident.items()):  # LRU order: stamps ascending
                clock += 1
                tag[row, way], lru[row, way] = index, clock
                record[row, way, [LINE_VALID, LINE_DIRTY, LINE_LATEST]] = line.valid, line.dirty, line.latest
                record[row, way, LINE_READY:] = line.ready + line.merges
    return new_cache(tag, lru, record, lines, fill, clock, sets, ways, sectors, max_merges)


def _mshrs_from(files: list[MshrFile]) -> MshrFiles:
    capacity = max([files[0].entries + 1] + [len(f.busy) for f in files])
    release = np.zeros((len(files), capacity), np.int64)
    count = np.zeros((len(files), capacity), np.int64)
    for f, mshr in enumerate(files):
        for i, (r, n) in enumerate(sorted(mshr.busy)):  # the order heapq pops them in
            release[f, i], count[f, i] = r, n
    head = np.zeros(len(files), np.int64)
    size = np.array([len(f.busy) for f in files], np.int64)
    used = np.array([f.used for f in files], np.int64)
    return new_mshrs(release, count, head, size, used, files[0].entries)


def _timelines_from(timelines: list[Timeline]) -> Timelines:
    capacity = max([_TIMELINE_CAPACITY] + [2 * len(t.starts) for t in timelines])
    iv = np.zeros((len(timelines), capacity, 2), np.float64)
    for r, t in enumerate(timelines):
        iv[r, :len(t.starts), 0] = t.starts
        iv[r, :len(t.ends), 1] = t.ends
    n = np.array([len(t.starts) for t in timelines], np.int64)
    return new_timelines(iv, np.zeros(len(timelines), np.int64), n)


def _owner(ms: MemorySystem, name: str):
    return getattr(ms, name) if name else ms


def state_from_reference(ms: MemorySystem) -> MemoryState:
    """A compiled state equal to the state of ``ms`` (which is not changed)."""
    icnt, dram = ms._icnt, ms._dram
    ipoly = np.array(ms._ipoly if ms._ipoly is not None else np.zeros((6, 256)), np.int64)
    return new_state(
        _cache_from(ms._l1, ms._l1_merges, ms._queued), _cache_from(ms._l2, ms._l2_merges, ms._queued),
        _mshrs_from(ms._l1_mshr), _mshrs_from(ms._l2_mshr),
        _timelines_from(icnt.request_ports), _timelines_from(icnt.reply_ports), _timelines_from(dram.buses),
        _timelines_from(dram.activates),
        np.array([getattr(dram, name) for name in BANK_ROWS], np.int64).T.copy(),
        np.array([getattr(dram, name) for name in BANK_TIMES], np.float64).T.copy(),
        np.array(ms._port, np.int64), np.array(ms.sm_accesses, np.int64), np.array(ms.sm_transactions, np.int64),
        np.array([getattr(_owner(ms, owner), name) for owner, name in COUNTERS], np.int64),
        np.array([getattr(dram, name) for name in DRAM_CYCLES], np.float64),
        ipoly, np.array(ms._data_flits, np.int64),
        ms._now, ms._line_shift, ms._sector_bytes, ms._tpc, ms._l1_bypass[0], ms._l1_bypass[1], ms._l1_hit,
        ms._slices, ms._ipoly is not None, ms._l2_hit, icnt.latency, icnt.flits_per_cycle, ms._read_flits,
        ms._smem_latency, ms._smem_interval, ms._smem_parts, dram.channels, dram.latency, dram.cycles_per_byte,
        dram.banks, dram.lines_per_row, dram.row_interleaved, dram.frfcfs, dram.tcl, dram.twl, dram.trcd, dram.trp,
        dram.tras, dram.trc, dram.trrd, dram.trtp, dram.twr, dram.tccd, *_dram_log_from(dram.log), ms._queued,
        queue_from_reference(ms))


def _dram_log_from(log: list[tuple[int, ...]] | None) -> tuple[np.ndarray, int]:
    """``MemoryState.dram_log`` and ``dram_logged`` holding ``Dram.log`` (no rows: not recording)."""
    if log is None:
        return np.zeros((0, DRAM_LOG_COLUMNS), np.int64), 0
    rows = np.zeros((max(_DRAM_LOG_CAPACITY, 2 * len(log)), DRAM_LOG_COLUMNS), np.int64)
    if log:
        rows[:len(log)] = log
    return rows, len(log)


def counter_arrays(st: MemoryState) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The state's statistics arrays (``counts``, ``dram_cycles``, ``sm_accesses``,
    ``sm_transactions``): fixed in size, so a caller may keep them (each attribute read of a
    ``MemoryState`` from Python is a compiled call)."""
    return st.counts, st.dram_cycles, st.sm_accesses, st.sm_transactions


def counters_into_reference(st: MemoryState | tuple, ms: MemorySystem) -> None:
    """Set every statistic of ``ms`` to the state's (or to ``counter_arrays``' of it)."""
    counts, dram_cycles, sm_accesses, sm_transactions = st if isinstance(st, tuple) else counter_arrays(st)
    for (owner, name), value in zip(COUNTERS, counts.tolist()):
        setattr(_owner(ms, owner), name, value)
    for name, value in zip(DRAM_CYCLES, dram_cycles.tolist()):
        setattr(ms._dram, name, value)
    ms.sm_accesses = sm_accesses.tolist()
    ms.sm_transactions = sm_transactions.tolist()


def _cache_into(c: CacheArrays, caches: list[SectorCache]) -> None:
    sets, sectors = int(c.sets), int(c.sectors)
    tag, lru, record = c.tag.tolist(), c.lru.tolist(), c.line.tolist()
    for k, cache in enumerate(caches):
        for s in range(sets):
            row = k * sets + s
            resident: OrderedDict[int, Line] = OrderedDict()
            for way in sorted((w for w, t in enumerate(tag[row]) if t >= 0), key=lru[row].__getitem__):
                line, fields = Line(sectors), record[row][way]
                line.valid, line.dirty, line.latest = fields[LINE_VALID], fields[LINE_DIRTY], fields[LINE_LATEST]
                line.ready = fields[LINE_READY:LINE_READY + sectors]
                line.merges = fields[LINE_READY + sectors:]
                resident[tag[row][way]] = line
            cache.sets[s] = resident


def _mshrs_into(m: MshrFiles, files: list[MshrFile]) -> None:
    release, count = m.release.tolist(), m.count.tolist()
    head, size, used = m.head.tolist(), m.size.tolist(), m.used.tolist()
    for f, mshr in enumerate(files):
        items = slice(head[f], head[f] + size[f])
        mshr.busy = list(zip(release[f][items], count[f][items]))  # sorted: a valid heap
        mshr.used = used[f]


def _timelines_into(tl: Timelines, timelines: list[Timeline], kind: type) -> None:
    for r, t in enumerate(timelines):
        starts, ends = timeline_intervals(tl, r)
        t.starts = [kind(x) for x in starts]
        t.ends = [kind(x) for x in ends]


def state_into_reference(st: MemoryState, ms: MemorySystem) -> None:
    """Replace the state of ``ms`` (built with the state's configuration) by ``st``'s."""
    _cache_into(st.l1, ms._l1)
    _cache_into(st.l2, ms._l2)
    _mshrs_into(st.l1_mshr, ms._l1_mshr)
    _mshrs_into(st.l2_mshr, ms._l2_mshr)
    _timelines_into(st.requests, ms._icnt.request_ports, int)  # the interconnect books whole cycles
    _timelines_into(st.replies, ms._icnt.reply_ports, int)
    _timelines_into(st.buses, ms._dram.buses, float)
    _timelines_into(st.activates, ms._dram.activates, float)
    for name, column in zip(BANK_ROWS, st.bank_rows.T.tolist()):
        setattr(ms._dram, name, column)
    for name, column in zip(BANK_TIMES, st.bank_times.T.tolist()):
        setattr(ms._dram, name, column)
    ms._port = st.port.tolist()
    ms._now = int(st.now)
    log = st.dram_log
    ms._dram.log = [tuple(row) for row in log[:int(st.dram_logged)].tolist()] if log.shape[0] else None
    counters_into_reference(st, ms)
    queue_into_reference(st.q, ms)

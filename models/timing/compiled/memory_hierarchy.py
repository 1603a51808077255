"""The memory hierarchy below the SM port, compiled: L1 paths, L2 slices, interconnect, DRAM.

Each function is the array form of the ``MemorySystem`` method (or ``Interconnect`` / ``Dram``
method) its docstring names and does the same operations in the same order, including the DRAM
float arithmetic, so that its results and counters equal the reference's
(``tests/test_compiled_memory.py``). ``memory.py`` builds the public calls on them.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dualflow.models.timing.memory.coalescer import LOCAL_BASE

from .memory_parts import (
    cache_insert,
    cache_lookup,
    mshr_allocate,
    mshr_reserve,
    popcount,
    timeline_block,
    timeline_first_fit,
    timeline_reserve,
)
from .memory_state import (
    BANK_ACTIVATED,
    BANK_COL_READY,
    BANK_OPEN,
    BANK_PRE_READY,
    BANK_PREV,
    BANK_PREV_CLOSE,
    BANK_PREV_COL_READY,
    DRAM_BUSY,
    DRAM_READ_BYTES,
    DRAM_READS,
    DRAM_REORDERED_HITS,
    DRAM_ROW_CONFLICTS,
    DRAM_ROW_HITS,
    DRAM_ROW_MISSES,
    DRAM_WAIT,
    DRAM_WRITE_BYTES,
    DRAM_WRITES,
    ICNT_REPLIES,
    ICNT_REPLY_FLITS,
    ICNT_REQUEST_FLITS,
    ICNT_REQUESTS,
    ICNT_WAIT_CYCLES,
    L1_BYPASSED,
    L1_HITS,
    L1_MERGE_STALL_CYCLES,
    L1_MERGE_STALLS,
    L1_MERGES,
    L1_MISSED_SECTORS,
    L1_MISSES,
    L1_MSHR_STALL_CYCLES,
    L1_MSHR_STALLS,
    L1_SECTOR_MISSES,
    L1_STORE_HITS,
    L1_STORE_MISSES,
    L1_WRITEBACK_SECTORS,
    L1_WRITEBACKS,
    L2_MERGE_STALLS,
    L2_MERGES,
    L2_MISSED_SECTORS,
    L2_MSHR_STALLS,
    L2_READ_HITS,
    L2_READ_MISSES,
    L2_READS,
    L2_STALL_CYCLES,
    L2_WRITE_HITS,
    L2_WRITE_MISSES,
    L2_WRITEBACKS,
    L2_WRITES,
    LINE_DIRTY,
    LINE_LATEST,
    LINE_READY,
    LINE_VALID,
)


# ---------------------------------------------------------------------- interconnect
@numba.njit(cache=True)
def _icnt_request(st, cycle, slice_index, flits):
    """``Interconnect.request``: the cycle a packet of ``flits`` sent at ``cycle`` reaches the slice."""
    want = cycle + st.icnt_latency
    arrive = int(timeline_reserve(st.requests, slice_index, want, -(-flits // st.flits_per_cycle), st.now))
    counts = st.counts
    counts[ICNT_WAIT_CYCLES] += arrive - want
    counts[ICNT_REQUESTS] += 1
    counts[ICNT_REQUEST_FLITS] += flits
    return arrive


@numba.njit(cache=True)
def _icnt_reply(st, cycle, slice_index, flits):
    """``Interconnect.reply``: the cycle a reply of ``flits`` ready at ``cycle`` reaches the SM."""
    leave = int(timeline_reserve(st.replies, slice_index, cycle, -(-flits // st.flits_per_cycle), st.now))
    counts = st.counts
    counts[ICNT_WAIT_CYCLES] += leave - cycle
    counts[ICNT_REPLIES] += 1
    counts[ICNT_REPLY_FLITS] += flits
    return leave + st.icnt_latency


# ---------------------------------------------------------------------- DRAM
@numba.njit(cache=True)
def _dram_earlier_hit(st, b, channel, arrive, occupancy, lat, write):
    """``Dram._earlier_hit``: serve a request to bank ``b``'s previous row before that row's
    committed precharge if all of it fits there; the end of its burst, or -1.0."""
    bt = st.bank_times
    cas = bt[b, BANK_PREV_COL_READY]
    if cas < arrive:
        cas = arrive
    want = cas + lat
    start = timeline_first_fit(st.buses, channel, want, occupancy)
    issued = start - lat
    end = start + occupancy
    done = end + st.twr if write else issued + st.trtp
    if done > bt[b, BANK_PREV_CLOSE]:
        return -1.0
    timeline_reserve(st.buses, channel, start, occupancy, st.now)  # the gap just found: books exactly there
    st.counts[DRAM_ROW_HITS] += 1
    st.counts[DRAM_REORDERED_HITS] += 1
    st.dram_cycles[DRAM_WAIT] += start - want
    st.dram_cycles[DRAM_BUSY] += occupancy
    bt[b, BANK_PREV_COL_READY] = issued + st.tccd
    return end


@numba.njit(cache=True)
def _dram_access(st, cycle, line_index, nbytes, write):
    """``Dram.serve`` of a request the L2 makes at ``cycle``: the (fractional) end of its burst."""
    arrive = cycle + st.dram_latency
    channel = line_index % st.channels
    local = line_index // st.channels
    b = channel * st.banks + local % st.banks
    row = local // st.banks // st.lines_per_row
    occupancy = nbytes * st.cycles_per_byte
    lat = st.twl if write else st.tcl
    rows, bt, counts = st.bank_rows, st.bank_times, st.counts
    if row == rows[b, BANK_OPEN]:
        counts[DRAM_ROW_HITS] += 1
        cas = bt[b, BANK_COL_READY]
        if cas < arrive:
            cas = arrive
    else:
        if st.frfcfs and row == rows[b, BANK_PREV] and arrive < bt[b, BANK_PREV_CLOSE]:
            end = _dram_earlier_hit(st, b, channel, arrive, occupancy, lat, write)
            if end >= 0:
                return end
        counts[DRAM_ROW_MISSES] += 1
        if rows[b, BANK_OPEN] < 0:
            act = bt[b, BANK_ACTIVATED] + st.trc
            if act < arrive:
                act = arrive
            rows[b, BANK_PREV] = -1
            bt[b, BANK_PREV_CLOSE] = -np.inf
        else:
            counts[DRAM_ROW_CONFLICTS] += 1
            pre = bt[b, BANK_PRE_READY]
            if pre < arrive:
                pre = arrive
            act = pre + st.trp
            if act < bt[b, BANK_ACTIVATED] + st.trc:
                act = bt[b, BANK_ACTIVATED] + st.trc
            rows[b, BANK_PREV] = rows[b, BANK_OPEN]
            bt[b, BANK_PREV_COL_READY] = bt[b, BANK_COL_READY]
            bt[b, BANK_PREV_CLOSE] = pre
        act = timeline_reserve(st.activates, channel, act, st.trrd, st.now)
        rows[b, BANK_OPEN] = row
        bt[b, BANK_ACTIVATED] = act
        bt[b, BANK_PRE_READY] = act + st.tras
        cas = act + st.trcd
    want = cas + lat
    start = timeline_reserve(st.buses, channel, want, occupancy, st.now)
    st.dram_cycles[DRAM_WAIT] += start - want
    st.dram_cycles[DRAM_BUSY] += occupancy
    issued = start - lat  # a busy bus delays the column command with it
    end = start + occupancy
    bt[b, BANK_COL_READY] = issued + st.tccd
    done = end + st.twr if write else issued + st.trtp
    if done > bt[b, BANK_PRE_READY]:
        bt[b, BANK_PRE_READY] = done
    return end


@numba.njit(cache=True)
def _dram_log(st, cycle, line_index, nbytes, write, done):
    """Append a request to ``st.dram_log`` if it records (``Dram.log``), growing it when full."""
    log = st.dram_log
    if not log.shape[0]:
        return
    n = st.dram_logged
    if n == log.shape[0]:
        grown = np.empty((2 * n, log.shape[1]), np.int64)
        grown[:n] = log
        st.dram_log = grown
        log = grown
    log[n, 0], log[n, 1], log[n, 2], log[n, 3], log[n, 4], log[n, 5] = cycle, line_index, nbytes, write, st.now, done
    st.dram_logged = n + 1


@numba.njit(cache=True)
def _dram_read(st, cycle, line_index, nbytes):
    """``Dram.read``: the cycle all ``nbytes`` are back."""
    end = _dram_access(st, cycle, line_index, nbytes, False)
    st.counts[DRAM_READS] += 1
    st.counts[DRAM_READ_BYTES] += nbytes
    done = math.ceil(end - 1e-9)
    _dram_log(st, cycle, line_index, nbytes, 0, done)
    return done


@numba.njit(cache=True)
def _dram_write(st, cycle, line_index, nbytes):
    """``Dram.write``: occupy the bank and the channel (nobody waits for a write)."""
    _dram_access(st, cycle, line_index, nbytes, True)
    st.counts[DRAM_WRITES] += 1
    st.counts[DRAM_WRITE_BYTES] += nbytes
    _dram_log(st, cycle, line_index, nbytes, 1, -1)


# ---------------------------------------------------------------------- L2
@numba.njit(cache=True)
def _slice(st, index):
    """``MemorySystem._slice``: the L2 slice of line ``index``."""
    if not st.use_ipoly:
        return index % st.slices
    if index >> 48:
        raise ValueError("line index beyond the 48 bits the slice hash covers")
    t = st.ipoly
    return (t[0, index & 255] ^ t[1, index >> 8 & 255] ^ t[2, index >> 16 & 255]
            ^ t[3, index >> 24 & 255] ^ t[4, index >> 32 & 255] ^ t[5, index >> 40 & 255])


@numba.njit(cache=True)
def _in_flight(c, row, way, sectors, cycle):
    """Of the valid ``sectors`` of a line, those still in flight after ``cycle`` and the latest of
    their fills: (pending mask, wait)."""
    pending = 0
    wait = 0
    line = c.line
    if line[row, way, LINE_LATEST] > cycle:  # some fill still in flight: which of ours?
        mask = sectors & line[row, way, LINE_VALID]
        for k in range(c.sectors):
            if mask >> k & 1:
                r = line[row, way, LINE_READY + k]
                if r > cycle:
                    pending |= 1 << k
                    if r > wait:
                        wait = r
    return pending, wait


@numba.njit(cache=True)
def _try_merge(c, row, way, pending):
    """Merge a request into the in-flight fills of ``pending`` sectors if every entry has room."""
    line, limit, sectors = c.line, c.max_merges, c.sectors
    merges = LINE_READY + sectors
    for k in range(sectors):
        if pending >> k & 1 and line[row, way, merges + k] >= limit:
            return False
    for k in range(sectors):
        if pending >> k & 1:
            line[row, way, merges + k] += 1
    return True


@numba.njit(cache=True)
def _fill(c, row, way, missing, fill):
    """Mark the ``missing`` sectors of a line as arriving at ``fill``."""
    line, sectors = c.line, c.sectors
    for k in range(sectors):
        if missing >> k & 1:
            line[row, way, LINE_READY + k] = fill
            line[row, way, LINE_READY + sectors + k] = 0
    line[row, way, LINE_VALID] |= missing
    if fill > line[row, way, LINE_LATEST]:
        line[row, way, LINE_LATEST] = fill


@numba.njit(cache=True)
def _write_sectors(c, row, way, sectors, t):
    """Written ``sectors`` of a line become valid and dirty at ``t`` (a fill in flight keeps its later time)."""
    line = c.line
    for k in range(c.sectors):
        if sectors >> k & 1 and line[row, way, LINE_READY + k] < t:
            line[row, way, LINE_READY + k] = t
    line[row, way, LINE_VALID] |= sectors
    line[row, way, LINE_DIRTY] |= sectors
    if t > line[row, way, LINE_LATEST]:
        line[row, way, LINE_LATEST] = t


@numba.njit(cache=True)
def _l2_read(st, c, index, sectors):
    """``MemorySystem._l2_read``: the cycle the data of an L1 miss leaving the SM at ``c`` is back."""
    counts = st.counts
    slice_index = _slice(st, index)
    arrive = _icnt_request(st, c, slice_index, st.read_flits)
    t = arrive + st.l2_hit
    l2 = st.l2
    row = slice_index * l2.sets + (index // st.slices) % l2.sets
    way = cache_lookup(l2, row, index)
    wait = pending = 0
    if way < 0:
        missing = sectors
    else:
        missing = sectors & ~l2.line[row, way, LINE_VALID]
        pending, wait = _in_flight(l2, row, way, sectors, t)
    counts[L2_READS] += 1
    if not missing:
        if not pending:
            counts[L2_READ_HITS] += 1
            data = t
        else:
            if _try_merge(l2, row, way, pending):
                counts[L2_MERGES] += 1
            else:
                # no room to merge: the request blocks the slice's input until the fill
                counts[L2_MERGE_STALLS] += 1
                counts[L2_STALL_CYCLES] += wait - t
                counts[L2_READ_HITS] += 1
                timeline_block(st.requests, slice_index, arrive, wait - st.l2_hit)
            data = wait
    else:
        count = popcount(missing)
        issue = mshr_reserve(st.l2_mshr, slice_index, t, count)
        if issue > t:
            # MSHRs full: the request blocks the slice's input until one frees
            counts[L2_MSHR_STALLS] += 1
            counts[L2_STALL_CYCLES] += issue - t
            timeline_block(st.requests, slice_index, arrive, issue - st.l2_hit)
        if way < 0:
            way, victim_index, victim_dirty = cache_insert(l2, row, index)
            if victim_index >= 0 and victim_dirty:
                counts[L2_WRITEBACKS] += 1
                _dram_write(st, issue, victim_index, popcount(victim_dirty) * st.sector_bytes)
        fill = _dram_read(st, issue, index, count * st.sector_bytes)
        _fill(l2, row, way, missing, fill)
        mshr_allocate(st.l2_mshr, slice_index, fill, count)
        counts[L2_READ_MISSES] += 1
        counts[L2_MISSED_SECTORS] += count
        data = fill if fill > wait else wait
    return _icnt_reply(st, data, slice_index, st.data_flits[popcount(sectors)])


@numba.njit(cache=True)
def _l2_write(st, c, index, sectors):
    """``MemorySystem._l2_write``: write ``sectors`` of line ``index`` leaving an SM at ``c``."""
    counts = st.counts
    slice_index = _slice(st, index)
    t = _icnt_request(st, c, slice_index, st.data_flits[popcount(sectors)]) + st.l2_hit
    l2 = st.l2
    row = slice_index * l2.sets + (index // st.slices) % l2.sets
    way = cache_lookup(l2, row, index)
    counts[L2_WRITES] += 1
    if way < 0:
        counts[L2_WRITE_MISSES] += 1
        way, victim_index, victim_dirty = cache_insert(l2, row, index)
        if victim_index >= 0 and victim_dirty:
            counts[L2_WRITEBACKS] += 1
            _dram_write(st, t, victim_index, popcount(victim_dirty) * st.sector_bytes)
    else:
        counts[L2_WRITE_HITS] += 1
    _write_sectors(l2, row, way, sectors, t)


# ---------------------------------------------------------------------- L1
@numba.njit(cache=True)
def l1_write_back(st, c, index, dirty):
    """``MemorySystem._l1_write_back``: write a dirty L1 line's ``dirty`` sectors to L2 at ``c``."""
    st.counts[L1_WRITEBACKS] += 1
    st.counts[L1_WRITEBACK_SECTORS] += popcount(dirty)
    _l2_write(st, c, index, dirty)


@numba.njit(cache=True)
def _l1_uncached_load(st, sm, c, index, sectors):
    """``MemorySystem._l1_uncached_load``: straight to L2, holding MSHRs; (port cycle after, data back)."""
    counts = st.counts
    count = popcount(sectors)
    issue = mshr_reserve(st.l1_mshr, sm, c, count)
    if issue > c:
        counts[L1_MSHR_STALLS] += 1
        counts[L1_MSHR_STALL_CYCLES] += issue - c
    fill = _l2_read(st, issue, index, sectors)
    mshr_allocate(st.l1_mshr, sm, fill, count)
    counts[L1_MISSES] += 1
    counts[L1_BYPASSED] += 1
    counts[L1_MISSED_SECTORS] += count
    return issue, fill


@numba.njit(cache=True)
def l1_load(st, sm, c, line_addr, sectors):
    """``MemorySystem._l1_load``: one load transaction passing the port at ``c``; (the cycle the
    port moves on from it, data-back cycle)."""
    index = line_addr >> st.line_shift
    if st.bypass_local if line_addr >= LOCAL_BASE else st.bypass_global:
        return _l1_uncached_load(st, sm, c, index, sectors)
    counts = st.counts
    l1 = st.l1
    row = sm * l1.sets + index % l1.sets
    way = cache_lookup(l1, row, index)
    wait = pending = 0
    if way < 0:
        missing = sectors
    else:
        missing = sectors & ~l1.line[row, way, LINE_VALID]
        pending, wait = _in_flight(l1, row, way, sectors, c)
    if not missing:
        if not pending:
            counts[L1_HITS] += 1
            return c, c + st.l1_hit
        if _try_merge(l1, row, way, pending):
            counts[L1_MERGES] += 1
            return c, max(wait, c + st.l1_hit)
        # the entry cannot take another request: the port stalls until the fill, then it hits
        counts[L1_MERGE_STALLS] += 1
        counts[L1_MERGE_STALL_CYCLES] += wait - c
        counts[L1_HITS] += 1
        return wait, wait + st.l1_hit
    count = popcount(missing)
    issue = mshr_reserve(st.l1_mshr, sm, c, count)
    if issue > c:
        counts[L1_MSHR_STALLS] += 1
        counts[L1_MSHR_STALL_CYCLES] += issue - c
    if way < 0:
        way, victim_index, victim_dirty = cache_insert(l1, row, index)
        if victim_index >= 0 and victim_dirty:
            l1_write_back(st, issue, victim_index, victim_dirty)
    else:
        counts[L1_SECTOR_MISSES] += 1
    fill = _l2_read(st, issue, index, missing)
    _fill(l1, row, way, missing, fill)
    mshr_allocate(st.l1_mshr, sm, fill, count)
    counts[L1_MISSES] += 1
    counts[L1_MISSED_SECTORS] += count
    return issue, max(fill, wait, issue + st.l1_hit)


@numba.njit(cache=True)
def l1_store(st, sm, c, line_addr, sectors):
    """``MemorySystem._l1_store``: one store transaction passing the port at ``c``."""
    index = line_addr >> st.line_shift
    l1 = st.l1
    row = sm * l1.sets + index % l1.sets
    way = cache_lookup(l1, row, index)
    if way >= 0:
        st.counts[L1_STORE_HITS] += 1
    else:
        st.counts[L1_STORE_MISSES] += 1
    if line_addr < LOCAL_BASE or st.bypass_local:
        # global (or uncached local): write-through, no write-allocate; a resident line is updated in place
        _l2_write(st, c, index, sectors)
        return
    # local: write-back, write-allocate without fetch
    if way < 0:
        way, victim_index, victim_dirty = cache_insert(l1, row, index)
        if victim_index >= 0 and victim_dirty:
            l1_write_back(st, c, victim_index, victim_dirty)
    _write_sectors(l1, row, way, sectors, c)

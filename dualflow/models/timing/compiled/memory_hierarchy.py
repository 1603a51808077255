"""The memory hierarchy below the SM port, compiled: L1 paths, L2 slices, interconnect.

Each function is the array form of the ``MemorySystem`` method (or ``Interconnect`` method) its
docstring names, or of a part of one, and does the same operations in the same order, so that
its results and counters equal the reference's (``tests/models/timing/test_compiled_memory.py``). ``memory.py``
builds the public calls of the reservation schedulers on them; the queued ones
(``memory_queued*.py``) share the parts (lookups, merges, misses, writes). DRAM is
``memory_dram.py`` (the device) and ``memory_dram_queue.py`` (the queued controllers).
"""

from __future__ import annotations

import numba

from dualflow.models.timing.memory.coalescer import LOCAL_BASE

from .memory_dram import dram_read, dram_write
from .memory_dram_queue import submit
from .memory_parts import (
    cache_insert,
    cache_lookup,
    mshr_allocate,
    mshr_reserve,
    popcount,
    timeline_block,
    timeline_reserve,
)
from .memory_state import (
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
    L1_STORE_TX,
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
    SMEM_ACCESSES,
    SMEM_CONFLICT_ROUNDS,
    SMEM_ROUNDS,
)


# ---------------------------------------------------------------------- the SM port
@numba.njit(cache=True)
def check_order(st, cycle):
    """Requests come in cycle order (``ValueError`` otherwise)."""
    if cycle < st.now:
        raise ValueError("memory requests must come in cycle order")


@numba.njit(cache=True)
def shared_port(st, sm, start, degree):
    """A shared-memory access of conflict degree ``degree`` (> 0) holds SM ``sm``'s port from
    ``start``: counted, the port's next free cycle set and returned."""
    counts = st.counts
    counts[SMEM_ACCESSES] += 1
    counts[SMEM_ROUNDS] += degree
    # rounds beyond one per part: a warp served in half-warps needs two rounds without conflict
    counts[SMEM_CONFLICT_ROUNDS] += degree - min(degree, st.smem_parts)
    port_free = start + degree * st.smem_interval
    st.port[sm] = port_free
    return port_free


@numba.njit(cache=True)
def store_port(st, sm, start, tx_line, tx_sectors, first, n):
    """A warp's ``n`` (> 0) store transactions pass SM ``sm``'s port from ``start`` (they never
    wait): counted, the port's next free cycle set and returned."""
    st.sm_transactions[sm] += n
    st.counts[L1_STORE_TX] += n
    tpc = st.tpc
    for i in range(n):
        l1_store(st, sm, start + i // tpc, tx_line[first + i], tx_sectors[first + i])
    port_free = start + -(-n // tpc)
    st.port[sm] = port_free
    return port_free


# ---------------------------------------------------------------------- interconnect
@numba.njit(cache=True)
def icnt_request(st, cycle, slice_index, flits):
    """``Interconnect.request``: the cycle a packet of ``flits`` sent at ``cycle`` reaches the slice."""
    want = cycle + st.icnt_latency
    arrive = int(timeline_reserve(st.requests, slice_index, want, -(-flits // st.flits_per_cycle), st.now))
    counts = st.counts
    counts[ICNT_WAIT_CYCLES] += arrive - want
    counts[ICNT_REQUESTS] += 1
    counts[ICNT_REQUEST_FLITS] += flits
    return arrive


@numba.njit(cache=True)
def icnt_reply(st, cycle, slice_index, flits):
    """``Interconnect.reply``: the cycle a reply of ``flits`` ready at ``cycle`` reaches the SM."""
    leave = int(timeline_reserve(st.replies, slice_index, cycle, -(-flits // st.flits_per_cycle), st.now))
    counts = st.counts
    counts[ICNT_WAIT_CYCLES] += leave - cycle
    counts[ICNT_REPLIES] += 1
    counts[ICNT_REPLY_FLITS] += flits
    return leave + st.icnt_latency


# ---------------------------------------------------------------------- lines
@numba.njit(cache=True)
def in_flight(c, row, way, sectors, cycle):
    """Of the valid ``sectors`` of a line, those still in flight after ``cycle`` and the latest of
    their fills: (pending mask, wait; ``IN_FLIGHT`` if a fill is pending)."""
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
def probe(c, row, index, sectors, cycle):
    """Look line ``index`` up in set row ``row`` (LRU update) for ``sectors`` at ``cycle``: (way or
    -1, missing sectors, sectors in flight after ``cycle``, the latest of those fills)."""
    way = cache_lookup(c, row, index)
    if way < 0:
        return way, sectors, 0, 0
    pending, wait = in_flight(c, row, way, sectors, cycle)
    return way, sectors & ~c.line[row, way, LINE_VALID], pending, wait


@numba.njit(cache=True)
def try_merge(c, row, way, pending):
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
def fill_sectors(c, row, way, missing, fill):
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


# ---------------------------------------------------------------------- L2
@numba.njit(cache=True)
def l2_slice(st, index):
    """``MemorySystem._slice``: the L2 slice of line ``index``."""
    if not st.use_ipoly:
        return index % st.slices
    if index >> 48:
        raise ValueError("line index beyond the 48 bits the slice hash covers")
    t = st.ipoly
    return (t[0, index & 255] ^ t[1, index >> 8 & 255] ^ t[2, index >> 16 & 255]
            ^ t[3, index >> 24 & 255] ^ t[4, index >> 32 & 255] ^ t[5, index >> 40 & 255])


@numba.njit(cache=True, inline="always")
def l2_row(st, slice_index, index):
    """The set row of line ``index`` in its slice's tag array."""
    return slice_index * st.l2.sets + (index // st.slices) % st.l2.sets


@numba.njit(cache=True)
def dram_write_request(st, cycle, index, nbytes):
    """``MemorySystem._dram_write``: a write of a dirty L2 line, to the queue or the device."""
    if st.queued:
        submit(st, cycle, index, nbytes, True)
    else:
        dram_write(st, cycle, index, nbytes)


@numba.njit(cache=True)
def l2_merge_stall(st, slice_index, arrive, t, wait):
    """No room to merge into a fill known to come at ``wait``: the request blocks the slice's
    input until the fill, then it hits."""
    counts = st.counts
    counts[L2_MERGE_STALLS] += 1
    counts[L2_STALL_CYCLES] += wait - t
    counts[L2_READ_HITS] += 1
    timeline_block(st.requests, slice_index, arrive, wait - st.l2_hit)


@numba.njit(cache=True)
def l2_miss(st, slice_index, arrive, t, issue, row, way, index, count):
    """An L2 read miss of ``count`` sectors whose MSHRs are free at ``issue``: stall the slice's
    input until then, allocate the line (a dirty victim goes to DRAM) and count it; its way."""
    counts = st.counts
    if issue > t:
        # MSHRs full: the request blocks the slice's input until one frees
        counts[L2_MSHR_STALLS] += 1
        counts[L2_STALL_CYCLES] += issue - t
        timeline_block(st.requests, slice_index, arrive, issue - st.l2_hit)
    if way < 0:
        way, victim_index, victim_dirty = cache_insert(st.l2, row, index)
        if victim_index >= 0 and victim_dirty:
            counts[L2_WRITEBACKS] += 1
            dram_write_request(st, issue, victim_index, popcount(victim_dirty) * st.sector_bytes)
    counts[L2_READ_MISSES] += 1
    counts[L2_MISSED_SECTORS] += count
    return way


@numba.njit(cache=True)
def _l2_read(st, c, index, sectors):
    """``MemorySystem._l2_read``: the cycle the data of an L1 miss leaving the SM at ``c`` is back."""
    counts = st.counts
    slice_index = l2_slice(st, index)
    arrive = icnt_request(st, c, slice_index, st.read_flits)
    t = arrive + st.l2_hit
    l2 = st.l2
    row = l2_row(st, slice_index, index)
    way, missing, pending, wait = probe(l2, row, index, sectors, t)
    counts[L2_READS] += 1
    if not missing:
        if not pending:
            counts[L2_READ_HITS] += 1
            data = t
        else:
            if try_merge(l2, row, way, pending):
                counts[L2_MERGES] += 1
            else:
                l2_merge_stall(st, slice_index, arrive, t, wait)
            data = wait
    else:
        count = popcount(missing)
        issue = mshr_reserve(st.l2_mshr, slice_index, t, count)
        way = l2_miss(st, slice_index, arrive, t, issue, row, way, index, count)
        fill = dram_read(st, issue, index, count * st.sector_bytes)
        fill_sectors(l2, row, way, missing, fill)
        mshr_allocate(st.l2_mshr, slice_index, fill, count)
        data = fill if fill > wait else wait
    return icnt_reply(st, data, slice_index, st.data_flits[popcount(sectors)])


@numba.njit(cache=True)
def _l2_write(st, c, index, sectors):
    """``MemorySystem._l2_write``: write ``sectors`` of line ``index`` leaving an SM at ``c``."""
    counts = st.counts
    slice_index = l2_slice(st, index)
    t = icnt_request(st, c, slice_index, st.data_flits[popcount(sectors)]) + st.l2_hit
    l2 = st.l2
    row = l2_row(st, slice_index, index)
    way = cache_lookup(l2, row, index)
    counts[L2_WRITES] += 1
    if way < 0:
        counts[L2_WRITE_MISSES] += 1
        way, victim_index, victim_dirty = cache_insert(l2, row, index)
        if victim_index >= 0 and victim_dirty:
            counts[L2_WRITEBACKS] += 1
            dram_write_request(st, t, victim_index, popcount(victim_dirty) * st.sector_bytes)
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


@numba.njit(cache=True, inline="always")
def l1_bypassed(st, line_addr):
    """Whether the L1 does not cache the space of ``line_addr`` (``l1.caches_global``/``caches_local``)."""
    return st.bypass_local if line_addr >= LOCAL_BASE else st.bypass_global


@numba.njit(cache=True, inline="always")
def l1_row(st, sm, index):
    """The set row of line ``index`` in SM ``sm``'s L1."""
    return sm * st.l1.sets + index % st.l1.sets


@numba.njit(cache=True)
def l1_mshr_stall(st, c, issue):
    """Count the port's stall from ``c`` to ``issue`` for free MSHRs."""
    if issue > c:
        st.counts[L1_MSHR_STALLS] += 1
        st.counts[L1_MSHR_STALL_CYCLES] += issue - c


@numba.njit(cache=True)
def l1_counted_miss(st, count, bypassed):
    """Count an L1 load miss of ``count`` sectors (``bypassed``: of a space the L1 does not cache)."""
    counts = st.counts
    counts[L1_MISSES] += 1
    if bypassed:
        counts[L1_BYPASSED] += 1
    counts[L1_MISSED_SECTORS] += count


@numba.njit(cache=True)
def l1_merge_stall(st, c, wait):
    """The in-flight entries cannot take another request: the port stalls from ``c`` until the
    fill at ``wait``, then the transaction hits; (port cycle after, data back)."""
    counts = st.counts
    counts[L1_MERGE_STALLS] += 1
    counts[L1_MERGE_STALL_CYCLES] += wait - c
    counts[L1_HITS] += 1
    return wait, wait + st.l1_hit


@numba.njit(cache=True)
def l1_allocate(st, row, way, index, issue):
    """A missing line ``index`` (way -1) is allocated at ``issue`` (a dirty victim is written back);
    a resident one counts a sector miss; its way."""
    if way < 0:
        way, victim_index, victim_dirty = cache_insert(st.l1, row, index)
        if victim_index >= 0 and victim_dirty:
            l1_write_back(st, issue, victim_index, victim_dirty)
    else:
        st.counts[L1_SECTOR_MISSES] += 1
    return way


@numba.njit(cache=True)
def _l1_uncached_load(st, sm, c, index, sectors):
    """``MemorySystem._l1_uncached_load``: straight to L2, holding MSHRs; (port cycle after, data back)."""
    count = popcount(sectors)
    issue = mshr_reserve(st.l1_mshr, sm, c, count)
    l1_mshr_stall(st, c, issue)
    fill = _l2_read(st, issue, index, sectors)
    mshr_allocate(st.l1_mshr, sm, fill, count)
    l1_counted_miss(st, count, True)
    return issue, fill


@numba.njit(cache=True)
def l1_load(st, sm, c, line_addr, sectors):
    """``MemorySystem._l1_load``: one load transaction passing the port at ``c``; (the cycle the
    port moves on from it, data-back cycle)."""
    index = line_addr >> st.line_shift
    if l1_bypassed(st, line_addr):
        return _l1_uncached_load(st, sm, c, index, sectors)
    counts = st.counts
    l1 = st.l1
    row = l1_row(st, sm, index)
    way, missing, pending, wait = probe(l1, row, index, sectors, c)
    if not missing:
        if not pending:
            counts[L1_HITS] += 1
            return c, c + st.l1_hit
        if try_merge(l1, row, way, pending):
            counts[L1_MERGES] += 1
            return c, max(wait, c + st.l1_hit)
        return l1_merge_stall(st, c, wait)
    count = popcount(missing)
    issue = mshr_reserve(st.l1_mshr, sm, c, count)
    l1_mshr_stall(st, c, issue)
    way = l1_allocate(st, row, way, index, issue)
    fill = _l2_read(st, issue, index, missing)
    fill_sectors(l1, row, way, missing, fill)
    mshr_allocate(st.l1_mshr, sm, fill, count)
    l1_counted_miss(st, count, False)
    return issue, max(fill, wait, issue + st.l1_hit)


@numba.njit(cache=True)
def l1_store(st, sm, c, line_addr, sectors):
    """``MemorySystem._l1_store``: one store transaction passing the port at ``c``."""
    index = line_addr >> st.line_shift
    l1 = st.l1
    row = l1_row(st, sm, index)
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

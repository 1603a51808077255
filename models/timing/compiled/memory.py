"""The memory system of the compiled timing engine: a numba port of ``models/timing/memory/``.

``global_access``, ``shared_access`` and ``flush_l1`` are njit functions on a ``MemoryState``
(``memory_state.py``) that do what ``MemorySystem.global_access``, ``shared_access`` and
``flush_l1`` do, operation for operation: the same ``Access`` results and the same statistics
for any sequence of requests (``tests/test_compiled_memory.py`` checks this against the
reference on random and recorded request sequences). The reference is the specification; a
change there must be made here too, and those tests fail until it is.

``CompiledMemory`` wraps a state for Python callers: construction from a configuration or from
a reference ``MemorySystem`` (exact state transfer, ``memory_transfer.py``), the other direction
(``store_into``), ``stats()`` and ``flush_l1``.
"""

from __future__ import annotations

import math

import numba

from dualflow.machine.memory import MemoryConfig
from dualflow.models.timing.memory.coalescer import LOCAL_BASE
from dualflow.models.timing.memory.system import MemorySystem

from .memory_parts import (
    cache_clear,
    cache_insert,
    cache_lookup,
    cache_next_lru,
    mshr_allocate,
    mshr_reserve,
    popcount,
    timeline_block,
    timeline_reserve,
)
from .memory_state import (
    DRAM_BUSY,
    DRAM_READ_BYTES,
    DRAM_READS,
    DRAM_WAIT,
    DRAM_WRITE_BYTES,
    DRAM_WRITES,
    ICNT_REPLIES,
    ICNT_REPLY_FLITS,
    ICNT_REQUEST_FLITS,
    ICNT_REQUESTS,
    ICNT_WAIT_CYCLES,
    L1_BYPASSED,
    L1_FLUSHES,
    L1_HITS,
    L1_LOAD_TX,
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
    LOAD_LATENCY,
    LOADS,
    SMEM_ACCESSES,
    SMEM_CONFLICT_ROUNDS,
    SMEM_ROUNDS,
    MemoryState,
)


# ---------------------------------------------------------------------- interconnect and DRAM
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


@numba.njit(cache=True)
def _dram_transfer(st, cycle, line_index, nbytes):
    """``Dram._transfer``: book the channel's data bus; the (fractional) end of the transfer."""
    occupancy = nbytes * st.cycles_per_byte
    start = timeline_reserve(st.buses, line_index % st.channels, cycle, occupancy, st.now)
    st.dram_cycles[DRAM_WAIT] += start - cycle
    st.dram_cycles[DRAM_BUSY] += occupancy
    return start + occupancy


@numba.njit(cache=True)
def _dram_read(st, cycle, line_index, nbytes):
    """``Dram.read``: the cycle all ``nbytes`` are back."""
    end = _dram_transfer(st, cycle, line_index, nbytes)
    st.counts[DRAM_READS] += 1
    st.counts[DRAM_READ_BYTES] += nbytes
    return math.ceil(end - 1e-9) + st.dram_latency


@numba.njit(cache=True)
def _dram_write(st, cycle, line_index, nbytes):
    """``Dram.write``: occupy the channel (nobody waits for a write)."""
    _dram_transfer(st, cycle, line_index, nbytes)
    st.counts[DRAM_WRITES] += 1
    st.counts[DRAM_WRITE_BYTES] += nbytes


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
def _l1_write_back(st, c, index, dirty):
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
def _l1_load(st, sm, c, line_addr, sectors):
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
            _l1_write_back(st, issue, victim_index, victim_dirty)
    else:
        counts[L1_SECTOR_MISSES] += 1
    fill = _l2_read(st, issue, index, missing)
    _fill(l1, row, way, missing, fill)
    mshr_allocate(st.l1_mshr, sm, fill, count)
    counts[L1_MISSES] += 1
    counts[L1_MISSED_SECTORS] += count
    return issue, max(fill, wait, issue + st.l1_hit)


@numba.njit(cache=True)
def _l1_store(st, sm, c, line_addr, sectors):
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
            _l1_write_back(st, c, victim_index, victim_dirty)
    _write_sectors(l1, row, way, sectors, c)


# ---------------------------------------------------------------------- public njit API
@numba.njit(cache=True)
def _check_order(st, cycle):
    if cycle < st.now:
        raise ValueError("memory requests must come in cycle order")
    st.now = cycle


@numba.njit(cache=True)
def global_access(st, cycle, sm, tx_line, tx_sectors, first, n, write):
    """``MemorySystem.global_access`` of the transactions ``tx_line[first:first + n]`` (line byte
    addresses) with sector masks ``tx_sectors[first:first + n]``; ``(port_free, done)``.

    Raises ``ValueError`` if ``cycle`` is before an earlier request's.
    """
    _check_order(st, cycle)
    start = st.port[sm]
    if start < cycle:
        start = cycle
    st.sm_accesses[sm] += 1
    if not n:
        return start, start
    st.sm_transactions[sm] += n
    counts = st.counts
    tpc = st.tpc
    delay = 0
    done = start
    if write:
        counts[L1_STORE_TX] += n
        for i in range(n):
            _l1_store(st, sm, start + delay + i // tpc, tx_line[first + i], tx_sectors[first + i])
    else:
        counts[L1_LOAD_TX] += n
        for i in range(n):
            c = start + delay + i // tpc
            c_after, ready = _l1_load(st, sm, c, tx_line[first + i], tx_sectors[first + i])
            delay += c_after - c
            if ready > done:
                done = ready
    port_free = start + delay + -(-n // tpc)
    st.port[sm] = port_free
    if write:
        return port_free, port_free
    counts[LOADS] += 1
    counts[LOAD_LATENCY] += done - cycle
    return port_free, done


@numba.njit(cache=True)
def shared_access(st, cycle, sm, degree):
    """``MemorySystem.shared_access``: a shared-memory access of conflict degree ``degree``;
    ``(port_free, done)``."""
    _check_order(st, cycle)
    start = st.port[sm]
    if start < cycle:
        start = cycle
    if degree <= 0:
        return start, start
    counts = st.counts
    counts[SMEM_ACCESSES] += 1
    counts[SMEM_ROUNDS] += degree
    # rounds beyond one per part: a warp served in half-warps needs two rounds without conflict
    counts[SMEM_CONFLICT_ROUNDS] += degree - min(degree, st.smem_parts)
    port_free = start + degree * st.smem_interval
    st.port[sm] = port_free
    return port_free, port_free - 1 + st.smem_latency


@numba.njit(cache=True)
def flush_l1(st, cycle):
    """``MemorySystem.flush_l1``: invalidate every L1 at ``cycle``, writing dirty lines back to L2
    cache by cache, set by set, each set in LRU order (the reference's dict order)."""
    _check_order(st, cycle)
    l1 = st.l1
    for row in range(l1.tag.shape[0]):
        if not l1.lines[row]:
            continue
        dirty = 0
        for w in range(l1.ways):
            if l1.tag[row, w] >= 0:
                dirty |= l1.line[row, w, LINE_DIRTY]
        if dirty:  # write back in LRU order
            way = cache_next_lru(l1, row, 0)
            while way >= 0:
                if l1.line[row, way, LINE_DIRTY]:
                    _l1_write_back(st, cycle, l1.tag[row, way], l1.line[row, way, LINE_DIRTY])
                way = cache_next_lru(l1, row, l1.lru[row, way])
        cache_clear(l1, row)
    st.counts[L1_FLUSHES] += 1


# ---------------------------------------------------------------------- Python wrapper
class CompiledMemory:
    """A compiled memory system with the behaviour of ``MemorySystem(config, num_sms, core_clock_mhz)``.

    Members
    -------
    state : MemoryState
        The numba state: pass it to ``global_access``, ``shared_access`` and ``flush_l1``.
    config : MemoryConfig
    num_sms : int
    core_clock_mhz : float
    """

    def __init__(self, config: MemoryConfig, num_sms: int, core_clock_mhz: float):
        from .memory_transfer import state_from_reference
        self._load(MemorySystem(config, num_sms, core_clock_mhz), state_from_reference)

    @classmethod
    def from_reference(cls, ms: MemorySystem) -> CompiledMemory:
        """A compiled memory system in exactly the state of ``ms`` (which is not changed)."""
        from .memory_transfer import state_from_reference
        self = cls.__new__(cls)
        self._load(ms, state_from_reference)
        return self

    def _load(self, ms: MemorySystem, convert) -> None:
        self.config, self.num_sms, self.core_clock_mhz = ms.config, ms.num_sms, ms.core_clock_mhz
        self.state: MemoryState = convert(ms)
        self._ledger: MemorySystem | None = None

    def store_into(self, ms: MemorySystem) -> None:
        """Put this state into the reference ``ms`` (same configuration), replacing its own."""
        from .memory_transfer import state_into_reference
        if (ms.config, ms.num_sms, ms.core_clock_mhz) != (self.config, self.num_sms, self.core_clock_mhz):
            raise ValueError("store_into needs a MemorySystem of the same configuration, SM count and clock")
        state_into_reference(self.state, ms)

    def to_reference(self) -> MemorySystem:
        """A reference memory system in this state."""
        ms = MemorySystem(self.config, self.num_sms, self.core_clock_mhz)
        self.store_into(ms)
        return ms

    @property
    def dram_latency(self) -> int:
        """DRAM access latency in core cycles (``MemorySystem.dram_latency``)."""
        return int(self.state.dram_latency)

    def global_access(self, cycle: int, sm: int, tx_line, tx_sectors, *, write: bool) -> tuple[int, int]:
        """``global_access`` of all of ``tx_line``/``tx_sectors`` (int64 arrays), from Python."""
        port_free, done = global_access(self.state, cycle, sm, tx_line, tx_sectors, 0, len(tx_line), write)
        return int(port_free), int(done)

    def shared_access(self, cycle: int, sm: int, degree: int) -> tuple[int, int]:
        """``shared_access`` from Python."""
        port_free, done = shared_access(self.state, cycle, sm, degree)
        return int(port_free), int(done)

    def flush_l1(self, cycle: int) -> None:
        """``MemorySystem.flush_l1``."""
        flush_l1(self.state, cycle)

    def stats(self) -> dict:
        """Exactly ``MemorySystem.stats()`` of the reference in this state: the counters are put
        into a reference system (kept for the purpose) whose ``stats`` builds the tree."""
        from .memory_transfer import counters_into_reference
        if self._ledger is None:
            self._ledger = MemorySystem(self.config, self.num_sms, self.core_clock_mhz)
        counters_into_reference(self.state, self._ledger)
        return self._ledger.stats()

"""State of the compiled memory system: numba structrefs of fixed-size arrays.

The reference memory system (``dualflow/models/timing/memory/``) keeps its state in Python objects:
``OrderedDict`` sets of ``Line`` objects, heaps of tuples, lists of intervals. The compiled port
keeps the same information in arrays, grouped in four structref types:

- ``CacheArrays``: the tag arrays of every L1 (or every L2 slice), one row per set of every
  cache (row ``cache * sets + set``), one column per way. LRU order is a use stamp per line
  (``lru``; larger = used later), so the least recently used line is the smallest stamp and a
  set's lines in stamp order are the ``OrderedDict``'s iteration order. A line's state (the
  members of ``Line``) is one record of ``line``, so that a transaction touches few host cache
  lines: the port is bound by memory latency, not by arithmetic.
- ``MshrFiles``: per MSHR file, its ``(release, count)`` items sorted as Python sorts those
  tuples (the reference keeps them in a heap, which pops them in that same order).
- ``Timelines``: one sorted list of busy intervals per port, data bus or activate window (float cycles; integer
  cycles are exact in a float64), grown when full, pruned as the reference prunes.
- ``MemoryState``: the above, the SM ports, the counters and the configuration scalars.

Structrefs are mutable and passed by reference: a call from njit code costs a pointer, fields
are plain loads, arrays can be reallocated (timelines and MSHR files grow), and functions taking
them are cached on disk. Python reads any field through the properties defined here; the
constructors (``new_*``) are the only way to build one.
"""

from __future__ import annotations

import numba
from numba.core import types
from numba.experimental import structref

from .borrowed import borrowed_view, keep
from .memory_queue_state import queue_type

_I1 = types.int64[::1]
_I2 = types.int64[:, ::1]
_I3 = types.int64[:, :, ::1]
_F1 = types.float64[::1]
_F2 = types.float64[:, ::1]
_F3 = types.float64[:, :, ::1]


@structref.register
class _CacheType(types.StructRef):
    pass


@structref.register
class _MshrType(types.StructRef):
    pass


@structref.register
class _TimelineType(types.StructRef):
    pass


@structref.register
class _StateType(types.StructRef):
    pass


class CacheArrays(structref.StructRefProxy):
    """Tag arrays of one level (every L1, or every L2 slice).

    Members
    -------
    tag, lru : int64[rows, ways]
        Line index (-1: empty way), use stamp.
    line : int64[rows, ways, LINE_READY + 2 * sectors]
        Per line, as ``Line``: ``LINE_VALID``, ``LINE_DIRTY`` (sector masks), ``LINE_LATEST``,
        then ``ready`` of each sector from ``LINE_READY``, then ``merges`` of each sector.
    lines : int64[rows]
        Lines resident in each set.
    fill : int64[rows, ways, sectors]
        Queued DRAM only (else no rows): per sector whose ``ready`` is ``IN_FLIGHT``, the pending
        cycle of its fill (``Line.fills``), -1 for none.
    clock : int64
        The last use stamp given.
    sets, ways, sectors, max_merges : int64
        Sets per cache, associativity, sectors per line, merge limit per in-flight sector.
    """


class MshrFiles(structref.StructRefProxy):
    """The MSHR files of one level (one per SM, or one per L2 slice).

    Members
    -------
    release, count : int64[files, capacity]
        Items ``(release cycle, entries)``: file f's are ``head[f] .. head[f] + size[f] - 1``,
        sorted as Python sorts the tuples (``heapq`` pops the reference's in that order).
    head, size, used : int64[files]
        First item, items and entries held, per file.
    entries : int64
        Entries per file.
    """


class Timelines(structref.StructRefProxy):
    """Busy intervals of a group of resources (slice request ports, reply ports, DRAM buses, DRAM
    channels' activate windows).

    Members
    -------
    iv : float64[resources, capacity, 2]
        Row r's intervals ``[start, end)`` are ``iv[r, head[r]:head[r] + n[r]]``, sorted and
        disjoint (forgetting the first ones moves ``head``).
    head, n : int64[resources]
        First interval and intervals held, per resource.
    """


class MemoryState(structref.StructRefProxy):
    """Everything the compiled memory system knows (see ``MEMORY_FIELDS`` for the members)."""


CACHE_FIELDS = (("tag", _I2), ("lru", _I2), ("line", _I3), ("lines", _I1), ("fill", _I3), ("clock", types.int64),
                ("sets", types.int64), ("ways", types.int64), ("sectors", types.int64),
                ("max_merges", types.int64))
MSHR_FIELDS = (("release", _I2), ("count", _I2), ("head", _I1), ("size", _I1), ("used", _I1),
               ("entries", types.int64))
TIMELINE_FIELDS = (("iv", _F3), ("head", _I1), ("n", _I1))

cache_type = _CacheType(list(CACHE_FIELDS))
mshr_type = _MshrType(list(MSHR_FIELDS))
timeline_type = _TimelineType(list(TIMELINE_FIELDS))

#: Members of ``MemoryState``. Scalars copy the reference ``MemorySystem``'s configuration-derived
#: attributes; ``counts`` holds the integer statistics (``memory_counters.COUNTERS``),
#: ``dram_cycles`` the float ones (DRAM busy and wait cycles); ``bank_rows`` and ``bank_times``
#: the DRAM banks (``Dram``'s per-bank lists, columns ``BANK_*``); ``dram_log`` the first
#: ``dram_logged`` rows of it are ``Dram.log``'s tuples (no rows at all: not recording);
#: ``queued``: DRAM requests wait in controller queues, whose state is ``q``
#: (``memory_queue_state.py``; the DRAM device then has ``frfcfs`` False, as the reference's).
MEMORY_FIELDS = (
    ("l1", cache_type), ("l2", cache_type), ("l1_mshr", mshr_type), ("l2_mshr", mshr_type),
    ("requests", timeline_type), ("replies", timeline_type), ("buses", timeline_type),
    ("activates", timeline_type), ("bank_rows", _I2), ("bank_times", _F2),
    ("port", _I1), ("sm_accesses", _I1), ("sm_transactions", _I1), ("counts", _I1), ("dram_cycles", _F1),
    ("ipoly", _I2), ("data_flits", _I1),
    ("now", types.int64), ("line_shift", types.int64), ("sector_bytes", types.int64), ("tpc", types.int64),
    ("bypass_global", types.boolean), ("bypass_local", types.boolean), ("l1_hit", types.int64),
    ("slices", types.int64), ("use_ipoly", types.boolean), ("l2_hit", types.int64),
    ("icnt_latency", types.int64), ("flits_per_cycle", types.int64), ("read_flits", types.int64),
    ("smem_latency", types.int64), ("smem_interval", types.int64), ("smem_parts", types.int64),
    ("channels", types.int64), ("dram_latency", types.int64), ("cycles_per_byte", types.float64),
    ("banks", types.int64), ("lines_per_row", types.int64), ("row_interleaved", types.boolean),
    ("frfcfs", types.boolean),
    ("tcl", types.float64), ("twl", types.float64), ("trcd", types.float64), ("trp", types.float64),
    ("tras", types.float64), ("trc", types.float64), ("trrd", types.float64), ("trtp", types.float64),
    ("twr", types.float64), ("tccd", types.float64), ("dram_log", _I2), ("dram_logged", types.int64),
    ("queued", types.boolean), ("q", queue_type),
)
state_type = _StateType(list(MEMORY_FIELDS))

structref.define_boxing(_CacheType, CacheArrays)
structref.define_boxing(_MshrType, MshrFiles)
structref.define_boxing(_TimelineType, Timelines)
structref.define_boxing(_StateType, MemoryState)


def _getter(name: str):
    def get(obj):
        return getattr(obj, name)
    return numba.njit(cache=True)(get)


for _cls, _fields in ((CacheArrays, CACHE_FIELDS), (MshrFiles, MSHR_FIELDS), (Timelines, TIMELINE_FIELDS),
                      (MemoryState, MEMORY_FIELDS)):
    for _name, _ in _fields:
        setattr(_cls, _name, property(_getter(_name)))


@numba.njit(cache=True)
def _new_cache(tag, lru, line, lines, fill, clock, sets, ways, sectors, max_merges):
    """A ``CacheArrays`` of the given members (in ``CACHE_FIELDS`` order)."""
    c = structref.new(cache_type)
    b = borrowed_view
    c.tag, c.lru, c.line, c.lines, c.fill, c.clock = b(tag), b(lru), b(line), b(lines), b(fill), clock
    c.sets, c.ways, c.sectors, c.max_merges = sets, ways, sectors, max_merges
    return c


@numba.njit(cache=True)
def _new_mshrs(release, count, head, size, used, entries):
    """A ``MshrFiles`` of the given members (in ``MSHR_FIELDS`` order)."""
    m = structref.new(mshr_type)
    b = borrowed_view
    m.release, m.count, m.head, m.size, m.used, m.entries = b(release), b(count), b(head), b(size), b(used), entries
    return m


@numba.njit(cache=True)
def _new_timelines(iv, head, n):
    """A ``Timelines`` of the given members (in ``TIMELINE_FIELDS`` order)."""
    t = structref.new(timeline_type)
    t.iv, t.head, t.n = borrowed_view(iv), borrowed_view(head), borrowed_view(n)
    return t


@numba.njit(cache=True)
def _new_state(l1, l2, l1_mshr, l2_mshr, requests, replies, buses, activates, bank_rows, bank_times, port,
              sm_accesses, sm_transactions, counts, dram_cycles, ipoly, data_flits, now, line_shift, sector_bytes,
              tpc, bypass_global, bypass_local, l1_hit, slices, use_ipoly, l2_hit, icnt_latency, flits_per_cycle,
              read_flits, smem_latency, smem_interval, smem_parts, channels, dram_latency, cycles_per_byte, banks,
              lines_per_row, row_interleaved, frfcfs, tcl, twl, trcd, trp, tras, trc, trrd, trtp, twr, tccd, dram_log,
              dram_logged, queued, q):
    """A ``MemoryState`` of the given members (in ``MEMORY_FIELDS`` order)."""
    s = structref.new(state_type)
    s.l1, s.l2, s.l1_mshr, s.l2_mshr = l1, l2, l1_mshr, l2_mshr
    s.requests, s.replies, s.buses, s.activates = requests, replies, buses, activates
    b = borrowed_view
    s.bank_rows, s.bank_times = b(bank_rows), b(bank_times)
    s.port, s.sm_accesses, s.sm_transactions, s.counts, s.dram_cycles = (
        b(port), b(sm_accesses), b(sm_transactions), b(counts), b(dram_cycles))
    s.ipoly, s.data_flits = b(ipoly), b(data_flits)
    s.now, s.line_shift, s.sector_bytes, s.tpc = now, line_shift, sector_bytes, tpc
    s.bypass_global, s.bypass_local, s.l1_hit = bypass_global, bypass_local, l1_hit
    s.slices, s.use_ipoly, s.l2_hit = slices, use_ipoly, l2_hit
    s.icnt_latency, s.flits_per_cycle, s.read_flits = icnt_latency, flits_per_cycle, read_flits
    s.smem_latency, s.smem_interval, s.smem_parts = smem_latency, smem_interval, smem_parts
    s.channels, s.dram_latency, s.cycles_per_byte = channels, dram_latency, cycles_per_byte
    s.banks, s.lines_per_row, s.row_interleaved, s.frfcfs = banks, lines_per_row, row_interleaved, frfcfs
    s.tcl, s.twl, s.trcd, s.trp, s.tras = tcl, twl, trcd, trp, tras
    s.trc, s.trrd, s.trtp, s.twr, s.tccd = trc, trrd, trtp, twr, tccd
    s.dram_log, s.dram_logged = b(dram_log), dram_logged
    s.queued, s.q = queued, q
    return s


# The constructors njit code runs store borrowed views (borrowed.py); these keep their owners.
def new_cache(*members) -> CacheArrays:
    """A ``CacheArrays`` of the given members (in ``CACHE_FIELDS`` order)."""
    return keep(_new_cache(*members), members)


def new_mshrs(*members) -> MshrFiles:
    """A ``MshrFiles`` of the given members (in ``MSHR_FIELDS`` order)."""
    return keep(_new_mshrs(*members), members)


def new_timelines(*members) -> Timelines:
    """A ``Timelines`` of the given members (in ``TIMELINE_FIELDS`` order)."""
    return keep(_new_timelines(*members), members)


def new_state(*members) -> MemoryState:
    """A ``MemoryState`` of the given members (in ``MEMORY_FIELDS`` order; the caches, MSHR
    files and timelines as ``new_*`` made them)."""
    return keep(_new_state(*members), members)


#: Fields of a ``CacheArrays.line`` record: valid and dirty masks, latest fill, first sector's ready
#: cycle (``sectors`` of them, then as many merge counts).
LINE_VALID, LINE_DIRTY, LINE_LATEST, LINE_READY = 0, 1, 2, 3

#: The integer statistics of ``MemoryState.counts``: (attribute of ``MemorySystem`` holding the
#: counter, '' = the system itself, or ``_icnt`` / ``_dram``; counter attribute name).
COUNTERS: list[tuple[str, str]] = []


def _counter(owner: str, name: str) -> int:
    COUNTERS.append((owner, name))
    return len(COUNTERS) - 1


L1_LOAD_TX = _counter("", "l1_load_tx")
L1_HITS = _counter("", "l1_hits")
L1_MISSES = _counter("", "l1_misses")
L1_SECTOR_MISSES = _counter("", "l1_sector_misses")
L1_MERGES = _counter("", "l1_merges")
L1_MISSED_SECTORS = _counter("", "l1_missed_sectors")
L1_MSHR_STALLS = _counter("", "l1_mshr_stalls")
L1_MSHR_STALL_CYCLES = _counter("", "l1_mshr_stall_cycles")
L1_BYPASSED = _counter("", "l1_bypassed")
L1_MERGE_STALLS = _counter("", "l1_merge_stalls")
L1_MERGE_STALL_CYCLES = _counter("", "l1_merge_stall_cycles")
L1_STORE_TX = _counter("", "l1_store_tx")
L1_STORE_HITS = _counter("", "l1_store_hits")
L1_STORE_MISSES = _counter("", "l1_store_misses")
L1_WRITEBACKS = _counter("", "l1_writebacks")
L1_WRITEBACK_SECTORS = _counter("", "l1_writeback_sectors")
L1_FLUSHES = _counter("", "l1_flushes")
L2_READS = _counter("", "l2_reads")
L2_READ_HITS = _counter("", "l2_read_hits")
L2_READ_MISSES = _counter("", "l2_read_misses")
L2_MERGES = _counter("", "l2_merges")
L2_MISSED_SECTORS = _counter("", "l2_missed_sectors")
L2_MERGE_STALLS = _counter("", "l2_merge_stalls")
L2_MSHR_STALLS = _counter("", "l2_mshr_stalls")
L2_STALL_CYCLES = _counter("", "l2_stall_cycles")
L2_WRITES = _counter("", "l2_writes")
L2_WRITE_HITS = _counter("", "l2_write_hits")
L2_WRITE_MISSES = _counter("", "l2_write_misses")
L2_WRITEBACKS = _counter("", "l2_writebacks")
SMEM_ACCESSES = _counter("", "smem_accesses")
SMEM_ROUNDS = _counter("", "smem_rounds")
SMEM_CONFLICT_ROUNDS = _counter("", "smem_conflict_rounds")
LOADS = _counter("", "loads")
LOAD_LATENCY = _counter("", "load_latency")
ICNT_REQUESTS = _counter("_icnt", "requests")
ICNT_REPLIES = _counter("_icnt", "replies")
ICNT_REQUEST_FLITS = _counter("_icnt", "request_flits")
ICNT_REPLY_FLITS = _counter("_icnt", "reply_flits")
ICNT_WAIT_CYCLES = _counter("_icnt", "wait_cycles")
DRAM_READS = _counter("_dram", "reads")
DRAM_WRITES = _counter("_dram", "writes")
DRAM_READ_BYTES = _counter("_dram", "read_bytes")
DRAM_WRITE_BYTES = _counter("_dram", "write_bytes")
DRAM_ROW_HITS = _counter("_dram", "row_hits")
DRAM_ROW_MISSES = _counter("_dram", "row_misses")
DRAM_ROW_CONFLICTS = _counter("_dram", "row_conflicts")
DRAM_REORDERED_HITS = _counter("_dram", "reordered_hits")

#: The float statistics of ``MemoryState.dram_cycles`` (attributes of ``MemorySystem._dram``).
DRAM_CYCLES = ("busy_cycles", "wait_cycles")
DRAM_BUSY, DRAM_WAIT = 0, 1

#: Columns of ``MemoryState.dram_log``: ``Dram.log``'s tuple.
DRAM_LOG_COLUMNS = 6

#: Columns of ``MemoryState.bank_rows`` (``Dram.open_row``, ``Dram.prev_row``) and of
#: ``bank_times`` (``Dram.col_ready``, ``activated``, ``pre_ready``, ``prev_col_ready``, ``prev_close``).
BANK_ROWS = ("open_row", "prev_row")
BANK_OPEN, BANK_PREV = 0, 1
BANK_TIMES = ("col_ready", "activated", "pre_ready", "prev_col_ready", "prev_close")
BANK_COL_READY, BANK_ACTIVATED, BANK_PRE_READY, BANK_PREV_COL_READY, BANK_PREV_CLOSE = 0, 1, 2, 3, 4

"""State layout of the compiled SM pipeline, and the heaps it keeps.

The reference engine (models/timing/sm.py and its helpers) keeps each SM's state in Python
objects; here the same state is struct-of-arrays, indexed ``[sm, ...]`` and, per warp, by the
warp's slot in its SM (``[sm, slot, ...]``): a slot holds one resident warp at a time, exactly as
``Sm.free_slots`` hands them out. The arrays are bundled into named tuples so njit code reads
them by name (``state.cu_pc[sm, u]``):

- ``Settings``: the configuration and the launch's shape (plain ints);
- ``Code``: ``program.decode_kernel``'s facts, one row per pc (``table[pc, ST_*]``);
- ``Streams``: the launch's ``LaunchStreams`` (see ..streams) plus the per-record ordinal among
  the warp's ordered memory records (for the memory-ordering check);
- ``SmState``: everything ``Sm``, ``Warp``, ``OperandCollector``, the scoreboards and
  ``SmCounters`` keep, and (``Heaps``) the completion and wake heaps and the issue log.

njit code gets ``Code``, ``Streams`` and ``SmState`` as structrefs (``CodeRef``, ``StreamsRef``,
``SmStateRef``: the same arrays, by reference). A call that passes a tuple of arrays increfs and
decrefs every array in it, which made those atomic operations half of the run time; a structref
is one reference. ``Heaps`` is a structref too, so its arrays can grow (all SMs' heaps at once);
everything else has a fixed size per launch. Python code reads the arrays through the named
tuples it built the structrefs from.

Codes mirror the reference's strings: stall reasons are indices into ``stats.STALL_REASONS``
(their precedence rank, ``sm._RANK``), unit classes indices into ``sm.UNIT_CLASSES``.
"""

from __future__ import annotations

import inspect
from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from ..scoreboard import PENDING
from ..sm import UNIT_CLASSES
from ..stats import STALL_REASONS

__all__ = ["PENDING"]

# --- stall reasons (``warp.stall`` None is NO_STALL) -----------------------------------------
ISSUED, COLLECTOR_FULL, RING_GUARD, SCOREBOARD, MEMORY_FENCE, BARRIER, IBUFFER, DRAIN, IDLE = range(9)
NO_STALL = -1
assert STALL_REASONS == ("issued", "collector_full", "ring_guard", "scoreboard", "memory_fence", "barrier",
                         "ibuffer", "drain", "idle")
NUM_REASONS = len(STALL_REASONS)

# --- unit classes, in ``sm.UNIT_CLASSES`` order ----------------------------------------------
NUM_UNITS = len(UNIT_CLASSES)
CTRL = 4
assert UNIT_CLASSES[CTRL].value == "ctrl"

# --- completion kinds (sm._WB, sm._DONE) and memory spaces -----------------------------------
WB, DONE = 0, 1
SPACES = ("", "global", "shared", "local", "param")
SPACE_NONE, SPACE_GLOBAL, SPACE_SHARED, SPACE_LOCAL, SPACE_PARAM = range(5)
# opcodes the pipeline treats specially
OP_OTHER, OP_MEMBAR, OP_BAR, OP_EXIT = range(4)

# --- per-pc instruction facts: columns of ``Code.table`` ----------------------------------------
(ST_UNIT, ST_PRODUCES, ST_NSRC, ST_NUNIQ, ST_DST, ST_REDIRECT, ST_ISSUE_ONLY, ST_IS_MEM, ST_ORDERED,
 ST_IS_STORE, ST_SPACE, ST_OP, ST_COLOR, ST_NEEDS_CU, ST_SRC, _) = range(16)
MAX_SOURCES = 4
ST_UNIQ = ST_SRC + MAX_SOURCES
ST_WIDTH = ST_UNIQ + MAX_SOURCES

# --- per-SM scalars: columns of ``SmState.sv`` -----------------------------------------------
(SV_FETCH_RR, SV_WAITING_CUS, SV_SEQ, SV_WARP_AGE, SV_LAST_CYCLE, SV_NWARPS, SV_NCU, SV_NCOMP, SV_NWAKE,
 SV_NCTAS, SV_CTA_WARPS, SV_SHARED, SV_REGS, SV_FINISHED_CTAS, SV_STAMP, SV_WIDTH) = range(16)

# --- per-warp scalars: columns of ``SmState.wv`` (one row per warp slot) ---------------------
(W_RESIDENT, W_G, W_BLOCK, W_WID, W_CTA, W_AGE, W_SCHED, W_FETCH_PC, W_FETCH_STALLED, W_INFLIGHT,
 W_MEM_INFLIGHT, W_EXITED, W_FINISHED, W_WAITING_CUS, W_STALL, W_STALL_UNTIL, W_START, W_REC, W_REC_END,
 W_BAR_WAIT, W_IB_HEAD, W_IB_LEN, W_NUNREAD, W_MARK, W_WIDTH) = range(25)

# --- counters: columns of ``SmState.misc`` (SmCounters' scalar counters and the collector's) -
M_ACTIVE, M_BARRIERS, M_BUSY, M_RESIDENT, M_CONFLICTS, M_WIDTH = range(6)

# --- error codes in ``SmState.err[0]`` (the rest of ``err`` says where) ----------------------
ERR_NONE, ERR_ORDER, ERR_ORDER_FAR, ERR_DEADLOCK, ERR_PC, ERR_PAST_END = range(6)
COMPLETION_WIDTH = 6  # (done, seq, kind, slot, dest, pc)

Settings = namedtuple("Settings", [
    "dflow", "lrr", "schedulers", "max_warps", "ibuffer_entries", "fetch_width", "fetch_latency",
    "collector_units", "waiting_per_warp", "waiting_per_sm", "banks", "writeback_ports", "const_latency",
    "cta_launch_latency", "warp_size", "max_threads", "max_ctas", "shared_bytes", "registers", "ring",
    "code_length", "warps_per_block", "num_blocks", "block_shared", "block_registers", "entries",
    "num_sms", "record_issue"])

Code = namedtuple("Code", ["table", "units"])  # table[pc, ST_*]; units[class] = (latency, interval, count)

Streams = namedtuple("Streams", [
    "first", "count", "pc", "threads", "rp", "exits", "access", "ordinal", "tx_first", "tx_count", "degree",
    "order_conflict", "tx_line", "tx_sectors"])

SmState = namedtuple("SmState", [
    "sv", "wv", "ibuf_pc", "ibuf_ready", "board", "unread_pos", "unread_count",
    "warps", "sched_warps", "sched_n", "sched_clean", "last_reasons", "last_slot", "last_age",
    "cu_used", "cu_order", "cu_slot", "cu_pc", "cu_rec", "cu_dest", "cu_unread", "cu_ready_at", "cu_waiting",
    "cu_seq", "cu_nops", "cu_bank", "cu_key", "cu_read", "scratch",
    "pipes", "bank_busy", "stalls", "warp_instructions", "thread_instructions", "misc", "rf_reads", "rf_writes",
    "cta_block", "cta_left", "cta_slots", "heaps", "log_n", "err"])


class _Fields(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


@structref.register
class CodeType(_Fields):
    pass


@structref.register
class StreamsType(_Fields):
    pass


@structref.register
class SmStateType(_Fields):
    pass


class CodeRef(structref.StructRefProxy):
    """``Code`` for njit code."""


class StreamsRef(structref.StructRefProxy):
    """``Streams`` for njit code."""


class SmStateRef(structref.StructRefProxy):
    """``SmState`` for njit code."""


structref.define_proxy(CodeRef, CodeType, list(Code._fields))
structref.define_proxy(StreamsRef, StreamsType, list(Streams._fields))
structref.define_proxy(SmStateRef, SmStateType, list(SmState._fields))


# Built in cached njit code: the proxies' own constructors compile anew in every process. Each
# field is its own argument: numba types a tuple's arrays in Python, about 10 us each (0.45 ms
# for an ``SmState``), and separate arguments in C.
@njit(cache=True)
def _code_ref(table, units):
    return CodeRef(table, units)


@njit(cache=True)
def _streams_ref(first, count, pc, threads, rp, exits, access, ordinal, tx_first, tx_count, degree,
                 order_conflict, tx_line, tx_sectors):
    return StreamsRef(first, count, pc, threads, rp, exits, access, ordinal, tx_first, tx_count, degree,
                      order_conflict, tx_line, tx_sectors)


@njit(cache=True)
def _sm_state_ref(sv, wv, ibuf_pc, ibuf_ready, board, unread_pos, unread_count, warps, sched_warps, sched_n,
                  sched_clean, last_reasons, last_slot, last_age, cu_used, cu_order, cu_slot, cu_pc, cu_rec,
                  cu_dest, cu_unread, cu_ready_at, cu_waiting, cu_seq, cu_nops, cu_bank, cu_key, cu_read, scratch,
                  pipes, bank_busy, stalls, warp_instructions, thread_instructions, misc, rf_reads, rf_writes,
                  cta_block, cta_left, cta_slots, heaps, log_n, err):
    return SmStateRef(sv, wv, ibuf_pc, ibuf_ready, board, unread_pos, unread_count, warps, sched_warps, sched_n,
                      sched_clean, last_reasons, last_slot, last_age, cu_used, cu_order, cu_slot, cu_pc, cu_rec,
                      cu_dest, cu_unread, cu_ready_at, cu_waiting, cu_seq, cu_nops, cu_bank, cu_key, cu_read,
                      scratch, pipes, bank_busy, stalls, warp_instructions, thread_instructions, misc, rf_reads,
                      rf_writes, cta_block, cta_left, cta_slots, heaps, log_n, err)


for _tuple, _make in ((Code, _code_ref), (Streams, _streams_ref), (SmState, _sm_state_ref)):
    assert tuple(inspect.signature(_make.py_func).parameters) == _tuple._fields, _make


def code_ref(code: Code) -> CodeRef:
    """A ``CodeRef`` of the named tuple ``code``."""
    return _code_ref(*code)


def streams_ref(streams: Streams) -> StreamsRef:
    """A ``StreamsRef`` of the named tuple ``streams``."""
    return _streams_ref(*streams)


def sm_state_ref(state: SmState) -> SmStateRef:
    """A ``SmStateRef`` of the named tuple ``state``."""
    return _sm_state_ref(*state)


@structref.register
class HeapsType(_Fields):
    pass


class Heaps(structref.StructRefProxy):
    """Per SM, the completion heap (``completions[sm, :SV_NCOMP]``, rows of (done, seq, kind,
    slot, dest, pc)) and the wake heap (``wake[sm, :SV_NWAKE]``); the issue log
    (``log[:log_n]``, rows of (cycle, block, warp, pc))."""

    def __new__(cls, completions, wake, log):
        return structref.StructRefProxy.__new__(cls, completions, wake, log)

    @property
    def log(self) -> np.ndarray:
        return _heaps_log(self)


@njit(cache=True)
def _heaps_log(heaps):
    return heaps.log


structref.define_constructor(Heaps, HeapsType, ["completions", "wake", "log"])
structref.define_boxing(HeapsType, Heaps)
structref.define_attributes(HeapsType)


def make_sm_state(s: Settings, pipe_count: int, heap_capacity: int = 64) -> SmState:
    """Fresh state of ``s.num_sms`` SMs for one launch (the engine carries what must survive a
    launch: see engine.py)."""
    n, slots, cus, scheds = s.num_sms, s.max_warps, s.collector_units, s.schedulers
    i64 = np.int64

    def z(*shape):
        return np.zeros(shape, dtype=i64)

    sv = z(n, SV_WIDTH)
    sv[:, SV_LAST_CYCLE] = -1
    wv = z(n, slots, W_WIDTH)
    wv[:, :, W_STALL] = NO_STALL
    return SmState(
        sv=sv, wv=wv, ibuf_pc=z(n, slots, s.ibuffer_entries), ibuf_ready=z(n, slots, s.ibuffer_entries),
        board=z(n, slots, s.entries), unread_pos=z(n, slots, cus * MAX_SOURCES),
        unread_count=z(n, slots, cus * MAX_SOURCES),
        warps=z(n, slots), sched_warps=z(n, scheds, slots), sched_n=z(n, scheds), sched_clean=z(n, scheds),
        last_reasons=np.full((n, scheds), IDLE, dtype=i64), last_slot=np.full((n, scheds), -1, dtype=i64),
        last_age=z(n, scheds),
        cu_used=z(n, cus), cu_order=z(n, cus), cu_slot=z(n, cus), cu_pc=z(n, cus), cu_rec=z(n, cus),
        cu_dest=z(n, cus), cu_unread=z(n, cus), cu_ready_at=z(n, cus), cu_waiting=z(n, cus), cu_seq=z(n, cus),
        cu_nops=z(n, cus), cu_bank=z(n, cus, MAX_SOURCES), cu_key=z(n, cus, MAX_SOURCES),
        cu_read=z(n, cus, MAX_SOURCES), scratch=z(n, 2 * cus + slots),
        pipes=z(n, NUM_UNITS, pipe_count), bank_busy=np.full((n, s.banks), -1, dtype=i64),
        stalls=z(n, NUM_REASONS), warp_instructions=z(n, NUM_UNITS), thread_instructions=z(n, NUM_UNITS),
        misc=z(n, M_WIDTH), rf_reads=z(n, s.banks), rf_writes=z(n, s.banks),
        cta_block=np.full((n, s.max_ctas), -1, dtype=i64), cta_left=z(n, s.max_ctas),
        cta_slots=z(n, s.max_ctas, s.warps_per_block),
        heaps=Heaps(z(n, heap_capacity, COMPLETION_WIDTH), z(n, heap_capacity),
                    z(1024 if s.record_issue else 1, 4)),
        log_n=z(1), err=z(8))


def state_shape(s: Settings, pipe_count: int) -> tuple:
    """What fixes the shapes of ``make_sm_state(s, pipe_count)``'s arrays: launches that agree on
    it can share one state (``SmStates``)."""
    return (s.num_sms, s.max_warps, s.ibuffer_entries, s.entries, s.collector_units, s.schedulers,
            s.banks, s.max_ctas, s.warps_per_block, s.record_issue, pipe_count)


#: Arrays a launch writes before it reads them, which ``SmStates`` need not reset (the others
#: it copies back from a pristine state): ``board``, whose slot row ``add_cta`` clears when it
#: places a warp; ``unread_pos``/``unread_count``, read below the slot's ``W_NUNREAD`` (in
#: ``wv``, reset), each entry set when appended; ``heaps``, read below their counts (in ``sv``),
#: which may have grown.
NOT_RESET = ("board", "unread_pos", "unread_count", "heaps")
#: Arrays written for every SM (the engine sets the carried columns of ``sv``, the pipes and
#: the banks; the GPU loop charges idle cycles to every SM), or not per SM: reset whole. The
#: others only an SM that got a block writes: only the rows of those SMs are reset
#: (``reset_state``), which spares most of the 1.5 MB at 68 SMs when a launch fills a few SMs.
RESET_WHOLE = ("sv", "stalls", "pipes", "bank_busy", "log_n", "err")
#: The arrays reset per SM row: every other one.
RESET_ROWS = tuple(name for name in SmState._fields if name not in RESET_WHOLE + NOT_RESET)


@njit(cache=True)
def _rows(a, pristine, lo, hi):
    for i in range(lo, hi):
        a[i] = pristine[0]


@njit(cache=True)
def reset_state(state, pristine):
    """Reset ``state`` in place to a fresh state, from ``pristine``, a fresh state of one SM:
    ``RESET_WHOLE`` whole, ``RESET_ROWS`` in the rows of the SMs the last launch gave a block
    (each placed warp leaves its slot resident, or finished (``retire_warp``); nothing else
    marks a slot, and ``add_cta`` is the first to write an SM). One compiled call: the same
    copies from Python cost a small launch about 0.3 ms of numpy calls. ``tests/test_timing_compiled.py``
    holds the two name lists to this function and its result to ``make_sm_state``."""
    wv = state.wv
    lo, hi = wv.shape[0], 0
    for sm in range(wv.shape[0]):
        for slot in range(wv.shape[1]):
            if wv[sm, slot, W_RESIDENT] or wv[sm, slot, W_FINISHED]:
                lo, hi = min(lo, sm), sm + 1
                break
    # RESET_WHOLE
    _rows(state.sv, pristine.sv, 0, state.sv.shape[0])
    _rows(state.stalls, pristine.stalls, 0, state.stalls.shape[0])
    _rows(state.pipes, pristine.pipes, 0, state.pipes.shape[0])
    _rows(state.bank_busy, pristine.bank_busy, 0, state.bank_busy.shape[0])
    state.log_n[:] = pristine.log_n
    state.err[:] = pristine.err
    # RESET_ROWS
    _rows(state.wv, pristine.wv, lo, hi)
    _rows(state.ibuf_pc, pristine.ibuf_pc, lo, hi)
    _rows(state.ibuf_ready, pristine.ibuf_ready, lo, hi)
    _rows(state.warps, pristine.warps, lo, hi)
    _rows(state.sched_warps, pristine.sched_warps, lo, hi)
    _rows(state.sched_n, pristine.sched_n, lo, hi)
    _rows(state.sched_clean, pristine.sched_clean, lo, hi)
    _rows(state.last_reasons, pristine.last_reasons, lo, hi)
    _rows(state.last_slot, pristine.last_slot, lo, hi)
    _rows(state.last_age, pristine.last_age, lo, hi)
    _rows(state.cu_used, pristine.cu_used, lo, hi)
    _rows(state.cu_order, pristine.cu_order, lo, hi)
    _rows(state.cu_slot, pristine.cu_slot, lo, hi)
    _rows(state.cu_pc, pristine.cu_pc, lo, hi)
    _rows(state.cu_rec, pristine.cu_rec, lo, hi)
    _rows(state.cu_dest, pristine.cu_dest, lo, hi)
    _rows(state.cu_unread, pristine.cu_unread, lo, hi)
    _rows(state.cu_ready_at, pristine.cu_ready_at, lo, hi)
    _rows(state.cu_waiting, pristine.cu_waiting, lo, hi)
    _rows(state.cu_seq, pristine.cu_seq, lo, hi)
    _rows(state.cu_nops, pristine.cu_nops, lo, hi)
    _rows(state.cu_bank, pristine.cu_bank, lo, hi)
    _rows(state.cu_key, pristine.cu_key, lo, hi)
    _rows(state.cu_read, pristine.cu_read, lo, hi)
    _rows(state.scratch, pristine.scratch, lo, hi)
    _rows(state.warp_instructions, pristine.warp_instructions, lo, hi)
    _rows(state.thread_instructions, pristine.thread_instructions, lo, hi)
    _rows(state.misc, pristine.misc, lo, hi)
    _rows(state.rf_reads, pristine.rf_reads, lo, hi)
    _rows(state.rf_writes, pristine.rf_writes, lo, hi)
    _rows(state.cta_block, pristine.cta_block, lo, hi)
    _rows(state.cta_left, pristine.cta_left, lo, hi)
    _rows(state.cta_slots, pristine.cta_slots, lo, hi)


class SmStates:
    """Fresh SM state for each launch without building it anew: a state and its ``SmStateRef``
    are kept per shape (``state_shape``) and reset in place (``reset_state``) from a pristine
    state of one SM when a later launch has that shape. Building a ``SmStateRef`` costs numba a
    type check of every array (about 1.5 ms, much of a small launch), and runs alternate kernels
    of different shapes (gaussian: Fan1, Fan2, Fan1, ...), so one kept state would be rebuilt
    at every launch.

    Members
    -------
    _state : SmState
        The state the last ``fresh`` returned.
    """

    #: Shapes kept at once (a run launches few distinct shapes; each state is about 1 MB at 68 SMs).
    KEPT = 8

    def __init__(self):
        self._kept: dict[tuple, tuple[SmStateRef, SmState, SmStateRef]] = {}  # shape -> (pristine, state, ref)

    def fresh(self, s: Settings, pipe_count: int) -> tuple[SmState, SmStateRef]:
        """A state equal to ``make_sm_state(s, pipe_count)`` and its structref."""
        shape = state_shape(s, pipe_count)
        kept = self._kept.get(shape)
        if kept is None:
            if len(self._kept) >= self.KEPT:
                del self._kept[next(iter(self._kept))]  # the oldest shape
            state = make_sm_state(s, pipe_count)
            pristine = sm_state_ref(make_sm_state(s._replace(num_sms=1), pipe_count))
            kept = self._kept[shape] = pristine, state, sm_state_ref(state)
        else:
            reset_state(kept[2], kept[0])
        _, self._state, ref = kept
        return self._state, ref


# ------------------------------------------------------------------ heaps
# Array binary heaps. The reference uses heapq; only the order of pops matters, and it is fixed
# by the keys: completions pop by (cycle, seq), which are unique; wake entries are bare cycles.

@njit(cache=True)
def completion_push(state, sm, done, seq, kind, slot, dest, pc):
    """heapq.heappush(Sm.completions, (done, seq, kind, warp, dest, ins))."""
    heap = state.heaps.completions
    n = state.sv[sm, SV_NCOMP]
    if n == heap.shape[1]:
        grown = np.zeros((heap.shape[0], 2 * n, COMPLETION_WIDTH), dtype=np.int64)
        grown[:, :n] = heap
        state.heaps.completions = grown
        heap = grown
    h = heap[sm]
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[p, 0] < done or (h[p, 0] == done and h[p, 1] < seq):
            break
        h[i, :] = h[p, :]
        i = p
    h[i, 0], h[i, 1], h[i, 2], h[i, 3], h[i, 4], h[i, 5] = done, seq, kind, slot, dest, pc
    state.sv[sm, SV_NCOMP] = n + 1


@njit(cache=True)
def completion_pop(state, sm, out):
    """heapq.heappop(Sm.completions) into ``out`` (6 int64s)."""
    h = state.heaps.completions[sm]
    n = state.sv[sm, SV_NCOMP] - 1
    out[:] = h[0, :]
    state.sv[sm, SV_NCOMP] = n
    if n == 0:
        return
    last0, last1 = h[n, 0], h[n, 1]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (h[c + 1, 0] < h[c, 0] or (h[c + 1, 0] == h[c, 0] and h[c + 1, 1] < h[c, 1])):
            c += 1
        if last0 < h[c, 0] or (last0 == h[c, 0] and last1 < h[c, 1]):
            break
        h[i, :] = h[c, :]
        i = c
    h[i, :] = h[n, :]


@njit(cache=True)
def wake_push(state, sm, cycle):
    """heapq.heappush(Sm.wake, cycle)."""
    heap = state.heaps.wake
    n = state.sv[sm, SV_NWAKE]
    if n == heap.shape[1]:
        grown = np.zeros((heap.shape[0], 2 * n), dtype=np.int64)
        grown[:, :n] = heap
        state.heaps.wake = grown
        heap = grown
    h = heap[sm]
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[p] <= cycle:
            break
        h[i] = h[p]
        i = p
    h[i] = cycle
    state.sv[sm, SV_NWAKE] = n + 1


@njit(cache=True)
def wake_pop(state, sm):
    """heapq.heappop(Sm.wake)."""
    h = state.heaps.wake[sm]
    n = state.sv[sm, SV_NWAKE] - 1
    top = h[0]
    state.sv[sm, SV_NWAKE] = n
    if n > 0:
        last = h[n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and h[c + 1] < h[c]:
                c += 1
            if last <= h[c]:
                break
            h[i] = h[c]
            i = c
        h[i] = last
    return top


@njit(cache=True)
def log_issue(state, t, block, wid, pc):
    """Sm.issue_log.append((t, block, wid, pc))."""
    log = state.heaps.log
    n = state.log_n[0]
    if n == log.shape[0]:
        grown = np.zeros((2 * n, 4), dtype=np.int64)
        grown[:n] = log
        state.heaps.log = grown
        log = grown
    log[n, 0], log[n, 1], log[n, 2], log[n, 3] = t, block, wid, pc
    state.log_n[0] = n + 1

"""State layout of the compiled SM pipeline: the columns of its arrays, the decoded code and
the launch's streams, and the heaps it keeps.

The reference engine (dualflow/models/timing/sm.py and its helpers) keeps each SM's state in Python
objects; here the same state is struct-of-arrays, indexed ``[sm, ...]`` and, per warp, by the
warp's slot in its SM (``[sm, slot, ...]``): a slot holds one resident warp at a time, exactly as
``Sm.free_slots`` hands them out. The arrays are bundled into named tuples so njit code reads
them by name (``state.cu_pc[sm, u]``):

- ``Settings`` and ``SmState`` (layout.py, declared there once): the configuration and the
  launch's shape; everything ``Sm``, ``Warp``, ``OperandCollector``, the scoreboards and
  ``SmCounters`` keep, and (``Heaps``, here) the completion and wake heaps and the issue log;
- ``Code``: ``program.decode_kernel``'s facts, one row per pc (``table[pc, ST_*]``);
- ``Streams``: the launch's ``LaunchStreams`` (see .streams) plus the per-record ordinal among
  the warp's ordered memory records (for the memory-ordering check).

njit code gets them as structrefs (``CodeRef``, ``StreamsRef``, ``SmStateRef``: the same arrays,
by reference). A call that passes a tuple of arrays increfs and decrefs every array in it, which
made those atomic operations half of the run time; a structref is one reference. ``Heaps`` is a
structref too, so its arrays can grow (all SMs' heaps at once); everything else has a fixed size
per launch. Python code reads the arrays through the named tuples it built the structrefs from.

Codes mirror the reference's strings: stall reasons are codes.STALL_* (their precedence rank,
``sm._RANK``), unit classes indices into ``sm.UNIT_CLASSES``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.experimental import structref

from ..scoreboard import PENDING
from ..sm import UNIT_CLASSES
from .borrowed import borrowed_view, keep
from .declare import Fields, borrowed, constructor, struct

__all__ = ["PENDING"]

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
# ``Variant.HANDS``: columns of ``Code.hands``, apart from ``table`` (whose rows the original
# form's code reads as they were): the hand of each source and unique source, the hand a
# producer writes (all 0 in the original form, whose code never reads them)
HT_SRC = 0
HT_UNIQ = HT_SRC + MAX_SOURCES
HT_DST = HT_UNIQ + MAX_SOURCES
HT_WIDTH = HT_DST + 1

# --- per-SM scalars: columns of ``SmState.sv`` -----------------------------------------------
(SV_FETCH_RR, SV_WAITING_CUS, SV_SEQ, SV_WARP_AGE, SV_LAST_CYCLE, SV_NWARPS, SV_NCU, SV_NCOMP, SV_NWAKE,
 SV_NCTAS, SV_CTA_WARPS, SV_SHARED, SV_REGS, SV_FINISHED_CTAS, SV_STAMP, SV_MEMORY_WAITS, SV_WIDTH) = range(17)
#: A pipeline's busy-until while the memory system has not said when its port frees (``sm.BLOCKED``).
BLOCKED = 1 << 62

# --- per-warp scalars: columns of ``SmState.wv`` (one row per warp slot) ---------------------
(W_RESIDENT, W_G, W_BLOCK, W_WID, W_CTA, W_AGE, W_SCHED, W_FETCH_PC, W_FETCH_STALLED, W_INFLIGHT,
 W_MEM_INFLIGHT, W_EXITED, W_FINISHED, W_WAITING_CUS, W_STALL, W_STALL_UNTIL, W_START, W_REC, W_REC_END,
 W_BAR_WAIT, W_IB_HEAD, W_IB_LEN, W_NUNREAD, W_MARK, W_WIDTH) = range(25)

# --- error codes in ``SmState.err[0]`` (the rest of ``err`` says where) ----------------------
ERR_NONE, ERR_ORDER, ERR_ORDER_FAR, ERR_DEADLOCK, ERR_PC, ERR_PAST_END, ERR_MEMORY_DEADLOCK = range(7)
COMPLETION_WIDTH = 6  # (done, seq, kind, slot, dest, pc)


# table[pc, ST_*]; units[class] = (latency, interval, count); rings[hand] = (its ring, its base):
# hand h's slot k is entry base + k of the warp's slot space (one row, (ring, 0), without hands);
# hands[pc, HT_*]
Code, CodeType, CodeRef = struct("Code", ["table", "units", "rings", "hands"], __name__, "``Code`` for njit code.")
Streams, StreamsType, StreamsRef = struct("Streams", [
    "first", "count", "pc", "threads", "rp", "exits", "access", "ordinal", "tx_first", "tx_count", "degree",
    "order_conflict", "tx_line", "tx_sectors"], __name__, "``Streams`` for njit code.")


# The fields are borrowed views (borrowed.py): njit code reads them without reference counting;
# the Python proxies keep what owns them (``keep``).
_code_ref = constructor("_code_ref", CodeRef, Code._fields, globals(), borrowed)
_streams_ref = constructor("_streams_ref", StreamsRef, Streams._fields, globals(), borrowed)


def code_ref(code: Code) -> CodeRef:
    """A ``CodeRef`` of the named tuple ``code`` (which it keeps)."""
    return keep(_code_ref(*code), code)


def streams_ref(streams: Streams) -> StreamsRef:
    """A ``StreamsRef`` of the named tuple ``streams`` (which it keeps)."""
    return keep(_streams_ref(*streams), streams)


@structref.register
class HeapsType(Fields):
    pass


class Heaps(structref.StructRefProxy):
    """Per SM, the completion heap (``completions[sm, :SV_NCOMP]``, rows of (done, seq, kind,
    slot, dest, pc)) and the wake heap (``wake[sm, :SV_NWAKE]``); the issue log
    (``log[:log_n]``, rows of (cycle, block, warp, pc)); with a queued DRAM controller, the
    wake-ups of SMs for the GPU loop to schedule (``woken[:woken_n]``, rows of (sm, cycle):
    ``Sm.on_wake``'s calls, in order). The arrays are borrowed views (borrowed.py) of the
    ``*_memory`` fields, which own them; one grows by replacing both (``completion_push``,
    ``wake_push``, ``log_issue``, ``woken_push``)."""

    def __new__(cls, completions, wake, log, woken):
        return _heaps(completions, wake, log, woken)

    @property
    def log(self) -> np.ndarray:
        return _heaps_log(self)


@njit(cache=True)
def _heaps_log(heaps):
    return heaps.log_memory


structref.define_constructor(Heaps, HeapsType, ["completions", "wake", "log", "woken", "woken_n",
                                                "completions_memory", "wake_memory", "log_memory", "woken_memory"])
structref.define_boxing(HeapsType, Heaps)
structref.define_attributes(HeapsType)


@njit(cache=True)
def _heaps(completions, wake, log, woken):
    b = borrowed_view
    return Heaps(b(completions), b(wake), b(log), b(woken), 0, completions, wake, log, woken)



# ------------------------------------------------------------------ heaps
# Array binary heaps. The reference uses heapq; only the order of pops matters, and it is fixed
# by the keys: completions pop by (cycle, seq), which are unique; wake entries are bare cycles.

@njit(cache=True)
def _copy_row(h, to, frm):
    """``h[to, :] = h[frm, :]`` element by element: numba copies a slice of an array into the
    same array through a temporary, an allocation per heap move."""
    for k in range(h.shape[1]):
        h[to, k] = h[frm, k]


@njit(cache=True)
def completion_push(state, sm, done, seq, kind, slot, dest, pc):
    """heapq.heappush(Sm.completions, (done, seq, kind, warp, dest, ins))."""
    heap = state.heaps.completions
    n = state.sv[sm, SV_NCOMP]
    if n == heap.shape[1]:
        grown = np.zeros((heap.shape[0], 2 * n, COMPLETION_WIDTH), dtype=np.int64)
        grown[:, :n] = heap
        state.heaps.completions_memory = grown  # frees the old array: nothing reads it after this
        heap = state.heaps.completions = borrowed_view(grown)
    h = heap[sm]
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if h[p, 0] < done or (h[p, 0] == done and h[p, 1] < seq):
            break
        _copy_row(h, i, p)
        i = p
    h[i, 0], h[i, 1], h[i, 2], h[i, 3], h[i, 4], h[i, 5] = done, seq, kind, slot, dest, pc
    state.sv[sm, SV_NCOMP] = n + 1


@njit(cache=True)
def completion_pop(state, sm):
    """heapq.heappop(Sm.completions): ``(done, seq, kind, slot, dest, pc)`` (a tuple, not an
    array: no allocation per completion)."""
    h = state.heaps.completions[sm]
    n = state.sv[sm, SV_NCOMP] - 1
    top = h[0, 0], h[0, 1], h[0, 2], h[0, 3], h[0, 4], h[0, 5]
    state.sv[sm, SV_NCOMP] = n
    if n == 0:
        return top
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
        _copy_row(h, i, c)
        i = c
    _copy_row(h, i, n)
    return top


@njit(cache=True)
def wake_push(state, sm, cycle):
    """heapq.heappush(Sm.wake, cycle)."""
    heap = state.heaps.wake
    n = state.sv[sm, SV_NWAKE]
    if n == heap.shape[1]:
        grown = np.zeros((heap.shape[0], 2 * n), dtype=np.int64)
        grown[:, :n] = heap
        state.heaps.wake_memory = grown
        heap = state.heaps.wake = borrowed_view(grown)
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
        state.heaps.log_memory = grown
        log = state.heaps.log = borrowed_view(grown)
    log[n, 0], log[n, 1], log[n, 2], log[n, 3] = t, block, wid, pc
    state.log_n[0] = n + 1


@njit(cache=True)
def woken_push(state, sm, cycle):
    """Sm.on_wake(sm, cycle): the GPU loop schedules the SM then (``Heaps.woken``)."""
    heaps = state.heaps
    n = heaps.woken_n
    if n == heaps.woken.shape[0]:
        grown = np.zeros((2 * n, 2), dtype=np.int64)
        grown[:n] = heaps.woken
        heaps.woken_memory = grown
        heaps.woken = borrowed_view(grown)
    heaps.woken[n, 0], heaps.woken[n, 1] = sm, cycle
    heaps.woken_n = n + 1

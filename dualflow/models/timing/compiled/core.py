"""State layout of the compiled SM pipeline, and the heaps it keeps.

The reference engine (dualflow/models/timing/sm.py and its helpers) keeps each SM's state in Python
objects; here the same state is struct-of-arrays, indexed ``[sm, ...]`` and, per warp, by the
warp's slot in its SM (``[sm, slot, ...]``): a slot holds one resident warp at a time, exactly as
``Sm.free_slots`` hands them out. The arrays are bundled into named tuples so njit code reads
them by name (``state.cu_pc[sm, u]``):

- ``Settings``: the configuration and the launch's shape (plain ints);
- ``Code``: ``program.decode_kernel``'s facts, one row per pc (``table[pc, ST_*]``);
- ``Streams``: the launch's ``LaunchStreams`` (see .streams) plus the per-record ordinal among
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

from dualflow.isa.encoding import MAX_REGS

from ..scoreboard import PENDING
from ..sm import UNIT_CLASSES
from ..stats import STALL_REASONS
from .borrowed import borrowed_view, keep

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

# --- counters: columns of ``SmState.misc`` (SmCounters' scalar counters and the collector's) -
M_ACTIVE, M_BARRIERS, M_BUSY, M_RESIDENT, M_CONFLICTS, M_FLUSHES, M_WIDTH = range(7)

# --- error codes in ``SmState.err[0]`` (the rest of ``err`` says where) ----------------------
ERR_NONE, ERR_ORDER, ERR_ORDER_FAR, ERR_DEADLOCK, ERR_PC, ERR_PAST_END, ERR_MEMORY_DEADLOCK = range(7)
COMPLETION_WIDTH = 6  # (done, seq, kind, slot, dest, pc)

# ``ring``: D-FLOW ring entries per warp; with ``Variant.HANDS`` the slot space of every hand's ring
# (``Kernel.capacity``), and ``hands`` the kernel's hands (0 without the variant: the original
# form's code; see scoreboard.py)
Settings = namedtuple("Settings", [
    "dflow", "lrr", "schedulers", "max_warps", "ibuffer_entries", "fetch_width", "fetch_warps", "fetch_past",
    "fetch_latency", "collector_units", "parts", "pool_limited", "reserve", "ready_first", "ahead_loads",
    "waiting_per_warp", "waiting_per_sm", "banks", "bank_groups", "bank_ports", "writeback_ports", "const_latency",
    "cta_launch_latency", "warp_size", "max_threads", "max_ctas", "shared_bytes", "registers", "ring",
    "code_length", "warps_per_block", "num_blocks", "block_shared", "block_registers", "entries",
    "num_sms", "record_issue", "hands"])

# table[pc, ST_*]; units[class] = (latency, interval, count); rings[hand] = (its ring, its base):
# hand h's slot k is entry base + k of the warp's slot space (one row, (ring, 0), without hands);
# hands[pc, HT_*]
Code = namedtuple("Code", ["table", "units", "rings", "hands"])

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
class SettingsType(_Fields):
    pass


@structref.register
class CodeType(_Fields):
    pass


@structref.register
class StreamsType(_Fields):
    pass


@structref.register
class SmStateType(_Fields):
    pass


class SettingsRef(structref.StructRefProxy):
    """``Settings`` for njit code (a tuple argument is passed field by field, a word per field at every call)."""


class CodeRef(structref.StructRefProxy):
    """``Code`` for njit code."""


class StreamsRef(structref.StructRefProxy):
    """``Streams`` for njit code."""


class SmStateRef(structref.StructRefProxy):
    """``SmState`` for njit code."""


structref.define_proxy(SettingsRef, SettingsType, list(Settings._fields))
structref.define_proxy(CodeRef, CodeType, list(Code._fields))
structref.define_proxy(StreamsRef, StreamsType, list(Streams._fields))
structref.define_proxy(SmStateRef, SmStateType, list(SmState._fields))


# Built in cached njit code: the proxies' own constructors compile anew in every process. Each
# field is its own argument: numba types a tuple's arrays in Python, about 10 us each (0.45 ms
# for an ``SmState``), and separate arguments in C.
@njit(cache=True)
def _settings_ref(dflow, lrr, schedulers, max_warps, ibuffer_entries, fetch_width, fetch_warps, fetch_past,
                  fetch_latency, collector_units, parts, pool_limited, reserve, ready_first, ahead_loads,
                  waiting_per_warp, waiting_per_sm, banks, bank_groups, bank_ports, writeback_ports, const_latency,
                  cta_launch_latency, warp_size, max_threads, max_ctas, shared_bytes, registers, ring, code_length,
                  warps_per_block, num_blocks, block_shared, block_registers, entries, num_sms, record_issue, hands):
    return SettingsRef(dflow, lrr, schedulers, max_warps, ibuffer_entries, fetch_width, fetch_warps, fetch_past,
                       fetch_latency, collector_units, parts, pool_limited, reserve, ready_first, ahead_loads,
                       waiting_per_warp, waiting_per_sm, banks, bank_groups, bank_ports, writeback_ports, const_latency,
                       cta_launch_latency, warp_size, max_threads, max_ctas, shared_bytes, registers, ring,
                       code_length, warps_per_block, num_blocks, block_shared, block_registers, entries, num_sms,
                       record_issue, hands)


# The fields are borrowed views (borrowed.py): njit code reads them without reference counting;
# the Python proxies keep what owns them (``keep``).
@njit(cache=True)
def _code_ref(table, units, rings, hands):
    return CodeRef(borrowed_view(table), borrowed_view(units), borrowed_view(rings), borrowed_view(hands))


@njit(cache=True)
def _streams_ref(first, count, pc, threads, rp, exits, access, ordinal, tx_first, tx_count, degree,
                 order_conflict, tx_line, tx_sectors):
    b = borrowed_view
    return StreamsRef(b(first), b(count), b(pc), b(threads), b(rp), b(exits), b(access), b(ordinal), b(tx_first),
                      b(tx_count), b(degree), b(order_conflict), b(tx_line), b(tx_sectors))


@njit(cache=True)
def _sm_state_ref(sv, wv, ibuf_pc, ibuf_ready, board, unread_pos, unread_count, warps, sched_warps, sched_n,
                  sched_clean, last_reasons, last_slot, last_age, cu_used, cu_order, cu_slot, cu_pc, cu_rec,
                  cu_dest, cu_unread, cu_ready_at, cu_waiting, cu_seq, cu_nops, cu_bank, cu_key, cu_read, scratch,
                  pipes, bank_busy, stalls, warp_instructions, thread_instructions, misc, rf_reads, rf_writes,
                  cta_block, cta_left, cta_slots, heaps, log_n, err):
    b = borrowed_view
    return SmStateRef(b(sv), b(wv), b(ibuf_pc), b(ibuf_ready), b(board), b(unread_pos), b(unread_count), b(warps),
                      b(sched_warps), b(sched_n), b(sched_clean), b(last_reasons), b(last_slot), b(last_age),
                      b(cu_used), b(cu_order), b(cu_slot), b(cu_pc), b(cu_rec), b(cu_dest), b(cu_unread),
                      b(cu_ready_at), b(cu_waiting), b(cu_seq), b(cu_nops), b(cu_bank), b(cu_key), b(cu_read),
                      b(scratch), b(pipes), b(bank_busy), b(stalls), b(warp_instructions), b(thread_instructions),
                      b(misc), b(rf_reads), b(rf_writes), b(cta_block), b(cta_left), b(cta_slots), heaps, b(log_n),
                      b(err))


for _tuple, _make in ((Settings, _settings_ref), (Code, _code_ref), (Streams, _streams_ref),
                      (SmState, _sm_state_ref)):
    assert tuple(inspect.signature(_make.py_func).parameters) == _tuple._fields, _make


def settings_ref(s: Settings) -> SettingsRef:
    """A ``SettingsRef`` of the named tuple ``s`` (its fields as int64)."""
    return _settings_ref(*(int(v) for v in s))


def code_ref(code: Code) -> CodeRef:
    """A ``CodeRef`` of the named tuple ``code`` (which it keeps)."""
    return keep(_code_ref(*code), code)


def streams_ref(streams: Streams) -> StreamsRef:
    """A ``StreamsRef`` of the named tuple ``streams`` (which it keeps)."""
    return keep(_streams_ref(*streams), streams)


def sm_state_ref(state: SmState) -> SmStateRef:
    """A ``SmStateRef`` of the named tuple ``state`` (which it keeps)."""
    return keep(_sm_state_ref(*state), state)


@structref.register
class HeapsType(_Fields):
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
        cta_slots=z(n, s.max_ctas, s.max_warps),  # the widest block: one state serves every launch
        heaps=Heaps(z(n, heap_capacity, COMPLETION_WIDTH), z(n, heap_capacity),
                    z(1024 if s.record_issue else 1, 4), z(16, 2)),
        log_n=z(1), err=z(8))


def state_shape(s: Settings, pipe_count: int) -> tuple:
    """What fixes the shapes of ``make_sm_state(s, pipe_count)``'s arrays but ``board``'s
    entries: the GPU's configuration and whether issues are logged, the same for every launch of
    one engine (``SmStates``)."""
    return (s.num_sms, s.max_warps, s.ibuffer_entries, s.collector_units, s.schedulers, s.banks, s.max_ctas,
            s.record_issue, pipe_count)


#: Arrays a launch writes before it reads them, which ``reset_state`` leaves as they are:
#: ``board``, whose slot row ``add_cta`` clears when it places a warp; ``unread_pos``/``unread_count``,
#: read below the slot's ``W_NUNREAD`` (in ``wv``, reset), each entry set when appended;
#: ``heaps``, read below their counts (in ``sv``), which may have grown; ``cta_slots``, whose
#: block row ``add_cta`` fills for the block's warps before anything reads it.
NOT_RESET = ("board", "unread_pos", "unread_count", "heaps", "cta_slots")
#: What one launch leaves for the next (engine.py's module docstring): the pipelines' and
#: register banks' busy-until cycles, and the ``SV_CARRIED`` columns of ``sv``.
CARRIED = ("pipes", "bank_busy")
SV_CARRIED = (SV_FETCH_RR, SV_SEQ, SV_WARP_AGE)
#: Arrays reset for every SM (the GPU loop charges idle cycles to every SM), or not per SM
#: (``sv`` but its carried columns).
RESET_WHOLE = ("sv", "stalls", "log_n", "err")
#: The arrays reset per SM, in the SMs the last launch gave a block only (which spares most of
#: the 1.5 MB at 68 SMs when a launch fills a few SMs), and in those only the slots it used.
RESET_ROWS = tuple(name for name in SmState._fields if name not in RESET_WHOLE + NOT_RESET + CARRIED)


@njit(cache=True)
def _per_sm(a, pristine, sm):
    a[sm] = pristine[0]


@njit(cache=True)
def _slots(a, pristine, sm, used):
    for k in range(used):
        a[sm, k] = pristine[0, k]


@njit(cache=True)
def reset_state(state, pristine):
    """Reset ``state`` in place to a fresh state but what carries across launches (``CARRIED``,
    ``SV_CARRIED``), from ``pristine``, a fresh state of one SM: ``RESET_WHOLE`` whole,
    ``RESET_ROWS`` in the SMs the last launch gave a block, per warp slot in the slots below
    the highest it used. Each placed warp leaves its slot resident, or finished
    (``retire_warp``); nothing else marks a slot, ``add_cta`` is the first to write an SM, and
    it takes the lowest free slot, so the slots used are those below the highest marked one,
    and no per-SM list (``warps``, ``sched_warps``, ``scratch``'s issue order) grew longer than
    them. One compiled call: the same copies from Python cost a small launch about 0.3 ms of
    numpy calls. ``tests/models/timing/test_timing_compiled.py`` holds the name lists to this function and
    its result to ``make_sm_state``."""
    wv = state.wv
    carried = np.empty(len(SV_CARRIED), np.int64)
    for sm in range(wv.shape[0]):
        used = 0
        for slot in range(wv.shape[1]):
            if wv[sm, slot, W_RESIDENT] or wv[sm, slot, W_FINISHED]:
                used = slot + 1
        for k in range(len(SV_CARRIED)):
            carried[k] = state.sv[sm, SV_CARRIED[k]]
        _per_sm(state.sv, pristine.sv, sm)
        for k in range(len(SV_CARRIED)):
            state.sv[sm, SV_CARRIED[k]] = carried[k]
        _per_sm(state.stalls, pristine.stalls, sm)
        if not used:
            continue
        # RESET_ROWS: per slot
        _slots(state.wv, pristine.wv, sm, used)
        _slots(state.ibuf_pc, pristine.ibuf_pc, sm, used)
        _slots(state.ibuf_ready, pristine.ibuf_ready, sm, used)
        _slots(state.warps, pristine.warps, sm, used)
        for sched in range(state.sched_warps.shape[1]):
            for k in range(used):
                state.sched_warps[sm, sched, k] = pristine.sched_warps[0, sched, k]
        # RESET_ROWS: whole rows
        _per_sm(state.sched_n, pristine.sched_n, sm)
        _per_sm(state.sched_clean, pristine.sched_clean, sm)
        _per_sm(state.last_reasons, pristine.last_reasons, sm)
        _per_sm(state.last_slot, pristine.last_slot, sm)
        _per_sm(state.last_age, pristine.last_age, sm)
        _per_sm(state.cu_used, pristine.cu_used, sm)
        _per_sm(state.cu_order, pristine.cu_order, sm)
        _per_sm(state.cu_slot, pristine.cu_slot, sm)
        _per_sm(state.cu_pc, pristine.cu_pc, sm)
        _per_sm(state.cu_rec, pristine.cu_rec, sm)
        _per_sm(state.cu_dest, pristine.cu_dest, sm)
        _per_sm(state.cu_unread, pristine.cu_unread, sm)
        _per_sm(state.cu_ready_at, pristine.cu_ready_at, sm)
        _per_sm(state.cu_waiting, pristine.cu_waiting, sm)
        _per_sm(state.cu_seq, pristine.cu_seq, sm)
        _per_sm(state.cu_nops, pristine.cu_nops, sm)
        _per_sm(state.cu_bank, pristine.cu_bank, sm)
        _per_sm(state.cu_key, pristine.cu_key, sm)
        _per_sm(state.cu_read, pristine.cu_read, sm)
        _per_sm(state.scratch, pristine.scratch, sm)
        _per_sm(state.warp_instructions, pristine.warp_instructions, sm)
        _per_sm(state.thread_instructions, pristine.thread_instructions, sm)
        _per_sm(state.misc, pristine.misc, sm)
        _per_sm(state.rf_reads, pristine.rf_reads, sm)
        _per_sm(state.rf_writes, pristine.rf_writes, sm)
        _per_sm(state.cta_block, pristine.cta_block, sm)
        _per_sm(state.cta_left, pristine.cta_left, sm)
    state.log_n[:] = pristine.log_n
    state.err[:] = pristine.err


class SmStates:
    """The SM state of one engine, kept from launch to launch and reset in place
    (``reset_state``) from a pristine state of one SM. Building a state and its ``SmStateRef``
    costs about 1.5 ms (4.8 MB of arrays at 68 SMs), much of a small launch. One state serves
    every launch shape: ``cta_slots`` holds the widest block; ``board`` the registers of any
    REG-form kernel or the most entries per warp a launch has needed (a larger D-FLOW ring),
    and a launch that needs more gets a new state with the old one's carried values
    (``CARRIED``, ``SV_CARRIED``). ``add_cta`` clears only the entries a launch uses.

    Members
    -------
    state : SmState or None
        The state (None before the first launch).
    """

    def __init__(self):
        self.state: SmState | None = None
        self._kept: tuple[tuple, SmStateRef, SmStateRef] | None = None  # (shape, pristine, ref)

    def fresh(self, s: Settings, pipe_count: int) -> tuple[SmState, SmStateRef]:
        """A state equal to ``make_sm_state(s, pipe_count)`` but for the carried values (the
        last launch's, or a new state's) and ``board``'s width, and its structref."""
        shape = state_shape(s, pipe_count)
        old = self.state
        if old is not None and self._kept[0] == shape and old.board.shape[2] >= s.entries:
            _, pristine, ref = self._kept
            reset_state(ref, pristine)
            return old, ref
        if old is not None and self._kept[0] != shape:
            raise ValueError("SmStates: a launch of another GPU configuration")
        entries = max(s.entries, old.board.shape[2] if old else MAX_REGS)  # a REG-form kernel never needs more
        state = self.state = make_sm_state(s._replace(entries=entries), pipe_count)
        if old is not None:
            for name in CARRIED:
                np.copyto(getattr(state, name), getattr(old, name))
            state.sv[:, SV_CARRIED] = old.sv[:, SV_CARRIED]
        ref = sm_state_ref(state)
        pristine = sm_state_ref(make_sm_state(s._replace(num_sms=1), pipe_count))
        self._kept = shape, pristine, ref
        # resets nothing (no slot is used): loads reset_state from numba's cache now, with the
        # rest of the engine, not tens of milliseconds into a run at its second launch
        reset_state(ref, pristine)
        return state, ref


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

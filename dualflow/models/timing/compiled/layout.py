"""The compiled engine's settings, SM state arrays and counters, each declared once (declare.py
says what is derived from these tables).

- ``SETTINGS``: the configuration and the launch's shape, as plain ints (``Settings``, and
  ``SettingsRef`` for njit code). ``ring``: D-FLOW ring entries per warp; with
  ``Variant.HANDS`` the slot space of every hand's ring (``Kernel.capacity``), and ``hands`` the
  kernel's hands (0 without the variant: the original form's code; see scoreboard.py).
- ``SM_STATE``: everything ``Sm``, ``Warp``, ``OperandCollector``, the scoreboards and
  ``SmCounters`` keep, struct-of-arrays indexed ``[sm, ...]`` (per warp ``[sm, slot, ...]``), and
  (``Heaps``) the completion and wake heaps and the issue log (``SmState``, ``SmStateRef``).
- ``MISC``: the columns of ``SmState.misc`` (constants ``M_<NAME>``), the scalar counters, each
  with the statistic it feeds; the arrays that feed statistics say so (``feeds``).
- ``SV_CARRIED``: the per-SM scalars one launch leaves for the next, with the reference ``Sm``
  attribute each is (engine.py copies them both ways).

Adding a machine-description field the compiled engine reads: one ``config(...)`` row in
``SETTINGS`` and the njit code that reads ``s.<name>``.
"""

from __future__ import annotations

import numpy as np

from ..sm import UNIT_CLASSES
from .borrowed import borrowed_view, keep  # noqa: F401 - borrowed_view: read by the generated _sm_state_ref
from .codes import NO_STALL, NUM_REASONS, STALL_IDLE, STALLS
from .core import (
    COMPLETION_WIDTH,
    MAX_SOURCES,
    NUM_UNITS,
    SV_FETCH_RR,
    SV_LAST_CYCLE,
    SV_SEQ,
    SV_WARP_AGE,
    SV_WIDTH,
    W_STALL,
    W_WIDTH,
    Heaps,
)
from .declare import (
    CARRIED,
    EVERY_SM,
    NOT_RESET,
    USED_SLOTS,
    USED_SMS,
    WHOLE,
    Array,
    borrowed,
    config,
    constructor,
    engine,
    launch,
    struct,
)

SETTINGS = (
    config("register_file", "mode.register_file", "codes.REGISTER_FILE_*"),
    config("dispatch", "mode.dispatch", "codes.DISPATCH_*"),
    config("scheduler", "sm.scheduler", "codes.SCHEDULER_*"),
    config("schedulers", "sm.schedulers"),
    config("max_warps", "sm.max_warps"),
    config("ibuffer_entries", "sm.ibuffer_entries"),
    config("fetch_width", "sm.fetch_width"),
    config("fetch_warps", "sm.fetch_warps"),
    config("fetch_past", "sm.fetch_past_branches"),
    config("fetch_latency", "sm.fetch_latency"),
    config("collector_units", "sm.collector_units"),
    config("parts", "sm.partitions"),
    config("window", "sm.dflow_window", "codes.WINDOW_*"),
    config("reserve", "sm.dflow_reserve", "read with WINDOW_RESERVE only"),
    config("issue_order", "sm.dflow_issue_order", "codes.ISSUE_ORDER_*"),
    config("send_ahead", "sm.dflow_send_ahead", "codes.SEND_AHEAD_*"),
    config("waiting_per_warp", "sm.dflow_waiting_per_warp"),
    config("waiting_per_sm", "sm.dflow_waiting_per_sm"),
    config("banks", "sm.register_banks"),
    config("bank_groups", "sm.bank_groups"),
    config("bank_ports", "sm.register_bank_ports"),
    config("writeback_ports", "sm.writeback_ports"),
    config("const_latency", "sm.const_latency"),
    config("cta_launch_latency", "sm.cta_launch_latency"),
    config("warp_size", "sm.warp_size"),
    config("max_threads", "sm.max_threads"),
    config("max_ctas", "sm.max_ctas"),
    config("shared_bytes", "sm.shared_bytes"),
    config("registers", "sm.registers"),
    config("num_sms", "num_sms"),
    engine("record_issue", "keep the issue log"),
    launch("ring", 1, "ring entries per warp (with hands: the slot space of every hand's ring)"),
    launch("code_length"),
    launch("warps_per_block"),
    launch("num_blocks"),
    launch("block_shared", doc="shared bytes per block"),
    launch("block_registers", doc="registers per block"),
    launch("entries", doc="scoreboard entries per warp (board's last axis)"),
    launch("hands", doc="the kernel's hands with Variant.HANDS, else 0"),
)

Settings, SettingsType, SettingsRef = struct(
    "Settings", [s.name for s in SETTINGS], __name__,
    "``Settings`` for njit code (a tuple argument is passed field by field, a word per field at every call).")
_settings_ref = constructor("_settings_ref", SettingsRef, Settings._fields, globals())


def settings_ref(s: Settings) -> SettingsRef:
    """A ``SettingsRef`` of the named tuple ``s`` (its fields as int64)."""
    return _settings_ref(*(int(v) for v in s))


#: ``SmState.misc``: the scalar counters (``SmCounters``' and the collector's), each with the
#: statistic source it feeds (``TimingStats``); ``M_<NAME>`` is each one's column.
MISC = (("active", "counters.sm_active_cycles"), ("barriers", "counters.barriers"),
        ("busy", "counters.collector_busy"), ("resident", "counters.resident_warps"),
        ("conflicts", "collector.conflicts"), ("flushes", "counters.ibuffer_flushes"))
globals().update({f"M_{name.upper()}": k for k, (name, _) in enumerate(MISC)})
M_WIDTH = len(MISC)

#: The per-SM scalars (``SmState.sv`` columns) a launch leaves for the next, each with the
#: reference ``Sm``'s attribute it is (the pipelines and banks carry as arrays: ``CARRIED``).
SV_CARRIED = ((SV_FETCH_RR, "fetch_rr"), (SV_SEQ, "seq"), (SV_WARP_AGE, "warp_age"))


def _heaps(s, capacity: int) -> Heaps:
    return Heaps(np.zeros((s.num_sms, capacity, COMPLETION_WIDTH), np.int64), np.zeros((s.num_sms, capacity), np.int64),
                 np.zeros((1024 if s.record_issue else 1, 4), np.int64), np.zeros((16, 2), np.int64))


def _sm_slot(*rest):
    return lambda s, pipes: (s.num_sms, s.max_warps, *(r(s) if callable(r) else r for r in rest))


def _sm(*rest):
    return lambda s, pipes: (s.num_sms, *(r(s) if callable(r) else r for r in rest))


def _cus(s):
    return s.collector_units


def _scheds(s):
    return s.schedulers


def _banks(s):
    return s.banks


def _ctas(s):
    return s.max_ctas


_CLASSES = tuple(c.value for c in UNIT_CLASSES)  # the columns of the per-unit-class counters

# Why ``reset`` is what it is: ``board`` is cleared by ``add_cta`` for the slot row it places a
# warp in; ``unread_pos``/``unread_count`` are read below the slot's ``W_NUNREAD`` (in ``wv``,
# reset), each entry set when appended; ``heaps`` are read below their counts (in ``sv``) and may
# have grown; ``cta_slots``' block row is filled by ``add_cta`` before anything reads it.
SM_STATE = (
    Array("sv", _sm(SV_WIDTH), EVERY_SM, columns=((SV_LAST_CYCLE, -1),), keeps=tuple(c for c, _ in SV_CARRIED),
          doc="per-SM scalars (core.SV_*)"),
    Array("wv", _sm_slot(W_WIDTH), USED_SLOTS, columns=((W_STALL, NO_STALL),), doc="per-warp scalars (core.W_*)"),
    Array("ibuf_pc", _sm_slot(lambda s: s.ibuffer_entries), USED_SLOTS),
    Array("ibuf_ready", _sm_slot(lambda s: s.ibuffer_entries), USED_SLOTS),
    Array("board", _sm_slot(lambda s: s.entries), NOT_RESET),
    Array("unread_pos", _sm_slot(lambda s: s.collector_units * MAX_SOURCES), NOT_RESET),
    Array("unread_count", _sm_slot(lambda s: s.collector_units * MAX_SOURCES), NOT_RESET),
    Array("warps", _sm_slot(), USED_SLOTS),
    Array("sched_warps", _sm(_scheds, lambda s: s.max_warps), USED_SLOTS, slot_axis=2),
    Array("sched_n", _sm(_scheds), USED_SMS),
    Array("sched_clean", _sm(_scheds), USED_SMS),
    Array("last_reasons", _sm(_scheds), USED_SMS, fill=STALL_IDLE),
    Array("last_slot", _sm(_scheds), USED_SMS, fill=-1),
    Array("last_age", _sm(_scheds), USED_SMS),
    Array("cu_used", _sm(_cus), USED_SMS),
    Array("cu_order", _sm(_cus), USED_SMS),
    Array("cu_slot", _sm(_cus), USED_SMS),
    Array("cu_pc", _sm(_cus), USED_SMS),
    Array("cu_rec", _sm(_cus), USED_SMS),
    Array("cu_dest", _sm(_cus), USED_SMS),
    Array("cu_unread", _sm(_cus), USED_SMS),
    Array("cu_ready_at", _sm(_cus), USED_SMS),
    Array("cu_waiting", _sm(_cus), USED_SMS),
    Array("cu_seq", _sm(_cus), USED_SMS),
    Array("cu_nops", _sm(_cus), USED_SMS),
    Array("cu_bank", _sm(_cus, MAX_SOURCES), USED_SMS),
    Array("cu_key", _sm(_cus, MAX_SOURCES), USED_SMS),
    Array("cu_read", _sm(_cus, MAX_SOURCES), USED_SMS),
    Array("scratch", _sm(lambda s: 2 * s.collector_units + s.max_warps), USED_SMS),
    Array("pipes", lambda s, pipes: (s.num_sms, NUM_UNITS, pipes), CARRIED),
    Array("bank_busy", _sm(_banks), CARRIED, fill=-1),
    Array("stalls", _sm(NUM_REASONS), EVERY_SM, feeds="counters.stalls", keys=STALLS.values),
    Array("warp_instructions", _sm(NUM_UNITS), USED_SMS, feeds="counters.warp_instructions", keys=_CLASSES),
    Array("thread_instructions", _sm(NUM_UNITS), USED_SMS, feeds="counters.thread_instructions", keys=_CLASSES),
    Array("misc", _sm(M_WIDTH), USED_SMS, feeds=tuple(source for _, source in MISC)),
    Array("rf_reads", _sm(_banks), USED_SMS, feeds="collector.reads"),
    Array("rf_writes", _sm(_banks), USED_SMS, feeds="collector.writes"),
    Array("cta_block", _sm(_ctas), USED_SMS, fill=-1),
    Array("cta_left", _sm(_ctas), USED_SMS),
    # the widest block: one state serves every launch
    Array("cta_slots", _sm(_ctas, lambda s: s.max_warps), NOT_RESET),
    Array("heaps", None, NOT_RESET, make=_heaps),
    Array("log_n", lambda s, pipes: (1,), WHOLE),
    Array("err", lambda s, pipes: (8,), WHOLE, doc="error code (core.ERR_*) and where"),
)

SmState, SmStateType, SmStateRef = struct("SmState", [a.name for a in SM_STATE], __name__, "``SmState`` for njit code.")
# the arrays as borrowed views (borrowed.py): njit code reads them without reference counting;
# the proxy keeps what owns them (``keep``)
_sm_state_ref = constructor("_sm_state_ref", SmStateRef, SmState._fields, globals(),
                            lambda name: name if name == "heaps" else borrowed(name))


def sm_state_ref(state: SmState) -> SmStateRef:
    """A ``SmStateRef`` of the named tuple ``state`` (which it keeps)."""
    return keep(_sm_state_ref(*state), state)


def make_sm_state(s: Settings, pipe_count: int, heap_capacity: int = 64) -> SmState:
    """Fresh state of ``s.num_sms`` SMs for one launch (the engine carries what must survive a
    launch: see engine.py)."""
    values = {}
    for a in SM_STATE:
        if a.make is not None:
            values[a.name] = a.make(s, heap_capacity)
            continue
        array = values[a.name] = np.full(a.shape(s, pipe_count), a.fill, dtype=np.int64)
        for column, fill in a.columns:
            array[..., column] = fill
    return SmState(**values)


def state_shape(s: Settings, pipe_count: int) -> tuple:
    """What fixes the shapes of ``make_sm_state(s, pipe_count)``'s arrays but ``board``'s
    entries: the GPU's configuration and whether issues are logged, the same for every launch of
    one engine (``SmStates``)."""
    return (s.num_sms, s.max_warps, s.ibuffer_entries, s.collector_units, s.schedulers, s.banks, s.max_ctas,
            s.record_issue, pipe_count)


def _named(*resets: str) -> tuple[str, ...]:
    return tuple(a.name for a in SM_STATE if a.reset in resets)


NOT_RESET_ARRAYS = _named(NOT_RESET)
CARRIED_ARRAYS = _named(CARRIED)
#: Arrays reset for every SM (the GPU loop charges idle cycles to every SM), or not per SM.
RESET_WHOLE = _named(EVERY_SM, WHOLE)
#: The arrays reset per SM, in the SMs the last launch gave a block only (which spares most of
#: the 1.5 MB at 68 SMs when a launch fills a few SMs), and in those only the slots it used.
RESET_ROWS = _named(USED_SLOTS, USED_SMS)
COUNTERS = tuple(a for a in SM_STATE if a.feeds)

"""The compiled SM's side of a queued DRAM controller: the numba port of ``Sm._wait_memory``,
its two callbacks and ``Sm._woken`` (dualflow/models/timing/sm.py).

An access whose port release or data is pending (a handle < 0, ``memory_pending.py``) blocks its
memory pipeline (``BLOCKED``) and leaves its completion to the memory system: each pending cycle
gets a ``K_NOTE`` waiter, whose note (``NOTE_PORT``: the pipeline frees; ``NOTE_DONE``: the
completion is posted) the GPU loop applies once the memory system's events made it known
(``apply_notes``), in the order the reference's callbacks run; a cycle known already applies at
once, as the reference's ``when`` calls back at once. Every callback then wakes the SM:
``woken_push`` records ``Sm.on_wake`` for the GPU loop to schedule in order.
"""

from __future__ import annotations

from numba import njit

from .core import (
    BLOCKED,
    DONE,
    ST_UNIT,
    SV_MEMORY_WAITS,
    SV_SEQ,
    WB,
    completion_push,
    wake_push,
    woken_push,
)
from .memory_pending import known, release, value_of
from .memory_queue_state import N_ARG, N_TAG, N_VALUE
from .memory_queued import then_note

#: Note tags of the SM's waiters: (sm, unit class, pipeline, busy until); (sm, slot, dest, pc).
NOTE_PORT, NOTE_DONE = 1, 2


@njit(cache=True)
def wait_memory(state, code, mem, sm, cls, pipe, busy_until, slot, dest, pc, port_free, done):
    """Sm._wait_memory: the pipeline and the completion wait for the handles ``port_free`` and
    ``done`` (either may be known: its callback runs at once)."""
    state.sv[sm, SV_MEMORY_WAITS] += 2
    state.pipes[sm, cls, pipe] = BLOCKED
    q = mem.q
    if known(q, port_free):
        port_known(state, sm, cls, pipe, busy_until, value_of(q, port_free))
        release(q, port_free)
    else:
        then_note(mem, port_free, NOTE_PORT, sm, cls, pipe, busy_until)
    if known(q, done):
        done_known(state, code, sm, slot, dest, pc, value_of(q, done))
        release(q, done)
    else:
        then_note(mem, done, NOTE_DONE, sm, slot, dest, pc)


@njit(cache=True)
def port_known(state, sm, cls, pipe, busy_until, cycle):
    """``_wait_memory``'s ``port_free``: the pipeline is busy until the port frees (or longer)."""
    free = max(busy_until, cycle)
    state.pipes[sm, cls, pipe] = free
    _woken(state, sm, free)


@njit(cache=True)
def done_known(state, code, sm, slot, dest, pc, cycle):
    """``_wait_memory``'s ``done``: the completion is posted (``Sm._post``), its unit's latency after
    the data."""
    done = cycle + code.units[code.table[pc, ST_UNIT], 0]
    state.sv[sm, SV_SEQ] += 1
    completion_push(state, sm, done, state.sv[sm, SV_SEQ], WB if dest >= 0 else DONE, slot, dest, pc)
    wake_push(state, sm, done)
    _woken(state, sm, done)


@njit(cache=True)
def _woken(state, sm, cycle):
    """Sm._woken: one wait fewer; the SM wakes at ``cycle``."""
    state.sv[sm, SV_MEMORY_WAITS] -= 1
    wake_push(state, sm, cycle)
    woken_push(state, sm, cycle)


@njit(cache=True)
def apply_notes(state, code, mem):
    """Run the SM callbacks of every note the memory system's events made, in order (the
    reference runs them inside those events: they touch only the SMs, so running them after is
    the same)."""
    q = mem.q
    for i in range(q.notes_n):
        row = q.notes[i]
        if row[N_TAG] == NOTE_PORT:
            port_known(state, row[N_ARG], row[N_ARG + 1], row[N_ARG + 2], row[N_ARG + 3], row[N_VALUE])
        else:
            done_known(state, code, row[N_ARG], row[N_ARG + 1], row[N_ARG + 2], row[N_ARG + 3], row[N_VALUE])
    q.notes_n = 0


@njit(cache=True)
def memory_waiting(state, nsms):
    """Whether any SM waits for the memory system (``any(sm.memory_waits for sm in sms)``)."""
    for sm in range(nsms):
        if state.sv[sm, SV_MEMORY_WAITS]:
            return True
    return False

"""The queued memory system's own events, compiled: ``MemorySystem.advance`` and ``next_event``,
and what an event runs (``EventQueue.run_until``, ``DramQueues._decide``, ``MshrFile._wake``,
``Pending.resolve``, the closures the reference registers as waiters).

In the reference an event is a call that nests: a DRAM decision resolves a read, whose waiters
resolve further pending cycles, resume an L2 slice's input, which resolves its reads' answers,
and so on, depth first, each caller going on when its callee returns. numba cannot cache
recursive functions, so the nesting is an explicit stack of frames (``QueueState.frames``), run
to empty after each event: a resolution walking its waiters (``F_RESOLVE``: the pending cycle,
the next waiter, the value), a decision's loop (``F_DECIDE``), a slice input's loop
(``F_SLICE``). Wherever the reference calls something that may nest, the frame machine pushes a
frame and lets it run before the frame below goes on: the same operations in the same order.
What never nests (a port resuming: ``memory_queued.resume_port``; the waiters ``run_leaf``
runs) is called directly.
"""

from __future__ import annotations

import numba
import numpy as np

from .memory_dram_queue import decide_begins, decide_step
from .memory_hierarchy import icnt_reply
from .memory_pending import free_waiter, known, next_cycle, pop_event, push_frame, release, then, value_of
from .memory_queue_state import (
    E_DECIDE,
    F_DECIDE,
    F_RESOLVE,
    F_SLICE,
    FR_A,
    FR_B,
    FR_C,
    FR_KIND,
    K_FORWARD,
    K_ONE,
    K_REPLY,
    K_RESUME_PORT,
    K_RESUME_SLICE,
    LEVEL_L1,
    M_WAITER,
    N_WIDTH,
    P_ACC,
    P_LEFT,
    W_ARG,
    W_KIND,
    W_NEXT,
)
from .memory_queued import resume_port
from .memory_queued_cache import begin_resolve, end_resolve, run_leaf
from .memory_queued_l2 import resume_slice, slice_step


@numba.njit(cache=True)
def next_event(st):
    """``MemorySystem.next_event``: the first cycle at which the memory system has something to do
    by itself (-1: nothing)."""
    return next_cycle(st.q) if st.queued else -1


@numba.njit(cache=True)
def advance(st, cycle):
    """``MemorySystem.advance``: run the events due up to ``cycle`` (and those they post for it),
    each to its end before the next: the DRAM banks' decisions and what they resolve (fills,
    MSHR releases, the accesses that waited for them), and MSHR files waking their waiter.
    Resolved answers the caller waits for are in ``QueueState.notes``."""
    q = st.q
    while q.event_n and q.event_time[0] <= cycle:
        time, kind, a, b = pop_event(q)
        if kind == E_DECIDE:
            if decide_begins(q, a, time):
                push_frame(q, F_DECIDE, a, 0, 0, time)
        else:  # MshrFile._wake of file b of level a: its waiter, if any, tries again
            resume_from = q.mshr_wait[a, b, M_WAITER]
            q.mshr_wait[a, b, M_WAITER] = -1
            if resume_from >= 0:
                if a == LEVEL_L1:
                    resume_port(st, b, resume_from, time, True)
                else:
                    resume_slice(st, b, time, True)
                    push_frame(q, F_SLICE, b, 0, 0, 0.0)
        _run_frames(st)


@numba.njit(cache=True)
def _resolve(q, pid, value):
    """``Pending.resolve`` called: its waiters run next, in order (a frame)."""
    push_frame(q, F_RESOLVE, pid, begin_resolve(q, pid, value), value, 0.0)


@numba.njit(cache=True)
def _run_frames(st):
    """Run the frame stack to empty: each step runs one unit of the top frame."""
    q = st.q
    while q.frame_n:
        top = q.frame_n - 1
        kind, a = q.frames[top, FR_KIND], q.frames[top, FR_A]
        if kind == F_RESOLVE:
            w = q.frames[top, FR_B]
            if w < 0:  # every waiter ran
                q.frame_n = top
                end_resolve(q, a)
                continue
            q.frames[top, FR_B] = q.waiter[w, W_NEXT]  # where this frame goes on
            _run_waiter(st, w, a, q.frames[top, FR_C])
        elif kind == F_DECIDE:
            going, pid, done = decide_step(st, a, q.frame_time[top])
            if not going:
                q.frame_n = top
            elif pid >= 0:
                _resolve(q, pid, done)
        else:  # F_SLICE: ``_run_slice``'s loop
            going, pid, data = slice_step(st, a)
            if not going:
                q.frame_n = top
            elif known(q, data):  # when(data, job.result.resolve)
                value = value_of(q, data)
                release(q, data)
                _resolve(q, pid, value)
            else:
                then(q, -1 - data, K_FORWARD, pid, 0, 0, 0, 0)


@numba.njit(cache=True)
def _run_waiter(st, w, pid, value):
    """Run waiter ``w`` of ``pid``, resolved to ``value``: a callback of the reference."""
    if run_leaf(st, w, pid, value):
        free_waiter(st.q, w)
        return
    q = st.q
    kind, a, b, c = q.waiter[w, W_KIND], q.waiter[w, W_ARG], q.waiter[w, W_ARG + 1], q.waiter[w, W_ARG + 2]
    free_waiter(q, w)
    if kind == K_ONE:  # later's ``one``: the last of its cycles resolves the result
        pend = q.pend
        if value > pend[a, P_ACC]:
            pend[a, P_ACC] = value
        pend[a, P_LEFT] -= 1
        if not pend[a, P_LEFT]:
            _resolve(q, a, pend[a, P_ACC])
    elif kind == K_REPLY:  # then_map: the reply is booked when the data is at the slice
        _resolve(q, a, icnt_reply(st, value, b, c))
    elif kind == K_FORWARD:
        _resolve(q, a, value)
    elif kind == K_RESUME_SLICE:  # (a float cycle, as an event's: one compiled resume_*)
        resume_slice(st, a, float(value), False)
        push_frame(q, F_SLICE, a, 0, 0, 0.0)
    elif kind == K_RESUME_PORT:
        resume_port(st, a, b, float(value), False)
    else:
        raise AssertionError("unknown waiter kind")


@numba.njit(cache=True)
def take_notes(st):
    """The notes made so far (rows of ``N_WIDTH``), copied; the list is emptied."""
    q = st.q
    out = np.empty((q.notes_n, N_WIDTH), np.int64)
    out[:] = q.notes[:q.notes_n]
    q.notes_n = 0
    return out

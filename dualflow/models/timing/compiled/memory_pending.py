"""Pending cycles, their waiters, the event heap, the frame stack and the notes of the queued
memory system (``memory_queue_state.py`` has the layout): the array form of ``memory/pending.py``
(``Pending``, ``later``) and ``memory/events.py`` (``EventQueue``).

A *handle* is what the reference's ``int | Pending`` is: an int >= 0 is a known cycle, ``-1 - pid``
the pending cycle ``pid``. A pending cycle is freed once it is resolved and its waiters ran, unless
a port job's list of waits pins it (``_step`` reads those values at its end); a pending cycle
resolved the moment it is made (``later`` of known cycles) is freed by whoever used it
(``release``). Nothing here runs a waiter but ``K_ONE`` while a ``later`` is made (its result has
no waiters yet): resolving is ``memory_machine.py``'s, which walks waiters in registration order.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .memory_queue_state import (
    E_A,
    E_B,
    E_KIND,
    E_SEQ,
    E_WIDTH,
    FR_A,
    FR_B,
    FR_C,
    FR_KIND,
    FR_WIDTH,
    K_ONE,
    N_ARG,
    N_TAG,
    N_VALUE,
    N_WIDTH,
    P_ACC,
    P_HEAD,
    P_LEFT,
    P_NEXT,
    P_PIN,
    P_STATE,
    P_TAIL,
    P_VALUE,
    P_WIDTH,
    RESOLVED,
    RESOLVING,
    UNRESOLVED,
    W_ARG,
    W_KIND,
    W_NEXT,
    W_WIDTH,
)
from .memory_queue_state import FREE as P_FREE


# ---------------------------------------------------------------------- pools
@numba.njit(cache=True)
def pool_take(pool, free, link):
    """Take a free row of ``pool``, whose free rows are a list through column ``link`` starting at
    ``free`` (-1: none left; then the pool doubles, its new rows free): (whether it grew, the pool,
    the row, the next free row). A pool that grew is a new array for the caller to store in its
    field; one that did not must not be stored again (read through a borrowed structref it is an
    uncounted view, and storing it would release the array the field owns: borrowed.py)."""
    grew = free < 0
    if grew:
        n = pool.shape[0]
        grown = np.zeros((2 * n, pool.shape[1]), np.int64)
        grown[:n] = pool
        for i in range(n, 2 * n):
            grown[i, link] = i + 1
        grown[2 * n - 1, link] = -1
        pool, free = grown, n
    return grew, pool, free, pool[free, link]


@numba.njit(cache=True)
def handle(pid):
    """The handle of pending cycle ``pid``."""
    return -1 - pid


@numba.njit(cache=True)
def pid_of(h):
    """The pending cycle of handle ``h`` (< 0)."""
    return -1 - h


@numba.njit(cache=True)
def new_pending(q):
    """``Pending()``: a new unresolved cycle without waiters; its pid."""
    grew, pend, pid, q.pend_free = pool_take(q.pend, q.pend_free, P_NEXT)
    if grew:
        q.pend = pend
    pend[pid, P_STATE] = UNRESOLVED
    pend[pid, P_VALUE] = 0
    pend[pid, P_HEAD] = -1
    pend[pid, P_TAIL] = -1
    pend[pid, P_PIN] = 0
    q.pend_live += 1
    return pid


@numba.njit(cache=True)
def free_pending(q, pid):
    q.pend[pid, P_STATE] = P_FREE
    q.pend[pid, P_NEXT] = q.pend_free
    q.pend_free = pid
    q.pend_live -= 1


@numba.njit(cache=True)
def known(q, h):
    """Whether handle ``h`` is a cycle known now (an int, or a pending cycle with its value)."""
    return h >= 0 or q.pend[-1 - h, P_STATE] >= RESOLVING


@numba.njit(cache=True)
def value_of(q, h):
    """The cycle of a known handle."""
    return h if h >= 0 else q.pend[-1 - h, P_VALUE]


@numba.njit(cache=True)
def release(q, h):
    """Done with handle ``h``: a pending cycle that was resolved when it was made (no resolution
    will free it) and is not pinned is freed."""
    if h < 0:
        pid = -1 - h
        if q.pend[pid, P_STATE] == RESOLVED and not q.pend[pid, P_PIN]:
            free_pending(q, pid)


@numba.njit(cache=True)
def then(q, pid, kind, a, b, c, d, e):
    """``Pending.then`` of an unresolved ``pid``: append a waiter (run when it resolves, after
    those registered before it). (A resolved one calls at once in the reference: callers
    handle that case themselves, where it can occur.)"""
    if q.pend[pid, P_STATE] != UNRESOLVED:
        raise AssertionError("a waiter for a pending cycle that is known")
    grew, waiter, w, q.waiter_free = pool_take(q.waiter, q.waiter_free, W_NEXT)
    if grew:
        q.waiter = waiter
    waiter[w, W_KIND] = kind
    waiter[w, W_NEXT] = -1
    waiter[w, W_ARG], waiter[w, W_ARG + 1], waiter[w, W_ARG + 2] = a, b, c
    waiter[w, W_ARG + 3], waiter[w, W_ARG + 4] = d, e
    q.waiter_live += 1
    pend = q.pend
    if pend[pid, P_TAIL] < 0:
        pend[pid, P_HEAD] = w
    else:
        waiter[pend[pid, P_TAIL], W_NEXT] = w
    pend[pid, P_TAIL] = w


@numba.njit(cache=True)
def free_waiter(q, w):
    q.waiter[w, W_NEXT] = q.waiter_free
    q.waiter_free = w
    q.waiter_live -= 1


# ---------------------------------------------------------------------- later
# ``later(known, pending)`` keeps the pending cycles that are unresolved or later than ``known``;
# with none it is ``known``, else a new pending cycle whose ``one`` waiters count them down
# (those resolved already at once). Callers count first (``later_counts``), start it with that
# count, then add each candidate in the reference's order.
@numba.njit(cache=True)
def later_counts(q, known_cycle, h):
    """1 if ``later`` keeps handle ``h`` (a pending one, unresolved or later than ``known_cycle``), else 0."""
    if h < 0 and (q.pend[-1 - h, P_STATE] == UNRESOLVED or q.pend[-1 - h, P_VALUE] > known_cycle):
        return 1
    return 0


@numba.njit(cache=True)
def later_start(q, known_cycle, count):
    """The result of a ``later`` keeping ``count`` (> 0) pending cycles: a new pending cycle."""
    out = new_pending(q)
    q.pend[out, P_ACC] = known_cycle
    q.pend[out, P_LEFT] = count
    return out


@numba.njit(cache=True)
def later_add(q, out, known_cycle, h):
    """``p.then(one)`` for a candidate ``h`` of the ``later`` whose result is ``out`` (a kept one
    resolved already counts at once; the last of them resolves ``out``, which has no waiters yet)."""
    if not later_counts(q, known_cycle, h):
        return
    pid = -1 - h
    pend = q.pend
    if pend[pid, P_STATE] == UNRESOLVED:
        then(q, pid, K_ONE, out, 0, 0, 0, 0)
        return
    if pend[pid, P_VALUE] > pend[out, P_ACC]:
        pend[out, P_ACC] = pend[pid, P_VALUE]
    pend[out, P_LEFT] -= 1
    if not pend[out, P_LEFT]:
        resolved_now(q, out, pend[out, P_ACC])


@numba.njit(cache=True)
def resolved_now(q, pid, value):
    """A pending cycle resolved while it is made (it has no waiters yet): its user ``release``s it."""
    q.pend[pid, P_STATE] = RESOLVED
    q.pend[pid, P_VALUE] = value


@numba.njit(cache=True)
def latest(q, known_cycle, h1, h2):
    """``_latest``: the latest of ``known_cycle`` and two handles (0 for none: a known cycle no
    later than it), pending while any of them is."""
    if h1 >= 0 and h1 > known_cycle:
        known_cycle = h1
    if h2 >= 0 and h2 > known_cycle:
        known_cycle = h2
    count = later_counts(q, known_cycle, h1) + later_counts(q, known_cycle, h2)
    if not count:
        return known_cycle
    out = later_start(q, known_cycle, count)
    later_add(q, out, known_cycle, h1)
    later_add(q, out, known_cycle, h2)
    return handle(out)


# ---------------------------------------------------------------------- events
@numba.njit(cache=True)
def _event_before(q, i, j):
    """Event ``i`` comes before event ``j``: (time, posting sequence) order."""
    ti, tj = q.event_time[i], q.event_time[j]
    return ti < tj or (ti == tj and q.events[i, E_SEQ] < q.events[j, E_SEQ])


@numba.njit(cache=True)
def _event_swap(q, i, j):
    ev, et = q.events, q.event_time
    et[i], et[j] = et[j], et[i]
    for k in range(E_WIDTH):
        ev[i, k], ev[j, k] = ev[j, k], ev[i, k]


@numba.njit(cache=True)
def post(q, time, kind, a, b):
    """``EventQueue.at``: run event ``kind`` (a, b) at ``time``, after the events posted before it
    for the same time."""
    n = q.event_n
    if n == q.events.shape[0]:
        grown = np.zeros((2 * n, E_WIDTH), np.int64)
        grown[:n] = q.events
        times = np.zeros(2 * n, np.float64)
        times[:n] = q.event_time
        q.events, q.event_time = grown, times
    q.event_seq += 1
    ev = q.events
    q.event_time[n] = time
    ev[n, E_SEQ], ev[n, E_KIND], ev[n, E_A], ev[n, E_B] = q.event_seq, kind, a, b
    q.event_n = n + 1
    i = n
    while i > 0 and _event_before(q, i, (i - 1) >> 1):
        _event_swap(q, i, (i - 1) >> 1)
        i = (i - 1) >> 1


@numba.njit(cache=True)
def pop_event(q):
    """Remove the first event: (time, kind, a, b)."""
    ev = q.events
    top = q.event_time[0], ev[0, E_KIND], ev[0, E_A], ev[0, E_B]
    n = q.event_n - 1
    q.event_n = n
    if n:
        _event_swap(q, 0, n)
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and _event_before(q, c + 1, c):
                c += 1
            if not _event_before(q, c, i):
                break
            _event_swap(q, i, c)
            i = c
    return top


@numba.njit(cache=True)
def next_cycle(q):
    """``EventQueue.next_cycle``: the first whole cycle at which an event is due (-1: none)."""
    return math.ceil(q.event_time[0]) if q.event_n else -1


# ---------------------------------------------------------------------- frames and notes
@numba.njit(cache=True)
def push_frame(q, kind, a, b, c, time):
    """Call, in the explicit stack: frame ``kind`` (a, b, c; ``time``) runs before the one below
    it goes on."""
    n = q.frame_n
    if n == q.frames.shape[0]:
        grown = np.zeros((2 * n, FR_WIDTH), np.int64)
        grown[:n] = q.frames
        times = np.zeros(2 * n, np.float64)
        times[:n] = q.frame_time
        q.frames, q.frame_time = grown, times
    fr = q.frames
    fr[n, FR_KIND], fr[n, FR_A], fr[n, FR_B], fr[n, FR_C] = kind, a, b, c
    q.frame_time[n] = time
    q.frame_n = n + 1


@numba.njit(cache=True)
def note(q, tag, value, a, b, c, d):
    """Tell the caller that a cycle it waits for is ``value`` (a ``K_NOTE`` waiter ran)."""
    n = q.notes_n
    if n == q.notes.shape[0]:
        grown = np.zeros((2 * n, N_WIDTH), np.int64)
        grown[:n] = q.notes
        q.notes = grown
    row = q.notes[n]
    row[N_TAG], row[N_VALUE] = tag, value
    row[N_ARG], row[N_ARG + 1], row[N_ARG + 2], row[N_ARG + 3] = a, b, c, d
    q.notes_n = n + 1


def pool_rows(rows: int, width: int, link: int) -> np.ndarray:
    """A pool of ``rows`` free records (from Python): a free list through column ``link``."""
    pool = np.zeros((rows, width), np.int64)
    pool[:, link] = np.arange(1, rows + 1)
    pool[-1, link] = -1
    return pool


__all__ = ["P_WIDTH", "W_WIDTH"]

"""The queued DRAM controllers of the compiled memory system: the port of ``memory/dram_queue.py``
(``DramQueues``: ``submit``, ``_enter``, ``_next_decision``, ``_post``, ``_decide``).

Requests are rows of ``QueueState.requests``; each bank's queued requests and each channel's
requests waiting upstream are doubly linked lists kept in age order (arrival at the controller,
then the order made), as the reference's ``insort`` keeps its lists. A decision is an event
(``E_DECIDE``); its loop runs one pick per ``decide_step``, because resolving a read between two
picks runs whatever waited for it (``memory_machine.py`` interleaves the two as the reference's
nested calls do).
"""

from __future__ import annotations

import numba
import numpy as np

from .memory_dram import dram_account, dram_log, dram_place, dram_serve
from .memory_pending import new_pending, pool_take, post
from .memory_queue_state import (
    C_COUNT,
    C_HEAD,
    C_TAIL,
    E_DECIDE,
    Q_HEAD,
    Q_TAIL,
    R_BANK,
    R_BYTES,
    R_DONE,
    R_LINE,
    R_LOG,
    R_NEXT,
    R_PREV,
    R_ROW,
    R_SEQ,
    R_WRITE,
    T_ARRIVE,
    T_ENTERED,
)
from .memory_state import BANK_COL_READY, BANK_OPEN, DRAM_REORDERED_HITS


@numba.njit(cache=True)
def _older(q, r, other):
    """``_Request.__lt__``: ``r`` reached the controller before ``other`` (then: was made before)."""
    a, b = q.request_time[r, T_ARRIVE], q.request_time[other, T_ARRIVE]
    return a < b or (a == b and q.requests[r, R_SEQ] < q.requests[other, R_SEQ])


@numba.njit(cache=True)
def _insort(q, table, row, head, tail, r):
    """``insort`` of request ``r`` into the age-ordered list whose ends are ``table[row, head]``
    and ``table[row, tail]`` (searched from the youngest: requests mostly come in age order)."""
    req = q.requests
    after = table[row, tail]
    while after >= 0 and _older(q, r, after):
        after = req[after, R_PREV]
    req[r, R_PREV] = after
    if after < 0:
        req[r, R_NEXT] = table[row, head]
        table[row, head] = r
    else:
        req[r, R_NEXT] = req[after, R_NEXT]
        req[after, R_NEXT] = r
    if req[r, R_NEXT] < 0:
        table[row, tail] = r
    else:
        req[req[r, R_NEXT], R_PREV] = r


@numba.njit(cache=True)
def _unlink(q, table, row, head, tail, r):
    """Remove request ``r`` from the list whose ends are ``table[row, head]``, ``table[row, tail]``."""
    req = q.requests
    before, after = req[r, R_PREV], req[r, R_NEXT]
    if before < 0:
        table[row, head] = after
    else:
        req[before, R_NEXT] = after
    if after < 0:
        table[row, tail] = before
    else:
        req[after, R_PREV] = before


@numba.njit(cache=True)
def _enter(q, channel, r):
    """``DramQueues._enter``: request ``r`` takes an entry of its channel's queue."""
    q.channel_queue[channel, C_COUNT] += 1
    _insort(q, q.bank_queue, q.requests[r, R_BANK], Q_HEAD, Q_TAIL, r)


@numba.njit(cache=True)
def _next_decision(q, banks, channel):
    """``DramQueues._next_decision``: (when, bank) of the channel's first decision from what is
    queued now (each bank: the later of its free time and its oldest request's entry; ties to
    the older request)."""
    best_when, best_bank, best_age = np.inf, -1, -1
    for bank in range(channel * banks, channel * banks + banks):
        oldest = q.bank_queue[bank, Q_HEAD]
        if oldest < 0:
            continue
        when = q.bank_free[bank]
        if when < q.request_time[oldest, T_ENTERED]:
            when = q.request_time[oldest, T_ENTERED]
        if when < best_when or (when == best_when and _older(q, oldest, best_age)):
            best_when, best_bank, best_age = when, bank, oldest
    return best_when, best_bank


@numba.njit(cache=True)
def post_decision(q, banks, channel):
    """``DramQueues._post``: post the channel's next decision, unless one at or before it is
    posted already (``channel_next`` is ``inf`` for None)."""
    if not q.channel_queue[channel, C_COUNT]:
        return
    when, _ = _next_decision(q, banks, channel)
    if when < q.channel_next[channel]:
        q.channel_next[channel] = when
        post(q, when, E_DECIDE, channel, 0)


@numba.njit(cache=True)
def submit(st, cycle, line_index, nbytes, write):
    """``DramQueues.submit``: a request the L2 makes at ``cycle``; the pid of a read's data-back
    cycle, pending until its bank picks it (-1 for a write)."""
    q = st.q
    channel, bank, row = dram_place(st, line_index)
    done = -1 if write else new_pending(q)
    log_row = dram_log(st, cycle, line_index, nbytes, int(write), -1)
    q.request_seq += 1
    grew, req, r, q.request_free = pool_take(q.requests, q.request_free, R_NEXT)
    if grew:
        times = np.zeros((req.shape[0], 2), np.float64)
        times[:q.request_time.shape[0]] = q.request_time
        q.requests, q.request_time = req, times
    req[r, R_SEQ], req[r, R_BANK], req[r, R_ROW], req[r, R_LINE] = q.request_seq, bank, row, line_index
    req[r, R_BYTES], req[r, R_WRITE], req[r, R_DONE], req[r, R_LOG] = nbytes, int(write), done, log_row
    q.request_time[r, T_ARRIVE] = cycle + st.dram_latency
    q.request_time[r, T_ENTERED] = cycle + st.dram_latency
    if q.channel_queue[channel, C_COUNT] < q.entries:
        _enter(q, channel, r)
    else:
        _insort(q, q.channel_queue, channel, C_HEAD, C_TAIL, r)
    post_decision(q, st.banks, channel)
    return done


@numba.njit(cache=True)
def decide_begins(q, channel, time):
    """The start of ``DramQueues._decide``: False if the decision at ``time`` was superseded by an
    earlier one (which posted what follows), else the channel has no decision posted now."""
    if q.channel_next[channel] != time:
        return False
    q.channel_next[channel] = np.inf
    return True


@numba.njit(cache=True)
def decide_step(st, channel, time):
    """One pass of ``DramQueues._decide``'s loop: the bank that decides first, if by ``time``,
    picks (FR-FCFS: its oldest request to the open row, else the oldest) and serves a request;
    requests waiting upstream take the entries freed. (going on, pid of the read served or -1,
    its data-back cycle); when nothing more is due by ``time``, the channel's next decision is
    posted and it returns (False, -1, 0)."""
    q = st.q
    if not q.channel_queue[channel, C_COUNT]:
        post_decision(q, st.banks, channel)
        return False, -1, 0
    when, bank = _next_decision(q, st.banks, channel)
    if when > time:
        post_decision(q, st.banks, channel)
        return False, -1, 0
    req = q.requests
    head = q.bank_queue[bank, Q_HEAD]
    pick = head
    if q.frfcfs:
        open_row = st.bank_rows[bank, BANK_OPEN]
        r = head
        while r >= 0:
            if q.request_time[r, T_ENTERED] <= when and req[r, R_ROW] == open_row:
                pick = r
                break
            r = req[r, R_NEXT]
    _unlink(q, q.bank_queue, bank, Q_HEAD, Q_TAIL, pick)
    if pick != head:  # a row hit ahead of an older request of its bank
        st.counts[DRAM_REORDERED_HITS] += 1
    q.channel_queue[channel, C_COUNT] -= 1
    nbytes, write = req[pick, R_BYTES], req[pick, R_WRITE] != 0
    end = dram_serve(st, when, req[pick, R_LINE], nbytes, write, when)
    q.bank_free[bank] = st.bank_times[bank, BANK_COL_READY] - st.tccd  # its column command
    done = dram_account(st, nbytes, write, end)
    if req[pick, R_LOG] >= 0:
        st.dram_log[req[pick, R_LOG], 5] = done
    while q.channel_queue[channel, C_HEAD] >= 0 and q.channel_queue[channel, C_COUNT] < q.entries:
        admitted = q.channel_queue[channel, C_HEAD]
        _unlink(q, q.channel_queue, channel, C_HEAD, C_TAIL, admitted)
        if q.request_time[admitted, T_ENTERED] < when:
            q.request_time[admitted, T_ENTERED] = when
        _enter(q, channel, admitted)
    pid = req[pick, R_DONE]
    req[pick, R_NEXT] = q.request_free  # free the request
    q.request_free = pick
    return True, pid, done

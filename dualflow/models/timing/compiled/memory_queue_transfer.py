"""State transfer of the queued DRAM controllers between a reference ``MemorySystem`` and a
compiled ``QueueState`` (``memory_transfer.py`` does the rest of the memory system).

The compiled engine carries the memory system across a launch it runs on the reference engine,
between launches. Then no access is in flight: every SM's accesses have their answers, so no
read waits for DRAM, no port or slice job waits, no MSHR release is pending and no sector waits
for a fill. What remains is what the controllers still have to do by themselves: DRAM writes
in the queues or waiting upstream, each bank's free time and each channel's posted decision,
and the event queue (decisions, and MSHR wake-ups that may find a waiter in a later launch),
with both posting counters. That is what crosses; a state with an access in flight is refused
(``ValueError``), both ways.

This module reads the reference's private attributes and the closures it posts as events: it is
the one place that knows both representations of the controllers.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dualflow.models.timing.memory.cache import MshrFile
from dualflow.models.timing.memory.dram_queue import DramQueues, _Channel, _Request
from dualflow.models.timing.memory.system import MemorySystem

from .memory_pending import pool_rows
from .memory_queue_state import (
    C_COUNT,
    C_HEAD,
    C_TAIL,
    E_A,
    E_B,
    E_DECIDE,
    E_KIND,
    E_MSHR_WAKE,
    E_SEQ,
    E_WIDTH,
    FR_WIDTH,
    J_NEXT,
    J_WIDTH,
    LEVEL_L1,
    LEVEL_L2,
    M_PENDING,
    M_WAITER,
    N_WIDTH,
    P_NEXT,
    P_WIDTH,
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
    R_WIDTH,
    R_WRITE,
    S_NEXT,
    S_WIDTH,
    T_ARRIVE,
    T_ENTERED,
    W_NEXT,
    W_WIDTH,
    QueueState,
    new_queue,
)

#: Rows each pool of a queued state starts with (it doubles when full).
_POOL_ROWS = 256
_IN_FLIGHT_ERROR = ("the queued memory system has accesses in flight; its state crosses between engines "
                    "only between launches")


def queue_from_reference(ms: MemorySystem) -> QueueState:
    """A compiled ``QueueState`` equal to the queued controllers of ``ms`` (a few empty rows if its
    scheduler is not queued)."""
    queued = ms._queued
    rows = _POOL_ROWS if queued else 1
    files = max(ms.num_sms, len(ms._l2))
    mshr_wait = np.zeros((2, files, 2), np.int64)
    mshr_wait[:, :, M_WAITER] = -1
    dram = ms._dram
    banks = dram.channels * dram.banks if queued else 1
    channels = dram.channels if queued else 1
    bank_queue = np.full((banks, 2), -1, np.int64)
    bank_free = np.full(banks, -np.inf)
    channel_queue = np.full((channels, 3), -1, np.int64)
    channel_queue[:, C_COUNT] = 0
    channel_next = np.full(channels, np.inf)
    requests, request_time, request_free = pool_rows(rows, R_WIDTH, R_NEXT), np.zeros((rows, 2)), 0
    small = max(rows // 4, 1)
    events, event_time, event_n, event_seq = np.zeros((small, E_WIDTH), np.int64), np.zeros(small), 0, 0
    entries, frfcfs, request_seq = 1, False, 0
    if queued:
        _check_quiet(ms)
        queues = ms._dram_queues
        entries, frfcfs, request_seq = queues.entries, queues.frfcfs, queues.seq
        requests, request_time, request_free = _requests_from(queues, bank_queue, bank_free, channel_queue,
                                                              channel_next, rows)
        events, event_time, event_seq = _events_from(ms)
        event_n = len(ms.events.heap)
    port_queue = np.zeros((ms.num_sms, 3), np.int64)
    port_queue[:, [Q_HEAD, Q_TAIL]] = -1
    slice_queue = np.zeros((len(ms._l2), 3), np.int64)
    slice_queue[:, [Q_HEAD, Q_TAIL]] = -1
    width = 8 if queued else 1  # transactions per job before the job rows widen
    jobs = pool_rows(small, J_WIDTH, J_NEXT)
    return new_queue(
        pool_rows(rows, P_WIDTH, P_NEXT), 0, 0, pool_rows(rows, W_WIDTH, W_NEXT), 0, 0,
        events, event_time, event_n, event_seq,
        np.zeros((small, FR_WIDTH), np.int64), np.zeros(small), 0,
        np.zeros((small, N_WIDTH), np.int64), 0,
        requests, request_time, request_free, request_seq, bank_queue, bank_free, channel_queue, channel_next,
        entries, frfcfs, jobs, np.zeros((jobs.shape[0], width), np.int64), np.zeros((jobs.shape[0], width), np.int64),
        np.zeros((jobs.shape[0], width), np.int64), 0, port_queue,
        pool_rows(rows, S_WIDTH, S_NEXT), 0, slice_queue, mshr_wait)


def _check_quiet(ms: MemorySystem) -> None:
    """Refuse a reference state with an access in flight (see the module docstring)."""
    busy = (any(ms._port_jobs) or any(ms._slice_jobs)
            or any(m.pending or m.waiter is not None for m in ms._l1_mshr + ms._l2_mshr)
            or any(not r.write for c in ms._dram_queues.channels for r in _channel_requests(c))
            or any(f is not None for cache in ms._l1 + ms._l2 for lines in cache.sets for line in lines.values()
                   if line.fills for f in line.fills))
    if busy:
        raise ValueError(_IN_FLIGHT_ERROR)


def _channel_requests(channel: _Channel) -> list[_Request]:
    return [r for waiting in channel.queued.values() for r in waiting] + list(channel.overflow)


def _requests_from(queues: DramQueues, bank_queue, bank_free, channel_queue, channel_next, rows: int):
    """The requests of every channel as rows of a pool, linked as the reference's lists are ordered."""
    every = [r for c in queues.channels for r in _channel_requests(c)]
    rows = max(rows, 2 * len(every))
    requests, request_time = pool_rows(rows, R_WIDTH, R_NEXT), np.zeros((rows, 2))
    row = 0
    for index, channel in enumerate(queues.channels):
        channel_queue[index, C_COUNT] = channel.count
        channel_next[index] = np.inf if channel.next is None else channel.next
        for bank, free in channel.free.items():
            bank_free[bank] = free
        lists = [(bank_queue, bank, Q_HEAD, Q_TAIL, waiting) for bank, waiting in sorted(channel.queued.items())]
        lists.append((channel_queue, index, C_HEAD, C_TAIL, channel.overflow))
        for table, at, head, tail, members in lists:
            for k, r in enumerate(members):
                requests[row, [R_SEQ, R_BANK, R_ROW, R_LINE, R_BYTES, R_WRITE, R_DONE, R_LOG]] = (
                    r.seq, r.bank, r.row, r.line, r.nbytes, int(r.write), -1, r.log_index)
                request_time[row, [T_ARRIVE, T_ENTERED]] = r.arrive, r.entered
                requests[row, R_PREV] = row - 1 if k else -1
                requests[row, R_NEXT] = row + 1 if k + 1 < len(members) else -1
                if not k:
                    table[at, head] = row
                table[at, tail] = row
                row += 1
    requests[row:, R_NEXT] = np.arange(row + 1, rows + 1)
    requests[rows - 1, R_NEXT] = -1
    return requests, request_time, (row if row < rows else -1)


def _event_of(ms: MemorySystem, fn) -> tuple[int, int, int]:
    """(kind, a, b) of an event's callback: a channel's decision or an MSHR file's wake-up."""
    if isinstance(fn, functools.partial) and fn.func.__func__ is DramQueues._decide:
        return E_DECIDE, fn.args[0], 0
    if getattr(fn, "__qualname__", "") == "DramQueues._post.<locals>.<lambda>":
        cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
        return E_DECIDE, cells["channel_index"], 0
    if getattr(fn, "__func__", None) is MshrFile._wake:
        for level, files in ((LEVEL_L1, ms._l1_mshr), (LEVEL_L2, ms._l2_mshr)):
            for f, mshr in enumerate(files):
                if mshr is fn.__self__:
                    return E_MSHR_WAKE, level, f
    raise ValueError(f"an event the compiled engine does not know: {fn!r}")


def _events_from(ms: MemorySystem):
    """The reference's event heap as the compiled one (the same array: a heap in the same order)."""
    heap = ms.events.heap
    n = max(16, 2 * len(heap))
    events, times = np.zeros((n, E_WIDTH), np.int64), np.zeros(n)
    for i, (time, seq, fn) in enumerate(heap):
        kind, a, b = _event_of(ms, fn)
        times[i] = time
        events[i, [E_SEQ, E_KIND, E_A, E_B]] = seq, kind, a, b
    return events, times, ms.events.seq


def queue_into_reference(q: QueueState, ms: MemorySystem) -> None:
    """Replace the queued controllers of ``ms`` (built with the same configuration) by ``q``'s."""
    if not ms._queued:
        return
    wait = q.mshr_wait
    if (q.pend_live or q.waiter_live or q.frame_n or (q.port_queue[:, Q_HEAD] >= 0).any()
            or (q.slice_queue[:, Q_HEAD] >= 0).any() or wait[:, :, M_PENDING].any()
            or (wait[:, :, M_WAITER] >= 0).any()):
        raise ValueError(_IN_FLIGHT_ERROR)
    queues = ms._dram_queues
    queues.seq = int(q.request_seq)
    requests, times = q.requests, q.request_time
    bank_queue, bank_free = q.bank_queue, q.bank_free
    channel_queue, channel_next = q.channel_queue, q.channel_next
    banks = queues.dram.banks

    def members(head: int) -> list[_Request]:
        out = []
        r = head
        while r >= 0:
            seq, bank, row, line, nbytes, write, done, log = (int(x) for x in requests[r, [
                R_SEQ, R_BANK, R_ROW, R_LINE, R_BYTES, R_WRITE, R_DONE, R_LOG]])
            if done >= 0:
                raise ValueError(_IN_FLIGHT_ERROR)
            request = _Request(_cycle(times[r, T_ARRIVE]), seq, bank, row, line, nbytes, bool(write), None, log)
            request.entered = _cycle(times[r, T_ENTERED])
            out.append(request)
            r = int(requests[r, R_NEXT])
        return out

    for index, channel in enumerate(queues.channels):
        channel.count = int(channel_queue[index, C_COUNT])
        channel.next = None if math.isinf(channel_next[index]) else _cycle(channel_next[index])
        channel.queued, channel.free = {}, {}
        for bank in range(index * banks, index * banks + banks):
            if bank_queue[bank, Q_HEAD] >= 0:
                channel.queued[bank] = members(int(bank_queue[bank, Q_HEAD]))
            if not math.isinf(bank_free[bank]):
                channel.free[bank] = float(bank_free[bank])
        channel.overflow = members(int(channel_queue[index, C_HEAD]))
    ms.events.seq = int(q.event_seq)
    ms.events.heap = [(_cycle(q.event_time[i]), int(q.events[i, E_SEQ]), _callback(ms, q.events[i]))
                      for i in range(int(q.event_n))]
    for mshr in ms._l1_mshr + ms._l2_mshr:
        mshr.pending, mshr.waiter = 0, None


def _cycle(x: float) -> int | float:
    """A cycle as the reference keeps it: whole ones as ints (arrivals, most decisions), DRAM
    times as floats."""
    return int(x) if float(x).is_integer() else float(x)


def _callback(ms: MemorySystem, event) -> object:
    kind, a, b = int(event[E_KIND]), int(event[E_A]), int(event[E_B])
    if kind == E_DECIDE:
        return functools.partial(ms._dram_queues._decide, a)
    return (ms._l1_mshr if a == LEVEL_L1 else ms._l2_mshr)[b]._wake

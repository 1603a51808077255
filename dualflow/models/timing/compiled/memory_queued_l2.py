"""The L2 slices with queued DRAM controllers, compiled: ``MemorySystem._l2_read``,
``_run_slice``, ``_resume_slice`` and ``_l2_lookup`` on their queued path.

A slice's input is a FIFO of slice jobs (``QueueState.slice_jobs``): a read that must wait there
(no MSHR entry, or no room to merge into a pending fill) holds the reads behind it. Answers are
handles (``memory_pending.py``). ``slice_step`` is one pass of ``_run_slice``'s loop for the frame
machine (``memory_machine.py``): resolving a job's answer between two passes runs whatever
waited for it first, as the reference's nested call does.
"""

from __future__ import annotations

import math

import numba

from .memory_dram_queue import submit
from .memory_hierarchy import (
    icnt_reply,
    icnt_request,
    l2_merge_stall,
    l2_miss,
    l2_row,
    l2_slice,
    try_merge,
)
from .memory_parts import popcount, timeline_block
from .memory_pending import (
    handle,
    known,
    latest,
    new_pending,
    pool_take,
    resolved_now,
    then,
    value_of,
)
from .memory_queue_state import (
    K_REPLY,
    K_RESUME_SLICE,
    LEVEL_L2,
    NO_HANDLE,
    Q_HEAD,
    Q_LEN,
    Q_TAIL,
    S_ARRIVE,
    S_INDEX,
    S_NEXT,
    S_RESULT,
    S_SECTORS,
    S_STALLED,
)
from .memory_queued_cache import fill_pending, mshr_hold, mshr_issue, probe_queued
from .memory_state import (
    ICNT_WAIT_CYCLES,
    L2_MERGE_STALLS,
    L2_MERGES,
    L2_MSHR_STALLS,
    L2_READ_HITS,
    L2_READS,
    L2_STALL_CYCLES,
)


@numba.njit(cache=True)
def l2_read(st, c, index, sectors):
    """``MemorySystem._l2_read`` (queued): the handle of the cycle the data of an L1 miss leaving
    the SM at ``c`` is back: the slice answers at once if its input was empty and the read need
    not wait, else the job's pending answer."""
    q = st.q
    slice_index = l2_slice(st, index)
    arrive = icnt_request(st, c, slice_index, st.read_flits)
    grew, jobs, j, q.slice_job_free = pool_take(q.slice_jobs, q.slice_job_free, S_NEXT)
    if grew:
        q.slice_jobs = jobs
    jobs[j, S_ARRIVE], jobs[j, S_INDEX], jobs[j, S_SECTORS] = arrive, index, sectors
    jobs[j, S_STALLED], jobs[j, S_RESULT], jobs[j, S_NEXT] = 0, NO_HANDLE, -1
    fifo = q.slice_queue
    if fifo[slice_index, Q_LEN]:
        jobs[fifo[slice_index, Q_TAIL], S_NEXT] = j
    else:
        fifo[slice_index, Q_HEAD] = j
    fifo[slice_index, Q_TAIL] = j
    fifo[slice_index, Q_LEN] += 1
    if fifo[slice_index, Q_LEN] == 1:  # ``_run_slice`` of an input holding this read only
        through, data = l2_lookup(st, slice_index, arrive, index, sectors)
        if through:
            pop_slice_job(q, slice_index)
            return data
    pid = new_pending(q)
    q.slice_jobs[j, S_RESULT] = handle(pid)
    return handle(pid)


@numba.njit(cache=True)
def pop_slice_job(q, slice_index):
    """Take the first job off the slice's input (freeing it); its answer (``NO_HANDLE`` if none yet)."""
    fifo, jobs = q.slice_queue, q.slice_jobs
    j = fifo[slice_index, Q_HEAD]
    fifo[slice_index, Q_HEAD] = jobs[j, S_NEXT]
    fifo[slice_index, Q_LEN] -= 1
    result = jobs[j, S_RESULT]
    jobs[j, S_NEXT] = q.slice_job_free
    q.slice_job_free = j
    return result


@numba.njit(cache=True)
def slice_step(st, slice_index):
    """One pass of ``_run_slice``'s loop: the read at the head of the slice's input goes through
    if it can. (False, ...) when the input is empty or the head must wait; else (True, its
    answer's pid, the handle of its data) for the caller to forward, as ``when(data,
    job.result.resolve)`` does."""
    q = st.q
    j = q.slice_queue[slice_index, Q_HEAD]
    if j < 0:
        return False, -1, 0
    jobs = q.slice_jobs
    through, data = l2_lookup(st, slice_index, jobs[j, S_ARRIVE], jobs[j, S_INDEX], jobs[j, S_SECTORS])
    if not through:
        return False, -1, 0
    result = pop_slice_job(q, slice_index)
    if result == NO_HANDLE:
        raise AssertionError("a slice job behind another has no pending answer")
    return True, -1 - result, data


@numba.njit(cache=True)
def resume_slice(st, slice_index, cycle, mshr):
    """``MemorySystem._resume_slice`` up to its ``_run_slice``: the read at the head of the
    slice's input that found no MSHR entry (``mshr``) or could not merge into a pending fill tries
    again at ``cycle``; the input was blocked until then, and the reads behind it reach it later."""
    q = st.q
    j = q.slice_queue[slice_index, Q_HEAD]
    if j < 0:
        raise AssertionError("a slice resumes with an empty input")
    jobs, counts = q.slice_jobs, st.counts
    arrive = jobs[j, S_ARRIVE]
    again = max(arrive + st.l2_hit, math.ceil(cycle))
    if not jobs[j, S_STALLED]:
        jobs[j, S_STALLED] = 1
        counts[L2_MSHR_STALLS if mshr else L2_MERGE_STALLS] += 1
    counts[L2_STALL_CYCLES] += again - arrive - st.l2_hit
    enter = again - st.l2_hit
    timeline_block(st.requests, slice_index, arrive, enter)
    jobs[j, S_ARRIVE] = enter
    behind = jobs[j, S_NEXT]
    while behind >= 0:  # the reads behind it wait at the slice's port
        if jobs[behind, S_ARRIVE] < enter:
            counts[ICNT_WAIT_CYCLES] += enter - jobs[behind, S_ARRIVE]
            jobs[behind, S_ARRIVE] = enter
        behind = jobs[behind, S_NEXT]


@numba.njit(cache=True)
def l2_lookup(st, slice_index, arrive, index, sectors):
    """``MemorySystem._l2_lookup`` (queued): the slice's part of a read reaching it at ``arrive``:
    (True, handle of the cycle the data is back at the SM), or (False, 0) when it must wait (a
    resume is registered: on the pending fill, or the MSHR file's waiter)."""
    q = st.q
    counts = st.counts
    t = arrive + st.l2_hit
    l2 = st.l2
    row = l2_row(st, slice_index, index)
    way, missing, pending, wait = probe_queued(st, LEVEL_L2, row, index, sectors, t)
    if not missing:
        if not pending:
            counts[L2_READS] += 1
            counts[L2_READ_HITS] += 1
            data = t
        else:
            if try_merge(l2, row, way, pending):
                counts[L2_MERGES] += 1
            elif wait < 0:  # the input blocks until a fill that is pending
                then(q, -1 - wait, K_RESUME_SLICE, slice_index, 0, 0, 0, 0)
                return False, 0
            else:
                l2_merge_stall(st, slice_index, arrive, t, wait)
            counts[L2_READS] += 1
            data = wait
    else:
        count = popcount(missing)
        issue = mshr_issue(st, LEVEL_L2, slice_index, t, count, 0)
        if issue < 0:
            return False, 0
        counts[L2_READS] += 1
        way = l2_miss(st, slice_index, arrive, t, issue, row, way, index, count)
        fill = submit(st, issue, index, count * st.sector_bytes, False)
        fill_pending(st, LEVEL_L2, row, way, missing, fill)
        mshr_hold(st, LEVEL_L2, slice_index, handle(fill), count)
        data = latest(q, -1, handle(fill), wait)
    flits = st.data_flits[popcount(sectors)]
    if data >= 0:
        return True, icnt_reply(st, data, slice_index, flits)
    return True, then_reply(st, data, slice_index, flits)


@numba.njit(cache=True)
def then_reply(st, data, slice_index, flits):
    """``then_map(data, lambda cycle: icnt.reply(cycle, ...))`` of a pending ``data``: a new pending
    cycle, resolved when ``data`` is, once the reply is booked then (``K_REPLY``)."""
    q = st.q
    out = new_pending(q)
    if known(q, data):  # resolved already: ``then`` maps it at once
        resolved_now(q, out, icnt_reply(st, value_of(q, data), slice_index, flits))
    else:
        then(q, -1 - data, K_REPLY, out, slice_index, flits, 0, 0)
    return handle(out)

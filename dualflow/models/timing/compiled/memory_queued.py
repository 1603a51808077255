"""The SM ports and L1s with queued DRAM controllers, compiled: ``MemorySystem.global_access`` and
``shared_access`` on their queued path (``_port_access``, ``_run_port``, ``_step``, ``_through``,
``_resume_port``, ``_l1_load``, ``_l1_uncached_load``).

An SM's L1/shared port is a FIFO of port jobs (``QueueState.jobs``): an access whose transaction
must wait (no MSHR entry, or no room to merge into a pending fill) holds the port and the
accesses behind it until it can go on. ``queued_global_access`` and ``queued_shared_access``
return handles (``memory_pending.py``) for the port's release and the data: known cycles, or
pending ones the caller waits for with ``K_NOTE`` waiters (``then_note``). Nothing here resolves
anything but a port job's own answers, whose waiters are notes (``resolve_leaf``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .memory_hierarchy import (
    check_order,
    fill_sectors,
    l1_allocate,
    l1_bypassed,
    l1_counted_miss,
    l1_merge_stall,
    l1_mshr_stall,
    l1_row,
    shared_port,
    store_port,
    try_merge,
)
from .memory_parts import popcount
from .memory_pending import (
    handle,
    known,
    later_add,
    later_counts,
    later_start,
    latest,
    new_pending,
    pool_take,
    release,
    then,
    value_of,
)
from .memory_queue_state import (
    J_CYCLE,
    J_DEGREE,
    J_DELAY,
    J_DONE,
    J_I,
    J_KIND,
    J_N,
    J_NEXT,
    J_PORT_FREE,
    J_READY,
    J_STALLED,
    J_START,
    J_WAITS,
    JOB_LOAD,
    JOB_SHARED,
    JOB_STORE,
    K_COUNT_LOAD,
    K_FORWARD,
    K_NOTE,
    K_RESUME_PORT,
    LEVEL_L1,
    NO_HANDLE,
    P_PIN,
    Q_HEAD,
    Q_LEN,
    Q_TAIL,
)
from .memory_queued_cache import fill_pending, mshr_hold, mshr_issue, probe_queued, resolve_leaf
from .memory_queued_l2 import l2_read
from .memory_state import (
    L1_HITS,
    L1_LOAD_TX,
    L1_MERGE_STALL_CYCLES,
    L1_MERGE_STALLS,
    L1_MERGES,
    L1_MSHR_STALL_CYCLES,
    L1_MSHR_STALLS,
    LOAD_LATENCY,
    LOADS,
)


# ---------------------------------------------------------------------- public
@numba.njit(cache=True)
def queued_global_access(st, cycle, sm, tx_line, tx_sectors, first, n, write):
    """``MemorySystem.global_access`` (queued DRAM) of the transactions ``tx_line[first:first + n]``
    with sector masks ``tx_sectors[first:first + n]``: handles ``(port_free, done)``."""
    check_order(st, cycle)
    st.now = cycle
    st.sm_accesses[sm] += 1
    j = _new_job(st.q, cycle, n, JOB_STORE if write else JOB_LOAD, 0)
    line, sectors = st.q.job_line[j], st.q.job_sectors[j]
    for i in range(n):
        line[i], sectors[i] = tx_line[first + i], tx_sectors[first + i]
    return _port_access(st, sm, j)


@numba.njit(cache=True)
def queued_shared_access(st, cycle, sm, degree):
    """``MemorySystem.shared_access`` (queued DRAM): handles ``(port_free, done)``."""
    check_order(st, cycle)
    st.now = cycle
    return _port_access(st, sm, _new_job(st.q, cycle, 0, JOB_SHARED, degree))


@numba.njit(cache=True)
def then_note(st, h, tag, a, b, c, d):
    """Wait for the pending handle ``h``: a note ``(tag, value, a, b, c, d)`` when it is known."""
    then(st.q, -1 - h, K_NOTE, tag, a, b, c, d)


# ---------------------------------------------------------------------- port jobs
@numba.njit(cache=True)
def _new_job(q, cycle, n, kind, degree):
    """A ``_PortJob`` of ``n`` transactions (their rows to be filled by the caller)."""
    grew, jobs, j, q.job_free = pool_take(q.jobs, q.job_free, J_NEXT)
    if grew:
        q.jobs = jobs
    if grew or n > q.job_line.shape[1]:  # more jobs, or more transactions than a row holds
        width = q.job_line.shape[1] if n <= q.job_line.shape[1] else max(n, 2 * q.job_line.shape[1])
        q.job_line = _wider(q.job_line, jobs.shape[0], width)
        q.job_sectors = _wider(q.job_sectors, jobs.shape[0], width)
        q.job_waits = _wider(q.job_waits, jobs.shape[0], width)
    jobs[j, J_CYCLE], jobs[j, J_N], jobs[j, J_KIND], jobs[j, J_DEGREE] = cycle, n, kind, degree
    jobs[j, J_START], jobs[j, J_I], jobs[j, J_DELAY], jobs[j, J_READY] = -1, 0, 0, cycle
    jobs[j, J_STALLED], jobs[j, J_PORT_FREE], jobs[j, J_DONE], jobs[j, J_WAITS] = -1, NO_HANDLE, NO_HANDLE, 0
    jobs[j, J_NEXT] = -1
    return j


@numba.njit(cache=True)
def _wider(a, rows, width):
    """``a`` with ``rows`` rows of ``width`` columns, its contents kept."""
    out = np.zeros((rows, width), np.int64)
    out[:a.shape[0], :a.shape[1]] = a
    return out


@numba.njit(cache=True)
def _port_access(st, sm, j):
    """``MemorySystem._port_access``: job ``j`` takes its turn at the SM's port, after the accesses
    waiting there; its answers (pending ones if it could not go through now)."""
    q = st.q
    fifo = q.port_queue
    if fifo[sm, Q_LEN]:
        q.jobs[fifo[sm, Q_TAIL], J_NEXT] = j
    else:
        fifo[sm, Q_HEAD] = j
    fifo[sm, Q_TAIL] = j
    fifo[sm, Q_LEN] += 1
    if fifo[sm, Q_LEN] == 1:
        run_port(st, sm)
    jobs = q.jobs
    if jobs[j, J_PORT_FREE] == NO_HANDLE:  # still waiting (a freed job keeps its answers)
        jobs[j, J_PORT_FREE] = handle(new_pending(q))
        q.jobs[j, J_DONE] = handle(new_pending(q))
    return q.jobs[j, J_PORT_FREE], q.jobs[j, J_DONE]


@numba.njit(cache=True)
def run_port(st, sm):
    """``MemorySystem._run_port``: the jobs at the SM's port go through in order until one waits."""
    q = st.q
    while q.port_queue[sm, Q_HEAD] >= 0 and _step(st, sm, q.port_queue[sm, Q_HEAD]):
        fifo = q.port_queue
        j = fifo[sm, Q_HEAD]
        fifo[sm, Q_HEAD] = q.jobs[j, J_NEXT]
        fifo[sm, Q_LEN] -= 1
        q.jobs[j, J_NEXT] = q.job_free
        q.job_free = j


@numba.njit(cache=True)
def resume_port(st, sm, c, cycle, mshr):
    """``MemorySystem._resume_port``: the transaction of the SM's first job that found no MSHR
    entry (``mshr``) or could not merge into a pending fill at ``c`` tries again at ``cycle``."""
    q = st.q
    j = q.port_queue[sm, Q_HEAD]
    if j < 0:
        raise AssertionError("a port resumes with no job")
    jobs, counts = q.jobs, st.counts
    again = max(c, math.ceil(cycle))
    if jobs[j, J_STALLED] != jobs[j, J_I]:  # the first wait of this transaction
        jobs[j, J_STALLED] = jobs[j, J_I]
        counts[L1_MSHR_STALLS if mshr else L1_MERGE_STALLS] += 1
    counts[L1_MSHR_STALL_CYCLES if mshr else L1_MERGE_STALL_CYCLES] += again - c
    jobs[j, J_DELAY] += again - c
    run_port(st, sm)


@numba.njit(cache=True)
def _step(st, sm, j):
    """``MemorySystem._step``: take job ``j`` through the port as far as it can go: True when it
    is through (its answers given), False when it waits."""
    q = st.q
    jobs = q.jobs
    if jobs[j, J_START] < 0:
        jobs[j, J_START] = max(st.port[sm], jobs[j, J_CYCLE])
    start, n, kind = jobs[j, J_START], jobs[j, J_N], jobs[j, J_KIND]
    if kind == JOB_SHARED:
        degree = jobs[j, J_DEGREE]
        if degree <= 0:
            return _through(st, j, start, start)
        port_free = shared_port(st, sm, start, degree)
        return _through(st, j, port_free, port_free - 1 + st.smem_latency)
    if not n:
        return _through(st, j, start, start)
    if kind == JOB_STORE:  # never waits
        port_free = store_port(st, sm, start, q.job_line[j], q.job_sectors[j], 0, n)
        return _through(st, j, port_free, port_free)
    tpc = st.tpc
    if not jobs[j, J_I] and jobs[j, J_STALLED] < 0:
        st.sm_transactions[sm] += n
        st.counts[L1_LOAD_TX] += n
    while q.jobs[j, J_I] < n:
        i = q.jobs[j, J_I]
        c = start + q.jobs[j, J_DELAY] + i // tpc
        through, c_after, ready = _l1_load(st, sm, c, q.job_line[j, i], q.job_sectors[j, i])
        if not through:
            return False
        jobs = q.jobs
        jobs[j, J_DELAY] += c_after - c
        if ready >= 0:
            if ready > jobs[j, J_READY]:
                jobs[j, J_READY] = ready
        else:
            q.job_waits[j, jobs[j, J_WAITS]] = ready
            jobs[j, J_WAITS] += 1
            q.pend[-1 - ready, P_PIN] = 1  # read at the end, resolved or not
        jobs[j, J_I] = i + 1
    jobs = q.jobs
    port_free = start + jobs[j, J_DELAY] + -(-n // tpc)
    st.port[sm] = port_free
    done = _job_done(q, j)
    if known(q, done):  # when(done, lambda cycle: self._count_load(cycle - job.cycle))
        st.counts[LOADS] += 1
        st.counts[LOAD_LATENCY] += value_of(q, done) - jobs[j, J_CYCLE]
    else:
        then(q, -1 - done, K_COUNT_LOAD, jobs[j, J_CYCLE], 0, 0, 0, 0)
    return _through(st, j, port_free, done)


@numba.njit(cache=True)
def _job_done(q, j):
    """``later(job.ready, job.waits)`` (or ``job.ready`` with no waits): the handle of the job's
    data; the waits are unpinned (freed if resolved)."""
    jobs, waits = q.jobs, q.job_waits
    ready, n = jobs[j, J_READY], jobs[j, J_WAITS]
    if not n:
        return ready
    count = 0
    for k in range(n):
        count += later_counts(q, ready, waits[j, k])
    done = ready
    if count:
        out = later_start(q, ready, count)
        for k in range(n):
            later_add(q, out, ready, waits[j, k])
        done = handle(out)
    for k in range(n):
        q.pend[-1 - waits[j, k], P_PIN] = 0
        release(q, waits[j, k])
    return done


@numba.njit(cache=True)
def _through(st, j, port_free, done):
    """``MemorySystem._through``: job ``j`` is through with these answers: kept for the caller if
    it was not answered yet, else its pending answers resolve (the port's now; the data's when
    ``done`` is known)."""
    q = st.q
    jobs = q.jobs
    if jobs[j, J_PORT_FREE] == NO_HANDLE:  # answered now
        jobs[j, J_PORT_FREE], jobs[j, J_DONE] = port_free, done
        return True
    target = -1 - jobs[j, J_DONE]
    resolve_leaf(st, -1 - jobs[j, J_PORT_FREE], port_free)
    if known(q, done):
        resolve_leaf(st, target, value_of(q, done))
        release(q, done)
    else:
        then(q, -1 - done, K_FORWARD, target, 0, 0, 0, 0)
    return True


# ---------------------------------------------------------------------- L1
@numba.njit(cache=True)
def _l1_load(st, sm, c, line_addr, sectors):
    """``MemorySystem._l1_load`` (queued): one load transaction passing the port at ``c``:
    (True, the cycle the port moves on from it, handle of its data), or (False, 0, 0) when it must
    wait (a resume is registered: on the pending fill, or the MSHR file's waiter)."""
    index = line_addr >> st.line_shift
    if l1_bypassed(st, line_addr):
        return _l1_uncached_load(st, sm, c, index, sectors)
    q = st.q
    counts = st.counts
    l1 = st.l1
    row = l1_row(st, sm, index)
    way, missing, pending, wait = probe_queued(st, LEVEL_L1, row, index, sectors, c)
    if not missing:
        if not pending:
            counts[L1_HITS] += 1
            return True, c, c + st.l1_hit
        if try_merge(l1, row, way, pending):
            counts[L1_MERGES] += 1
            if wait < 0:
                return True, c, latest(q, c + st.l1_hit, wait, 0)  # later(c + hit, [wait])
            return True, c, max(wait, c + st.l1_hit)
        if wait < 0:  # the port stalls until a fill that is pending
            then(q, -1 - wait, K_RESUME_PORT, sm, c, 0, 0, 0)
            return False, 0, 0
        c_after, data = l1_merge_stall(st, c, wait)
        return True, c_after, data
    count = popcount(missing)
    issue = mshr_issue(st, LEVEL_L1, sm, c, count, c)
    if issue < 0:
        return False, 0, 0
    l1_mshr_stall(st, c, issue)
    way = l1_allocate(st, row, way, index, issue)
    fill = l2_read(st, issue, index, missing)
    if fill >= 0:
        fill_sectors(l1, row, way, missing, fill)
    else:
        fill_pending(st, LEVEL_L1, row, way, missing, -1 - fill)
    mshr_hold(st, LEVEL_L1, sm, fill, count)
    l1_counted_miss(st, count, False)
    if fill >= 0 and wait >= 0:
        return True, issue, max(fill, wait, issue + st.l1_hit)
    return True, issue, latest(q, issue + st.l1_hit, fill, wait)


@numba.njit(cache=True)
def _l1_uncached_load(st, sm, c, index, sectors):
    """``MemorySystem._l1_uncached_load`` (queued): straight to L2, holding MSHRs."""
    count = popcount(sectors)
    issue = mshr_issue(st, LEVEL_L1, sm, c, count, c)
    if issue < 0:
        return False, 0, 0
    l1_mshr_stall(st, c, issue)
    fill = l2_read(st, issue, index, sectors)
    mshr_hold(st, LEVEL_L1, sm, fill, count)
    l1_counted_miss(st, count, True)
    return True, issue, fill

"""What the queued DRAM controllers add to the compiled caches and MSHR files: sectors whose fill
is pending (``IN_FLIGHT``, ``MemorySystem._fill_pending`` / ``_pending_wait``), MSHR files that hold
entries with pending releases and make a miss wait for the next release (``MshrFile.room``,
``allocate``, ``wait``, ``_known``, ``_wake``), and the waiters that only record what became
known (``run_leaf``): a fill, a release, a load's latency, a note to the caller. ``resolve_leaf``
resolves a pending cycle whose waiters are all of those, which is what a port job's answers have.
"""

from __future__ import annotations

import numba

from .memory_hierarchy import probe
from .memory_parts import mshr_insert, mshr_reserve, mshr_room
from .memory_pending import (
    free_pending,
    free_waiter,
    handle,
    known,
    later_add,
    later_counts,
    later_start,
    note,
    post,
    then,
    value_of,
)
from .memory_queue_state import (
    E_MSHR_WAKE,
    IN_FLIGHT,
    K_COUNT_LOAD,
    K_FILLED,
    K_KNOWN,
    K_NOTE,
    LEVEL_L1,
    M_PENDING,
    M_WAITER,
    P_HEAD,
    P_PIN,
    P_STATE,
    P_TAIL,
    P_VALUE,
    RESOLVED,
    RESOLVING,
    W_ARG,
    W_KIND,
    W_NEXT,
)
from .memory_state import LINE_LATEST, LINE_READY, LINE_VALID, LOAD_LATENCY, LOADS


@numba.njit(cache=True)
def level_cache(st, level):
    """The tag arrays of ``level`` (``LEVEL_L1``: every L1, else every L2 slice)."""
    return st.l1 if level == LEVEL_L1 else st.l2


@numba.njit(cache=True)
def level_mshrs(st, level):
    """The MSHR files of ``level``."""
    return st.l1_mshr if level == LEVEL_L1 else st.l2_mshr


# ---------------------------------------------------------------------- pending fills
@numba.njit(cache=True)
def fill_pending(st, level, row, way, sectors, pid):
    """``MemorySystem._fill_pending``: mark ``sectors`` of a line in flight with the fill ``pid``."""
    c = level_cache(st, level)
    line = c.line
    for k in range(c.sectors):
        if sectors >> k & 1:
            line[row, way, LINE_READY + k] = IN_FLIGHT
            line[row, way, LINE_READY + c.sectors + k] = 0
            c.fill[row, way, k] = pid
    line[row, way, LINE_VALID] |= sectors
    line[row, way, LINE_LATEST] = IN_FLIGHT
    then(st.q, pid, K_FILLED, level, row, way, sectors, 0)


@numba.njit(cache=True)
def _filled(st, level, row, way, sectors, pid, cycle):
    """``_fill_pending``'s ``filled``: the sectors still waiting for fill ``pid`` get ``cycle``.
    A line evicted since then has none (its way was cleared or holds another line), and the
    reference's update of the dead line is invisible."""
    c = level_cache(st, level)
    line = c.line
    matched = False
    for k in range(c.sectors):
        if sectors >> k & 1 and c.fill[row, way, k] == pid:
            line[row, way, LINE_READY + k] = cycle
            c.fill[row, way, k] = -1
            matched = True
    if matched:
        latest = line[row, way, LINE_READY]
        for k in range(1, c.sectors):
            if line[row, way, LINE_READY + k] > latest:
                latest = line[row, way, LINE_READY + k]
        line[row, way, LINE_LATEST] = latest


@numba.njit(cache=True)
def probe_queued(st, level, row, index, sectors, cycle):
    """``probe`` (lookup, missing and in-flight sectors) of line ``index`` in set row ``row`` of
    ``level``, the wait for a pending fill a handle (``_l1_load`` and ``_l2_lookup`` begin so)."""
    way, missing, pending, wait = probe(level_cache(st, level), row, index, sectors, cycle)
    if wait >= IN_FLIGHT:
        wait = pending_wait(st, level, row, way, pending)
    return way, missing, pending, wait


@numba.njit(cache=True)
def pending_wait(st, level, row, way, pending):
    """``MemorySystem._pending_wait``: the handle of the cycle the in-flight sectors ``pending`` of
    a line are all present, some of them filled by a DRAM read not served yet."""
    c = level_cache(st, level)
    line, fill = c.line, c.fill
    q = st.q
    known_cycle = 0
    any_known = False
    for k in range(c.sectors):
        if pending >> k & 1 and line[row, way, LINE_READY + k] < IN_FLIGHT:
            r = line[row, way, LINE_READY + k]
            if not any_known or r > known_cycle:
                known_cycle = r
            any_known = True
    count = 0
    for k in range(c.sectors):
        if _first_fill(c, row, way, pending, k):
            count += later_counts(q, known_cycle, handle(fill[row, way, k]))
    if not count:
        return known_cycle
    out = later_start(q, known_cycle, count)
    for k in range(c.sectors):
        if _first_fill(c, row, way, pending, k):
            later_add(q, out, known_cycle, handle(fill[row, way, k]))
    return handle(out)


@numba.njit(cache=True)
def _first_fill(c, row, way, pending, k):
    """Sector ``k`` of ``pending`` has a fill that no lower sector of ``pending`` has (the
    reference's dict of fills by identity keeps each once, in sector order)."""
    f = c.fill[row, way, k]
    if not (pending >> k & 1) or f < 0:
        return False
    for j in range(k):
        if pending >> j & 1 and c.fill[row, way, j] == f:
            return False
    return True


# ---------------------------------------------------------------------- MSHR files
@numba.njit(cache=True)
def mshr_issue(st, level, f, c, count, resume_from):
    """``MemorySystem._mshr_issue``: when a miss needing ``count`` entries of file ``f`` at ``c``
    can go: at once, or at the release that makes room (no release pending); -1 if a release it
    may need is pending: the file's waiter is set (``MshrFile.wait``; ``resume_from`` is the
    cycle an L1 port resumes from) and the next known release posted as an event."""
    m = level_mshrs(st, level)
    wait = st.q.mshr_wait
    if not wait[level, f, M_PENDING]:
        return mshr_reserve(m, f, c, count)
    if mshr_room(m, f, c, count):
        return c
    wait[level, f, M_WAITER] = resume_from
    if m.size[f]:
        post(st.q, m.release[f, m.head[f]], E_MSHR_WAKE, level, f)
    return -1


@numba.njit(cache=True)
def mshr_hold(st, level, f, fill, count):
    """``MshrFile.allocate``: hold ``count`` entries of file ``f`` until the handle ``fill``."""
    m = level_mshrs(st, level)
    m.used[f] += count
    if fill >= 0:
        mshr_insert(m, f, fill, count)
        return
    q = st.q
    q.mshr_wait[level, f, M_PENDING] += 1
    if known(q, fill):  # resolved already: ``then`` calls ``_known`` at once
        mshr_known(st, level, f, count, value_of(q, fill))
    else:
        then(q, -1 - fill, K_KNOWN, level, f, count, 0, 0)


@numba.njit(cache=True)
def mshr_known(st, level, f, count, cycle):
    """``MshrFile._known``: a pending release is ``cycle``; a waiting miss tries again then."""
    q = st.q
    q.mshr_wait[level, f, M_PENDING] -= 1
    mshr_insert(level_mshrs(st, level), f, cycle, count)
    if q.mshr_wait[level, f, M_WAITER] >= 0:
        post(q, cycle, E_MSHR_WAKE, level, f)


# ---------------------------------------------------------------------- leaf waiters
@numba.njit(cache=True)
def run_leaf(st, w, pid, value):
    """Run waiter ``w`` of ``pid`` (resolved to ``value``) if it only records what became known:
    True if it was such a waiter."""
    q = st.q
    kind = q.waiter[w, W_KIND]
    a, b, c, d, e = (q.waiter[w, W_ARG], q.waiter[w, W_ARG + 1], q.waiter[w, W_ARG + 2], q.waiter[w, W_ARG + 3],
                     q.waiter[w, W_ARG + 4])
    if kind == K_FILLED:
        _filled(st, a, b, c, d, pid, value)
    elif kind == K_KNOWN:
        mshr_known(st, a, b, c, value)
    elif kind == K_COUNT_LOAD:  # MemorySystem._count_load
        st.counts[LOADS] += 1
        st.counts[LOAD_LATENCY] += value - a
    elif kind == K_NOTE:
        note(q, a, value, b, c, d, e)
    else:
        return False
    return True


@numba.njit(cache=True)
def begin_resolve(q, pid, value):
    """``Pending.resolve``'s start: the value is known from now on; the waiters to run, in order
    (the first of a list taken off the pending cycle)."""
    pend = q.pend
    if pend[pid, P_STATE] >= RESOLVING:
        raise AssertionError("a pending cycle resolved twice")
    pend[pid, P_STATE] = RESOLVING
    pend[pid, P_VALUE] = value
    first = pend[pid, P_HEAD]
    pend[pid, P_HEAD] = -1
    pend[pid, P_TAIL] = -1
    return first


@numba.njit(cache=True)
def end_resolve(q, pid):
    """``Pending.resolve``'s end: every waiter ran; free the cycle unless a port job's waits pin it."""
    q.pend[pid, P_STATE] = RESOLVED
    if not q.pend[pid, P_PIN]:
        free_pending(q, pid)


@numba.njit(cache=True)
def resolve_leaf(st, pid, value):
    """``Pending.resolve`` of a cycle whose waiters only record (``run_leaf``): a port job's
    answers, which only the SM (or Python) waits for."""
    q = st.q
    w = begin_resolve(q, pid, value)
    while w >= 0:
        after = q.waiter[w, W_NEXT]
        if not run_leaf(st, w, pid, value):
            raise AssertionError("a port job's answer has a waiter that is not a note")
        free_waiter(q, w)
        w = after
    end_resolve(q, pid)


__all__ = ["K_NOTE"]

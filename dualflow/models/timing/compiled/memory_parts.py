"""Compiled building blocks of the memory system: timelines, MSHR files, set-associative tags.

Each function is the array form of one method of the reference (``memory/timeline.py``
``Timeline``, ``memory/cache.py`` ``MshrFile`` and ``SectorCache``) and does the same
operations in the same order; ``tests/models/timing/test_compiled_memory.py`` checks them equal through the
whole memory system.
"""

from __future__ import annotations

import numba
import numpy as np

#: ``Line.ready`` of a sector that holds no data (``memory.cache.INVALID``).
from dualflow.models.timing.memory.cache import INVALID

from .memory_state import LINE_DIRTY, LINE_LATEST, LINE_READY, LINE_VALID


@numba.njit(cache=True, inline="always")
def popcount(mask):
    """Set bits of a sector mask (``int.bit_count``)."""
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


# ---------------------------------------------------------------------- Timeline
@numba.njit(cache=True, inline="always")
def _count_ends_before(iv, r, head, n, x, inclusive):
    """How many of the intervals ``head .. head + n - 1`` of row ``r`` end before ``x`` (or at it,
    if ``inclusive``): ``bisect_right`` / ``bisect_left`` on the sorted ends."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        e = iv[r, head + mid, 1]
        if e < x or (inclusive and e == x):
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True)
def _insert_interval(tl, r, i, start, end):
    """Insert ``[start, end)`` as interval ``i`` (counted from the first) of row ``r``."""
    head, n = tl.head[r], tl.n[r]
    if head + n == tl.iv.shape[1]:  # no room after the last: move the row's intervals to its start
        if n == tl.iv.shape[1]:  # the row is full: double every row
            rows, capacity = tl.iv.shape[0], tl.iv.shape[1]
            grown = np.empty((rows, 2 * capacity, 2), np.float64)
            grown[:, :capacity] = tl.iv
            tl.iv = grown
        iv = tl.iv
        for k in range(n):
            iv[r, k, 0] = iv[r, head + k, 0]
            iv[r, k, 1] = iv[r, head + k, 1]
        head = 0
        tl.head[r] = 0
    iv = tl.iv
    for k in range(head + n, head + i, -1):
        iv[r, k, 0] = iv[r, k - 1, 0]
        iv[r, k, 1] = iv[r, k - 1, 1]
    iv[r, head + i, 0] = start
    iv[r, head + i, 1] = end
    tl.n[r] = n + 1


@numba.njit(cache=True)
def _delete_intervals(tl, r, i, j):
    """Remove intervals ``i .. j - 1`` (counted from the first) of row ``r``."""
    iv, head, n = tl.iv, tl.head[r], tl.n[r]
    for k in range(head + j, head + n):
        iv[r, k - j + i, 0] = iv[r, k, 0]
        iv[r, k - j + i, 1] = iv[r, k, 1]
    tl.n[r] = n - (j - i)


@numba.njit(cache=True)
def timeline_reserve(tl, r, earliest, length, floor):
    """``Timeline.reserve`` of resource ``r``: book ``length`` cycles in the first gap at or after
    ``earliest`` (forgetting intervals that end by ``floor``); the start."""
    iv = tl.iv
    head, n = tl.head[r], tl.n[r]
    if n and iv[r, head, 1] <= floor:
        k = _count_ends_before(iv, r, head, n, floor, True)
        head += k
        n -= k
        tl.head[r], tl.n[r] = head, n
    if length <= 0:
        return earliest
    start = earliest
    i = _count_ends_before(iv, r, head, n, start, True)  # intervals ending by ``earliest`` are behind it
    while i < n and iv[r, head + i, 0] < start + length:  # too close: try after this interval
        if iv[r, head + i, 1] > start:
            start = iv[r, head + i, 1]
        i += 1
    # Every interval before i ends by ``start``; interval i (if any) begins at or after ``end``.
    end = start + length
    if i and iv[r, head + i - 1, 1] == start:
        if i < n and iv[r, head + i, 0] == end:  # fills a gap exactly: join both neighbours
            iv[r, head + i - 1, 1] = iv[r, head + i, 1]
            _delete_intervals(tl, r, i, i + 1)
        else:
            iv[r, head + i - 1, 1] = end
    elif i < n and iv[r, head + i, 0] == end:
        iv[r, head + i, 0] = start
    else:
        _insert_interval(tl, r, i, start, end)
    return start


@numba.njit(cache=True)
def timeline_first_fit(tl, r, earliest, length):
    """``Timeline.first_fit`` of resource ``r``: the start ``timeline_reserve`` would give, booking nothing."""
    iv = tl.iv
    head, n = tl.head[r], tl.n[r]
    start = earliest
    i = _count_ends_before(iv, r, head, n, start, True)
    while i < n and iv[r, head + i, 0] < start + length:
        if iv[r, head + i, 1] > start:
            start = iv[r, head + i, 1]
        i += 1
    return start


@numba.njit(cache=True)
def timeline_block(tl, r, start, end):
    """``Timeline.block`` of resource ``r``: mark ``[start, end)`` busy, merging what it touches."""
    if end <= start:
        return
    iv = tl.iv
    head, n = tl.head[r], tl.n[r]
    i = _count_ends_before(iv, r, head, n, start, False)  # first interval that ends at or after ``start``
    j = i
    while j < n and iv[r, head + j, 0] <= end:
        if iv[r, head + j, 0] < start:
            start = iv[r, head + j, 0]
        if iv[r, head + j, 1] > end:
            end = iv[r, head + j, 1]
        j += 1
    if j == i:
        _insert_interval(tl, r, i, start, end)
    else:
        iv[r, head + i, 0] = start
        iv[r, head + i, 1] = end
        _delete_intervals(tl, r, i + 1, j)


def timeline_intervals(tl, r: int) -> tuple[list[float], list[float]]:
    """Row ``r``'s intervals as the reference keeps them: (starts, ends) (from Python)."""
    head, n = int(tl.head[r]), int(tl.n[r])
    rows = tl.iv[r, head:head + n]
    return rows[:, 0].tolist(), rows[:, 1].tolist()


# ---------------------------------------------------------------------- MshrFile
@numba.njit(cache=True)
def mshr_reserve(m, f, cycle, needed):
    """``MshrFile.reserve`` of file ``f``: the first cycle >= ``cycle`` with ``needed`` free entries."""
    release, count = m.release, m.count
    head, size, used = m.head[f], m.size[f], m.used[f]
    while size and release[f, head] <= cycle:
        used -= count[f, head]
        head += 1
        size -= 1
    while used + needed > m.entries:  # wait for the earliest fill
        used -= count[f, head]
        cycle = release[f, head]
        head += 1
        size -= 1
    m.head[f], m.size[f], m.used[f] = head, size, used
    return cycle


@numba.njit(cache=True)
def _make_room(m, f):
    """Move file ``f``'s items to the start of its row, doubling every row first if it is full."""
    head, size = m.head[f], m.size[f]
    if size == m.release.shape[1]:
        files, capacity = m.release.shape
        release = np.empty((files, 2 * capacity), np.int64)
        count = np.empty((files, 2 * capacity), np.int64)
        release[:, :capacity] = m.release
        count[:, :capacity] = m.count
        m.release, m.count = release, count
    release, count = m.release, m.count
    for k in range(size):
        release[f, k] = release[f, head + k]
        count[f, k] = count[f, head + k]
    m.head[f] = 0


@numba.njit(cache=True)
def mshr_insert(m, f, release, count):
    """``heapq.heappush(MshrFile.busy, (release, count))`` of file ``f`` (entries counted apart)."""
    if m.head[f] + m.size[f] == m.release.shape[1]:
        _make_room(m, f)
    rel, cnt = m.release, m.count
    head = m.head[f]
    i = head + m.size[f]
    # fills mostly come back in request order: search from the end
    while i > head and (rel[f, i - 1] > release or (rel[f, i - 1] == release and cnt[f, i - 1] > count)):
        rel[f, i], cnt[f, i] = rel[f, i - 1], cnt[f, i - 1]
        i -= 1
    rel[f, i], cnt[f, i] = release, count
    m.size[f] += 1


@numba.njit(cache=True)
def mshr_allocate(m, f, release, count):
    """``MshrFile.allocate`` of file ``f``: hold ``count`` entries until ``release``."""
    mshr_insert(m, f, release, count)
    m.used[f] += count


@numba.njit(cache=True)
def mshr_room(m, f, cycle, needed):
    """``MshrFile.room`` of file ``f``: whether ``needed`` entries are free at ``cycle`` as far as
    is known now (forgetting the releases by then)."""
    head, size, used = m.head[f], m.size[f], m.used[f]
    while size and m.release[f, head] <= cycle:
        used -= m.count[f, head]
        head += 1
        size -= 1
    m.head[f], m.size[f], m.used[f] = head, size, used
    return used + needed <= m.entries


# ---------------------------------------------------------------------- SectorCache
@numba.njit(cache=True, inline="always")
def cache_lookup(c, row, index):
    """``SectorCache.lookup``: the way holding line ``index`` in set row ``row`` (now its most
    recently used), or -1."""
    tag = c.tag
    for w in range(c.ways):
        if tag[row, w] == index:
            c.clock += 1
            c.lru[row, w] = c.clock
            return w
    return -1


@numba.njit(cache=True)
def cache_insert(c, row, index):
    """``SectorCache.insert``: allocate line ``index`` (not resident) as the set's most recently
    used; (its way, the evicted line's index or -1, the evicted line's dirty mask)."""
    tag, lru, ways, line = c.tag, c.lru, c.ways, c.line
    victim_index = -1
    victim_dirty = 0
    if c.lines[row] >= ways:  # full: evict the least recently used
        way = 0
        for w in range(1, ways):
            if lru[row, w] < lru[row, way]:
                way = w
        victim_index = tag[row, way]
        victim_dirty = line[row, way, LINE_DIRTY]
    else:
        way = -1
        for w in range(ways):
            if tag[row, w] < 0:
                way = w
                break
        c.lines[row] += 1
    tag[row, way] = index
    c.clock += 1
    lru[row, way] = c.clock
    sectors = c.sectors
    line[row, way, LINE_VALID] = 0
    line[row, way, LINE_DIRTY] = 0
    line[row, way, LINE_LATEST] = INVALID
    for k in range(LINE_READY, LINE_READY + sectors):
        line[row, way, k] = INVALID
        line[row, way, k + sectors] = 0
    if c.fill.shape[0]:  # queued DRAM: a new line has no pending fill (the victim's may still come)
        for k in range(sectors):
            c.fill[row, way, k] = -1
    return way, victim_index, victim_dirty


@numba.njit(cache=True)
def cache_next_lru(c, row, after):
    """The occupied way of set row ``row`` used least recently after use stamp ``after`` (-1: none):
    stepping through a set this way visits its lines in the ``OrderedDict``'s order."""
    way = -1
    for w in range(c.ways):
        if c.tag[row, w] >= 0 and c.lru[row, w] > after and (way < 0 or c.lru[row, w] < c.lru[row, way]):
            way = w
    return way


@numba.njit(cache=True)
def cache_clear(c, row):
    """Empty set row ``row`` (``OrderedDict.clear``)."""
    for w in range(c.ways):
        c.tag[row, w] = -1
        if c.fill.shape[0]:
            for k in range(c.sectors):
                c.fill[row, w, k] = -1
    c.lines[row] = 0

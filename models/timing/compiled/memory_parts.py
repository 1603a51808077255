"""Compiled building blocks of the memory system: timelines, MSHR files, set-associative tags.

Each function is the array form of one method of the reference (``memory/timeline.py``
``Timeline``, ``memory/cache.py`` ``MshrFile`` and ``SectorCache``) and does the same
operations in the same order; ``tests/test_compiled_memory.py`` checks them equal through the
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
@numba.njit(cache=True)
def _grow_timelines(tl):
    rows, capacity = tl.starts.shape
    starts = np.empty((rows, 2 * capacity), np.float64)
    ends = np.empty((rows, 2 * capacity), np.float64)
    starts[:, :capacity] = tl.starts
    ends[:, :capacity] = tl.ends
    tl.starts, tl.ends = starts, ends


@numba.njit(cache=True, inline="always")
def _bisect_right(a, r, n, x):
    """Number of ``a[r, :n]`` (sorted) that are <= x."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[r, mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True, inline="always")
def _bisect_left(a, r, n, x):
    """Number of ``a[r, :n]`` (sorted) that are < x."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[r, mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True)
def _insert_interval(tl, r, i, start, end):
    n = tl.n[r]
    if n == tl.starts.shape[1]:
        _grow_timelines(tl)
    starts, ends = tl.starts, tl.ends
    for k in range(n, i, -1):
        starts[r, k] = starts[r, k - 1]
        ends[r, k] = ends[r, k - 1]
    starts[r, i] = start
    ends[r, i] = end
    tl.n[r] = n + 1


@numba.njit(cache=True)
def _delete_intervals(tl, r, i, j):
    """Remove intervals ``i..j-1`` of row ``r``."""
    n = tl.n[r]
    starts, ends = tl.starts, tl.ends
    for k in range(j, n):
        starts[r, k - j + i] = starts[r, k]
        ends[r, k - j + i] = ends[r, k]
    tl.n[r] = n - (j - i)


@numba.njit(cache=True)
def timeline_reserve(tl, r, earliest, length, floor):
    """``Timeline.reserve`` of resource ``r``: book ``length`` cycles in the first gap at or after
    ``earliest`` (forgetting intervals that end by ``floor``); the start."""
    starts, ends = tl.starts, tl.ends
    n = tl.n[r]
    if n and ends[r, 0] <= floor:
        _delete_intervals(tl, r, 0, _bisect_right(ends, r, n, floor))
        n = tl.n[r]
    if length <= 0:
        return earliest
    start = earliest
    i = _bisect_right(ends, r, n, start)  # intervals ending by ``earliest`` are behind it
    while i < n and starts[r, i] < start + length:  # too close: try after this interval
        if ends[r, i] > start:
            start = ends[r, i]
        i += 1
    end = start + length
    if i and ends[r, i - 1] == start:
        if i < n and starts[r, i] == end:  # fills a gap exactly: join both neighbours
            ends[r, i - 1] = ends[r, i]
            _delete_intervals(tl, r, i, i + 1)
        else:
            ends[r, i - 1] = end
    elif i < n and starts[r, i] == end:
        starts[r, i] = start
    else:
        _insert_interval(tl, r, i, start, end)
    return start


@numba.njit(cache=True)
def timeline_block(tl, r, start, end):
    """``Timeline.block`` of resource ``r``: mark ``[start, end)`` busy, merging what it touches."""
    if end <= start:
        return
    starts, ends = tl.starts, tl.ends
    n = tl.n[r]
    i = _bisect_left(ends, r, n, start)  # first interval that ends at or after ``start``
    j = i
    while j < n and starts[r, j] <= end:
        if starts[r, j] < start:
            start = starts[r, j]
        if ends[r, j] > end:
            end = ends[r, j]
        j += 1
    if j == i:
        _insert_interval(tl, r, i, start, end)
    else:
        starts[r, i] = start
        ends[r, i] = end
        _delete_intervals(tl, r, i + 1, j)


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
def mshr_allocate(m, f, release, count):
    """``MshrFile.allocate`` of file ``f``: hold ``count`` entries until ``release``."""
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
    m.used[f] += count


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
    c.lines[row] = 0

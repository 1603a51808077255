"""A resource reserved in time intervals: the busy periods of a port or a DRAM data bus.

Requests are timed in the order they are made, not in the order they use a resource, so a
request processed later may need a resource earlier than one already reserved (an L2 hit's
reply goes out long before an earlier miss's reply, which waits for DRAM). Keeping only "the
next free cycle" would queue the hit behind the miss; a ``Timeline`` instead keeps the busy
intervals and puts each reservation in the first gap that fits.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class Timeline:
    """Disjoint, sorted busy intervals ``[start, end)`` of one resource (int or float cycles).

    Members
    -------
    starts, ends : list
        The intervals, sorted; adjacent or overlapping ones are merged.
    """

    __slots__ = ("starts", "ends")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def reserve(self, earliest: float, length: float, floor: float) -> float:
        """Book ``length`` cycles starting as soon as possible at or after ``earliest``; the start
        (``earliest`` itself when ``length`` is not positive: nothing is booked).

        ``floor`` is a cycle before which no future reservation can start (the caller's
        current cycle): intervals that end by then are forgotten, which keeps the lists short.
        """
        starts, ends = self.starts, self.ends
        forgotten = bisect_right(ends, floor)
        del starts[:forgotten], ends[:forgotten]
        if length <= 0:
            return earliest
        start, i = self._gap(earliest, length)
        n = len(starts)
        # Every interval before i ends by ``start``; interval i (if any) begins at or after ``end``.
        end = start + length
        if i and ends[i - 1] == start:
            if i < n and starts[i] == end:  # fills a gap exactly: join both neighbours
                ends[i - 1] = ends[i]
                del starts[i], ends[i]
            else:
                ends[i - 1] = end
        elif i < n and starts[i] == end:
            starts[i] = start
        else:
            starts.insert(i, start)
            ends.insert(i, end)
        return start

    def first_fit(self, earliest: float, length: float) -> float:
        """The start ``reserve(earliest, length, ...)`` would give, booking nothing (``length`` > 0)."""
        return self._gap(earliest, length)[0]

    def _gap(self, earliest: float, length: float) -> tuple[float, int]:
        """The first gap of ``length`` at or after ``earliest``: its start, and the index of the
        first interval after it."""
        start = earliest
        i = bisect_right(self.ends, start)  # intervals ending by ``earliest`` are behind it
        while i < len(self.starts) and self.starts[i] < start + length:  # too close: try after this interval
            start = max(start, self.ends[i])
            i += 1
        return start, i

    def block(self, start: float, end: float) -> None:
        """Mark ``[start, end)`` busy (merging with what it touches)."""
        if end <= start:
            return
        starts, ends = self.starts, self.ends
        i = bisect_left(ends, start)  # first interval that ends at or after ``start``
        j = i
        n = len(starts)
        while j < n and starts[j] <= end:
            if starts[j] < start:
                start = starts[j]
            if ends[j] > end:
                end = ends[j]
            j += 1
        starts[i:j] = [start]
        ends[i:j] = [end]

    def free_at(self, cycle: float) -> bool:
        """Whether the resource is idle at ``cycle``."""
        i = bisect_right(self.ends, cycle)
        return i == len(self.starts) or self.starts[i] > cycle

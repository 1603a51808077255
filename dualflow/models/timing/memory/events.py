"""The memory system's own events: what happens at a cycle no request made happen at once.

With a queued DRAM controller the memory system is no longer answered entirely when a request is
made: a bank picks its next request when it is free, and what waited for a full MSHR file or a
pending fill resumes when that is resolved. These are events, run in cycle order (and, within a
cycle, in the order they were posted) before the SMs simulate that cycle.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable


class EventQueue:
    """Callbacks due at (possibly fractional) cycles; ``run_until`` calls them in time order."""

    __slots__ = ("heap", "seq")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, Callable[[float], None]]] = []
        self.seq = 0

    def at(self, time: float, fn: Callable[[float], None]) -> None:
        """Call ``fn(time)`` when the queue reaches ``time``."""
        self.seq += 1
        heapq.heappush(self.heap, (time, self.seq, fn))

    def next_cycle(self) -> int | None:
        """The first whole cycle at which an event is due (None: no event)."""
        return math.ceil(self.heap[0][0]) if self.heap else None

    def run_until(self, cycle: float) -> None:
        """Run every event due at or before ``cycle``, including those the events post."""
        heap = self.heap
        while heap and heap[0][0] <= cycle:
            time, _, fn = heapq.heappop(heap)
            fn(time)

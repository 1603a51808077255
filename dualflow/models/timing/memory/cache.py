"""Tag arrays and MSHR files of the sectored caches (L1 per SM, L2 per slice).

Timing is by reservation: nothing here ticks. A line remembers, per sector, the cycle at which
its data is (or will be) present, so a request that finds a sector still in flight knows when it
can be served; an ``MshrFile`` remembers when each of its busy entries frees.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable

from .events import EventQueue
from .pending import Pending

#: ``Line.ready`` of a sector that holds no data.
INVALID = -1


class Line:
    """State of one resident line.

    Members
    -------
    valid : int
        Bit k set = sector k holds data or has a fill in flight.
    dirty : int
        Bit k set = sector k was written and not yet written back (write-back caches only).
    ready : list[int]
        Per sector, the cycle from which its data is present (``INVALID`` if not valid).
    merges : list[int]
        Per sector, requests merged into its in-flight fill so far.
    latest : int
        max(ready): when it has passed, no sector is in flight (spares a hit the per-sector scan).
    fills : list or None
        With a queued DRAM controller: per sector, the ``Pending`` fill of a sector whose ``ready``
        is ``IN_FLIGHT`` (None until a sector has one).
    """

    __slots__ = ("valid", "dirty", "ready", "merges", "latest", "fills")

    def __init__(self, sectors: int):
        self.valid = 0
        self.dirty = 0
        self.ready = [INVALID] * sectors
        self.merges = [0] * sectors
        self.latest = INVALID
        self.fills: list[Pending | None] | None = None


class SectorCache:
    """A set-associative, sectored tag array with LRU replacement.

    Lines are named by their line index (byte address // line size); each set is an
    ``OrderedDict`` from line index to ``Line`` in LRU order, least recent first.

    Parameters
    ----------
    sets, ways : int
        Geometry.
    sectors : int
        Sectors per line.
    """

    __slots__ = ("sets", "num_sets", "ways", "sectors")

    def __init__(self, sets: int, ways: int, sectors: int):
        self.sets: list[OrderedDict[int, Line]] = [OrderedDict() for _ in range(sets)]
        self.num_sets, self.ways, self.sectors = sets, ways, sectors

    def lookup(self, index: int, set_index: int) -> Line | None:
        """The resident line ``index`` (now the most recently used of its set), or None."""
        lines = self.sets[set_index]
        line = lines.get(index)
        if line is not None:
            lines.move_to_end(index)
        return line

    def insert(self, index: int, set_index: int) -> tuple[Line, int, Line | None]:
        """Allocate line ``index`` (not resident) as the most recently used of its set.

        Returns the new line and, if the set was full, the evicted least-recently-used line's
        index and state (else ``-1, None``), so the caller can write back its dirty sectors.
        """
        lines = self.sets[set_index]
        victim_index, victim = -1, None
        if len(lines) >= self.ways:
            victim_index, victim = lines.popitem(last=False)
        line = Line(self.sectors)
        lines[index] = line
        return line, victim_index, victim

    def resident(self, index: int, set_index: int) -> bool:
        """Whether line ``index`` is resident, without touching the LRU order."""
        return index in self.sets[set_index]


class MshrFile:
    """Miss-status holding registers, one per missing sector in flight.

    Only the count matters for timing: ``busy`` is a heap of ``(release cycle, entries)``, one
    item per miss (its sectors all arrive together), and ``used`` the entries it holds. With a
    queued DRAM controller a miss's release may be ``Pending``: its entries are in ``used`` but
    in ``busy`` only once the cycle is known (``pending`` counts such misses), and a request that
    finds no room ``wait``s for a release instead of computing when one comes.
    """

    __slots__ = ("entries", "busy", "used", "pending", "waiter", "events")

    def __init__(self, entries: int):
        self.entries = entries
        self.busy: list[tuple[int, int]] = []
        self.used = 0
        self.pending = 0
        self.waiter: Callable[[float], None] | None = None
        self.events: EventQueue | None = None

    def reserve(self, cycle: int, needed: int) -> int:
        """The first cycle >= ``cycle`` at which ``needed`` entries are free (the caller stalls
        until then). Only when no release is pending."""
        self._forget(cycle)
        while self.used + needed > self.entries:
            release, count = heapq.heappop(self.busy)  # wait for the earliest fill
            self.used -= count
            cycle = release
        return cycle

    def room(self, cycle: int, needed: int) -> bool:
        """Whether ``needed`` entries are free at ``cycle`` as far as is known now."""
        self._forget(cycle)
        return self.used + needed <= self.entries

    def _forget(self, cycle: int) -> None:
        """Free the entries released by ``cycle``."""
        while self.busy and self.busy[0][0] <= cycle:
            self.used -= heapq.heappop(self.busy)[1]

    def allocate(self, release: int | Pending, count: int) -> None:
        """Hold ``count`` entries until cycle ``release`` (call after ``reserve`` or ``room``)."""
        self.used += count
        if type(release) is int:
            heapq.heappush(self.busy, (release, count))
            return
        self.pending += 1
        release.then(lambda cycle: self._known(cycle, count))

    def wait(self, fn: Callable[[float], None], events: EventQueue) -> None:
        """Call ``fn(cycle)`` at the next release (a cycle it may again find no room at)."""
        self.waiter, self.events = fn, events
        if self.busy:
            events.at(self.busy[0][0], self._wake)

    def _known(self, cycle: int, count: int) -> None:
        self.pending -= 1
        heapq.heappush(self.busy, (cycle, count))
        if self.waiter is not None:
            self.events.at(cycle, self._wake)

    def _wake(self, cycle: float) -> None:
        fn, self.waiter = self.waiter, None
        if fn is not None:
            fn(cycle)

"""A cycle not known yet: what the memory system returns while a DRAM queue has not served a read.

With a queued DRAM controller (``DramConfig.scheduler`` ``queued-*``), a read's completion is
known only when its bank picks it, which is later than the request that made it. Everything that
waits for that read (the L2 sectors it fills, the MSHR entries it holds, the reply, the L1 fill,
the warp's register) holds a ``Pending`` and registers what to do once the cycle is known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

#: ``Line.ready`` of a sector whose fill is pending (``Line.fills`` holds its ``Pending``):
#: later than any cycle, so every "still in flight?" test sees it in flight.
IN_FLIGHT = 1 << 62


class Pending:
    """A cycle to come; ``then`` registers callbacks, ``resolve`` gives the cycle and runs them."""

    __slots__ = ("value", "waiters")

    def __init__(self) -> None:
        self.value: int | None = None
        self.waiters: list[Callable[[int], None]] = []

    def then(self, fn: Callable[[int], None]) -> None:
        """Call ``fn(cycle)`` when the cycle is known (now, if it is)."""
        if self.value is None:
            self.waiters.append(fn)
        else:
            fn(self.value)

    def resolve(self, value: int) -> None:
        if self.value is not None:
            raise AssertionError(f"a pending cycle resolved twice ({self.value}, then {value})")
        self.value = value
        waiters, self.waiters = self.waiters, []
        for fn in waiters:
            fn(value)


def later(known: int, pending: Iterable[Pending]) -> int | Pending:
    """The latest of ``known`` and the ``pending`` cycles: an int when none is pending."""
    pending = [p for p in pending if p.value is None or p.value > known]
    if not pending:
        return known
    out = Pending()
    state = [known, len(pending)]

    def one(value: int) -> None:
        if value > state[0]:
            state[0] = value
        state[1] -= 1
        if not state[1]:
            out.resolve(state[0])

    for p in pending:
        p.then(one)
    return out


def when(cycle: int | Pending, fn: Callable[[int], None]) -> None:
    """Call ``fn`` with ``cycle`` once it is known (at once for an int)."""
    if type(cycle) is int:
        fn(cycle)
    else:
        cycle.then(fn)


def then_map(cycle: int | Pending, fn: Callable[[int], int]) -> int | Pending:
    """``fn(cycle)``, pending while ``cycle`` is."""
    if type(cycle) is int:
        return fn(cycle)
    out = Pending()
    cycle.then(lambda value: out.resolve(fn(value)))
    return out

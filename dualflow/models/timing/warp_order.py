"""Warp-scheduler policies: the order in which a warp scheduler considers its warps each cycle.

One object per policy, selected by ``SmConfig.scheduler`` (``warp_order(name)``; the names are
the machine's ``Scheduler`` enum, dualflow/machine/schedulers.py):

- ``gto``, greedy then oldest (GPGPU-Sim's default): the warp that issued last, then the others
  oldest first.
- ``lrr``, loose round robin: the warps after the one that issued last, then from the oldest up
  to it (wrapping round).

A scheduler issues the first warp of ``order(warps, last)`` that can issue. With two priority
levels (D-FLOW issue, "ready-first") it takes the first warp of the order whose instruction has
its operands ready, and only if there is none the first that can issue at all (sending its
instruction ahead to wait in a collector unit): ``choose(..., prefer=...)``.

The timing model (dualflow/models/timing/sm.py) and the reference model of the RTL scheduler
(``WarpSchedulerModel`` in dualflow/testbench/blocks/models.py, which tests/rtl/test_rtl_scheduler.py checks
dualflow/rtl/scheduler.py against) use these objects. The order rule is the
same; the state the two keep differs, and is the callers':

- timing: ``warps`` are the scheduler's resident warps in age order (the order blocks arrived),
  and ``last`` is the warp that issued last, or None before the first issue and once that warp
  has retired: the order then starts from the oldest.
- RTL: ``warps`` are the warp indices 0..n-1 (index order is age order: the core's warps start
  together and keep their index), and ``last`` is an index register that resets to 0 and keeps
  pointing at a warp after it exits. So after reset LRR's first choice is the first ready warp
  after warp 0, where the timing model starts from the oldest; once the warp that issued last has
  exited, LRR in the RTL goes on after its index, the timing model from the oldest again.
- Ready-first in the timing model learns which warps are ready by trying them (``Sm._issue``), and
  tries the second level only when the closest any warp came to issuing in the first was the
  scoreboard. When a warp was held by the D-FLOW ring guard (which ranks closer), it issues
  nothing that cycle, where ``choose`` (and the RTL) would send a waiting warp ahead.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from dualflow.machine import Scheduler

W = TypeVar("W")

__all__ = ["WARP_ORDERS", "GreedyThenOldest", "LooseRoundRobin", "WarpOrder", "warp_order"]


class WarpOrder:
    """A warp-scheduler policy: ``order`` gives the order of consideration."""

    def order(self, warps: Sequence[W], last: W | None) -> Iterable[W]:
        """``warps`` oldest first; ``last``: the warp that issued last (one of ``warps``, compared by
        identity), or None."""
        raise NotImplementedError

    def choose(self, warps: Sequence[W], last: W | None, ready: Callable[[W], bool],
               prefer: Callable[[W], bool] | None = None) -> W | None:
        """The warp the scheduler grants: the first of the order that is ``ready``; with ``prefer``
        (two levels) the first that is ready and preferred if there is one. None: nothing ready."""
        candidates = [w for w in self.order(warps, last) if ready(w)]
        if prefer is not None:
            first = [w for w in candidates if prefer(w)]
            if first:
                return first[0]
        return candidates[0] if candidates else None


class GreedyThenOldest(WarpOrder):
    """``gto``: the warp that issued last first, then oldest first."""

    def order(self, warps: Sequence[W], last: W | None) -> Iterable[W]:
        if last is None:
            return warps
        return itertools.chain((last,), (w for w in warps if w is not last))


class LooseRoundRobin(WarpOrder):
    """``lrr``: the warps after the one that issued last, then from the oldest, wrapping."""

    def order(self, warps: Sequence[W], last: W | None) -> Iterable[W]:
        if last is None:
            return warps
        i = warps.index(last) + 1
        return itertools.chain(warps[i:], warps[:i])


#: The policy of each scheduler (a test checks every ``Scheduler`` has one).
WARP_ORDERS: dict[Scheduler, WarpOrder] = {Scheduler.GTO: GreedyThenOldest(), Scheduler.LRR: LooseRoundRobin()}


def warp_order(name: str | Scheduler) -> WarpOrder:
    """The policy named ``name`` (``SmConfig.scheduler``); a ConfigError for an unknown name."""
    return WARP_ORDERS[Scheduler.parse(name, "warp scheduler")]

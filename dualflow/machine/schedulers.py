"""The warp-scheduler policies a core can run, by name (the policies themselves live in the
timing model and the RTL scheduler)."""

from __future__ import annotations

from .fields import Choice


class Scheduler(Choice):
    """A warp-scheduler policy (``Scheduler.parse`` reads its name)."""

    GTO = "gto"  # greedy then oldest: keep issuing from the last warp until it stalls
    LRR = "lrr"  # loose round robin: start after the last warp that issued


SCHEDULERS: tuple[str, ...] = tuple(s.value for s in Scheduler)

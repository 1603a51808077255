"""The ring a module is converted for when the register file leaves it a choice: the smallest
budget, from a least one up to a most, at which the converter spills no more than it does at the
most (docs/converter.md, "The ring: spills against warps").

A spill is memory traffic per thread: on a full GPU the reloads of a loop's invariants cost more
than the warps a larger ring gives up (hotspot-cu on paper-rtx3080: 0.17 of BASE at 32 entries,
1.00 at 48 with 0.59 of the occupancy). A compiler for a register machine makes the same trade by
default (nvcc allocates registers before occupancy unless ``__launch_bounds__`` says otherwise).
Spills the ring's size does not cause (values stored at a divergent region's entry, say) stay at
every budget, so the budget is compared with the most's, not with none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from dualflow.isa.kernel import Module

from .driver import ConversionReport, convert_module
from .options import ConversionOptions

#: A conversion's spills: (spill and reload instructions inside loops, all of them), static.
Spills = tuple[int, int]


def spills(reports: Iterable[ConversionReport]) -> Spills:
    """Static spill and reload instructions of converted kernels: those inside a loop, and all."""
    in_loops = total = 0
    for report in reports:
        for cause, loop in zip(report.causes, report.loop_of):
            if cause in ("spill", "reload"):
                total += 1
                in_loops += loop is not None
    return in_loops, total


def spill_free_ring(module: Module, least: int, most: int, conversion: ConversionOptions) -> int:
    """The smallest ring budget in ``least..most`` whose conversion of ``module`` (with
    ``conversion``'s variants and Dmax, its ring replaced) has no more spills inside loops and no
    more in all than at ``most``: ``least`` when it spills nothing or no more than ``most``.

    Bisection over the budgets: spills fall as the ring grows, but not strictly (the converter's
    choices differ from one budget to the next), so the budget found meets the bound and is the
    smallest where the count is monotone; it is the same on every run."""
    if least >= most:
        return least

    def count(ring: int) -> Spills:
        return spills(convert_module(module, **replace(conversion, ring=ring).keywords())[1].values())

    at_least = count(least)
    if at_least == (0, 0):
        return least
    floor = count(most)

    def within(n: Spills) -> bool:  # no more inside loops, and no more in all, than at ``most``
        return n[0] <= floor[0] and n[1] <= floor[1]

    if within(at_least):
        return least
    low, high = least, most  # count(low) is above the floor, count(high) is not
    while high - low > 1:
        mid = (low + high) // 2
        if within(count(mid)):
            high = mid
        else:
            low = mid
    return high

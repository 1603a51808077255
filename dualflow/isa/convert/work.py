"""The converter's work limit: a count of the steps a conversion takes, kept by the converter itself.

A conversion that would not end (a converter defect) stops with ``WorkLimitExceeded`` after
``limit`` steps instead of running forever. The limit is a count, not a time: the same kernel
stops at the same step on an idle machine and on a loaded one, so a test that relies on it cannot
flake. A step is a unit of the converter's inner loops: one instruction of a block generated,
one block visited by a hand plan's fixed point, one round of a loop that settles a join's tail
or moves values out of reach. ``ConversionReport.work`` records what each conversion took.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

from dualflow.isa.convert.cfg import ConvertError

#: Steps one conversion may take. The largest conversion measured (benchmarks/converter_work.py:
#: every workload and 60 of the property tests' programs, each configuration those tests use)
#: took 1.5 million (lud's diagonal kernel with hands at ring 24, 13 s of CPU): a 33x margin.
WORK_LIMIT = 50_000_000


class WorkLimitExceeded(ConvertError):
    """A conversion took more steps than its limit: a converter defect (a loop that does not end)."""


@dataclass
class Meter:
    """The steps taken by the conversion under way, and its limit (None: no limit)."""

    limit: int | None
    steps: int = 0


_METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("convert_meter", default=None)


@contextlib.contextmanager
def metered(limit: int | None) -> Iterator[Meter]:
    """Count the steps charged inside the block against ``limit``. Nested blocks share the outer
    meter (a conversion inside a conversion's search counts towards the one limit)."""
    outer = _METER.get()
    if outer is not None:
        yield outer
        return
    meter = Meter(limit)
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


def charge(steps: int = 1) -> None:
    """Count ``steps`` of work; raise ``WorkLimitExceeded`` once the conversion's limit is passed."""
    meter = _METER.get()
    if meter is None:
        return
    meter.steps += steps
    if meter.limit is not None and meter.steps > meter.limit:
        raise WorkLimitExceeded(f"internal: the conversion did not finish within {meter.limit:,} steps "
                                f"(a converter loop that does not end)")

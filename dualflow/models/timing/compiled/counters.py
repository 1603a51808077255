"""The launch's counters for the statistics, from the SM state arrays that feed them
(``layout.SM_STATE``'s ``feeds``): summed over the SMs in one compiled call (``launch_sums``,
gpu.py, over ``counter_arrays``), then shaped as one reference ``Sm``'s counters for
``stats.sm_totals``, which reads each statistic from its source path."""

from __future__ import annotations

from types import SimpleNamespace

from ..stats import SmCounters
from .declare import generated_njit
from .layout import COUNTERS

counter_arrays = generated_njit(
    "counter_arrays", "def counter_arrays(state):\n    return ({},)\n".format(
        ", ".join(f"state.{a.name}" for a in COUNTERS)), globals())
counter_arrays.__doc__ = "The SM state's arrays that feed statistics, in ``layout.COUNTERS`` order."


def _put(root: SimpleNamespace, path: str, value: object) -> None:
    owner, name = path.rsplit(".", 1)
    setattr(getattr(root, owner), name, value)


def counter_views(sums: list[int], state) -> list[SimpleNamespace]:
    """``sums`` (``launch_sums``: each counter array's columns summed over the SMs, one array
    after the other) as the counters of one ``Sm`` (``counters``, ``collector``)."""
    root = SimpleNamespace(counters=SmCounters(), collector=SimpleNamespace())
    at = 0
    for a in COUNTERS:
        width = getattr(state, a.name).shape[1]
        values, at = sums[at:at + width], at + width
        if isinstance(a.feeds, tuple):  # one statistic per column
            for path, value in zip(a.feeds, values, strict=True):
                _put(root, path, value)
        else:
            _put(root, a.feeds, dict(zip(a.keys, values, strict=True)) if a.keys else values)
    return [root]

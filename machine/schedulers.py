"""The warp-scheduler policies a core can run, by name (the policies themselves live in the
timing model and the RTL scheduler)."""

from __future__ import annotations

import enum

from dualflow.errors import ConfigError


class Scheduler(enum.StrEnum):
    """A warp-scheduler policy: a string enum, so ``Scheduler.GTO == "gto"`` and JSON output reads
    the same as the plain strings."""

    GTO = "gto"  # greedy then oldest: keep issuing from the last warp until it stalls
    LRR = "lrr"  # loose round robin: start after the last warp that issued

    @classmethod
    def parse(cls, value: str | Scheduler, what: str = "scheduler") -> Scheduler:
        """``value`` as a Scheduler; a ConfigError naming ``what`` and the choices otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise ConfigError(f"{what} must be one of {', '.join(SCHEDULERS)}, not {value!r}") from None


SCHEDULERS: tuple[str, ...] = tuple(s.value for s in Scheduler)

"""Progress bars of long simulations (tqdm), with simulation rates as they accumulate.

``dualflow sim`` advances its bar once per kernel launch; ``dualflow reproduce`` once per finished
simulation. Both show simulated cycles per second and thread-instructions per second of wall time
spent simulating. Both write to standard error; the per-launch bar of ``sim`` only when it is a
terminal, the bar of ``reproduce`` always (a log of a long run shows how far it got).
"""

from __future__ import annotations

import sys
from typing import TextIO

from tqdm import tqdm

from dualflow.models.timing.stats import TimingStats

# no monitor thread: a thread left at exit turns a stopped run's clean one-line exit into noise
tqdm.monitor_interval = 0


def _rates(cycles: int, thread_instructions: int, seconds: float) -> str:
    if seconds <= 0:
        return ""
    return f"{cycles / seconds:,.0f} cycles/s, {thread_instructions / seconds:,.0f} thread-instr/s"


class LaunchProgress:
    """One bar per workload run: a step per launch, with the simulated cycles and rates so far.

    Call it with each launch's ``TimingStats`` and the wall seconds it took (``TimingDevice``'s
    ``on_launch`` hook); ``close`` when the run ends.
    """

    def __init__(self, label: str, file: TextIO | None = None):
        file = file or sys.stderr
        self.bar = tqdm(desc=label, unit=" launches", file=file, disable=not file.isatty(), leave=False)
        self.cycles = self.instructions = 0
        self.seconds = 0.0

    def __call__(self, stats: TimingStats, seconds: float) -> None:
        self.cycles += stats.cycles
        self.instructions += sum(stats.thread_instructions.values())
        self.seconds += seconds
        self.bar.set_postfix_str(f"{self.cycles:,} cycles; {_rates(self.cycles, self.instructions, self.seconds)}",
                                 refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


class RunProgress:
    """One bar over the simulations of ``dualflow reproduce``, with their summed simulation rates."""

    def __init__(self, total: int, file: TextIO | None = None):
        file = file or sys.stderr
        self.bar = tqdm(total=total, desc="reproduce", unit=" runs", file=file)
        self.cycles = self.instructions = 0
        self.seconds = 0.0

    def finished(self, tag: str, cycles: int, thread_instructions: int, seconds: float) -> None:
        self.cycles += cycles
        self.instructions += thread_instructions
        self.seconds += seconds
        self.bar.set_postfix_str(f"{tag}; {_rates(self.cycles, self.instructions, self.seconds)}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()

"""DRAM channels, timed by reservation.

A channel transfers ``bytes_per_cycle`` bytes per DRAM cycle and keeps the busy intervals of its
data bus (``Timeline``, in fractional core cycles, so the configured bandwidth is exact):
back-to-back requests to one channel serialize on their transfer time, while the access
latency overlaps (a pipelined, always-open-row channel;
banks, rows and refresh are not modelled). Lines are interleaved over channels by line index.
"""

from __future__ import annotations

import math

from dualflow.machine.memory import DramConfig

from .timeline import Timeline


class Dram:
    """All channels of device memory, with traffic counters.

    Parameters
    ----------
    config : DramConfig
    core_clock_mhz : float
        The clock every returned cycle is counted in.
    """

    __slots__ = ("channels", "latency", "cycles_per_byte", "buses", "reads", "writes", "read_bytes",
                 "write_bytes", "busy_cycles", "wait_cycles")

    def __init__(self, config: DramConfig, core_clock_mhz: float):
        ratio = core_clock_mhz / config.clock_mhz  # core cycles per DRAM cycle
        self.channels = config.channels
        #: access latency in whole core cycles (rounded up: data cannot come back early)
        self.latency = math.ceil(config.latency * ratio - 1e-9)
        self.cycles_per_byte = ratio / config.bytes_per_cycle
        self.buses = [Timeline() for _ in range(config.channels)]
        self.reads = self.writes = self.read_bytes = self.write_bytes = 0
        self.busy_cycles = self.wait_cycles = 0.0

    def read(self, cycle: int, line_index: int, nbytes: int, floor: int) -> int:
        """Read ``nbytes`` of line ``line_index`` requested at ``cycle``; the cycle all of it is back.

        ``floor``: no later call will ask for a cycle before it (the memory system's current cycle).
        """
        end = self._transfer(cycle, line_index, nbytes, floor)
        self.reads += 1
        self.read_bytes += nbytes
        return math.ceil(end - 1e-9) + self.latency

    def write(self, cycle: int, line_index: int, nbytes: int, floor: int) -> None:
        """Write ``nbytes`` of line ``line_index`` at ``cycle`` (occupies the channel; nobody waits for it)."""
        self._transfer(cycle, line_index, nbytes, floor)
        self.writes += 1
        self.write_bytes += nbytes

    def _transfer(self, cycle: int, line_index: int, nbytes: int, floor: int) -> float:
        occupancy = nbytes * self.cycles_per_byte
        start = self.buses[line_index % self.channels].reserve(cycle, occupancy, floor)
        self.wait_cycles += start - cycle
        self.busy_cycles += occupancy
        return start + occupancy

"""DRAM channels, timed by reservation.

A channel transfers ``bytes_per_cycle`` bytes per DRAM cycle and keeps the (fractional, in core
cycles) time at which its data bus is next free: back-to-back requests to one channel serialize
on their transfer time, while the access latency overlaps (a pipelined, always-open-row channel;
banks, rows and refresh are not modelled). Lines are interleaved over channels by line index.
"""

from __future__ import annotations

import math

from .config import DramConfig


class Dram:
    """All channels of device memory, with traffic counters.

    Parameters
    ----------
    config : DramConfig
    core_clock_mhz : float
        The clock every returned cycle is counted in.
    """

    __slots__ = ("channels", "latency", "cycles_per_byte", "free", "reads", "writes", "read_bytes",
                 "write_bytes", "busy_cycles", "wait_cycles")

    def __init__(self, config: DramConfig, core_clock_mhz: float):
        ratio = core_clock_mhz / config.clock_mhz  # core cycles per DRAM cycle
        self.channels = config.channels
        #: access latency in whole core cycles (rounded up: data cannot come back early)
        self.latency = math.ceil(config.latency * ratio - 1e-9)
        self.cycles_per_byte = ratio / config.bytes_per_cycle
        self.free = [0.0] * config.channels
        self.reads = self.writes = self.read_bytes = self.write_bytes = 0
        self.busy_cycles = self.wait_cycles = 0.0

    def read(self, cycle: int, line_index: int, nbytes: int) -> int:
        """Read ``nbytes`` of line ``line_index`` requested at ``cycle``; the cycle all of it is back."""
        end = self._transfer(cycle, line_index, nbytes)
        self.reads += 1
        self.read_bytes += nbytes
        return math.ceil(end - 1e-9) + self.latency

    def write(self, cycle: int, line_index: int, nbytes: int) -> None:
        """Write ``nbytes`` of line ``line_index`` at ``cycle`` (occupies the channel; nobody waits for it)."""
        self._transfer(cycle, line_index, nbytes)
        self.writes += 1
        self.write_bytes += nbytes

    def _transfer(self, cycle: int, line_index: int, nbytes: int) -> float:
        channel = line_index % self.channels
        start = self.free[channel]
        if start > cycle:
            self.wait_cycles += start - cycle
        else:
            start = cycle
        occupancy = nbytes * self.cycles_per_byte
        self.busy_cycles += occupancy
        end = start + occupancy
        self.free[channel] = end
        return end

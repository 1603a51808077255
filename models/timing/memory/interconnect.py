"""The SM <-> L2 crossbar, timed by reservation.

Each L2 slice has a request port (packets into the slice) and a reply port (packets out of it);
a port passes ``flits_per_cycle`` flits per cycle and keeps the next cycle at which it is free.
A packet takes the fixed one-way latency to cross, then waits for its port: contention at the
slices is what the model captures. The SM side (injection and ejection ports) is not modelled:
the L1 port already serializes an SM's transactions one per cycle.
"""

from __future__ import annotations

from .config import InterconnectConfig


class Interconnect:
    """Request and reply ports of every L2 slice, with traffic counters.

    Parameters
    ----------
    config : InterconnectConfig
    slices : int
        Number of L2 slices (one request and one reply port each).
    """

    __slots__ = ("latency", "flit_bytes", "header_bytes", "flits_per_cycle", "request_free", "reply_free",
                 "requests", "replies", "request_flits", "reply_flits", "wait_cycles")

    def __init__(self, config: InterconnectConfig, slices: int):
        self.latency = config.latency
        self.flit_bytes = config.flit_bytes
        self.header_bytes = config.header_bytes
        self.flits_per_cycle = config.flits_per_cycle
        self.request_free = [0] * slices
        self.reply_free = [0] * slices
        self.requests = self.replies = self.request_flits = self.reply_flits = self.wait_cycles = 0

    def flits(self, data_bytes: int) -> int:
        """Flits of a packet carrying ``data_bytes`` of data after its header."""
        return -(-(self.header_bytes + data_bytes) // self.flit_bytes)

    def request(self, cycle: int, slice_index: int, flits: int) -> int:
        """Send a packet of ``flits`` from an SM at ``cycle``; the cycle it reaches the slice."""
        arrive = cycle + self.latency
        free = self.request_free[slice_index]
        if free > arrive:
            self.wait_cycles += free - arrive
            arrive = free
        self.request_free[slice_index] = arrive + -(-flits // self.flits_per_cycle)
        self.requests += 1
        self.request_flits += flits
        return arrive

    def reply(self, cycle: int, slice_index: int, flits: int) -> int:
        """Send a reply of ``flits`` from a slice whose data is ready at ``cycle``; the cycle it reaches the SM."""
        leave = cycle
        free = self.reply_free[slice_index]
        if free > leave:
            self.wait_cycles += free - leave
            leave = free
        self.reply_free[slice_index] = leave + -(-flits // self.flits_per_cycle)
        self.replies += 1
        self.reply_flits += flits
        return leave + self.latency

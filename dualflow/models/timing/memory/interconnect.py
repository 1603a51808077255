"""The SM <-> L2 crossbar, timed by reservation.

Each L2 slice has a request port (packets into the slice) and a reply port (packets out of it);
a port passes ``flits_per_cycle`` flits per cycle and keeps its busy intervals (``Timeline``).
A packet takes the fixed one-way latency to cross, then waits for a gap in its port long
enough for its flits: contention at the slices is what the model captures. The SM side
(injection and ejection ports) is not modelled: the L1 port already serializes an SM's
transactions one per cycle.
"""

from __future__ import annotations

from dualflow.machine.memory import InterconnectConfig

from .timeline import Timeline


class Interconnect:
    """Request and reply ports of every L2 slice, with traffic counters.

    Parameters
    ----------
    config : InterconnectConfig
    slices : int
        Number of L2 slices (one request and one reply port each).
    """

    __slots__ = ("latency", "flit_bytes", "header_bytes", "flits_per_cycle", "request_ports", "reply_ports",
                 "requests", "replies", "request_flits", "reply_flits", "wait_cycles")

    def __init__(self, config: InterconnectConfig, slices: int):
        self.latency = config.latency
        self.flit_bytes = config.flit_bytes
        self.header_bytes = config.header_bytes
        self.flits_per_cycle = config.flits_per_cycle
        self.request_ports = [Timeline() for _ in range(slices)]
        self.reply_ports = [Timeline() for _ in range(slices)]
        self.requests = self.replies = self.request_flits = self.reply_flits = self.wait_cycles = 0

    def flits(self, data_bytes: int) -> int:
        """Flits of a packet carrying ``data_bytes`` of data after its header."""
        return -(-(self.header_bytes + data_bytes) // self.flit_bytes)

    def request(self, cycle: int, slice_index: int, flits: int, floor: int) -> int:
        """Send a packet of ``flits`` from an SM at ``cycle``; the cycle it reaches the slice.

        ``floor``: no later call will ask for a cycle before it (the memory system's current cycle).
        """
        want = cycle + self.latency
        arrive = int(self.request_ports[slice_index].reserve(want, -(-flits // self.flits_per_cycle), floor))
        self.wait_cycles += arrive - want
        self.requests += 1
        self.request_flits += flits
        return arrive

    def block(self, slice_index: int, start: int, end: int) -> None:
        """Refuse new requests into a slice during ``[start, end)`` (its input is stalled)."""
        self.request_ports[slice_index].block(start, end)

    def reply(self, cycle: int, slice_index: int, flits: int, floor: int) -> int:
        """Send a reply of ``flits`` from a slice whose data is ready at ``cycle``; the cycle it reaches the SM."""
        leave = int(self.reply_ports[slice_index].reserve(cycle, -(-flits // self.flits_per_cycle), floor))
        self.wait_cycles += leave - cycle
        self.replies += 1
        self.reply_flits += flits
        return leave + self.latency

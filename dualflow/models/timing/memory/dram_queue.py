"""Queued DRAM controllers: each bank picks its next request when it is free (FR-FCFS or FCFS).

This is GPGPU-Sim's controller (``-gpgpu_dram_scheduler 1``, ``-gpgpu_frfcfs_dram_sched_queue_size``)
in the model's terms. Per channel, up to ``entries`` requests are queued; a request further back
waits upstream until one leaves. A bank can take a new request from its last column command on
(GPGPU-Sim's bank takes the next request when it issues the read or write of the one it holds).
The channel's bank that can decide first (the later of its free time and its oldest queued
request's entry into the queue; ties to the bank whose oldest request is oldest) picks among its
queued requests that have arrived: ``frfcfs`` the oldest to its open row if any, else the oldest;
``fcfs`` the oldest. The pick is timed by ``Dram.serve`` from the decision on, so the device rules
(banks, rows, tRRD, the data bus) are the reservation model's own, applied in the order the
controller decides.

A decision at cycle ``T`` can only be made once every request reaching the controller by ``T``
is known: decisions are events (``EventQueue``), which the memory system runs in cycle order
before the SMs simulate that cycle, and every request reaches its controller at least the L2's
hit latency and ``dram.latency`` after the cycle it is made. A read's cycle is a ``Pending``
until its bank picks it. ``dualflow/experiments/dram_scheduling.py`` replays recorded requests through
this same controller.
"""

from __future__ import annotations

import math
from bisect import insort

from .dram import Dram
from .events import EventQueue
from .pending import Pending


class _Request:
    __slots__ = ("arrive", "seq", "entered", "bank", "row", "line", "nbytes", "write", "done", "log_index")

    def __init__(self, arrive: float, seq: int, bank: int, row: int, line: int, nbytes: int, write: bool,
                 done: Pending | None, log_index: int):
        self.arrive, self.seq, self.entered = arrive, seq, arrive
        self.bank, self.row, self.line, self.nbytes, self.write = bank, row, line, nbytes, write
        self.done, self.log_index = done, log_index

    def __lt__(self, other: _Request) -> bool:  # age: arrival at the controller, then the order made
        return (self.arrive, self.seq) < (other.arrive, other.seq)


class _Channel:
    __slots__ = ("queued", "overflow", "count", "free", "next")

    def __init__(self) -> None:
        self.queued: dict[int, list[_Request]] = {}  # bank -> its queued requests, oldest first
        self.overflow: list[_Request] = []  # waiting upstream for a queue entry, oldest first
        self.count = 0  # requests in the queue
        self.free: dict[int, float] = {}  # bank -> when it can take its next request
        self.next: float | None = None  # the decision event posted for it


class DramQueues:
    """The queued controllers of every channel of ``dram``, deciding as events of ``events``.

    Parameters
    ----------
    dram : Dram
        The device; its own ``frfcfs`` is not used (the controller orders the requests).
    entries : int
        Queue entries per channel.
    frfcfs : bool
        FR-FCFS (row hits first) or FCFS.
    events : EventQueue
    """

    def __init__(self, dram: Dram, entries: int, frfcfs: bool, events: EventQueue):
        if entries < 1:
            raise ValueError(f"DramQueues: entries must be at least 1, not {entries}")
        self.dram, self.entries, self.frfcfs, self.events = dram, entries, frfcfs, events
        self.channels = [_Channel() for _ in range(dram.channels)]
        self.seq = 0
        #: if not None, (request number, fractional end of its burst) of each request served
        self.served: list[tuple[int, float]] | None = None

    def submit(self, cycle: int, line: int, nbytes: int, write: bool, floor: int) -> Pending | None:
        """A request the L2 makes at ``cycle`` (``floor``: the memory system's current cycle); a
        read's data-back cycle, pending until its bank picks it (writes: None)."""
        dram = self.dram
        channel_index, bank, row = dram.place(line)
        done = None if write else Pending()
        log_index = -1
        if dram.log is not None:
            log_index = len(dram.log)
            dram.log.append((cycle, line, nbytes, int(write), floor, -1))
        self.seq += 1
        request = _Request(cycle + dram.latency, self.seq, bank, row, line, nbytes, write, done, log_index)
        channel = self.channels[channel_index]
        if channel.count < self.entries:
            self._enter(channel, request)
        else:
            insort(channel.overflow, request)
        self._post(channel_index)
        return done

    def pending(self) -> bool:
        """Whether any request is still queued."""
        return any(c.count for c in self.channels)

    # ------------------------------------------------------------------ decisions
    def _enter(self, channel: _Channel, request: _Request) -> None:
        channel.count += 1
        insort(channel.queued.setdefault(request.bank, []), request)

    def _next_decision(self, channel: _Channel) -> tuple[float, int]:
        """(when, bank) of the channel's first decision from what is queued now."""
        best_when, best_bank, best_age = math.inf, -1, None
        for bank, waiting in channel.queued.items():
            oldest = waiting[0]
            when = channel.free.get(bank, -math.inf)
            if when < oldest.entered:
                when = oldest.entered
            if when < best_when or when == best_when and oldest < best_age:
                best_when, best_bank, best_age = when, bank, oldest
        return best_when, best_bank

    def _post(self, channel_index: int) -> None:
        """Post the channel's next decision, unless one at or before it is posted already."""
        channel = self.channels[channel_index]
        if not channel.count:
            return
        when, _ = self._next_decision(channel)
        if channel.next is None or when < channel.next:
            channel.next = when
            self.events.at(when, lambda time: self._decide(channel_index, time))

    def _decide(self, channel_index: int, time: float) -> None:
        channel = self.channels[channel_index]
        if channel.next != time:
            return  # superseded by an earlier decision, which posted what follows
        channel.next = None
        dram = self.dram
        while channel.count:
            when, bank = self._next_decision(channel)
            if when > time:
                break
            waiting = channel.queued[bank]
            pick = 0
            if self.frfcfs:
                open_row = dram.open_row[bank]
                for k, r in enumerate(waiting):
                    if r.entered <= when and r.row == open_row:
                        pick = k
                        break
            request = waiting.pop(pick)
            if pick:  # a row hit ahead of an older request of its bank
                dram.reordered_hits += 1
            if not waiting:
                del channel.queued[bank]
            channel.count -= 1
            end = dram.serve(when, request.line, request.nbytes, when, request.write)
            channel.free[bank] = dram.col_ready[bank] - dram.tccd  # its column command
            done = dram.account(request.nbytes, request.write, end)
            if self.served is not None:
                self.served.append((request.seq, end))
            if dram.log is not None:
                cycle, line, nbytes, write, floor, _ = dram.log[request.log_index]
                dram.log[request.log_index] = (cycle, line, nbytes, write, floor, done)
            while channel.overflow and channel.count < self.entries:
                admitted = channel.overflow.pop(0)
                if admitted.entered < when:
                    admitted.entered = when
                self._enter(channel, admitted)
            if request.done is not None:
                request.done.resolve(done)
        self._post(channel_index)


def replay(dram: Dram, entries: int, frfcfs: bool,
           requests: list[tuple[int, int, int, bool, int]]) -> tuple[list[float], int]:
    """Serve recorded requests (cycle, line, bytes, write, floor), each at its recorded cycle,
    through queued controllers: the fractional end of each one's burst, and how many were served
    before an older request of their bank."""
    queues = DramQueues(dram, entries, frfcfs, EventQueue())
    queues.served = []
    order = sorted(range(len(requests)), key=lambda i: requests[i][0])  # as they reach the controllers
    for i in order:
        queues.submit(*requests[i])
    queues.events.run_until(math.inf)
    ends = [0.0] * len(requests)
    for seq, end in queues.served:
        ends[order[seq - 1]] = end
    return ends, dram.reordered_hits

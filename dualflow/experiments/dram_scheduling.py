"""How far the reservation model's DRAM scheduling is from a queued FR-FCFS controller.

The memory system answers every DRAM request when the L2 makes it (``dualflow/models/timing/memory/dram.py``),
so a bank serves requests in the order they come, plus the row hits that fit before a committed
precharge (``frfcfs``). A real FR-FCFS controller (GPGPU-Sim's ``-gpgpu_dram_scheduler 1``) keeps a
queue of up to 64 requests per channel and, whenever a bank is free, serves the oldest request
to its open row, else the oldest request: a row hit may overtake an older miss and delay it.
That cannot be modelled where the miss's completion was already answered.

This module measures the gap open-loop: a run with ``TimingDevice(record_dram=True)`` keeps its
DRAM requests (the L2 misses and write-backs, each with the cycle the L2 made it), and ``compare``
serves the same requests, at the same cycles, through

- ``reservation``: the model's own ``Dram`` (fcfs or frfcfs), as in the run;
- ``queued``: ``QueuedController``, a controller with a ``queue`` entries per channel that, each
  time one of its banks is free, picks the next request of that bank among those queued (FR-FCFS:
  the oldest to the open row, else the oldest; FCFS: the oldest), and then times it with the
  same device rules (``Dram.serve``, in the order it picked them).

Open-loop: the requests keep their recorded cycles, so what a different DRAM latency would change
upstream (fewer MSHR stalls, earlier dependent loads) is not in the comparison; the latencies are.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from dualflow.machine.memory import DramConfig
from dualflow.models.timing.memory.dram import Dram
from dualflow.models.timing.memory.dram_queue import replay

#: GPGPU-Sim's ``-gpgpu_frfcfs_dram_sched_queue_size`` in the SM86 configuration.
QUEUE_ENTRIES = 64


@dataclass(frozen=True, slots=True)
class Request:
    """One DRAM request as the L2 made it: its cycle, line, bytes, whether it is a write, and the
    memory system's current cycle then (``Dram.read``'s ``floor``: the L2 makes write-backs and
    requests held by full MSHRs for cycles after it, so requests are not in cycle order)."""

    cycle: int
    line: int
    nbytes: int
    write: bool
    floor: int


def requests_of(log: list[tuple[int, int, int, int, int, int]]) -> tuple[list[Request], list[int | None]]:
    """The requests of a DRAM log (``MemorySystem.dram_requests()``) and each read's answer (None for writes)."""
    return ([Request(cycle, line, nbytes, bool(write), floor) for cycle, line, nbytes, write, floor, _ in log],
            [None if write else done for _, _, _, write, _, done in log])


@dataclass(frozen=True, slots=True)
class Served:
    """The outcome of serving a request stream: each read's data end (core cycles, fractional;
    None for writes) and the row hits among all requests."""

    ends: list[float | None]
    row_hits: int
    reordered: int  # requests served before an older request of the same bank


def reservation(config: DramConfig, clock_mhz: float, line_bytes: int, requests: Sequence[Request]) -> Served:
    """Serve ``requests`` (in the order made) with the model's reservation-timed ``Dram``."""
    dram = Dram(config, clock_mhz, line_bytes)
    ends: list[float | None] = []
    for r in requests:
        end = dram.serve(r.cycle + dram.latency, r.line, r.nbytes, r.floor, r.write)
        ends.append(None if r.write else end)
    return Served(ends, dram.row_hits, dram.reordered_hits)


class QueuedController:
    """A DRAM controller with a bounded queue per channel and a bank scheduler (FR-FCFS or FCFS):
    the model's own ``DramQueues`` (``dualflow/models/timing/memory/dram_queue.py``), fed the recorded
    requests at their recorded cycles."""

    def __init__(self, config: DramConfig, clock_mhz: float, line_bytes: int, *, frfcfs: bool,
                 queue: int = QUEUE_ENTRIES):
        if queue < 1:
            raise ValueError(f"QueuedController: queue must be at least 1, not {queue}")
        self.config = dataclasses.replace(config, scheduler="fcfs")  # the order is the queue's
        self.clock_mhz, self.line_bytes = clock_mhz, line_bytes
        self.frfcfs, self.queue = frfcfs, queue

    def serve(self, requests: Sequence[Request]) -> Served:
        """Serve ``requests`` (in the order made) from idle banks."""
        dram = Dram(self.config, self.clock_mhz, self.line_bytes)
        ends, reordered = replay(dram, self.queue, self.frfcfs,
                                 [(r.cycle, r.line, r.nbytes, r.write, r.floor) for r in requests])
        return Served([None if r.write else e for r, e in zip(requests, ends)], dram.row_hits, reordered)


@dataclass(frozen=True, slots=True)
class Summary:
    """Read latencies of one way of serving a stream, from each read's arrival at its controller."""

    name: str
    reads: int
    mean: float
    median: float
    p95: float
    row_hit_rate: float
    reordered: int
    last: float  # the last read's data end


def summarize(name: str, served: Served, requests: Sequence[Request], latency: int) -> Summary:
    waits = sorted(end - (r.cycle + latency) for end, r in zip(served.ends, requests) if end is not None)
    if not waits:
        return Summary(name, 0, 0.0, 0.0, 0.0, 0.0, served.reordered, 0.0)
    return Summary(name, len(waits), statistics.fmean(waits), statistics.median(waits),
                   waits[min(len(waits) - 1, math.ceil(0.95 * len(waits)) - 1)],
                   served.row_hits / len(requests), served.reordered,
                   max(end for end in served.ends if end is not None))


def compare(config: DramConfig, clock_mhz: float, line_bytes: int, requests: Sequence[Request], *,
            queue: int = QUEUE_ENTRIES) -> list[Summary]:
    """The stream served four ways: reservation fcfs and frfcfs, queued (``queue`` entries per
    channel) FCFS and FR-FCFS."""
    latency = config.latency
    out = []
    for scheduler in ("fcfs", "frfcfs"):
        served = reservation(dataclasses.replace(config, scheduler=scheduler), clock_mhz, line_bytes, requests)
        out.append(summarize(f"reservation {scheduler}", served, requests, latency))
    for frfcfs in (False, True):
        served = QueuedController(config, clock_mhz, line_bytes, frfcfs=frfcfs, queue=queue).serve(requests)
        out.append(summarize(f"queued {'FR-FCFS' if frfcfs else 'FCFS'}", served, requests, latency))
    return out

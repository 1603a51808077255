"""Global (and local) memory for the core bench: answers the core's request stream after a random
latency and in a random order, seeded.

The core sends one request per warp memory instruction (every lane's address, store data and
the active mask, a ``local`` flag and the warp) tagged with an id; the model answers each with
its tag, after ``min_latency``..``max_latency`` cycles, choosing at random among the answers
that are due, so answers overtake each other. A load reads, and a store writes, memory **when
it is answered**, not when it is accepted: the core may only rely on an access having happened
once its answer came back, which is exactly the ordering docs/isa.md promises (and the RTL must
enforce with colors and fences). Request acceptance is throttled at random too (backpressure).

Global memory is the functional model's ``GlobalMemory`` (allocation map included: an access
outside every allocation is an error, reported with warp, lane and address). Local memory is
per thread (warp, lane), ``local_bytes`` each, zero at launch.

The model is cycle-stepped by the bench: call ``drive`` just after each falling clock edge and
``sample`` in the read-only phase of the same half cycle (see dualflow/testbench/blocks/harness.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from dualflow.models.memory import GlobalMemory


class MemoryModelError(AssertionError):
    """The core made an access the functional model would fault on (or broke the protocol)."""


@dataclass
class _Pending:
    tag: int
    warp: int
    store: bool
    local: bool
    mask: int
    addr: list[int]
    data: list[int]
    due: int
    latency: int
    order: int
    result: list[int] | None = None


@dataclass
class MemoryStats:
    requests: int = 0
    loads: int = 0
    stores: int = 0
    reordered: int = 0  #: answers given before an older request's answer
    max_in_flight: int = 0
    latencies: list[int] = field(default_factory=list)


class GlobalMemoryModel:
    """Seeded random-latency, out-of-order memory behind the core's ``mem_req``/``mem_resp`` ports.

    Parameters
    ----------
    memory: the launch's global memory (shared with the functional model's allocation map; the
        bench passes a copy taken before the golden run).
    lanes: lanes per warp.
    local_bytes: local memory per thread.
    rng: the bench's seeded random generator.
    min_latency, max_latency: answer latency in cycles (inclusive).
    accept_rate: probability that a request is accepted in a given cycle (backpressure).
    """

    def __init__(self, memory: GlobalMemory, *, lanes: int, local_bytes: int, rng: random.Random,
                 min_latency: int = 1, max_latency: int = 40, accept_rate: float = 0.7):
        if not 1 <= min_latency <= max_latency:
            raise ValueError(f"latency range {min_latency}..{max_latency} is empty or below 1")
        self.mem, self.lanes, self.local_bytes, self.rng = memory, lanes, local_bytes, rng
        self.min_latency, self.max_latency, self.accept_rate = min_latency, max_latency, accept_rate
        self.local: dict[tuple[int, int], np.ndarray] = {}
        self.pending: list[_Pending] = []
        self.presenting: _Pending | None = None
        self.req_ready = False
        self.cycle = 0
        self.order = 0
        self.stats = MemoryStats()

    # ------------------------------------------------------------------ memory semantics
    def _local(self, warp: int, lane: int) -> np.ndarray:
        key = (warp, lane)
        if key not in self.local:
            self.local[key] = np.zeros(self.local_bytes // 4, dtype=np.uint32)
        return self.local[key]

    def _cell(self, req: _Pending, lane: int) -> tuple[np.ndarray, int]:
        addr = req.addr[lane]
        where = f"warp {req.warp} lane {lane} address {addr:#x}"
        if addr % 4:
            raise MemoryModelError(f"misaligned {'local' if req.local else 'global'} access: {where}")
        if req.local:
            if addr >= self.local_bytes:
                raise MemoryModelError(f"local access outside {self.local_bytes} bytes per thread: {where}")
            return self._local(req.warp, lane), addr // 4
        word = addr // 4
        if word >= len(self.mem.valid) or not self.mem.valid[word]:
            raise MemoryModelError(f"global access not inside any allocation: {where}")
        return self.mem.words, word

    def perform(self, req: _Pending) -> list[int]:
        """Do the access now; returns the per-lane answer data (loaded values, zeros for a store)."""
        out = [0] * self.lanes
        for lane in range(self.lanes):
            if not req.mask >> lane & 1:
                continue
            store, index = self._cell(req, lane)
            if req.store:
                store[index] = req.data[lane]  # lanes in order: the highest lane's value is kept
            else:
                out[lane] = int(store[index])
        return out

    # ------------------------------------------------------------------ cycle stepping
    def drive(self) -> tuple[bool, dict | None]:
        """Inputs for this cycle: (request ready, answer payload or None)."""
        self.req_ready = self.rng.random() < self.accept_rate
        if self.presenting is None:
            due = [p for p in self.pending if p.due <= self.cycle]
            if due:
                choice = self.rng.choice(due)
                if any(p.order < choice.order for p in self.pending if p is not choice):
                    self.stats.reordered += 1
                self.pending.remove(choice)
                self.presenting = choice
        answer = None
        if self.presenting is not None:
            answer = {"tag": self.presenting.tag, "data": self.perform_once(self.presenting)}
        return self.req_ready, answer

    def perform_once(self, req: _Pending) -> list[int]:
        # The access happens the first cycle its answer is presented; later cycles (waiting for
        # the core to take it) repeat the same data.
        if req.result is None:
            req.result = self.perform(req)
        return req.result

    def sample(self, req_valid: bool, req: dict | None, resp_ready: bool) -> None:
        """Outputs of this cycle: a request offered, and whether the core takes the answer."""
        if self.presenting is not None and resp_ready:
            self.stats.latencies.append(self.cycle - self.presenting.due + self.presenting.latency)
            self.presenting = None
        if req_valid and self.req_ready and req is not None:
            latency = self.rng.randint(self.min_latency, self.max_latency)
            pend = _Pending(tag=req["tag"], warp=req["warp"], store=bool(req["store"]), local=bool(req["local"]),
                            mask=req["mask"], addr=list(req["addr"]), data=list(req["data"]),
                            due=self.cycle + latency, latency=latency, order=self.order)
            self.order += 1
            if any(p.tag == pend.tag for p in self.pending) or (self.presenting and self.presenting.tag == pend.tag):
                raise MemoryModelError(f"tag {pend.tag} reused while its request is still in flight")
            self.pending.append(pend)
            self.stats.requests += 1
            self.stats.stores += pend.store
            self.stats.loads += not pend.store
            self.stats.max_in_flight = max(self.stats.max_in_flight, len(self.pending))
        self.cycle += 1

    @property
    def idle(self) -> bool:
        return not self.pending and self.presenting is None

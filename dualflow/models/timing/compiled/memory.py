"""The memory system of the compiled timing engine: a numba port of ``dualflow/models/timing/memory/``.

``global_access``, ``shared_access`` and ``flush_l1`` are njit functions on a ``MemoryState``
(``memory_state.py``) that do what ``MemorySystem.global_access``, ``shared_access`` and
``flush_l1`` do, operation for operation: the same ``Access`` results and the same statistics
for any sequence of requests (``tests/models/timing/test_compiled_memory.py`` checks this against the
reference on random and recorded request sequences). The reference is the specification; a
change there must be made here too, and those tests fail until it is. With a queued DRAM
controller (``memory.dram.scheduler`` ``queued-*``) the calls are ``queued_global_access`` and
``queued_shared_access`` (``memory_queued.py``), which answer with handles of cycles that may be
pending, and the memory system has events of its own (``next_event``, ``advance``:
``memory_machine.py``); ``flush_l1`` serves both.

``CompiledMemory`` wraps a state for Python callers: construction from a configuration or from
a reference ``MemorySystem`` (exact state transfer, ``memory_transfer.py``), the other direction
(``store_into``), ``stats()``, ``snapshot()``, ``flush_l1``, and with a queued controller
``advance`` and ``next_event``, its answers ``Pending`` where the reference's are.
"""

from __future__ import annotations

from types import SimpleNamespace

import numba
import numpy as np

from dualflow.machine.memory import MemoryConfig
from dualflow.models.timing.memory.dram import row_hit_latency
from dualflow.models.timing.memory.pending import Pending
from dualflow.models.timing.memory.statistics import build_tree, launch_tree, snapshot
from dualflow.models.timing.memory.system import MemorySystem

from .borrowed import borrow
from .memory_hierarchy import check_order, l1_load, l1_write_back, shared_port, store_port
from .memory_machine import advance, next_event, take_notes
from .memory_parts import cache_clear, cache_next_lru
from .memory_pending import known, release, value_of
from .memory_queue_state import N_ARG, N_VALUE
from .memory_queued import queued_global_access, queued_shared_access, then_note
from .memory_state import L1_FLUSHES, L1_LOAD_TX, LINE_DIRTY, LOAD_LATENCY, LOADS, MemoryState
from .memory_transfer import counter_arrays, counters_into_reference, state_from_reference, state_into_reference


# ---------------------------------------------------------------------- public njit API
@numba.njit(cache=True)
def global_access(st, cycle, sm, tx_line, tx_sectors, first, n, write):
    """``MemorySystem.global_access`` of the transactions ``tx_line[first:first + n]`` (line byte
    addresses) with sector masks ``tx_sectors[first:first + n]``; ``(port_free, done)``
    (reservation schedulers; ``queued_global_access`` for the queued ones).

    Raises ``ValueError`` if ``cycle`` is before an earlier request's.
    """
    check_order(st, cycle)
    st.now = cycle
    start = st.port[sm]
    if start < cycle:
        start = cycle
    st.sm_accesses[sm] += 1
    if not n:
        return start, start
    if write:
        port_free = store_port(st, sm, start, tx_line, tx_sectors, first, n)
        return port_free, port_free
    st.sm_transactions[sm] += n
    counts = st.counts
    counts[L1_LOAD_TX] += n
    tpc = st.tpc
    delay = 0
    done = start
    for i in range(n):
        c = start + delay + i // tpc
        c_after, ready = l1_load(st, sm, c, tx_line[first + i], tx_sectors[first + i])
        delay += c_after - c
        if ready > done:
            done = ready
    port_free = start + delay + -(-n // tpc)
    st.port[sm] = port_free
    counts[LOADS] += 1
    counts[LOAD_LATENCY] += done - cycle
    return port_free, done


@numba.njit(cache=True)
def shared_access(st, cycle, sm, degree):
    """``MemorySystem.shared_access``: a shared-memory access of conflict degree ``degree``;
    ``(port_free, done)`` (reservation schedulers)."""
    check_order(st, cycle)
    st.now = cycle
    start = st.port[sm]
    if start < cycle:
        start = cycle
    if degree <= 0:
        return start, start
    port_free = shared_port(st, sm, start, degree)
    return port_free, port_free - 1 + st.smem_latency


@numba.njit(cache=True)
def flush_l1(st, cycle):
    """``MemorySystem.flush_l1``: invalidate every L1 at ``cycle``, writing dirty lines back to L2
    cache by cache, set by set, each set in LRU order (the reference's dict order). The state is
    borrowed (borrowed.py), as ``run_launch`` borrows it: the memory system below is then the
    code compiled for the launches, not a second copy of it (numba compiles a function per
    argument type)."""
    _flush_l1(borrow(st), cycle)


@numba.njit(cache=True)
def _flush_l1(st, cycle):
    check_order(st, cycle)
    if st.queued:  # the events up to the flush run first (at the old current cycle)
        advance(st, cycle)
    st.now = cycle
    l1 = st.l1
    for row in range(l1.tag.shape[0]):
        if not l1.lines[row]:
            continue
        dirty = 0
        for w in range(l1.ways):
            if l1.tag[row, w] >= 0:
                dirty |= l1.line[row, w, LINE_DIRTY]
        if dirty:  # write back in LRU order
            way = cache_next_lru(l1, row, 0)
            while way >= 0:
                if l1.line[row, way, LINE_DIRTY]:
                    l1_write_back(st, cycle, l1.tag[row, way], l1.line[row, way, LINE_DIRTY])
                way = cache_next_lru(l1, row, l1.lru[row, way])
        cache_clear(l1, row)
    st.counts[L1_FLUSHES] += 1


# Python's calls on a queued system borrow the state, as ``flush_l1`` does.
@numba.njit(cache=True)
def _queued_global(st, cycle, sm, tx_line, tx_sectors, write):
    return queued_global_access(borrow(st), cycle, sm, tx_line, tx_sectors, 0, len(tx_line), write)


@numba.njit(cache=True)
def _queued_shared(st, cycle, sm, degree):
    return queued_shared_access(borrow(st), cycle, sm, degree)


@numba.njit(cache=True)
def _advance(st, cycle):
    advance(borrow(st), cycle)


@numba.njit(cache=True)
def _next_event(st):
    return next_event(borrow(st))


# ---------------------------------------------------------------------- Python wrapper
class CompiledMemory:
    """A compiled memory system with the behaviour of ``MemorySystem(config, num_sms, core_clock_mhz)``.

    Members
    -------
    state : MemoryState
        The numba state: pass it to ``global_access``, ``shared_access`` and ``flush_l1`` (the
        ``queued_*`` calls and ``advance`` with a queued DRAM controller).
    config : MemoryConfig
    num_sms : int
    core_clock_mhz : float
    queued : bool
        Whether DRAM requests wait in controller queues (``MemorySystem.queued``).
    """

    def __init__(self, config: MemoryConfig, num_sms: int, core_clock_mhz: float, *, record_dram: bool = False):
        self._load(MemorySystem(config, num_sms, core_clock_mhz, record_dram=record_dram))

    @classmethod
    def from_reference(cls, ms: MemorySystem) -> CompiledMemory:
        """A compiled memory system in exactly the state of ``ms`` (which is not changed)."""
        self = cls.__new__(cls)
        self._load(ms)
        return self

    def _load(self, ms: MemorySystem) -> None:
        self.config, self.num_sms, self.core_clock_mhz = ms.config, ms.num_sms, ms.core_clock_mhz
        self.state: MemoryState = state_from_reference(ms)
        # what ``statistics.snapshot`` reads of a MemorySystem, the counters only: a whole
        # MemorySystem (its caches' sets) takes 15 ms to build, a gaussian launch 4 ms to run
        self._counters = SimpleNamespace(_icnt=SimpleNamespace(), _dram=SimpleNamespace(),
                                         _smem_interval=int(self.state.smem_interval))
        self._counter_arrays = counter_arrays(self.state)
        self.queued = ms._queued
        self._waiting: dict[int, Pending] = {}  # note token -> the answer given to Python
        self._tokens = 0

    def store_into(self, ms: MemorySystem) -> None:
        """Put this state into the reference ``ms`` (same configuration), replacing its own."""
        if (ms.config, ms.num_sms, ms.core_clock_mhz) != (self.config, self.num_sms, self.core_clock_mhz):
            raise ValueError("store_into needs a MemorySystem of the same configuration, SM count and clock")
        state_into_reference(self.state, ms)

    def to_reference(self) -> MemorySystem:
        """A reference memory system in this state."""
        ms = MemorySystem(self.config, self.num_sms, self.core_clock_mhz)
        self.store_into(ms)
        return ms

    @property
    def smem_interval(self) -> int:
        """Cycles a shared-memory bank round holds the port (``counters_tree`` needs it)."""
        return self._counters._smem_interval

    @property
    def dram_latency(self) -> int:
        """Unloaded row-hit DRAM latency of a line in core cycles (``MemorySystem.dram_latency``)."""
        st = self.state
        return row_hit_latency(int(st.dram_latency), float(st.tcl), 1 << int(st.line_shift),
                               float(st.cycles_per_byte))

    def dram_requests(self) -> list[tuple[int, int, int, int, int, int]] | None:
        """``MemorySystem.dram_requests``: the DRAM requests made so far if recording, else None."""
        st = self.state
        log = st.dram_log
        return [tuple(row) for row in log[:int(st.dram_logged)].tolist()] if log.shape[0] else None

    def global_access(self, cycle: int, sm: int, tx_line, tx_sectors, *,
                      write: bool) -> tuple[int | Pending, int | Pending]:
        """``global_access`` of all of ``tx_line``/``tx_sectors`` (int64 arrays), from Python:
        ``(port_free, done)``, ``Pending`` where the reference's answers are (queued DRAM)."""
        if self.queued:
            port_free, done = _queued_global(self.state, cycle, sm, tx_line, tx_sectors, write)
            return self._answer(port_free), self._answer(done)
        port_free, done = global_access(self.state, cycle, sm, tx_line, tx_sectors, 0, len(tx_line), write)
        return int(port_free), int(done)

    def shared_access(self, cycle: int, sm: int, degree: int) -> tuple[int | Pending, int | Pending]:
        """``shared_access`` from Python."""
        if self.queued:
            port_free, done = _queued_shared(self.state, cycle, sm, degree)
            return self._answer(port_free), self._answer(done)
        port_free, done = shared_access(self.state, cycle, sm, degree)
        return int(port_free), int(done)

    def flush_l1(self, cycle: int) -> None:
        """``MemorySystem.flush_l1``."""
        flush_l1(self.state, cycle)
        self._take_notes()

    def next_event(self) -> int | None:
        """``MemorySystem.next_event``: the first cycle at which the memory system has something to
        do by itself (None: nothing)."""
        cycle = int(_next_event(self.state))
        return None if cycle < 0 else cycle

    def advance(self, cycle: int) -> None:
        """``MemorySystem.advance``: run the memory system's events up to ``cycle``; the answers
        they make known are resolved."""
        if self.queued:
            _advance(self.state, cycle)
            self._take_notes()

    def _answer(self, h: int) -> int | Pending:
        """A handle as the reference's answer: an int, or a ``Pending`` (resolved if it is known)."""
        if h >= 0:
            return int(h)
        answer = Pending()
        q = self.state.q
        if known(q, h):
            answer.resolve(int(value_of(q, h)))
            release(q, h)
        else:
            self._tokens += 1
            self._waiting[self._tokens] = answer
            then_note(self.state, h, 0, self._tokens, 0, 0, 0)
        return answer

    def _take_notes(self) -> None:
        if self.queued:
            for row in take_notes(self.state).tolist():
                self._waiting.pop(row[N_ARG]).resolve(row[N_VALUE])

    def stats(self) -> dict:
        """Exactly ``MemorySystem.stats()`` of the reference in this state."""
        return build_tree(self.snapshot(), self.num_sms)

    def snapshot(self) -> list:
        """Exactly ``MemorySystem.snapshot()`` of the reference in this state."""
        return _snapshot_of(self._counter_arrays, self._counters)

    def counters(self) -> tuple[np.ndarray, ...]:
        """The statistics' counters now, copied (a few microseconds; a ``snapshot`` takes tens):
        ``counters_tree`` of two gives the tree of what was counted between them."""
        return tuple(a.copy() for a in self._counter_arrays)


def counters_tree(after: tuple[np.ndarray, ...], before: tuple[np.ndarray, ...], smem_interval: int,
                  num_sms: int) -> dict:
    """``statistics.launch_tree`` of the snapshots of two ``CompiledMemory.counters`` of a memory
    system whose shared-memory bank interval is ``smem_interval``."""
    scratch = SimpleNamespace(_icnt=SimpleNamespace(), _dram=SimpleNamespace(), _smem_interval=smem_interval)
    return launch_tree(_snapshot_of(after, scratch), _snapshot_of(before, scratch), num_sms)


def _snapshot_of(counters: tuple[np.ndarray, ...], scratch: SimpleNamespace) -> list:
    """``statistics.snapshot`` of the counters (``counter_arrays``), read through ``scratch``."""
    counters_into_reference(counters, scratch)
    return snapshot(scratch)

"""Recorded request logs of a reference memory system, and their replay into a compiled one.

``record_memory()`` records every call made to any ``MemorySystem`` created while it is active
(``global_access``, ``shared_access``, ``flush_l1``, and ``stats`` with the tree it returned),
with the results the reference gave. ``replay`` feeds a log's calls to a compiled state from njit
code, as the compiled engine does, and returns the results. The tests check compiled replays of
real runs against the recorded results; ``benchmarks/memory_speed.py`` times both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numba
import numpy as np

from dualflow.machine.memory import MemoryConfig
from dualflow.models.timing.memory.coalescer import Transaction
from dualflow.models.timing.memory.system import Access, MemorySystem

from .memory import flush_l1, global_access, shared_access

#: ``MemoryLog.kind`` of each call.
GLOBAL, SHARED, FLUSH = 0, 1, 2


@dataclass
class MemoryLog:
    """The calls made to one reference memory system, in order.

    Members
    -------
    config, num_sms, core_clock_mhz
        How the memory system was built.
    kind, cycle, sm : int64[calls]
        ``GLOBAL``, ``SHARED`` or ``FLUSH``; the call's cycle and SM (0 for flushes).
    arg : int64[calls]
        ``GLOBAL``: 1 for a store, 0 for a load; ``SHARED``: the conflict degree.
    tx_first, tx_count : int64[calls]
        ``GLOBAL``: the call's transactions in ``tx_line``/``tx_sectors``.
    tx_line, tx_sectors : int64[transactions]
    port_free, done : int64[calls]
        The reference's ``Access`` (0 for flushes).
    stats : list[tuple[int, dict]]
        ``(calls made before it, tree)`` for every ``stats()`` call.
    """

    config: MemoryConfig
    num_sms: int
    core_clock_mhz: float
    calls: list = field(default_factory=list, repr=False)
    transactions: list = field(default_factory=list, repr=False)
    stats: list = field(default_factory=list)

    def freeze(self) -> None:
        """Turn the recorded calls into the int64 arrays (done by ``record_memory`` on exit)."""
        calls = np.array(self.calls, np.int64).reshape(-1, 8)
        (self.kind, self.cycle, self.sm, self.arg, self.tx_first, self.tx_count, self.port_free,
         self.done) = (calls[:, i].copy() for i in range(8))
        tx = np.array(self.transactions, np.int64).reshape(-1, 2)
        self.tx_line, self.tx_sectors = tx[:, 0].copy(), tx[:, 1].copy()

    def transactions_of(self, i: int) -> list[Transaction]:
        """Call ``i``'s transactions as the reference takes them (useful bytes are not timed: 0)."""
        first, n = self.tx_first[i], self.tx_count[i]
        return [Transaction(int(line), int(sectors), 0)
                for line, sectors in zip(self.tx_line[first:first + n], self.tx_sectors[first:first + n])]


@contextmanager
def record_memory() -> Iterator[list[MemoryLog]]:
    """Record the calls to every ``MemorySystem`` built inside the block; yields the list of
    their logs (one per system, frozen when the block ends)."""
    logs: list[MemoryLog] = []
    owners: dict[int, MemoryLog] = {}
    init, ga, sa, fl, st = (MemorySystem.__init__, MemorySystem.global_access, MemorySystem.shared_access,
                            MemorySystem.flush_l1, MemorySystem.stats)

    def new_init(self, config, num_sms, core_clock_mhz, **options):
        init(self, config, num_sms, core_clock_mhz, **options)
        owners[id(self)] = log = MemoryLog(config, num_sms, core_clock_mhz)
        logs.append(log)

    def new_global(self, cycle, sm, transactions, *, write):
        access: Access = ga(self, cycle, sm, transactions, write=write)
        log = owners[id(self)]
        log.calls.append((GLOBAL, cycle, sm, int(write), len(log.transactions), len(transactions),
                          access.port_free, access.done))
        log.transactions.extend((tx[0], tx[1]) for tx in transactions)
        return access

    def new_shared(self, cycle, sm, degree):
        access: Access = sa(self, cycle, sm, degree)
        owners[id(self)].calls.append((SHARED, cycle, sm, degree, 0, 0, access.port_free, access.done))
        return access

    def new_flush(self, cycle):
        fl(self, cycle)
        owners[id(self)].calls.append((FLUSH, cycle, 0, 0, 0, 0, 0, 0))

    def new_stats(self):
        tree = st(self)
        log = owners[id(self)]
        log.stats.append((len(log.calls), tree))
        return tree

    MemorySystem.__init__, MemorySystem.global_access, MemorySystem.shared_access = new_init, new_global, new_shared
    MemorySystem.flush_l1, MemorySystem.stats = new_flush, new_stats
    try:
        yield logs
    finally:
        MemorySystem.__init__, MemorySystem.global_access, MemorySystem.shared_access = init, ga, sa
        MemorySystem.flush_l1, MemorySystem.stats = fl, st
        for log in logs:
            log.freeze()


@numba.njit(cache=True)
def _replay(state, kind, cycle, sm, arg, tx_first, tx_count, tx_line, tx_sectors, begin, port_free, done):
    for j in range(port_free.shape[0]):
        i = begin + j
        if kind[i] == GLOBAL:
            port_free[j], done[j] = global_access(state, cycle[i], sm[i], tx_line, tx_sectors, tx_first[i],
                                                  tx_count[i], arg[i] != 0)
        elif kind[i] == SHARED:
            port_free[j], done[j] = shared_access(state, cycle[i], sm[i], arg[i])
        else:
            flush_l1(state, cycle[i])


def replay(log: MemoryLog, state, begin: int = 0, end: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Make calls ``begin..end`` of ``log`` on the compiled ``state`` in one njit loop; their
    ``(port_free, done)`` (0 for flushes)."""
    end = len(log.kind) if end is None else end
    port_free = np.zeros(end - begin, np.int64)
    done = np.zeros(end - begin, np.int64)
    _replay(state, log.kind, log.cycle, log.sm, log.arg, log.tx_first, log.tx_count, log.tx_line, log.tx_sectors,
            begin, port_free, done)
    return port_free, done

"""Recorded request logs of a reference memory system, and their replay into a compiled one.

``record_memory()`` records every call made to any ``MemorySystem`` created while it is active
(``global_access``, ``shared_access``, ``flush_l1``, ``advance``, and ``stats`` with the tree it
returned), with the results the reference gave: with a queued DRAM controller an answer may be
``Pending``, and the log keeps its value and the call during which it became known. ``replay``
feeds a log's calls to a compiled state from njit code, as the compiled engine does, and returns
the results (reservation schedulers); ``replay_queued`` replays a queued log through a
``CompiledMemory`` and checks every answer and when it became known. The tests check compiled
replays of real runs against the recorded results; ``benchmarks/memory_speed.py`` times both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numba
import numpy as np

from dualflow.machine.memory import MemoryConfig
from dualflow.models.timing.memory.coalescer import Transaction
from dualflow.models.timing.memory.pending import Pending
from dualflow.models.timing.memory.system import Access, MemorySystem

from .memory import CompiledMemory, flush_l1, global_access, shared_access

#: ``MemoryLog.kind`` of each call.
GLOBAL, SHARED, FLUSH, ADVANCE = 0, 1, 2, 3
#: ``MemoryLog.port_when`` / ``done_when`` of an answer that was an int, or a ``Pending`` known
#: when it was returned (else: the call during which it became known).
ANSWERED, KNOWN = -1, -2


@dataclass
class MemoryLog:
    """The calls made to one reference memory system, in order.

    Members
    -------
    config, num_sms, core_clock_mhz
        How the memory system was built.
    kind, cycle, sm : int64[calls]
        ``GLOBAL``, ``SHARED``, ``FLUSH`` or ``ADVANCE``; the call's cycle and SM (0 for the last two).
    arg : int64[calls]
        ``GLOBAL``: 1 for a store, 0 for a load; ``SHARED``: the conflict degree.
    tx_first, tx_count : int64[calls]
        ``GLOBAL``: the call's transactions in ``tx_line``/``tx_sectors``.
    tx_line, tx_sectors : int64[transactions]
    port_free, done : int64[calls]
        The reference's ``Access`` (0 for flushes and advances; a ``Pending``'s value).
    port_when, done_when : int64[calls]
        ``ANSWERED``, ``KNOWN`` or the call during which the ``Pending`` became known.
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
        calls = [(*call[:6], *_answer(call[6]), *_answer(call[7])) for call in self.calls]
        calls = np.array(calls, np.int64).reshape(-1, 10)
        (self.kind, self.cycle, self.sm, self.arg, self.tx_first, self.tx_count, self.port_free, self.port_when,
         self.done, self.done_when) = (calls[:, i].copy() for i in range(10))
        tx = np.array(self.transactions, np.int64).reshape(-1, 2)
        self.tx_line, self.tx_sectors = tx[:, 0].copy(), tx[:, 1].copy()

    def transactions_of(self, i: int) -> list[Transaction]:
        """Call ``i``'s transactions as the reference takes them (useful bytes are not timed: 0)."""
        first, n = self.tx_first[i], self.tx_count[i]
        return [Transaction(int(line), int(sectors), 0)
                for line, sectors in zip(self.tx_line[first:first + n], self.tx_sectors[first:first + n])]


class _Answer:
    """A ``Pending`` answer being recorded: its value and the call during which it became known."""

    __slots__ = ("pending", "when")

    def __init__(self, pending: Pending, log: MemoryLog):
        self.pending = pending
        self.when = KNOWN if pending.value is not None else None
        if self.when is None:  # run last of its waiters: records, changes nothing
            pending.then(lambda _: setattr(self, "when", len(log.calls)))


def _answer(x: int | _Answer) -> tuple[int, int]:
    """(value, when) of a recorded answer."""
    if isinstance(x, _Answer):
        if x.when is None:
            raise ValueError("a recorded answer was still pending when recording ended")
        return x.pending.value, x.when
    return x, ANSWERED


@contextmanager
def record_memory() -> Iterator[list[MemoryLog]]:
    """Record the calls to every ``MemorySystem`` built inside the block; yields the list of
    their logs (one per system, frozen when the block ends)."""
    logs: list[MemoryLog] = []
    owners: dict[int, MemoryLog] = {}
    init, ga, sa, fl, st, adv = (MemorySystem.__init__, MemorySystem.global_access, MemorySystem.shared_access,
                                 MemorySystem.flush_l1, MemorySystem.stats, MemorySystem.advance)

    def answers(log: MemoryLog, access: Access) -> tuple:
        return tuple(x if type(x) is int else _Answer(x, log) for x in (access.port_free, access.done))

    def new_init(self, config, num_sms, core_clock_mhz, **options):
        init(self, config, num_sms, core_clock_mhz, **options)
        owners[id(self)] = log = MemoryLog(config, num_sms, core_clock_mhz)
        logs.append(log)

    def new_global(self, cycle, sm, transactions, *, write):
        access: Access = ga(self, cycle, sm, transactions, write=write)
        log = owners[id(self)]
        log.calls.append((GLOBAL, cycle, sm, int(write), len(log.transactions), len(transactions),
                          *answers(log, access)))
        log.transactions.extend((tx[0], tx[1]) for tx in transactions)
        return access

    def new_shared(self, cycle, sm, degree):
        access: Access = sa(self, cycle, sm, degree)
        log = owners[id(self)]
        log.calls.append((SHARED, cycle, sm, degree, 0, 0, *answers(log, access)))
        return access

    def new_flush(self, cycle):
        fl(self, cycle)
        owners[id(self)].calls.append((FLUSH, cycle, 0, 0, 0, 0, 0, 0))

    def new_advance(self, cycle):
        adv(self, cycle)
        if self.queued:
            owners[id(self)].calls.append((ADVANCE, cycle, 0, 0, 0, 0, 0, 0))

    def new_stats(self):
        tree = st(self)
        log = owners[id(self)]
        log.stats.append((len(log.calls), tree))
        return tree

    MemorySystem.__init__, MemorySystem.global_access, MemorySystem.shared_access = new_init, new_global, new_shared
    MemorySystem.flush_l1, MemorySystem.stats, MemorySystem.advance = new_flush, new_stats, new_advance
    try:
        yield logs
    finally:
        MemorySystem.__init__, MemorySystem.global_access, MemorySystem.shared_access = init, ga, sa
        MemorySystem.flush_l1, MemorySystem.stats, MemorySystem.advance = fl, st, adv
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
        elif kind[i] == FLUSH:
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


def replay_queued(log: MemoryLog, cm: CompiledMemory) -> None:
    """Make the calls of a queued log on ``cm`` from Python: every answer must be the recorded
    one, an int where it was one, ``Pending`` where it was, known during the same call, with the
    same value; every statistics tree the same (``AssertionError`` naming the call otherwise)."""
    stats = dict(log.stats)
    waiting: list[tuple[int, str, Pending]] = []  # (call, which answer, the compiled Pending)
    for i in range(len(log.kind)):
        if i in stats:
            assert cm.stats() == stats[i], f"statistics before call {i}"
        cycle, sm, kind = int(log.cycle[i]), int(log.sm[i]), log.kind[i]
        if kind == FLUSH:
            cm.flush_l1(cycle)
        elif kind == ADVANCE:
            cm.advance(cycle)
        else:
            if kind == GLOBAL:
                first, n = log.tx_first[i], log.tx_count[i]
                answers = cm.global_access(cycle, sm, log.tx_line[first:first + n], log.tx_sectors[first:first + n],
                                           write=bool(log.arg[i]))
            else:
                answers = cm.shared_access(cycle, sm, int(log.arg[i]))
            for which, got, value, when in zip(("port_free", "done"), answers, (log.port_free[i], log.done[i]),
                                               (log.port_when[i], log.done_when[i])):
                if when == ANSWERED:
                    assert got == value, f"call {i}: {which} {got}, reference {value}"
                else:
                    assert isinstance(got, Pending), f"call {i}: {which} {got}, reference pending"
                    assert (got.value is not None) == (when == KNOWN), f"call {i}: {which} known {got.value}"
                    waiting.append((i, which, got))
        still = []
        for call, which, got in waiting:
            when = log.port_when[call] if which == "port_free" else log.done_when[call]
            value = log.port_free[call] if which == "port_free" else log.done[call]
            if got.value is None:
                assert when != i, f"call {call}: {which} not known after call {i}, the reference's was"
                still.append((call, which, got))
            else:
                assert when in (KNOWN, i) or call == i, f"call {call}: {which} known at call {i}, reference {when}"
                assert got.value == value, f"call {call}: {which} {got.value}, reference {value}"
        waiting = still
    if len(log.kind) in stats:
        assert cm.stats() == stats[len(log.kind)], "statistics at the end"

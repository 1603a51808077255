"""The memory system of the performance model, timed by reservation.

Nothing ticks. Each SM's L1/shared port keeps the next cycle at which it is free; each slice's
interconnect ports and each DRAM channel keep their busy intervals (``Timeline``) and put a
request in the first gap that fits (a request made later may need them earlier: an L2 hit's
reply goes out before an earlier miss's); the MSHR files keep the cycles at which their entries
free; caches keep, per sector, the cycle from which its data is present. A request
made at cycle ``t`` therefore computes its completion at once: through the L1 (tag lookup, LRU,
hit / merge into an in-flight fill / miss with MSHR allocation, stalling the port while the MSHRs
are full), the interconnect (latency + slice port occupancy), the L2 slice (tags, LRU, latency,
its own merging of in-flight misses) and DRAM (fixed latency, then the bank's row hit or miss
timing and the channel's data bus, ``dram.py``), and back. Callers must present requests in
non-decreasing cycle order across all SMs; this is checked.

Paths:

- Global loads: L1 (sectored, allocate on miss, fetch only the missing sectors) -> L2 -> DRAM.
- Global stores: write-through, no write-allocate in L1 (a hit updates the line in place); the
  data goes to L2 (write-back, write-allocate without fetch), occupying the request port; the
  warp only waits for the L1 to accept it. Dirty L2 lines are written to DRAM when evicted.
- Local memory (addresses from ``coalescer.local_addresses``, all at or above ``LOCAL_BASE``):
  cached in L1 write-back with write-allocate, as Fermi-and-later L1s hold register spills: a
  store allocates its line without fetching and marks its sectors valid and dirty; a dirty line
  reaches L2 only when evicted. Loads behave as global loads.
- ``l1.caches_global`` / ``l1.caches_local`` False: that space bypasses the L1 (loads go to L2
  holding MSHRs but never hit or merge; stores write through), as on GT200.
- Shared memory: the access holds the SM's L1/shared port ``shared.bank_interval`` cycles per
  bank round (``conflict_degree``); the L1 and shared memory are one array on Volta and later,
  so they share the port.

Timing of a warp access of ``n`` transactions issued at ``t``: it starts at
``s = max(t, port free)``; transaction ``i`` passes the port at ``s + i // transactions_per_cycle``
plus any MSHR stall so far. A hit's data is back ``l1.hit_latency`` after its port cycle. A miss
enters the interconnect at its port cycle, reaches its slice after ``interconnect.latency`` (later
if the slice's request port is busy), gets its tag result ``l2.hit_latency`` later, reads DRAM on an L2 miss
(``dram.latency`` core cycles to the controller, then tCL on a row hit or tRP + tRCD + tCL on a
row miss, then the burst on the channel's data bus; ``dram.py``), and returns through the slice's reply port and the
interconnect latency. ``Access.done`` is the latest transaction's data (loads) or the port
release (stores).

Simplified: tag arrays and MSHR files see requests in the order they are made; SM ejection
bandwidth is not modelled; lines in flight can be evicted (their waiting requests still get
their data); a partly written sector counts as written whole; DRAM has banks and rows but no
refresh, bank-group or read/write-turnaround timing; L2 write acknowledgements are not modelled.
docs/memory-system.md has the details.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import deque
from dataclasses import dataclass

from dualflow.common.errors import ConfigError
from dualflow.machine.memory import MemoryConfig

from .cache import Line, MshrFile, SectorCache
from .coalescer import LOCAL_BASE, Transaction
from .dram import Dram
from .dram_queue import DramQueues
from .events import EventQueue
from .interconnect import Interconnect
from .pending import IN_FLIGHT, Pending, later, then_map, when
from .statistics import build_tree, snapshot

#: Primitive polynomials over GF(2) of degree 1..10 (bit k = coefficient of x^k), for the IPOLY slice hash.
_PRIMITIVE = {1: 0b11, 2: 0b111, 3: 0b1011, 4: 0b10011, 5: 0b100101, 6: 0b1000011, 7: 0b10000011,
              8: 0b100011101, 9: 0b1000010001, 10: 0b10000001001}


@dataclass(frozen=True, slots=True)
class Access:
    """Timing of one warp access, in core cycles.

    Members
    -------
    port_free : int or Pending
        First cycle at which this SM's L1/shared port can start the next warp access.
    done : int or Pending
        Loads and shared accesses: the cycle at which the data of every transaction is back at
        the SM. Global and local stores: the cycle the L1 has accepted the last transaction.
        Either is ``Pending`` only with a queued DRAM controller, while it waits for DRAM.
    """

    port_free: int | Pending
    done: int | Pending


def _sectors(mask: int) -> list[int]:
    """The sector numbers set in the sector mask ``mask``, in increasing order."""
    return [k for k in range(mask.bit_length()) if mask >> k & 1]


@functools.cache  # pure and costly (tens of ms); every GPU of a run shares it
def _ipoly_tables(slices: int) -> tuple[tuple[int, ...], ...]:
    """Per byte position j (0..5) of a line index: byte b -> (b * x^(8j)) mod P(x), P primitive of
    degree log2(slices), so the residue of a whole index is the XOR of six lookups."""
    degree = slices.bit_length() - 1
    poly = _PRIMITIVE.get(degree, 0)

    def mod(value: int) -> int:
        while value.bit_length() > degree:
            value ^= poly << (value.bit_length() - degree - 1)
        return value

    return tuple(tuple(mod(b << (8 * j)) for b in range(256)) for j in range(6))


class _PortJob:
    """A warp access holding, or waiting for, its SM's L1/shared port (queued DRAM only): the
    transactions already through the port (``i``), the stall so far (``delay``), the data cycles
    known (``ready``) and pending (``waits``). ``port_free`` and ``done`` are set when it ends, or
    are ``Pending`` if the caller had to be answered before."""

    __slots__ = ("cycle", "transactions", "write", "degree", "start", "i", "delay", "ready", "waits",
                 "stalled", "port_free", "done")

    def __init__(self, cycle: int, transactions: list[Transaction] | None, write: bool, degree: int):
        self.cycle, self.transactions, self.write, self.degree = cycle, transactions, write, degree
        self.start = -1
        self.i = self.delay = 0
        self.ready = cycle
        self.waits: list[Pending] = []
        self.stalled = -1  # the transaction whose stall is counted already
        self.port_free: int | Pending | None = None
        self.done: int | Pending | None = None


class _SliceJob:
    """An L2 read at, or queued behind, its slice's input (queued DRAM only); ``result`` as ``_PortJob``'s."""

    __slots__ = ("arrive", "index", "sectors", "stalled", "result")

    def __init__(self, arrive: int, index: int, sectors: int):
        self.arrive, self.index, self.sectors = arrive, index, sectors
        self.stalled = False
        self.result: int | Pending | None = None


def _latest(*cycles: int | Pending) -> int | Pending:
    """The latest of ``cycles``, pending while any of them is."""
    return later(max((c for c in cycles if type(c) is int), default=-1), [c for c in cycles if type(c) is not int])


class MemorySystem:
    """L1 and shared memory of every SM, the interconnect, the L2 slices and DRAM.

    Parameters
    ----------
    config : MemoryConfig
    num_sms : int
        SMs sharing the L2 (each has its own L1, MSHRs and port).
    core_clock_mhz : float
        The SM clock, in which every cycle is counted (DRAM latency and bandwidth are converted).
    record_dram : bool
        Keep every DRAM request as it is made (``dram_requests``).
    """

    def __init__(self, config: MemoryConfig, num_sms: int, core_clock_mhz: float, *, record_dram: bool = False):
        if not isinstance(config, MemoryConfig):
            raise ConfigError(f"MemorySystem needs a MemoryConfig, not {config!r}")
        if not isinstance(num_sms, int) or isinstance(num_sms, bool) or num_sms <= 0:
            raise ConfigError(f"MemorySystem: num_sms must be a positive integer, not {num_sms!r}")
        if not isinstance(core_clock_mhz, (int, float)) or not core_clock_mhz > 0:
            raise ConfigError(f"MemorySystem: core_clock_mhz must be positive, not {core_clock_mhz!r}")
        self.config, self.num_sms, self.core_clock_mhz = config, num_sms, core_clock_mhz
        l1, l2, icnt = config.l1, config.l2, config.interconnect
        self._line_bytes, self._sector_bytes = l1.line_bytes, l1.sector_bytes
        self._line_shift = l1.line_bytes.bit_length() - 1
        sectors = l1.line_bytes // l1.sector_bytes
        self._l1_sets, self._l1_hit, self._l1_merges = l1.sets, l1.hit_latency, l1.max_merges
        self._tpc = l1.transactions_per_cycle
        self._l1_bypass = (not l1.caches_global, not l1.caches_local)  # indexed by "is local"
        self._l1 = [SectorCache(l1.sets, l1.ways, sectors) for _ in range(num_sms)]
        self._l1_mshr = [MshrFile(l1.mshr_entries) for _ in range(num_sms)]
        self._port = [0] * num_sms
        self._slices, self._l2_sets = l2.slices, l2.sets_per_slice
        self._l2_hit, self._l2_merges = l2.hit_latency, l2.max_merges
        self._l2 = [SectorCache(l2.sets_per_slice, l2.ways, sectors) for _ in range(l2.slices)]
        self._l2_mshr = [MshrFile(l2.mshr_entries) for _ in range(l2.slices)]
        self._ipoly = _ipoly_tables(l2.slices) if l2.slice_hash == "ipoly" and l2.slices > 1 else None
        self._icnt = Interconnect(icnt, l2.slices)
        dram = config.dram
        self._queued = dram.scheduler.startswith("queued-")
        if self._queued:  # the queue orders the requests; the device times them in that order
            self._dram = Dram(dataclasses.replace(dram, scheduler="fcfs"), core_clock_mhz, l2.line_bytes)
            self.events = EventQueue()
            self._dram_queues = DramQueues(self._dram, dram.queue_entries, dram.scheduler == "queued-frfcfs",
                                           self.events)
            self._port_jobs: list[deque[_PortJob]] = [deque() for _ in range(num_sms)]
            self._slice_jobs: list[deque[_SliceJob]] = [deque() for _ in range(l2.slices)]
        else:
            self._dram = Dram(dram, core_clock_mhz, l2.line_bytes)
        self._dram.log = [] if record_dram else None
        # packet sizes by number of sectors carried
        self._read_flits = self._icnt.flits(0)
        self._data_flits = [self._icnt.flits(n * l1.sector_bytes) for n in range(sectors + 1)]
        self._smem_latency = config.shared.latency
        self._smem_interval, self._smem_parts = config.shared.bank_interval, config.shared.warp_parts
        self._now = 0
        # statistics (plain ints: this is the hot path)
        self.sm_accesses = [0] * num_sms
        self.sm_transactions = [0] * num_sms
        self.l1_load_tx = self.l1_hits = self.l1_misses = self.l1_sector_misses = self.l1_merges = 0
        self.l1_missed_sectors = self.l1_mshr_stalls = self.l1_mshr_stall_cycles = self.l1_bypassed = 0
        self.l1_merge_stalls = self.l1_merge_stall_cycles = 0
        self.l1_store_tx = self.l1_store_hits = self.l1_store_misses = 0
        self.l1_writebacks = self.l1_writeback_sectors = self.l1_flushes = 0
        self.l2_reads = self.l2_read_hits = self.l2_read_misses = self.l2_merges = self.l2_missed_sectors = 0
        self.l2_merge_stalls = self.l2_mshr_stalls = self.l2_stall_cycles = 0
        self.l2_writes = self.l2_write_hits = self.l2_write_misses = self.l2_writebacks = 0
        self.smem_accesses = self.smem_rounds = self.smem_conflict_rounds = 0
        self.loads = self.load_latency = 0

    # ------------------------------------------------------------------ public API
    def global_access(self, cycle: int, sm: int, transactions: list[Transaction], *, write: bool) -> Access:
        """Time one warp's global or local access made at ``cycle`` by SM ``sm``.

        Parameters
        ----------
        cycle : int
            Core cycle of the request; never less than that of any earlier request.
        sm : int
            Requesting SM.
        transactions : list[Transaction]
            From ``coalesce`` (local accesses: of ``local_addresses``).
        write : bool
            Store (True) or load.

        Returns
        -------
        Access
            With no transactions (no active lane): the port is not held, ``done`` is its start.
        """
        self._check_order(cycle)
        self._now = cycle
        self.sm_accesses[sm] += 1
        return self._access(sm, _PortJob(cycle, transactions, write, 0))

    def shared_access(self, cycle: int, sm: int, degree: int) -> Access:
        """Time one warp's shared-memory access of conflict degree ``degree`` (from ``conflict_degree``).

        The access holds the SM's port ``degree * shared.bank_interval`` cycles; its data is back
        ``shared.latency`` after the last bank cycle. Degree 0 (no active lane) holds nothing and
        is done at once.
        """
        self._check_order(cycle)
        self._now = cycle
        return self._access(sm, _PortJob(cycle, None, False, degree))

    def _check_order(self, cycle: int) -> None:
        """Refuse a request made before the current cycle (requests come in cycle order)."""
        if cycle < self._now:
            raise ValueError(f"memory requests must come in cycle order: cycle {cycle} after cycle {self._now}")

    def _access(self, sm: int, job: _PortJob) -> Access:
        """``job``'s timing: through the port now, or (queued DRAM) in its turn at the port."""
        if self._queued:
            return self._port_access(sm, job)
        self._step(sm, job)
        return Access(job.port_free, job.done)

    # ------------------------------------------------------------------ the port
    def _step(self, sm: int, job: _PortJob) -> bool:
        """Take ``job`` through the port as far as it can go: True when it is through (its
        ``port_free`` and ``done`` set, or resolved), False when it waits (queued DRAM only: a full
        MSHR file, or a fill to merge into that is pending), to go on in ``_resume_port``."""
        if job.start < 0:
            job.start = max(self._port[sm], job.cycle)
        start, transactions = job.start, job.transactions
        if transactions is None:
            degree = job.degree
            if degree <= 0:
                return self._through(job, start, start)
            self.smem_accesses += 1
            self.smem_rounds += degree
            # rounds beyond one per part: a warp served in half-warps needs two rounds without conflict
            self.smem_conflict_rounds += degree - min(degree, self._smem_parts)
            port_free = start + degree * self._smem_interval
            self._port[sm] = port_free
            return self._through(job, port_free, port_free - 1 + self._smem_latency)
        n = len(transactions)
        if not n:
            return self._through(job, start, start)
        tpc = self._tpc
        if job.write:  # never waits
            self.sm_transactions[sm] += n
            self.l1_store_tx += n
            for i, tx in enumerate(transactions):
                self._l1_store(sm, start + i // tpc, tx[0], tx[1])
            port_free = start + -(-n // tpc)
            self._port[sm] = port_free
            return self._through(job, port_free, port_free)
        if not job.i and job.stalled < 0:
            self.sm_transactions[sm] += n
            self.l1_load_tx += n
        while job.i < n:
            c = start + job.delay + job.i // tpc
            tx = transactions[job.i]
            answer = self._l1_load(sm, c, tx[0], tx[1])
            if answer is None:
                return False
            c_after, ready = answer
            job.delay += c_after - c
            if type(ready) is int:
                job.ready = max(job.ready, ready)
            else:
                job.waits.append(ready)
            job.i += 1
        port_free = start + job.delay + -(-n // tpc)
        self._port[sm] = port_free
        done = later(job.ready, job.waits)
        when(done, lambda cycle: self._count_load(cycle - job.cycle))
        return self._through(job, port_free, done)

    def _count_load(self, latency: int) -> None:
        self.loads += 1
        self.load_latency += latency

    @staticmethod
    def _through(job: _PortJob, port_free: int, done: int | Pending) -> bool:
        if job.port_free is None:  # answered now
            job.port_free, job.done = port_free, done
        else:  # answered with pending cycles before
            job.port_free.resolve(port_free)
            when(done, job.done.resolve)
        return True

    def _port_access(self, sm: int, job: _PortJob) -> Access:
        """Queued DRAM: ``job`` takes its turn at the SM's port (after the accesses waiting there)."""
        jobs = self._port_jobs[sm]
        jobs.append(job)
        if len(jobs) == 1:
            self._run_port(sm)
        if job.port_free is None:
            job.port_free, job.done = Pending(), Pending()
        return Access(job.port_free, job.done)

    def _run_port(self, sm: int) -> None:
        jobs = self._port_jobs[sm]
        while jobs and self._step(sm, jobs[0]):
            jobs.popleft()

    def _resume_port(self, sm: int, c: int, cycle: float, mshr: bool) -> None:
        """The transaction that found no MSHR entry (``mshr``) or could not merge into a pending
        fill at ``c`` tries again at ``cycle`` (a release, or the fill)."""
        job = self._port_jobs[sm][0]
        again = max(c, math.ceil(cycle))
        if job.stalled != job.i:  # the first wait of this transaction
            job.stalled = job.i
            if mshr:
                self.l1_mshr_stalls += 1
            else:
                self.l1_merge_stalls += 1
        if mshr:
            self.l1_mshr_stall_cycles += again - c
        else:
            self.l1_merge_stall_cycles += again - c
        job.delay += again - c
        self._run_port(sm)

    # ------------------------------------------------------------------ L1
    def _l1_load(self, sm: int, c: int, line_addr: int, sectors: int) -> tuple[int, int | Pending] | None:
        """One load transaction passing the port at ``c``: (cycle the port moves on from it,
        data-back cycle), or None when it must wait (queued DRAM; ``_resume_port`` is posted)."""
        index = line_addr >> self._line_shift
        if self._l1_bypass[line_addr >= LOCAL_BASE]:
            return self._l1_uncached_load(sm, c, index, sectors)
        cache = self._l1[sm]
        set_index = index % self._l1_sets
        line, missing, pending, wait = self._probe(cache, index, set_index, sectors, c)
        if not missing:
            if not pending:
                self.l1_hits += 1
                return c, c + self._l1_hit
            if self._try_merge(line, pending, self._l1_merges):
                self.l1_merges += 1
                return c, _latest(wait, c + self._l1_hit)
            if type(wait) is not int:  # the port stalls until a fill that is pending
                wait.then(lambda cycle: self._resume_port(sm, c, cycle, False))
                return None
            # the entry cannot take another request: the port stalls until the fill, then it hits
            self.l1_merge_stalls += 1
            self.l1_merge_stall_cycles += wait - c
            self.l1_hits += 1
            return wait, wait + self._l1_hit
        count = missing.bit_count()
        mshr = self._l1_mshr[sm]
        issue = self._mshr_issue(mshr, c, count, lambda cycle: self._resume_port(sm, c, cycle, True))
        if issue < 0:
            return None
        self._l1_mshr_stall(c, issue)
        if line is None:
            line = self._l1_allocate(cache, index, set_index, issue)
        else:
            self.l1_sector_misses += 1
        fill = self._l2_read(issue, index, missing)
        self._fill(line, missing, fill)
        mshr.allocate(fill, count)
        self.l1_misses += 1
        self.l1_missed_sectors += count
        return issue, _latest(fill, wait, issue + self._l1_hit)

    def _l1_allocate(self, cache: SectorCache, index: int, set_index: int, c: int) -> Line:
        """Allocate line ``index`` in an L1 at ``c``; a dirty victim is written back to L2."""
        line, victim_index, victim = cache.insert(index, set_index)
        if victim is not None and victim.dirty:
            self._l1_write_back(c, victim_index, victim.dirty)
        return line

    def _l1_uncached_load(self, sm: int, c: int, index: int, sectors: int) -> tuple[int, int | Pending] | None:
        """A load transaction of a space the L1 does not cache: straight to L2, holding MSHRs."""
        count = sectors.bit_count()
        mshr = self._l1_mshr[sm]
        issue = self._mshr_issue(mshr, c, count, lambda cycle: self._resume_port(sm, c, cycle, True))
        if issue < 0:
            return None
        self._l1_mshr_stall(c, issue)
        fill = self._l2_read(issue, index, sectors)
        mshr.allocate(fill, count)
        self.l1_misses += 1
        self.l1_bypassed += 1
        self.l1_missed_sectors += count
        return issue, fill

    def _l1_mshr_stall(self, c: int, issue: int) -> None:
        """Count the port's stall from ``c`` to ``issue`` waiting for free L1 MSHRs (if any)."""
        if issue > c:
            self.l1_mshr_stalls += 1
            self.l1_mshr_stall_cycles += issue - c

    def _mshr_issue(self, mshr: MshrFile, c: int, count: int, resume) -> int:
        """When a miss needing ``count`` entries of ``mshr`` at ``c`` can go: at once or at the
        release that makes room; -1 if a release it may need is pending (queued DRAM: it waits
        for the next release, and ``resume(cycle)`` is called then)."""
        if not mshr.pending:
            return mshr.reserve(c, count)
        if mshr.room(c, count):
            return c
        mshr.wait(resume, self.events)
        return -1

    def _probe(self, cache: SectorCache, index: int, set_index: int, sectors: int,
               t: int) -> tuple[Line | None, int, int, int | Pending]:
        """Look line ``index`` up for ``sectors`` at ``t`` (an LRU use): the line (None if not
        resident), the sectors it misses, those of its sectors still in flight after ``t``, and
        the latest of their fills (``_in_flight``)."""
        line = cache.lookup(index, set_index)
        if line is None:
            return None, sectors, 0, 0
        pending, wait = self._in_flight(line, sectors, t)
        return line, sectors & ~line.valid, pending, wait

    def _in_flight(self, line: Line, sectors: int, t: int) -> tuple[int, int | Pending]:
        """Of the valid ``sectors`` of ``line``, those whose fill arrives after ``t`` and the latest
        of those fills (``Pending`` if one waits for DRAM); (0, 0) when none is in flight."""
        pending = wait = 0
        if line.latest > t:  # some fill still in flight: which of ours?
            for k in _sectors(sectors & line.valid):
                if line.ready[k] > t:
                    pending |= 1 << k
                    wait = max(wait, line.ready[k])
            if wait >= IN_FLIGHT:
                wait = self._pending_wait(line, pending)
        return pending, wait

    def _try_merge(self, line: Line, pending: int, limit: int) -> bool:
        """Merge a request into the in-flight fills of the ``pending`` sectors of ``line`` if
        each has merged fewer than ``limit`` requests; whether it did."""
        merges = line.merges
        if any(merges[k] >= limit for k in _sectors(pending)):
            return False
        for k in _sectors(pending):
            merges[k] += 1
        return True

    def _write_sectors(self, line: Line, sectors: int, t: int) -> None:
        """Written ``sectors`` of ``line`` become valid and dirty at ``t`` (a fill still in flight
        keeps its later time)."""
        for k in _sectors(sectors):
            line.ready[k] = max(line.ready[k], t)
        line.valid |= sectors
        line.dirty |= sectors
        line.latest = max(line.latest, t)

    def _pending_wait(self, line: Line, pending: int) -> int | Pending:
        """The cycle the in-flight sectors ``pending`` of ``line`` are all present, some of them
        filled by a DRAM read not served yet."""
        sectors = _sectors(pending)
        known = max((line.ready[k] for k in sectors if line.ready[k] < IN_FLIGHT), default=0)
        return later(known, {id(f): f for k in sectors if (f := line.fills[k]) is not None}.values())

    def _fill(self, line: Line, sectors: int, fill: int | Pending) -> None:
        """Mark ``sectors`` of ``line`` valid, in flight until ``fill``, with no request merged yet."""
        if type(fill) is not int:
            self._fill_pending(line, sectors, fill)
            return
        for k in _sectors(sectors):
            line.ready[k] = fill
            line.merges[k] = 0
        line.valid |= sectors
        line.latest = max(line.latest, fill)

    def _fill_pending(self, line: Line, sectors: int, fill: Pending) -> None:
        """Mark ``sectors`` of ``line`` in flight with a fill whose cycle is pending."""
        if line.fills is None:
            line.fills = [None] * len(line.ready)
        ready, merges, fills = line.ready, line.merges, line.fills
        for k in _sectors(sectors):
            ready[k] = IN_FLIGHT
            merges[k] = 0
            fills[k] = fill
        line.valid |= sectors
        line.latest = IN_FLIGHT

        def filled(cycle: int) -> None:
            for k in _sectors(sectors):
                if fills[k] is fill:  # not refilled since (an evicted line's sectors are refilled never)
                    ready[k] = cycle
                    fills[k] = None
            line.latest = max(ready)

        fill.then(filled)

    def _l1_store(self, sm: int, c: int, line_addr: int, sectors: int) -> None:
        """One store transaction passing the port at ``c``."""
        index = line_addr >> self._line_shift
        cache = self._l1[sm]
        set_index = index % self._l1_sets
        line = cache.lookup(index, set_index)
        if line is not None:
            self.l1_store_hits += 1
        else:
            self.l1_store_misses += 1
        if line_addr < LOCAL_BASE or self._l1_bypass[1]:
            # global (or uncached local): write-through, no write-allocate; a resident line is updated in place
            self._l2_write(c, index, sectors)
            return
        # local: write-back, write-allocate without fetch
        if line is None:
            line = self._l1_allocate(cache, index, set_index, c)
        self._write_sectors(line, sectors, c)

    def _l1_write_back(self, c: int, index: int, dirty: int) -> None:
        self.l1_writebacks += 1
        self.l1_writeback_sectors += dirty.bit_count()
        self._l2_write(c, index, dirty)

    # ------------------------------------------------------------------ L2
    def _slice(self, index: int) -> int:
        tables = self._ipoly
        if tables is None:
            return index % self._slices
        if index >> 48:
            raise ValueError(f"line index {index:#x} beyond the 48 bits the slice hash covers")
        return (tables[0][index & 255] ^ tables[1][index >> 8 & 255] ^ tables[2][index >> 16 & 255]
                ^ tables[3][index >> 24 & 255] ^ tables[4][index >> 32 & 255] ^ tables[5][index >> 40 & 255])

    def _l2_read(self, c: int, index: int, sectors: int) -> int | Pending:
        """Read ``sectors`` of line ``index`` for an L1 miss leaving the SM at ``c``; the cycle the data is back."""
        slice_index = self._slice(index)
        arrive = self._icnt.request(c, slice_index, self._read_flits, self._now)
        if not self._queued:
            return self._l2_lookup(slice_index, arrive, index, sectors)
        job = _SliceJob(arrive, index, sectors)
        jobs = self._slice_jobs[slice_index]
        jobs.append(job)
        if len(jobs) == 1:
            self._run_slice(slice_index)
        if job.result is None:
            job.result = Pending()
        return job.result

    def _run_slice(self, slice_index: int) -> None:
        """Queued DRAM: serve the reads at the slice's input in order until one must wait."""
        jobs = self._slice_jobs[slice_index]
        while jobs:
            job = jobs[0]
            data = self._l2_lookup(slice_index, job.arrive, job.index, job.sectors)
            if data is None:
                return
            jobs.popleft()
            if job.result is None:
                job.result = data
            else:
                when(data, job.result.resolve)

    def _resume_slice(self, slice_index: int, cycle: float, mshr: bool) -> None:
        """The read at the slice's input that found no MSHR entry (``mshr``) or could not merge
        into a pending fill tries again at ``cycle``: the input was blocked until then."""
        jobs = self._slice_jobs[slice_index]
        job = jobs[0]
        again = max(job.arrive + self._l2_hit, math.ceil(cycle))
        if not job.stalled:
            job.stalled = True
            if mshr:
                self.l2_mshr_stalls += 1
            else:
                self.l2_merge_stalls += 1
        self.l2_stall_cycles += again - job.arrive - self._l2_hit
        enter = again - self._l2_hit
        self._icnt.block(slice_index, job.arrive, enter)
        job.arrive = enter
        for queued in list(jobs)[1:]:  # the reads behind it wait at the slice's port
            if queued.arrive < enter:
                self._icnt.wait_cycles += enter - queued.arrive
                queued.arrive = enter
        self._run_slice(slice_index)

    def _l2_lookup(self, slice_index: int, arrive: int, index: int, sectors: int) -> int | Pending | None:
        """The L2 slice's part of a read reaching it at ``arrive``: the cycle the data is back at
        the SM, or None when it must wait (queued DRAM, the read at the head of the slice's
        input: ``_resume_slice`` is posted)."""
        icnt = self._icnt
        t = arrive + self._l2_hit
        cache = self._l2[slice_index]
        set_index = self._l2_set(index)
        line, missing, pending, wait = self._probe(cache, index, set_index, sectors, t)
        if not missing:
            if not pending:
                self.l2_reads += 1
                self.l2_read_hits += 1
                data = t
            else:
                if self._try_merge(line, pending, self._l2_merges):
                    self.l2_merges += 1
                elif type(wait) is not int:  # the input blocks until a fill that is pending
                    wait.then(lambda cycle: self._resume_slice(slice_index, cycle, False))
                    return None
                else:
                    # no room to merge: the request blocks the slice's input until the fill
                    self.l2_merge_stalls += 1
                    self.l2_stall_cycles += wait - t
                    self.l2_read_hits += 1
                    icnt.block(slice_index, arrive, wait - self._l2_hit)
                self.l2_reads += 1
                data = wait
        else:
            count = missing.bit_count()
            mshr = self._l2_mshr[slice_index]
            issue = self._mshr_issue(mshr, t, count, lambda cycle: self._resume_slice(slice_index, cycle, True))
            if issue < 0:
                return None
            self.l2_reads += 1
            if issue > t:
                # MSHRs full: the request blocks the slice's input until one frees
                self.l2_mshr_stalls += 1
                self.l2_stall_cycles += issue - t
                icnt.block(slice_index, arrive, issue - self._l2_hit)
            if line is None:
                line = self._l2_allocate(cache, index, set_index, issue)
            fill = self._dram_read(issue, index, count * self._sector_bytes)
            self._fill(line, missing, fill)
            mshr.allocate(fill, count)
            self.l2_read_misses += 1
            self.l2_missed_sectors += count
            data = _latest(fill, wait)
        flits = self._data_flits[sectors.bit_count()]
        return then_map(data, lambda cycle: icnt.reply(cycle, slice_index, flits, self._now))

    def _l2_set(self, index: int) -> int:
        """The set of line ``index`` in its slice (the slices take every ``slices``-th line)."""
        return (index // self._slices) % self._l2_sets

    def _l2_allocate(self, cache: SectorCache, index: int, set_index: int, c: int) -> Line:
        """Allocate line ``index`` in an L2 slice at ``c``; a dirty victim is written to DRAM."""
        line, victim_index, victim = cache.insert(index, set_index)
        if victim is not None and victim.dirty:
            self.l2_writebacks += 1
            self._dram_write(c, victim_index, victim.dirty.bit_count() * self._sector_bytes)
        return line

    def _dram_read(self, cycle: int, index: int, nbytes: int) -> int | Pending:
        if self._queued:
            return self._dram_queues.submit(cycle, index, nbytes, False, self._now)
        return self._dram.read(cycle, index, nbytes, self._now)

    def _dram_write(self, cycle: int, index: int, nbytes: int) -> None:
        if self._queued:
            self._dram_queues.submit(cycle, index, nbytes, True, self._now)
        else:
            self._dram.write(cycle, index, nbytes, self._now)

    def _l2_write(self, c: int, index: int, sectors: int) -> None:
        """Write ``sectors`` of line ``index`` leaving an SM at ``c`` (write-back, allocate without fetch)."""
        slice_index = self._slice(index)
        t = self._icnt.request(c, slice_index, self._data_flits[sectors.bit_count()], self._now) + self._l2_hit
        cache = self._l2[slice_index]
        set_index = self._l2_set(index)
        line = cache.lookup(index, set_index)
        self.l2_writes += 1
        if line is None:
            self.l2_write_misses += 1
            line = self._l2_allocate(cache, index, set_index, t)
        else:
            self.l2_write_hits += 1
        self._write_sectors(line, sectors, t)

    def flush_l1(self, cycle: int) -> None:
        """Invalidate every SM's L1 at ``cycle`` (as GPUs do between kernel launches; Accel-Sim SM86
        sets -gpgpu_flush_l1_cache 1), writing dirty local lines back to L2. Fills in flight
        still hold their MSHRs until they arrive."""
        self._check_order(cycle)
        if self._queued:
            self.advance(cycle)
        self._now = cycle
        for cache in self._l1:
            for lines in cache.sets:
                for index, line in lines.items():
                    if line.dirty:
                        self._l1_write_back(cycle, index, line.dirty)
                lines.clear()
        self.l1_flushes += 1

    # ------------------------------------------------------------------ events (queued DRAM)
    @property
    def queued(self) -> bool:
        """Whether DRAM requests wait in controller queues, so that the memory system has events
        of its own (``next_event``, ``advance``) and may answer with ``Pending`` cycles."""
        return self._queued

    def next_event(self) -> int | None:
        """The first cycle at which the memory system has something to do by itself (None: nothing)."""
        return self.events.next_cycle() if self._queued else None

    def advance(self, cycle: int) -> None:
        """Run the memory system's events up to ``cycle``: the DRAM banks' decisions and what they
        resolve (fills, MSHR releases, the accesses that waited for them). Call before the SMs
        simulate ``cycle``."""
        if self._queued:
            self.events.run_until(cycle)

    # ------------------------------------------------------------------ inspection
    def l1_resident(self, sm: int, address: int) -> bool:
        """Whether the line holding byte ``address`` is in SM ``sm``'s L1 (no LRU update)."""
        index = address >> self._line_shift
        return self._l1[sm].resident(index, index % self._l1_sets)

    def l2_resident(self, address: int) -> bool:
        """Whether the line holding byte ``address`` is in its L2 slice (no LRU update)."""
        index = address >> self._line_shift
        return self._l2[self._slice(index)].resident(index, self._l2_set(index))

    @property
    def dram_latency(self) -> int:
        """Unloaded DRAM latency of a row-hit read of a whole line, core cycles: ``dram.latency`` +
        tCL + the line's burst, rounded up (a row miss adds tRP + tRCD)."""
        return self._dram.line_latency

    def dram_requests(self) -> list[tuple[int, int, int, int, int, int]] | None:
        """The DRAM requests made so far with ``record_dram`` (``Dram.log``'s tuples), else None."""
        log = self._dram.log
        return None if log is None else list(log)

    def stats(self) -> dict:
        """Every counter since construction, as a JSON-ready tree (``statistics.build_tree``:
        groups ``l1``, ``shared``, ``interconnect``, ``l2``, ``dram``, ``loads``, leaves
        ``{"value", "unit", "description"}``, derived ones with a ``formula``, ``l1.per_sm``)."""
        return build_tree(snapshot(self), self.num_sms)

    def snapshot(self) -> list:
        """The counters as a flat list (``statistics.snapshot``): ``statistics.launch_tree`` of
        two of them is the tree of what was counted in between, at a fraction of two trees' cost."""
        return snapshot(self)

"""The compiled memory system (dualflow/models/timing/compiled/memory*.py) equals the reference
``MemorySystem`` (dualflow/models/timing/memory/): every ``Access``, the statistics trees and the whole
state (cache contents in LRU order, MSHR files, ports, timelines, DRAM queues and events), on
random request sequences over configurations chosen to force every path, on requests recorded
from real runs, and across state transfers in both directions. With queued DRAM controllers the
sequences are closed loops, the memory system's events run between requests as the GPU runs
them, and every answer must be pending where the reference's is and become known during the
same ``advance``, with the same value."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_dram_queue import TIGHT

from dualflow.experiments.simulate import simulate
from dualflow.machine.memory import DramConfig, L1Config, L2Config, MemoryConfig
from dualflow.machine.presets import PRESETS, preset
from dualflow.models.timing.compiled.memory import CompiledMemory
from dualflow.models.timing.compiled.memory_log import (
    FLUSH,
    GLOBAL,
    MemoryLog,
    record_memory,
    replay,
    replay_queued,
)
from dualflow.models.timing.compiled.memory_parts import (
    mshr_allocate,
    mshr_reserve,
    timeline_block,
    timeline_intervals,
    timeline_reserve,
)
from dualflow.models.timing.compiled.memory_queue_transfer import _event_of
from dualflow.models.timing.compiled.memory_state import (
    BANK_ROWS,
    BANK_TIMES,
    COUNTERS,
    DRAM_CYCLES,
    new_mshrs,
    new_timelines,
)
from dualflow.models.timing.memory.cache import MshrFile
from dualflow.models.timing.memory.coalescer import LOCAL_BASE, Transaction
from dualflow.models.timing.memory.pending import Pending
from dualflow.models.timing.memory.system import MemorySystem
from dualflow.models.timing.memory.timeline import Timeline

_TINY = MemoryConfig(
    l1=L1Config(size_bytes=4 * 128 * 2, ways=2, mshr_entries=6, max_merges=2, hit_latency=5),
    l2=L2Config(size_bytes=2 * 4 * 2 * 128, slices=2, ways=2, mshr_entries=5, max_merges=1, hit_latency=20),
    dram=DramConfig(scheduler="frfcfs"))


def _reservation(config: MemoryConfig) -> MemoryConfig:
    """``config`` with the reservation DRAM model (answers at once: the open-loop sequences below;
    the queued controllers, the presets' own, have the closed-loop sessions further down)."""
    return replace(config, dram=replace(config.dram, scheduler="frfcfs"))


def _tiny(**changes) -> MemoryConfig:
    """``_TINY`` with fields of its parts replaced: ``l1__ways=4`` and the like."""
    parts: dict[str, dict] = {}
    for key, value in changes.items():
        part, name = key.split("__")
        parts.setdefault(part, {})[name] = value
    return replace(_TINY, **{part: replace(getattr(_TINY, part), **fields) for part, fields in parts.items()})


#: name -> memory configuration: the presets, and small ones that evict, merge and stall often.
CONFIGS = {
    **{name: _reservation(preset(name).memory) for name in PRESETS},
    "tiny": _TINY,
    "tiny-linear3": _tiny(l2__slices=3, l2__slice_hash="linear", l2__size_bytes=3 * 4 * 2 * 128),
    "tiny-ipoly8": _tiny(l2__slices=8, l2__size_bytes=8 * 2 * 2 * 128, dram__channels=3),
    # few banks and short rows: row conflicts, frfcfs's earlier-row hits, activate spacing, write recovery
    "tiny-dram-frfcfs": _tiny(dram__channels=1, dram__banks=2, dram__row_bytes=256, dram__latency=3,
                              dram__tras=40, dram__twr=30),
    "tiny-dram-rows": _tiny(dram__channels=2, dram__banks=2, dram__row_bytes=256, dram__mapping="row-interleaved",
                            dram__tras=40),
    "tiny-dram-fcfs": _tiny(dram__channels=2, dram__banks=3, dram__row_bytes=256, dram__scheduler="fcfs",
                            dram__trrd=9, dram__bytes_per_cycle=4.0),
    "tiny-uncached-global": _tiny(l1__caches_global=False),
    "tiny-uncached-local": _tiny(l1__caches_local=False, l1__max_merges=1),
    "tiny-wide": _tiny(l1__transactions_per_cycle=2, shared__warp_parts=2, shared__bank_interval=2,
                       interconnect__flits_per_cycle=2, l1__line_bytes=256, l2__line_bytes=256,
                       l1__size_bytes=2 * 256 * 2, l2__size_bytes=2 * 2 * 2 * 256, l1__mshr_entries=8,
                       l2__mshr_entries=8),
}


def _random_log(config: MemoryConfig, num_sms: int, calls: int, seed: int) -> tuple[MemoryLog, MemorySystem]:
    """Random calls on a reference system (kept in a log with its results): loads and stores of
    global and local lines from a small pool, bursts at one cycle, shared accesses, flushes and
    statistics snapshots."""
    rng = np.random.default_rng(seed)
    line_bytes, sectors = config.l1.line_bytes, config.l1.line_bytes // config.l1.sector_bytes
    pool = [k * line_bytes for k in range(24)] + [LOCAL_BASE + k * line_bytes for k in range(12)]
    pool += [int(a) * line_bytes for a in rng.integers(0, 1 << 36, 8)]  # far lines: high hash bits
    weights = np.arange(1, len(pool) + 1) ** -2.0  # a few hot lines: merges into fills in flight
    weights /= weights.sum()
    cycle = 0
    with record_memory() as logs:
        ms = MemorySystem(config, num_sms, 1440.0)
        for _ in range(calls):
            cycle += int(rng.choice([0, 0, 0, 1, 2, 7, 60, 400]))
            sm = int(rng.integers(num_sms))
            what = rng.random()
            if what < 0.8:
                lines = rng.choice(len(pool), int(rng.integers(0, 6)), replace=False, p=weights)
                # no sector at all: never made by coalesce, but the reference takes it (MSHR items of 0 entries)
                txs = [Transaction(pool[k], int(rng.integers(1, 1 << sectors)) if rng.random() < 0.98 else 0, 4)
                       for k in lines]
                ms.global_access(cycle, sm, txs, write=bool(rng.random() < 0.3))
            elif what < 0.95:
                ms.shared_access(cycle, sm, int(rng.integers(0, 5)))
            elif what < 0.98:
                ms.flush_l1(cycle)
            else:
                ms.stats()
        ms.stats()
    return logs[0], ms


def snapshot(ms: MemorySystem) -> dict:
    """The whole state of a reference memory system, comparable with ``==``."""
    def caches(cs):
        return [[[(i, ln.valid, ln.dirty, ln.latest, list(ln.ready), list(ln.merges)) for i, ln in s.items()]
                 for s in c.sets] for c in cs]

    def timelines(ts):
        return [([float(x) for x in t.starts], [float(x) for x in t.ends]) for t in ts]

    return {"l1": caches(ms._l1), "l2": caches(ms._l2),
            "l1_mshr": [(sorted(m.busy), m.used) for m in ms._l1_mshr],
            "l2_mshr": [(sorted(m.busy), m.used) for m in ms._l2_mshr],
            "requests": timelines(ms._icnt.request_ports), "replies": timelines(ms._icnt.reply_ports),
            "buses": timelines(ms._dram.buses), "activates": timelines(ms._dram.activates),
            "banks": [[float(x) for x in getattr(ms._dram, name)] for name in BANK_ROWS + BANK_TIMES],
            "port": list(ms._port), "now": ms._now, "stats": ms.stats(), "queues": _queues(ms)}


def _queues(ms: MemorySystem) -> dict | None:
    """The queued DRAM controllers' state (requests, banks' free times, posted decisions, events)."""
    if not ms.queued:
        return None

    def requests(rs):
        return [(float(r.arrive), r.seq, float(r.entered), r.bank, r.row, r.line, r.nbytes, r.write, r.log_index)
                for r in rs]

    queues = ms._dram_queues
    channels = [(c.count, None if c.next is None else float(c.next), sorted((b, float(f)) for b, f in c.free.items()),
                 sorted((b, requests(rs)) for b, rs in c.queued.items()), requests(c.overflow))
                for c in queues.channels]
    events = sorted((float(t), seq, _event_of(ms, fn)) for t, seq, fn in ms.events.heap)
    return {"seq": queues.seq, "event_seq": ms.events.seq, "events": events, "channels": channels,
            "mshr_pending": [m.pending for m in ms._l1_mshr + ms._l2_mshr]}


def _check_replay(log: MemoryLog, cm: CompiledMemory, begin: int = 0) -> None:
    """Replay ``log`` from call ``begin`` into ``cm``: every result and every statistics snapshot equal."""
    stops = [(at, tree) for at, tree in log.stats if at >= begin] + [(len(log.kind), None)]
    for at, tree in stops:
        port_free, done = replay(log, cm.state, begin, at)
        bad = np.flatnonzero((port_free != log.port_free[begin:at]) | (done != log.done[begin:at]))
        assert not len(bad), (f"call {begin + bad[0]}: compiled {port_free[bad[0]], done[bad[0]]}, "
                              f"reference {log.port_free[begin + bad[0]], log.done[begin + bad[0]]}")
        if tree is not None:
            assert cm.stats() == tree, f"statistics after call {at}"
        begin = at


@pytest.mark.parametrize("name", list(CONFIGS))
def test_random_requests(name):
    config = CONFIGS[name]
    for seed in range(2):
        log, ms = _random_log(config, 3, 3000, seed)
        cm = CompiledMemory(config, 3, 1440.0)
        _check_replay(log, cm)
        assert snapshot(cm.to_reference()) == snapshot(ms)


def test_random_requests_reach_every_path():
    """The small configurations do exercise evictions, merges, stalls and write-backs."""
    totals: dict[str, int] = {}
    for name in ("tiny", "tiny-uncached-local"):
        _, ms = _random_log(CONFIGS[name], 3, 3000, 0)
        for group in ("l1", "l2", "dram"):
            for key, leaf in ms.stats()[group].items():
                if "value" in leaf:
                    totals[f"{group}.{key}"] = totals.get(f"{group}.{key}", 0) + leaf["value"]
    for key in ("l1.load_hits", "l1.mshr_merges", "l1.mshr_full_stalls", "l1.merge_limit_stalls", "l1.bypassed",
                "l1.sector_misses", "l1.writebacks", "l1.store_hits", "l2.mshr_merges", "l2.merge_limit_stalls",
                "l2.mshr_full_stalls", "l2.writebacks", "l2.write_hits", "dram.writes"):
        assert totals[key] > 0, key


def _real_logs(workload: str, preset_name: str, mode: str) -> list[MemoryLog]:
    with record_memory() as logs:
        simulate(workload, preset(preset_name).replace(mode=mode, **{"memory.dram.scheduler": "frfcfs"}),
                 size="tiny", engine="reference")
    return logs


@pytest.mark.parametrize("preset_name", ["paper-rtx3080", "fermi-gtx480"])
@pytest.mark.parametrize("mode", ["base", "dflow"])
def test_replay_of_real_runs(preset_name, mode):
    calls = 0
    for workload in ("hotspot", "lud", "nw", "bfs", "pathfinder", "reduce"):
        for log in _real_logs(workload, preset_name, mode):
            _check_replay(log, CompiledMemory(log.config, log.num_sms, log.core_clock_mhz))
            calls += len(log.kind)
    assert calls > 1000


@pytest.mark.parametrize("name", ["tiny", "tiny-ipoly8", "paper-rtx3080"])
def test_state_transfer_both_ways(name):
    config = CONFIGS[name]
    log, final = _random_log(config, 3, 2000, 7)
    half = len(log.kind) // 2
    # reference for the first half, compiled for the rest
    ms = MemorySystem(config, 3, 1440.0)
    for i in range(half):
        _reference_call(ms, log, i)
    _check_replay(log, CompiledMemory.from_reference(ms), half)
    # compiled for the first half, reference for the rest
    cm = CompiledMemory(config, 3, 1440.0)
    replay(log, cm.state, 0, half)
    ms = MemorySystem(config, 3, 1440.0)
    cm.store_into(ms)
    for i in range(half, len(log.kind)):
        _reference_call(ms, log, i)
    assert snapshot(ms) == snapshot(final)


def _reference_call(ms: MemorySystem, log: MemoryLog, i: int) -> None:
    """Make call ``i`` of ``log`` on ``ms`` and check its result."""
    cycle, sm = int(log.cycle[i]), int(log.sm[i])
    if log.kind[i] == FLUSH:
        ms.flush_l1(cycle)
        return
    if log.kind[i] == GLOBAL:
        access = ms.global_access(cycle, sm, log.transactions_of(i), write=bool(log.arg[i]))
    else:
        access = ms.shared_access(cycle, sm, int(log.arg[i]))
    assert (access.port_free, access.done) == (log.port_free[i], log.done[i]), f"call {i}"


def test_transfer_round_trip_is_exact():
    log, ms = _random_log(CONFIGS["tiny"], 2, 1500, 3)
    assert snapshot(CompiledMemory.from_reference(ms).to_reference()) == snapshot(ms)


def test_counters_cover_every_statistic():
    """Every counter attribute of the reference is carried by the compiled state."""
    ms = MemorySystem(MemoryConfig(), 2, 1440.0)
    carried = {(owner, name) for owner, name in COUNTERS} | {("_dram", name) for name in DRAM_CYCLES}
    for owner, obj in (("", ms), ("_icnt", ms._icnt), ("_dram", ms._dram)):
        attrs = vars(obj) if hasattr(obj, "__dict__") else {k: getattr(obj, k) for k in obj.__slots__}
        for name, value in attrs.items():
            if not name.startswith("_") and type(value) in (int, float) and name not in (
                    "num_sms", "core_clock_mhz", "latency", "flit_bytes", "header_bytes", "flits_per_cycle",
                    "channels", "cycles_per_byte", "banks", "lines_per_row", "line_latency", "tcl", "twl", "trcd",
                    "trp", "tras", "trc", "trrd", "trtp", "twr", "tccd"):
                assert (owner, name) in carried, (owner, name)


def test_errors_as_reference():
    cm = CompiledMemory(MemoryConfig(), 1, 1440.0)
    cm.shared_access(10, 0, 1)
    with pytest.raises(ValueError, match="cycle order"):
        cm.shared_access(9, 0, 1)
    far = np.array([1 << 55], np.int64)
    with pytest.raises(ValueError, match="48 bits"):
        cm.global_access(10, 0, far, np.array([1], np.int64), write=False)
    with pytest.raises(ValueError, match="same configuration"):
        cm.store_into(MemorySystem(MemoryConfig(), 2, 1440.0))
    assert cm.dram_latency == MemorySystem(MemoryConfig(), 1, 1440.0).dram_latency


def test_checker_detects_a_difference():
    """The replay check fails for a compiled system that differs (here: one cycle of L2 latency)."""
    log, _ = _random_log(CONFIGS["tiny"], 2, 300, 5)
    with pytest.raises(AssertionError, match="call"):
        _check_replay(log, CompiledMemory(_tiny(l2__hit_latency=21), 2, 1440.0))


def test_timeline_with_many_intervals():
    """Gap fitting, blocking, pruning and growth of a timeline (from 2 intervals) as ``Timeline``'s."""
    rng = np.random.default_rng(2)
    reference = Timeline()
    compiled = new_timelines(np.zeros((2, 2, 2)), np.zeros(2, np.int64), np.zeros(2, np.int64))
    floor = 0
    for _ in range(3000):
        floor += int(rng.integers(0, 3))
        earliest = floor + int(rng.integers(0, 400))
        if rng.random() < 0.2:
            end = earliest + int(rng.integers(-2, 30))
            reference.block(earliest, end)
            timeline_block(compiled, 1, earliest, end)
        else:
            length = float(rng.choice([0, 1, 2, 2.43, 7])) if rng.random() < 0.5 else int(rng.integers(0, 9))
            assert timeline_reserve(compiled, 1, earliest, length, floor) == reference.reserve(earliest, length, floor)
        assert timeline_intervals(compiled, 1) == (reference.starts, reference.ends)
    assert compiled.iv.shape[1] > 2 and compiled.n[0] == 0


def test_mshr_file_with_many_items():
    """Reservation and release order of an MSHR file as ``MshrFile``'s, through compaction and
    growth (items of 0 entries, which the reference accepts, can outnumber the entries)."""
    rng = np.random.default_rng(4)
    reference = MshrFile(4)
    z = np.zeros((1, 5), np.int64)
    compiled = new_mshrs(z, z.copy(), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), 4)
    cycle = 0
    for _ in range(3000):
        cycle += int(rng.integers(0, 4))
        needed = int(rng.integers(0, 4))
        issue = reference.reserve(cycle, needed)
        assert mshr_reserve(compiled, 0, cycle, needed) == issue
        release = issue + int(rng.integers(0, 300))
        reference.allocate(release, needed)
        mshr_allocate(compiled, 0, release, needed)
        head, size = compiled.head[0], compiled.size[0]
        assert (list(zip(compiled.release[0, head:head + size], compiled.count[0, head:head + size])) ==
                sorted(reference.busy)) and compiled.used[0] == reference.used
    assert compiled.release.shape[1] > 5


# ------------------------------------------------------------------ queued DRAM controllers
#: Queued controllers on the presets, and on small systems in which loads wait for MSHR entries,
#: for room to merge into pending fills and for queue entries (every path of memory_queued*.py).
QUEUED = {
    "paper-queued-frfcfs": replace(preset("paper-rtx3080").memory,
                                   dram=replace(preset("paper-rtx3080").memory.dram, scheduler="queued-frfcfs")),
    "ampere-queued-fcfs": replace(preset("ampere-rtx3070").memory,
                                  dram=replace(preset("ampere-rtx3070").memory.dram, scheduler="queued-fcfs")),
    "tiny-queued-frfcfs": _tiny(dram__scheduler="queued-frfcfs", dram__queue_entries=2, dram__channels=1,
                                dram__banks=2, dram__row_bytes=256, dram__tras=40, dram__twr=30),
    "tiny-queued-fcfs": _tiny(dram__scheduler="queued-fcfs", dram__queue_entries=1, dram__channels=2,
                              dram__banks=2, l1__mshr_entries=4, l1__max_merges=1, l2__mshr_entries=4),
    "tiny-queued-rows": _tiny(dram__scheduler="queued-frfcfs", dram__queue_entries=3, dram__channels=2,
                              dram__banks=2, dram__row_bytes=256, dram__mapping="row-interleaved"),
    "tiny-queued-uncached": _tiny(dram__scheduler="queued-frfcfs", dram__queue_entries=4, l1__caches_global=False,
                                  l1__caches_local=False, l2__max_merges=2),
}


def _same(ref, got, where: str) -> None:
    """Two answers agree: ints equal, or both ``Pending``, known alike and to the same value."""
    assert type(ref) is type(got), f"{where}: {got!r}, reference {ref!r}"
    if isinstance(ref, Pending):
        assert ref.value == got.value, f"{where}: pending {got.value}, reference {ref.value}"
    else:
        assert ref == got, f"{where}: {got}, reference {ref}"


def _queued_session(config: MemoryConfig, num_sms: int, calls: int, seed: int, transfer: bool = True,
                    quiet: float = 0.02) -> dict:
    """Random calls on a reference and a compiled queued system, the events run to each call's
    cycle before it (``advance``), as the GPU loop does: every answer, and after every advance
    every answer still outstanding, the next event and (often) the statistics must agree. Every
    so often (probability ``quiet`` per call) both run until nothing is in flight and the whole
    states must agree; with
    ``transfer`` one side then continues from a copy of the other (``from_reference`` or
    ``to_reference``). Returns the reference's statistics."""
    rng = np.random.default_rng(seed)
    line_bytes, sectors = config.l1.line_bytes, config.l1.line_bytes // config.l1.sector_bytes
    pool = [k * line_bytes for k in range(20)] + [LOCAL_BASE + k * line_bytes for k in range(8)]
    pool += [int(a) * line_bytes for a in rng.integers(0, 1 << 30, 6)]
    weights = np.arange(1, len(pool) + 1) ** -1.5
    weights /= weights.sum()
    pair = [MemorySystem(config, num_sms, 1440.0, record_dram=True), None]
    pair[1] = CompiledMemory.from_reference(pair[0])
    answers: list[tuple[str, Pending | int, Pending | int]] = []
    cycle = 0
    for k in range(calls):
        cycle += int(rng.choice([0, 0, 1, 2, 5, 30, 200]))
        for memory in pair:
            memory.advance(cycle)
        assert pair[1].next_event() == pair[0].next_event(), f"call {k}: next event"
        for where, ref, got in answers:
            _same(ref, got, f"after the advance before call {k}: {where}")
        answers = [a for a in answers if isinstance(a[1], Pending) and a[1].value is None]
        sm = int(rng.integers(num_sms))
        what = rng.random()
        if what < 0.85:
            lines = rng.choice(len(pool), int(rng.integers(1, 5)), replace=False, p=weights)
            masks = [int(rng.integers(1, 1 << sectors)) for _ in lines]
            write = bool(rng.random() < 0.25)
            ref = pair[0].global_access(cycle, sm, [Transaction(pool[i], m, 4) for i, m in zip(lines, masks)],
                                        write=write)
            got = pair[1].global_access(cycle, sm, np.array([pool[i] for i in lines], np.int64),
                                        np.array(masks, np.int64), write=write)
        elif what < 0.97:
            degree = int(rng.integers(0, 4))
            ref, got = pair[0].shared_access(cycle, sm, degree), pair[1].shared_access(cycle, sm, degree)
        else:
            for memory in pair:
                memory.flush_l1(cycle)
            continue
        for which, r, g in (("port_free", ref.port_free, got[0]), ("done", ref.done, got[1])):
            _same(r, g, f"call {k}: {which}")
            answers.append((f"call {k} {which}", r, g))
        if rng.random() < 0.1:
            assert pair[1].stats() == pair[0].stats(), f"statistics after call {k}"
        if rng.random() < quiet or k == calls - 1:
            while any(r.value is None for _, r, _ in answers if isinstance(r, Pending)):
                event = pair[0].next_event()
                for memory in pair:
                    memory.advance(event)
            for where, ref, got in answers:
                _same(ref, got, f"quiet after call {k}: {where}")
            answers = []
            assert snapshot(pair[1].to_reference()) == snapshot(pair[0]), f"state after call {k}"
            assert pair[1].dram_requests() == pair[0].dram_requests()
            q = pair[1].state.q
            assert (q.pend_live, q.waiter_live) == (0, 0), "pending cycles or waiters left"
            if transfer and rng.random() < 0.5:
                pair[1] = CompiledMemory.from_reference(pair[0])
                assert snapshot(pair[1].to_reference()) == snapshot(pair[0]), f"transfer after call {k}"
            elif transfer:
                pair[0] = pair[1].to_reference()
    return pair[0].stats()


@pytest.mark.parametrize("name", list(QUEUED))
def test_queued_random_requests(name):
    for seed in range(2):  # the presets' whole states are large: compared less often
        _queued_session(QUEUED[name], 3, 1500, seed, quiet=0.02 if name.startswith("tiny") else 0.003)


def test_queued_random_requests_reach_every_path():
    """The small queued configurations make loads wait for MSHR releases and fills at the L1 and
    the L2, and the controllers reorder hits ahead of older requests."""
    totals: dict[str, int] = {}
    for name in ("tiny-queued-frfcfs", "tiny-queued-fcfs"):
        stats = _queued_session(QUEUED[name], 3, 1500, 0, transfer=False)
        for group in ("l1", "l2", "dram"):
            for key, leaf in stats[group].items():
                if "value" in leaf:
                    totals[f"{group}.{key}"] = totals.get(f"{group}.{key}", 0) + leaf["value"]
    for key in ("l1.mshr_full_stalls", "l1.merge_limit_stalls", "l1.mshr_merges", "l2.mshr_merges",
                "l2.merge_limit_stalls", "l2.mshr_full_stalls", "l2.writebacks", "dram.writes",
                "dram.reordered_hits", "dram.row_conflicts"):
        assert totals[key] > 0, key


def test_queued_state_with_accesses_in_flight_does_not_cross():
    """A state crosses between engines only between launches, when no access is in flight."""
    ms = MemorySystem(QUEUED["tiny-queued-fcfs"], 2, 1440.0)
    access = ms.global_access(0, 0, [Transaction(0, 1, 4)], write=False)
    assert isinstance(access.done, Pending)
    with pytest.raises(ValueError, match="in flight"):
        CompiledMemory.from_reference(ms)
    cm = CompiledMemory(QUEUED["tiny-queued-fcfs"], 2, 1440.0)
    port_free, done = cm.global_access(0, 0, np.array([0], np.int64), np.array([1], np.int64), write=False)
    assert isinstance(done, Pending) and done.value is None
    with pytest.raises(ValueError, match="in flight"):
        cm.to_reference()
    cm.advance(10 ** 6)
    assert done.value is not None
    cm.to_reference()  # nothing in flight any more


@pytest.mark.parametrize("machine, mode, workloads", [
    ("paper", "base", ("hotspot", "bfs", "pathfinder")),
    ("l1", "dflow", ("hotspot", "nw")),
    ("l2", "base", ("pathfinder", "bfs")),
])
def test_queued_replay_of_real_runs(machine, mode, workloads):
    """Requests recorded from the reference engine's queued runs (the paper preset, and the tight
    machines of test_dram_queue.py), replayed: every answer, pending where the reference's was and
    known during the same call."""
    changes = {} if machine == "paper" else TIGHT[machine]
    config = preset("paper-rtx3080").replace(mode=mode, **{"memory.dram.scheduler": "queued-frfcfs", **changes})
    waited = 0
    for workload in workloads:
        with record_memory() as logs:
            simulate(workload, config, size="tiny", engine="reference")
        for log in logs:
            replay_queued(log, CompiledMemory(log.config, log.num_sms, log.core_clock_mhz))
            waited += int((log.port_when >= 0).sum() + (log.done_when >= 0).sum())
    assert waited > 100  # answers that were pending and became known in a later call

"""Queued DRAM controllers in the memory system (``memory.dram.scheduler`` ``queued-frfcfs`` and
``queued-fcfs``; dualflow/models/timing/memory/dram_queue.py): answers pending until a bank picks the read,
the same cycles as the reservation model where nothing waits in a queue, a row hit served ahead
of an older miss (FR-FCFS only), MSHR files and slice inputs that wait for pending fills, and the
reference engine's GPU loop running the memory system's events. Then the compiled engine against
the reference on whole workloads (every workload on the paper preset in both modes, the DRAM-bound
ones on the SM86 preset, and two tightened machines on which every waiting path runs) and across
a launch that falls back to the reference engine; tests/models/timing/test_compiled_memory.py holds the
compiled memory system to the reference request by request."""

from __future__ import annotations

import numpy as np
import pytest
from engines import assert_same, devices, run_both
from test_timing_compiled import _PRIVATE, _RACY
from test_timing_memory import line_tx, small

from dualflow.common.errors import ConfigError
from dualflow.isa.convert import convert_kernel
from dualflow.kernels.registry import HAND_WRITTEN, get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.memory import DramConfig
from dualflow.machine.presets import preset
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.memory.pending import Pending
from dualflow.models.timing.memory.system import Access, MemorySystem

QUEUED = ("queued-frfcfs", "queued-fcfs")
#: device timing for the row tests (DRAM cycles = core cycles in ``small``)
ROWS = {"tcl": 5, "twl": 2, "trcd": 6, "trp": 7, "tras": 20, "trc": 30, "trrd": 3, "trtp": 2, "twr": 4, "tccd": 2}


def settle(mem: MemorySystem, *accesses: Access) -> list[tuple[int, int]]:
    """Run the memory system's events to the end; each access's (port_free, done)."""
    mem.advance(10 ** 9)
    assert mem.next_event() is None

    def known(x: int | Pending) -> int:
        if isinstance(x, Pending):
            assert x.value is not None, "an answer still pending after every event ran"
            return x.value
        return x

    return [(known(a.port_free), known(a.done)) for a in accesses]


def load(mem: MemorySystem, cycle: int, sm: int, transactions) -> Access:
    """A load made at ``cycle``, after the memory system's events up to it ran (as the GPU loop does)."""
    mem.advance(cycle)
    return mem.global_access(cycle, sm, transactions, write=False)


def both(make, scenario) -> None:
    """``scenario(mem)`` returns accesses: their answers with the reservation model (no queue
    ever holds a request in these scenarios) equal those of both queued schedulers."""
    want = settle(reservation := make("frfcfs"), *scenario(reservation))
    for scheduler in QUEUED:
        mem = make(scheduler)
        assert settle(mem, *scenario(mem)) == want, scheduler
        assert mem.stats() == reservation.stats(), scheduler


def test_an_unloaded_read_is_answered_when_its_bank_picks_it():
    mem = small(dram={"scheduler": "queued-frfcfs"})
    first = mem.global_access(0, 0, line_tx(3), write=False)
    assert first.port_free == 1 and isinstance(first.done, Pending) and first.done.value is None
    assert mem.next_event() == 130  # the L2 miss at 30 reaches the controller 100 later
    mem.advance(129)
    assert first.done.value is None
    mem.advance(130)
    assert first.done.value == 144  # as test_miss_then_hit_timing_by_hand: 130 + 4 burst, + 10 back


@pytest.mark.parametrize("name, make, scenario", [
    ("miss then hit", lambda s: small(dram={"scheduler": s}),
     lambda m: [load(m, 0, 0, line_tx(3)), load(m, 1000, 0, line_tx(3))]),
    ("L1 merge", lambda s: small(dram={"scheduler": s}),
     lambda m: [load(m, 0, 0, line_tx(9)),
                load(m, 2, 0, line_tx(9, 0b0011))]),
    ("L2 merge across SMs", lambda s: small(dram={"scheduler": s}),
     lambda m: [load(m, 0, 0, line_tx(5)), load(m, 1, 1, line_tx(5))]),
    ("full L2 MSHRs block the slice", lambda s: small(l2={"mshr_entries": 4}, dram={"scheduler": s}),
     lambda m: [load(m, 0, 0, line_tx(1)), load(m, 0, 1, line_tx(2)),
                load(m, 1, 1, line_tx(1))]),
    ("full L1 MSHRs stall the port", lambda s: small(l1={"mshr_entries": 4}, dram={"scheduler": s}),
     lambda m: [load(m, 0, 0, line_tx(1)), load(m, 1, 0, line_tx(2)),
                (m.advance(2), m.shared_access(2, 0, 1))[1]]),
    ("L1 merge limit stalls the port", lambda s: small(l1={"max_merges": 1}, dram={"scheduler": s}),
     lambda m: [load(m, 0, 0, line_tx(4)), load(m, 1, 0, line_tx(4)),
                load(m, 2, 0, line_tx(4))]),
    ("row hits and misses", lambda s: small(dram={"scheduler": s, **ROWS}),
     lambda m: [load(m, 0, 0, line_tx(0)), load(m, 500, 0, line_tx(16)),
                load(m, 1000, 0, line_tx(256))]),
])
def test_where_nothing_queues_the_answers_are_the_reservation_models(name, make, scenario):
    both(make, scenario)


def test_full_l1_mshrs_hold_the_port_until_the_fill_is_known():
    mem = small(l1={"mshr_entries": 4}, dram={"scheduler": "queued-fcfs"})
    mem.global_access(0, 0, line_tx(1), write=False)
    second = mem.global_access(1, 0, line_tx(2), write=False)
    assert isinstance(second.port_free, Pending)  # it needs line 1's entries, whose release is not known
    [_, (port_free, done)] = settle(mem, second, second)
    assert (port_free, done) == (145, 288)  # test_mshr_exhaustion_delays_the_next_miss_until_the_earliest_frees
    s = mem.stats()["l1"]
    assert (s["mshr_full_stalls"]["value"], s["mshr_stall_cycles"]["value"]) == (1, 143)


def _rows_scenario(scheduler: str) -> tuple[int, int]:
    """Three SMs miss at cycle 0 on lines of DRAM bank 0: rows 0, 1 and 0 again (lines 0, 256,
    16); the done cycles of the row-1 read and of the second row-0 read."""
    mem = small(dram={"scheduler": scheduler, **ROWS}, sms=3)
    accesses = [mem.global_access(0, sm, line_tx(line), write=False) for sm, line in enumerate((0, 256, 16))]
    (_, first), (_, other_row), (_, same_row) = settle(mem, *accesses)
    assert first < min(other_row, same_row)
    return other_row, same_row


def test_frfcfs_serves_a_row_hit_ahead_of_an_older_miss_and_fcfs_does_not():
    other_row, same_row = _rows_scenario("queued-frfcfs")
    assert same_row < other_row
    other_row, same_row = _rows_scenario("queued-fcfs")
    assert other_row < same_row


def test_a_full_queue_holds_requests_upstream():
    """With one queue entry the row hit is not in the queue when the bank decides: FCFS order."""
    def run(entries: int) -> tuple[int, int]:
        mem = small(dram={"scheduler": "queued-frfcfs", "queue_entries": entries, **ROWS}, sms=3)
        accesses = [mem.global_access(0, sm, line_tx(line), write=False) for sm, line in enumerate((0, 256, 16))]
        return tuple(done for _, done in settle(mem, *accesses)[1:])

    other_row, same_row = run(1)
    assert other_row < same_row
    assert run(64)[1] < run(64)[0]


def test_queue_entries_are_checked():
    with pytest.raises(ConfigError, match="queue_entries must be a positive integer"):
        DramConfig(queue_entries=0)
    with pytest.raises(ConfigError, match="scheduler must be one of fcfs, frfcfs, queued-fcfs, queued-frfcfs"):
        DramConfig(scheduler="fifo")


@pytest.mark.parametrize("mode", ["base", "dflow"])
def test_whole_workloads_run_deterministically_on_the_reference_engine(mode):
    config = preset("paper-rtx3080").replace(mode=mode, **{"memory.dram.scheduler": "queued-frfcfs"})

    def run():
        device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size), engine="reference",
                              record_dram=True)
        # run_workload checks the results against the workload's reference (CheckFailed otherwise)
        run_workload(get_workload("hotspot"), size="tiny", form=config.mode.form, seed=1, device=device)
        return [t.to_dict() for t in device.timing], device.gpu.memory.dram_requests()

    (first, log), (again, _) = run(), run()
    assert first == again
    reads = [r for r in log if not r[3]]
    assert reads and all(done > cycle for cycle, _, _, _, _, done in reads)  # every read answered
    assert sum(t["memory"]["dram"]["reads"]["value"] for t in first) == len(reads)


def test_random_traffic_resolves_every_answer_and_keeps_the_invariants():
    """Four SMs load, store and use shared memory on a few lines of two DRAM banks, with small
    MSHR files, merge limits and queues, so that every waiting path runs: each answer resolves,
    each port serves its accesses in order, no load is faster than an L1 hit, every L2 read miss
    is one DRAM read, and the same traffic gives the same answers."""
    import random

    seen = dict.fromkeys(("l1 mshr", "l1 merge", "l2 mshr", "l2 merge", "reordered"), 0)

    def run(seed: int) -> list[tuple[int, int]]:
        rng = random.Random(seed)
        mem = small(l1={"mshr_entries": 8, "max_merges": 1, "size_bytes": 4096},
                    l2={"mshr_entries": 8, "max_merges": 1},
                    dram={"scheduler": rng.choice(QUEUED), "queue_entries": rng.choice((1, 2, 8)), "banks": 2,
                          **ROWS}, sms=4)
        lines = [rng.randrange(4096) for _ in range(12)]
        made, cycle = [], 0
        for _ in range(300):
            cycle += rng.choice((0, 0, 1, 3, 20))
            sm = rng.randrange(4)
            mem.advance(cycle)
            kind = rng.random()
            if kind < 0.1:
                made.append((cycle, sm, True, mem.shared_access(cycle, sm, rng.randrange(1, 4))))
            else:
                txs = [line_tx(rng.choice(lines), rng.choice((0b1, 0b11, 0b1111)))[0]
                       for _ in range(rng.randrange(1, 4))]
                made.append((cycle, sm, kind < 0.3, mem.global_access(cycle, sm, txs, write=kind < 0.3)))
        answers = settle(mem, *(a for *_, a in made))
        last = [0] * 4
        for (cycle, sm, write, _), (port_free, done) in zip(made, answers):
            assert port_free >= max(cycle, last[sm])  # the port takes accesses in order
            last[sm] = port_free
            assert done >= (port_free if write else cycle + 5)
        s = mem.stats()
        assert s["dram"]["reads"]["value"] == s["l2"]["read_misses"]["value"]
        seen["l1 mshr"] += s["l1"]["mshr_full_stalls"]["value"]
        seen["l1 merge"] += s["l1"]["merge_limit_stalls"]["value"]
        seen["l2 mshr"] += s["l2"]["mshr_full_stalls"]["value"]
        seen["l2 merge"] += s["l2"]["merge_limit_stalls"]["value"]
        seen["reordered"] += s["dram"]["reordered_hits"]["value"]
        return answers

    for seed in range(12):
        assert run(seed) == run(seed)
    assert all(seen.values()), seen  # every waiting path ran


# ---------------------------------------------------------------- both engines
def queued(preset_name: str, mode: str, **changes):
    """``preset_name`` in ``mode`` with the queued FR-FCFS controller (and ``changes``)."""
    return preset(preset_name).replace(mode=mode, **{"memory.dram.scheduler": "queued-frfcfs", **changes})


#: Machines on which accesses wait wherever they can: 1 DRAM channel of 2 banks with 256 B rows
#: and a 2-entry queue behind a 2 KB L2 with 8 MSHR entries and one merge per sector. ``l1``: one
#: SM with an 8-entry L1 MSHR file (its port waits for releases and for fills to merge into);
#: ``l2``: two SMs whose loads bypass the L1 (the L2 slices wait for releases and fills).
_TIGHT = {"memory.l2.slices": 2, "memory.l2.ways": 2, "memory.l2.size_bytes": 2 * 4 * 2 * 128,
          "memory.l2.slice_hash": "linear", "memory.l2.mshr_entries": 8, "memory.l2.max_merges": 1,
          "memory.dram.channels": 1, "memory.dram.banks": 2, "memory.dram.row_bytes": 256,
          "memory.dram.queue_entries": 2}
TIGHT = {"l1": {**_TIGHT, "num_sms": 1, "memory.l1.mshr_entries": 8, "memory.l1.max_merges": 1},
         "l2": {**_TIGHT, "num_sms": 2, "memory.l1.mshr_entries": 64, "memory.l1.caches_global": False}}


@pytest.mark.parametrize("mode", ["base", "dflow"])
@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))  # the converter's training set
def test_compiled_equals_reference_on_the_paper_preset(name, mode):
    run_both(name, queued("paper-rtx3080", mode))


@pytest.mark.parametrize("mode", ["base", "dflow"])
@pytest.mark.parametrize("name", ["bfs", "hotspot", "nw", "pathfinder"])
def test_compiled_equals_reference_on_the_sm86_preset(name, mode):
    run_both(name, queued("ampere-rtx3070", mode))


@pytest.mark.parametrize("mode", ["base", "dflow"])
@pytest.mark.parametrize("tight", list(TIGHT))
@pytest.mark.parametrize("name", ["hotspot", "pathfinder", "bfs"])
def test_compiled_equals_reference_on_tight_machines(name, tight, mode):
    run_both(name, queued("paper-rtx3080", mode, **TIGHT[tight]))


def test_tight_machines_reach_every_waiting_path():
    """On the tight machines the compiled engine's ports wait for MSHR releases and for pending
    fills to merge into, at the L1 and at the L2, and the controller reorders row hits."""
    totals: dict[str, int] = {}
    for tight in TIGHT:
        config = queued("paper-rtx3080", "dflow", **TIGHT[tight])
        device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size))
        run_workload(get_workload("hotspot"), size="tiny", form=config.mode.form, seed=1, device=device)
        for timing in device.timing:
            for group, key in (("l1", "mshr_full_stalls"), ("l1", "merge_limit_stalls"), ("l2", "mshr_full_stalls"),
                               ("l2", "merge_limit_stalls"), ("dram", "reordered_hits"), ("dram", "writes")):
                totals[f"{group}.{key}"] = totals.get(f"{group}.{key}", 0) + timing.memory[group][key]["value"]
    assert all(totals.values()), totals


@pytest.mark.parametrize("mode", ["base", "dflow"])
def test_queued_state_carries_across_a_fallback(mode):
    """A racy launch between others falls back to the reference engine; DRAM writes still queued
    at its start and end (and the events that serve them) cross both ways, and every launch's
    timing, the cycle, the issue log and memory end as the reference engine's."""
    from test_compiled_memory import snapshot  # (it imports this module)

    config = queued("paper-rtx3080", mode, **{**TIGHT["l1"], "num_sms": 4})
    devs = devices(config)
    kernels = [convert_kernel(k)[0] if mode == "dflow" else k for k in (_PRIVATE, _RACY, _PRIVATE)]
    for dev in devs.values():
        out = dev.upload(np.zeros(8192, dtype=np.uint32))
        for i, k in enumerate((*kernels, kernels[1], kernels[0])):
            dev.launch(k, grid=16, block=96, params=[out])
            if i == 0:  # writes the L2 evicted wait in the controller when the racy launch starts
                assert dev.gpu.memory.next_event() is not None
    assert_same(devs["reference"], devs["compiled"])
    assert devs["compiled"].gpu._reference is not None  # the racy launches did fall back
    # the memory systems end in the same state, queued writes and events included
    assert snapshot(devs["compiled"].gpu.memory.to_reference()) == snapshot(devs["reference"].gpu.memory)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["base", "dflow"])
@pytest.mark.parametrize("name", ["hotspot", "pathfinder", "nw", "bfs"])
def test_compiled_equals_reference_at_size_small(name, mode):
    run_both(name, queued("paper-rtx3080", mode), size="small")

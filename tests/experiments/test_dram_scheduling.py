"""The queued FR-FCFS controller that ``benchmarks/dram_scheduling.py`` compares the reservation
model's DRAM scheduling with (dualflow/experiments/dram_scheduling.py).

Times as in tests/models/timing/test_dram.py (core and DRAM clocks equal, ``CONFIG``): latency 10; tCL 5,
tRCD 6, tRP 7, tRAS 20, tRC 30, tRTP 2, tCCD 2; a 128 B line's burst is 4 cycles; one channel of
4 banks, line L in bank L mod 4, row L div 16 (bank 0, row 0: lines 0, 4, 8, 12).
"""

from __future__ import annotations

import math

import pytest
from dram_cases import CONFIG, DRAM_HEAVY, LINE

from dualflow.experiments.dram_scheduling import QueuedController, Request, compare, requests_of, reservation
from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.memory import DramConfig
from dualflow.machine.presets import preset
from dualflow.models.timing.device import TimingDevice


def _config(**changes) -> DramConfig:
    return DramConfig(**{**CONFIG.to_dict(), **changes})


def _queued(requests, frfcfs, queue=64, **changes):
    return QueuedController(_config(**changes), 1000.0, LINE, frfcfs=frfcfs, queue=queue).serve(requests)


def _reads(*pairs) -> list[Request]:
    return [Request(cycle, line, LINE, False, cycle) for cycle, line in pairs]


def test_a_hit_queued_behind_a_miss_goes_first_as_the_reservation_frfcfs_has_it():
    """Line 0 opens row 0 (data 21..25); line 16 (row 1) and line 4 (row 0) are queued when bank 0
    is free again (its read command at 16). FR-FCFS serves line 4 first (read at 18, bus 25..29),
    then line 16 (activate at 40 by tRC, data 51..55): what the reservation ``frfcfs`` answers
    too. FCFS serves line 16 first and line 4 after it as a conflict (data 81..85)."""
    stream = _reads((0, 0), (0, 16), (1, 4))
    fr = _queued(stream, True)
    assert fr.ends == [25, 55, 29] and fr.reordered == 1
    assert reservation(_config(scheduler="frfcfs"), 1000.0, LINE, stream).ends == [25, 55, 29]
    fc = _queued(stream, False)
    assert fc.ends == [25, 55, 85] and fc.reordered == 0


def test_a_hit_that_misses_the_committed_precharge_is_still_served_first_by_the_queue():
    """tRAS 12: row 0's precharge is committed at 22 when line 16 is answered. Line 8 (row 0) cannot
    finish by then (read at 22 at the earliest, tRTP to 24), so the reservation model makes it a
    conflict behind line 16 (precharge 52, activate 70 by tRC, data 81..85). The queue serves it
    before line 16 (read 24, its burst after line 4's, 29..33), and line 16 is not delayed: tRC
    holds its activate at 40 anyway."""
    stream = _reads((0, 0), (0, 16), (1, 4), (1, 8))
    assert reservation(_config(scheduler="frfcfs", tras=12), 1000.0, LINE, stream).ends == [25, 55, 29, 85]
    fr = _queued(stream, True, tras=12)
    assert fr.ends == [25, 55, 29, 33] and fr.reordered == 2


def test_a_queue_of_one_cannot_reorder():
    stream = _reads((0, 0), (0, 16), (1, 4), (1, 8))
    assert _queued(stream, True, queue=1).ends == _queued(stream, False).ends
    assert _queued(stream, True, queue=1).reordered == 0


def test_queued_fcfs_equals_the_reservation_fcfs_on_a_stream_without_bus_contention():
    """Same order per bank, requests far enough apart that no two bursts compete for the bus."""
    stream = _reads(*((40 * i, line) for i, line in enumerate([0, 4, 16, 1, 17, 5, 0, 2, 18, 3, 19, 4])))
    assert _queued(stream, False).ends == reservation(_config(scheduler="fcfs"), 1000.0, LINE, stream).ends


def test_writes_take_the_bank_and_bus_but_have_no_end():
    """The write activates at 10 and writes at 16 (data 18..22, tWL 2); the read of the same row
    reads tCCD later, at 18 (data 23..27)."""
    stream = [Request(0, 0, LINE, True, 0), Request(0, 4, LINE, False, 0)]
    served = _queued(stream, True)
    assert served.ends == [None, 18 + 5 + 4]


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_a_recorded_run_replays_exactly_and_both_engines_record_the_same(engine):
    """The DRAM-heavy hotspot of tests/models/timing/test_dram.py: every read the reservation replay of the log
    serves gets the answer the run got, and both engines log the same requests (the run on the
    reservation scheduler, which the replay models)."""
    config = preset("paper-rtx3080").replace(mode="dflow", **DRAM_HEAVY, **{"memory.dram.scheduler": "frfcfs"})
    logs = {}
    for e in ("reference", "compiled"):
        dev = TimingDevice(config, engine=e, record_dram=True)
        run_workload(get_workload("hotspot"), size="tiny", form=config.mode.form, seed=1, device=dev)
        logs[e] = dev.gpu.memory.dram_requests()
    assert logs["reference"] == logs["compiled"] and len(logs[engine]) > 100
    requests, answers = requests_of(logs[engine])
    served = reservation(config.memory.dram, config.core_clock_mhz, config.memory.l2.line_bytes, requests)
    assert [None if a is None else math.ceil(e - 1e-9) for a, e in zip(answers, served.ends)] == answers
    assert any(r.write for r in requests) and all(r.cycle >= r.floor for r in requests)


def test_not_recording_keeps_no_log():
    assert TimingDevice(preset("paper-rtx3080")).gpu.memory.dram_requests() is None


def test_compare_names_the_four_ways():
    stream = _reads((0, 0), (0, 16), (1, 4))
    names = [s.name for s in compare(_config(), 1000.0, LINE, stream)]
    assert names == ["reservation fcfs", "reservation frfcfs", "queued FCFS", "queued FR-FCFS"]


def test_queue_must_hold_a_request():
    with pytest.raises(ValueError, match="queue must be at least 1"):
        QueuedController(CONFIG, 1000.0, LINE, frfcfs=True, queue=0)

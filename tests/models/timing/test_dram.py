"""The DRAM device model (dualflow/models/timing/memory/dram.py): row hits and misses, bank timing, bank
parallelism, the data bus, writes, the address mapping, the fcfs and frfcfs schedulers, the
configuration and presets; and the compiled engine equal to the reference on DRAM-heavy runs.

Most tests drive ``Dram`` directly with the core and DRAM clocks equal, so every time below is a
whole number computed by hand from ``CONFIG``: latency 10; tCL 5, tWL 2, tRCD 6, tRP 7, tRAS 20,
tRC 30, tRRD 3, tRTP 2, tWR 4, tCCD 2; 32 B per cycle (a 128 B line's burst is 4 cycles); one
channel of 4 banks with 512 B rows (4 lines): line L is in bank L mod 4, row L div 16.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from dram_cases import CONFIG, DRAM_HEAVY, LINE
from engines import run_both

from dualflow.common.errors import ConfigError
from dualflow.machine.memory import DramConfig, MemoryConfig, dram_place
from dualflow.machine.presets import preset
from dualflow.models.timing.memory.dram import Dram


def dram(**changes) -> Dram:
    fields = {**CONFIG.to_dict(), **changes}
    return Dram(DramConfig(**fields), 1000.0, LINE)


def counts(d: Dram) -> tuple[int, int, int, int]:
    return d.row_hits, d.row_misses, d.row_conflicts, d.reordered_hits


def test_row_hit_and_row_miss_latency():
    d = dram()
    # bank 0 closed: at 10 activate, read command at 16 (tRCD), data 21..25 (tCL, burst)
    assert d.read(0, 0, LINE, 0) == 10 + 6 + 5 + 4 == 25
    # line 4: bank 0, row 0, open: read command on arrival, 10 + tCL + burst
    assert d.read(100, 4, LINE, 100) == 100 + 10 + 5 + 4
    # line 16: bank 0, row 1: precharge on arrival (210), activate 217, read 223, data 228..232
    assert d.read(200, 16, LINE, 200) == 200 + 10 + 7 + 6 + 5 + 4
    assert counts(d) == (1, 2, 1, 0)
    assert (d.reads, d.read_bytes) == (3, 3 * LINE)


@pytest.mark.parametrize("trc, done", [(30, 40 + 6 + 5 + 4), (0, 37 + 6 + 5 + 4)])
def test_a_row_conflict_waits_for_tras_and_trc(trc, done):
    """Line 0 activates bank 0 at 10; line 16 (same bank, other row) arriving then may precharge
    only at 10 + tRAS = 30, activate at 37 (tRP), and not before 10 + tRC."""
    d = dram(trc=trc)
    d.read(0, 0, LINE, 0)
    assert d.read(0, 16, LINE, 0) == done


def test_banks_work_in_parallel_and_the_bus_serializes_them():
    """Four lines in four banks: activates tRRD apart (10, 13, 16, 19), data wanted at 21, 24, 27,
    30, each burst 4 cycles on the one bus: done 25, 29, 33, 37. The same four in one bank, all
    different rows, take a precharge-activate cycle (tRC) each."""
    parallel = dram()
    assert [parallel.read(0, line, LINE, 0) for line in (0, 1, 2, 3)] == [25, 29, 33, 37]
    serial = dram()
    assert [serial.read(0, line, LINE, 0) for line in (0, 16, 32, 48)] == [25, 55, 85, 115]
    assert counts(serial) == (0, 4, 3, 0)


def test_activates_are_trrd_apart_on_a_channel():
    d = dram(trrd=9)  # 4 banks activated at 10, 19, 28, 37: each 15 cycles (tRCD + tCL + burst) later
    assert [d.read(0, line, LINE, 0) for line in (0, 1, 2, 3)] == [25, 34, 43, 52]


def test_stream_bandwidth_and_same_bank_column_spacing():
    """Row hits to open rows: across banks one burst per 4 cycles (32 B/cycle); in one bank no
    closer than tCCD (here 6 > the 4-cycle burst)."""
    d = dram()
    for line in (0, 1, 2, 3):  # open row 0 in every bank
        d.read(0, line, LINE, 0)
    across = [d.read(1000, line, LINE, 1000) for line in (4, 5, 6, 7)]
    assert [b - a for a, b in zip(across, across[1:])] == [4, 4, 4]
    d = dram(tccd=6)
    d.read(0, 0, LINE, 0)
    same = [d.read(1000, line, LINE, 1000) for line in (4, 8, 12)]  # bank 0, row 0
    assert [b - a for a, b in zip(same, same[1:])] == [6, 6]
    assert counts(d) == (3, 1, 0, 0)


def test_fractional_bandwidth_is_exact():
    d = Dram(DramConfig(**{**CONFIG.to_dict(), "bytes_per_cycle": 49.9}), 1440.0, LINE)
    for line in range(4):
        d.read(0, line, LINE, 0)
    assert d.busy_cycles == pytest.approx(4 * LINE / 49.9 * 1440 / 1000)


def test_writes_use_twl_and_hold_the_row_for_write_recovery():
    """A write's data starts tWL after its command; the bank may precharge only tWR after the data
    ends, so a read of another row behind a write waits longer than behind a read."""
    d = dram(tras=0, trc=0)
    d.write(0, 0, LINE, 0)  # activate 10, write command 16, data 18..22
    assert d.buses[0].starts == [18.0]
    # precharge at 22 + tWR = 26, activate 33, read command 39, data 44..48
    assert d.read(0, 16, LINE, 0) == 48
    r = dram(tras=0, trc=0)
    r.read(0, 0, LINE, 0)  # read command 16: precharge from 16 + tRTP = 18
    assert r.read(0, 16, LINE, 0) == 18 + 7 + 6 + 5 + 4
    assert (d.writes, d.write_bytes, d.reads) == (1, LINE, 1)


def _row_states(d: Dram, lines=(0, 4, 2, 6, 1, 8, 12)) -> list[tuple[int, int, int]]:
    """Hits, misses and conflicts after each of ``lines``, read one at a time, far apart."""
    seen = []
    for i, line in enumerate(lines):
        d.read(1000 * i, line, LINE, 1000 * i)
        seen.append(counts(d)[:3])
    return seen


def test_address_mapping_channels_then_banks_then_rows():
    """2 channels, 2 banks, 256 B rows (2 lines): line L is in channel L mod 2, bank (L div 2) mod 2,
    row (L div 2) div 4."""
    assert _row_states(dram(channels=2, banks=2, row_bytes=256)) == [
                    (0, 1, 0),  # line 0: channel 0, bank 0, row 0: activate
                    (1, 1, 0),  # line 4: channel 0, bank 0, row 0: hit
                    (1, 2, 0),  # line 2: channel 0, bank 1: activate
                    (2, 2, 0),  # line 6: channel 0, bank 1, row 0: hit
                    (2, 3, 0),  # line 1: channel 1: activate
                    (2, 4, 1),  # line 8: channel 0, bank 0, row 1: conflict
                    (3, 4, 1)]  # line 12: channel 0, bank 0, row 1: hit


def test_row_interleaved_mapping_fills_a_row_before_the_next_bank():
    """The same lines, ``mapping`` row-interleaved: line L is in channel L mod 2, bank
    ((L div 2) div 2) mod 2, row (L div 2) div 4; lines 0 and 2 now share bank 0's row 0, 4 and 6
    are bank 1's row 0, and 8 and 12 are rows 1 of banks 0 and 1."""
    assert _row_states(dram(channels=2, banks=2, row_bytes=256, mapping="row-interleaved")) == [
                    (0, 1, 0),  # line 0: channel 0, bank 0, row 0: activate
                    (0, 2, 0),  # line 4: channel 0, bank 1, row 0: activate
                    (1, 2, 0),  # line 2: channel 0, bank 0, row 0: hit
                    (2, 2, 0),  # line 6: channel 0, bank 1, row 0: hit
                    (2, 3, 0),  # line 1: channel 1: activate
                    (2, 4, 1),  # line 8: channel 0, bank 0, row 1: conflict (a miss too)
                    (2, 5, 2)]  # line 12: channel 0, bank 1, row 1: conflict


@pytest.mark.parametrize("row_interleaved", [False, True])
def test_the_mapping_places_every_line_of_a_channel_once(row_interleaved):
    """``dram_place`` is a bijection from a channel's lines onto (bank, row, column) positions: each
    bank's row holds exactly ``lines_per_row`` lines."""
    channels, banks, per_row = 3, 4, 8
    lines = range(channels * banks * per_row * 2)
    where = [dram_place(line, channels, banks, per_row, row_interleaved) for line in lines]
    rows = Counter((bank, row) for _, bank, row in where)
    assert set(rows.values()) == {per_row} and len(rows) == channels * banks * 2
    assert all(bank // banks == channel for channel, bank, _ in where)


def _reorder_case(scheduler: str, second_arrival: int = 1) -> tuple[list[int], Dram]:
    """Line 0 opens row 0 of bank 0 (activate 10, read 16, data 21..25); line 16 (row 1) must wait
    for tRAS and tRC: activate 40, data 51..55, row 0's precharge committed at 30; then line 4
    (row 0) arrives."""
    d = dram(scheduler=scheduler)
    done = [d.read(0, 0, LINE, 0), d.read(0, 16, LINE, 0),
            d.read(second_arrival, 4, LINE, second_arrival)]
    return done, d


def test_frfcfs_serves_a_row_hit_before_the_committed_precharge():
    """frfcfs: line 4 arrives at 11, reads at 18 (tCCD after line 0's read), data wanted at 23,
    the bus is free from 25: 25..29; its tRTP ends at 22 <= 30, so row 0 was still open for it.
    fcfs: it is a conflict behind line 16: precharge at 40 + tRAS = 60, activate 70 (tRC), data
    81..85."""
    fr, d = _reorder_case("frfcfs")
    fc, _ = _reorder_case("fcfs")
    assert fr == [25, 55, 29]
    assert fc == [25, 55, 85]
    assert counts(d) == (1, 2, 1, 1)
    # the bank stays where it was: row 1 open, a later hit to it is timed as before
    assert d.read(100, 20, LINE, 100) == 100 + 10 + 5 + 4


def test_frfcfs_does_not_reorder_what_does_not_fit():
    """Line 4 arriving at 10 + 19 = 29 would read at 29 and hold row 0 until 31 > 30, its committed
    precharge: it is a conflict as under fcfs."""
    fr, d = _reorder_case("frfcfs", 19)
    fc, _ = _reorder_case("fcfs", 19)
    assert fr == fc
    assert counts(d) == (0, 3, 2, 0)


def test_frfcfs_reordered_hits_keep_first_come_order():
    """Two hits to the previous row go in arrival order: the second tCCD or a burst after the first."""
    d = dram(scheduler="frfcfs", tras=60, trc=0)  # row 0's precharge committed at 10 + 60 = 70
    d.read(0, 0, LINE, 0)
    d.read(0, 16, LINE, 0)
    first = d.read(1, 4, LINE, 1)
    second = d.read(1, 8, LINE, 1)
    assert (first, second) == (29, 33)
    assert counts(d)[3] == 2


def test_row_hit_latency_of_the_presets():
    """paper-rtx3080: Table 1's 100 DRAM cycles at 1523 MHz is the unloaded row hit from the L2;
    ampere-rtx3070: Accel-Sim SM86's -dram_latency 254 core cycles + CL 24 + a line's burst."""
    paper = preset("paper-rtx3080")
    d = Dram(paper.memory.dram, paper.core_clock_mhz, LINE)
    hit = d.line_latency * paper.memory.dram.clock_mhz / paper.core_clock_mhz  # in DRAM cycles
    assert 100 <= hit < 101
    ampere = preset("ampere-rtx3070")
    d = Dram(ampere.memory.dram, ampere.core_clock_mhz, LINE)
    ratio = ampere.core_clock_mhz / ampere.memory.dram.clock_mhz
    assert d.line_latency == math.ceil(254 + 24 * ratio + 16 * ratio)


def test_presets_device_timing():
    sm86 = {"tcl": 24, "twl": 8, "trcd": 24, "trp": 24, "tras": 55, "trc": 78, "trrd": 12, "trtp": 4, "twr": 24,
            "tccd": 6}
    ampere = preset("ampere-rtx3070").memory.dram
    assert {name: getattr(ampere, name) for name in sm86} == sm86
    assert (ampere.channels, ampere.banks, ampere.row_bytes, ampere.scheduler) == (16, 16, 2048, "queued-frfcfs")
    assert round(ampere.channels * ampere.bytes_per_cycle * ampere.clock_mhz / 1000) == 448  # GB/s
    # the paper's: the same nanoseconds in its 1523 MHz clock, rounded up
    paper = preset("paper-rtx3080").memory.dram
    assert {name: getattr(paper, name) for name in sm86} == {
        name: math.ceil(n * 1523 / 3500.5) for name, n in sm86.items()}


@pytest.mark.parametrize("make, message", [
    (lambda: DramConfig(scheduler="fifo"),
     "DramConfig.scheduler must be one of fcfs, frfcfs, queued-fcfs, queued-frfcfs, not 'fifo'"),
    (lambda: DramConfig(mapping="xor"),
     "DramConfig.mapping must be one of line-interleaved, row-interleaved, not 'xor'"),
    (lambda: DramConfig(row_bytes=1000), "DramConfig.row_bytes must be a power of two, not 1000"),
    (lambda: DramConfig(banks=0), "DramConfig.banks must be a positive integer, not 0"),
    (lambda: DramConfig(trcd=-1), "DramConfig.trcd must be a non-negative integer, not -1"),
    (lambda: DramConfig(latency=1.5), "DramConfig.latency must be a non-negative integer"),
    (lambda: MemoryConfig(dram=DramConfig(row_bytes=64)), r"row_bytes \(64\) must hold at least one line"),
])
def test_dram_config_validation(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


# ---------------------------------------------------------------- both engines, DRAM-heavy


@pytest.mark.parametrize("scheduler", ["frfcfs", "fcfs"])
@pytest.mark.parametrize("name", ["hotspot", "nw"])
def test_compiled_equals_reference_dram_heavy(name, scheduler):
    config = preset("paper-rtx3080").replace(mode="dflow", **DRAM_HEAVY,
                                             **{"memory.dram.scheduler": scheduler})
    run_both(name, config)


def test_dram_heavy_run_exercises_the_device():
    """The configuration above makes rows change and (frfcfs) hits go before committed precharges."""
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload
    from dualflow.models.statistic import merge_launches
    from dualflow.models.timing.device import TimingDevice

    config = preset("paper-rtx3080").replace(mode="dflow", **DRAM_HEAVY)
    dev = TimingDevice(config)
    run_workload(get_workload("hotspot"), size="tiny", form=config.mode.form, seed=1, device=dev)
    tree = merge_launches(dev.timing)[0].memory["dram"]  # all of the workload's launches
    assert tree["row_conflicts"]["value"] > 0 and tree["reordered_hits"]["value"] > 0
    assert tree["row_hits"]["value"] + tree["row_misses"]["value"] == tree["reads"]["value"] + tree["writes"]["value"]


"""The Little's-law validation (dualflow/experiments/validation.py, docs/validation.md): D-FLOW against
BASE on pure dependent chains, one-warp latencies against the configuration's prediction (both
front ends), predictions and measurements that move with the front-end and register-file fields,
and the knee rule."""

from __future__ import annotations

import math

import pytest

from dualflow.experiments import validation as v
from dualflow.machine.config import UnitConfig
from dualflow.machine.mode import Mode


@pytest.mark.parametrize("name", ["fp-ilp1", "int-ilp1"])
@pytest.mark.parametrize("warps", [1, 8, 32])
def test_dependent_chain_costs_dflow_no_more_than_base(name, warps):
    # a pure chain has nothing to reorder and no false dependency: D-FLOW must not be slower.
    # Steady-state cycles (difference of two trip counts), so the converter's prologue (spills)
    # does not count; the converted loop runs the same instructions per iteration here.
    case = v.CASE[name]
    base = v.measure(case, "paper-rtx3080", Mode.BASE, warps)
    dflow = v.measure(case, "paper-rtx3080", Mode.DFLOW, warps)
    assert dflow.cycles <= base.cycles, (f"{name} at {warps} warps: D-FLOW {dflow.cycles} cycles for "
                                         f"{dflow.iterations} iterations, BASE {base.cycles}")


#: The one-warp walk does not model register-bank conflicts. In BASE the chains' registers sit in
#: distinct banks, so it is exact; in D-FLOW consecutive ring slots rotate through the banks and a
#: read can meet a writeback of the same bank. With two accesses per bank and cycle
#: (``register_bank_ports`` 2) no case here loses a cycle; with one (fermi-gtx480's 4 banks x 1
#: port, not tested) stream-dram loses one per iteration (docs/validation.md, "Limits of the walk").
#: And the walk starts its loop with L1 hits, where the run's first lap of load-use goes to DRAM:
#: D-FLOW's load-use repeats every third pass, and on ampere-rtx3070 (both lines in one channel)
#: the first lap leaves that cycle in another phase, 3 cycles in the 16 measured iterations.
TOLERANCE = {Mode.BASE: 0.0, Mode.DFLOW: 0.5}


@pytest.mark.parametrize("preset_name", v.PRESETS)
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", [c.name for c in v.CASES])
def test_one_warp_latency_is_the_predicted_critical_path(name, mode, preset_name):
    case = v.CASE[name]
    measured = v.measure(case, preset_name, mode, 1).latency()
    predicted = v.predict(case, preset_name, mode).latency
    assert abs(measured - predicted) <= TOLERANCE[mode], (name, mode, preset_name, measured, predicted)


#: The other front end and its neighbours: fetch stopping at branches, a one-entry buffer (the
#: next fetch waits for each issue), a longer fetch, a deep buffer filled one instruction a cycle.
FRONT_ENDS = (
    {"sm.fetch_past_branches": False},
    {"sm.ibuffer_entries": 1, "sm.fetch_latency": 3},
    {"sm.ibuffer_entries": 1, "sm.fetch_latency": 3, "sm.fetch_past_branches": False},
    {"sm.ibuffer_entries": 4, "sm.fetch_width": 1, "sm.fetch_latency": 2},
)


@pytest.mark.parametrize("changes", FRONT_ENDS, ids=lambda c: ",".join(f"{k[3:]}={x}" for k, x in c.items()))
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", [c.name for c in v.CASES])
def test_one_warp_latency_follows_the_front_end(name, mode, changes):
    case = v.CASE[name]
    measured = v.measure(case, "paper-rtx3080", mode, 1, changes=changes).latency()
    predicted = v.predict(case, "paper-rtx3080", mode, changes).latency
    assert abs(measured - predicted) <= TOLERANCE[mode], (name, mode, changes, measured, predicted)


#: The D-FLOW window's fields: each policy, tighter and looser limits, sending ahead only for loads.
WINDOWS = (
    {"sm.dflow_window": "pool-limited"},
    {"sm.dflow_window": "pool-limited", "sm.dflow_waiting_per_sm": 1},
    {"sm.dflow_window": "per-warp"},
    {"sm.dflow_window": "reserve", "sm.dflow_reserve": 0},
    {"sm.dflow_window": "reserve", "sm.dflow_reserve": 7},
    {"sm.dflow_waiting_per_warp": 1},
    {"sm.dflow_send_ahead": "loads"},
)


@pytest.mark.parametrize("preset_name", v.PRESETS)
@pytest.mark.parametrize("name", ["load-use", "stream-dram"])
def test_one_warp_dflow_latency_follows_the_window(name, preset_name):
    # load-use sends its first add ahead to wait for the load while the second load issues;
    # whether the window lets it (how many units stay free, how many wait, whether the next
    # instruction is a load) sets the iteration. The walk derives it from the fields alone.
    case = v.CASE[name]
    predicted, measured = {}, {}
    for changes in ({}, *WINDOWS):
        key = tuple(changes.items())
        measured[key] = v.measure(case, preset_name, Mode.DFLOW, 1, changes=changes).latency()
        predicted[key] = v.predict(case, preset_name, Mode.DFLOW, changes).latency
        assert abs(measured[key] - predicted[key]) <= TOLERANCE[Mode.DFLOW], (name, preset_name, changes,
                                                                               measured[key], predicted[key])
    # the fields matter, and the walk moves as the model does
    assert len(set(predicted.values())) >= 3, predicted
    for a in predicted:
        for b in predicted:
            if predicted[a] < predicted[b] - 2 * TOLERANCE[Mode.DFLOW]:
                assert measured[a] < measured[b], (a, b, predicted, measured)


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", ["int-ilp2", "int-ilp4", "load-use"])
def test_one_warp_latency_follows_the_collector_partition(name, mode):
    # sub-cores: the warp's scheduler has 2 of the 8 collector units and 1 of the 4 INT pipelines
    # (interval 2), so independent IADDs go every other cycle; shared, the warp has them all
    case = v.CASE[name]
    lat = {}
    for partition in ("shared", "scheduler"):
        changes = {"sm.collector_partition": partition}
        measured = v.measure(case, "paper-rtx3080", mode, 1, changes=changes).latency()
        predicted = v.predict(case, "paper-rtx3080", mode, changes).latency
        assert abs(measured - predicted) <= TOLERANCE[mode], (name, mode, partition, measured, predicted)
        lat[partition] = predicted
    if name == "int-ilp4":
        assert lat["scheduler"] > lat["shared"], lat


def test_pipelines_per_pool():
    assert v.pipes_per_pool(4, 4) == 1  # sub-cores: one each
    assert v.pipes_per_pool(8, 2) == 4
    assert v.pipes_per_pool(1, 4) == 1  # one load/store unit: shared by all
    assert v.pipes_per_pool(2, 4) == 2
    assert v.pipes_per_pool(4, 1) == 4  # one pool: all of them


def test_issue_order_does_not_matter_to_one_warp():
    # the walk has no issue order: ready-first tries the one warp again, allowing the wait, when
    # it could not issue with ready operands, which is what oldest-first does at once
    case = v.CASE["load-use"]
    for preset_name in v.PRESETS:
        changes = {"sm.dflow_issue_order": "oldest-first"}
        measured = v.measure(case, preset_name, Mode.DFLOW, 1, changes=changes).latency()
        assert measured == v.measure(case, preset_name, Mode.DFLOW, 1).latency()
        assert abs(measured - v.predict(case, preset_name, Mode.DFLOW, changes).latency) <= TOLERANCE[Mode.DFLOW]


@pytest.mark.parametrize("ctrl_latency", [2, 5])
@pytest.mark.parametrize("mode", list(Mode))
def test_taken_branch_costs_what_the_front_end_says(mode, ctrl_latency):
    # fp-ilp4's iteration is bound by its front end, so the taken branch's cost is the latency
    # difference. Fetching past it, the target is fetched the cycle after the branch issues (the
    # flush) and issues fetch_latency later; stopping at it, fetch waits for it to complete: its
    # operand read and dispatch (2 cycles) and the branch unit. One taken branch per iteration.
    case = v.CASE["fp-ilp4"]
    lat = {}
    for past in (True, False):
        changes = {"sm.fetch_past_branches": past, "sm.ctrl_unit": UnitConfig(ctrl_latency, 1, 4)}
        lat[past] = (v.measure(case, "paper-rtx3080", mode, 1, changes=changes).latency(),
                     v.predict(case, "paper-rtx3080", mode, changes).latency)
    per_branch = 2 + ctrl_latency - 1
    assert lat[False][1] - lat[True][1] == per_branch, lat
    assert lat[False][0] - lat[True][0] == per_branch, lat
    assert all(m == p for m, p in lat.values()), lat


def _bounds(name: str, mode: Mode, changes: dict) -> dict[str, float]:
    case = v.CASE[name]
    config = v.machine("paper-rtx3080", mode, changes)
    walk = v.one_warp_walk(v.kernel(case, v.ITERATIONS[1], mode.form), config, case)
    return v.throughput_bounds(walk, config, case)


@pytest.mark.parametrize("past", [True, False])
@pytest.mark.parametrize("mode", list(Mode))
def test_fetch_bound_follows_fetch_warps_and_wrong_path_fetches(mode, past):
    # fp-ilp1: 10 instructions per iteration from the loop head to its branch, 5 fetch groups of 2.
    # Fetching past the branch, the 5th group ends at it and one more slot fetches the fall-through
    # that the flush discards: 6 slots; stopping at it: 5.
    slots = 6 if past else 5
    one = {"sm.fetch_warps": 1, "sm.fetch_past_branches": past}
    four = {"sm.fetch_warps": 4, "sm.fetch_past_branches": past}
    assert _bounds("fp-ilp1", mode, one)["fetch"] == pytest.approx(10 / slots)
    assert _bounds("fp-ilp1", mode, four)["fetch"] == pytest.approx(4 * 10 / slots)
    predicted = v.predict(v.CASE["fp-ilp1"], "paper-rtx3080", mode, one)
    assert predicted.bound == "fetch"
    # with one fetch a cycle the fetch bound is what the SM sustains, wrong-path slots included
    measured = v.measure(v.CASE["fp-ilp1"], "paper-rtx3080", mode, 32, changes=one).ipc
    assert measured == pytest.approx(predicted.plateau, rel=0.02), (measured, predicted)
    # with four, fetch no longer binds: the SM goes past the one-fetch bound
    assert v.predict(v.CASE["fp-ilp1"], "paper-rtx3080", mode, four).bound != "fetch"
    assert v.measure(v.CASE["fp-ilp1"], "paper-rtx3080", mode, 32, changes=four).ipc > 1.3 * predicted.plateau


@pytest.mark.parametrize("mode", list(Mode))
def test_register_file_bounds_follow_ports(mode):
    # two banks (for all warps: too few to split among 4 schedulers): the register file binds; a
    # second port per bank doubles its bound, and the SM, which stays below the bound
    # (conflicts), gains most of it
    rates, bounds = {}, {}
    for ports in (1, 2):
        changes = {"sm.register_banks": 2, "sm.register_bank_ports": ports, "sm.register_bank_map": "warp"}
        predicted = v.predict(v.CASE["fp-ilp4"], "paper-rtx3080", mode, changes)
        assert predicted.bound == "register banks"
        bounds[ports] = predicted.plateau
        rates[ports] = v.measure(v.CASE["fp-ilp4"], "paper-rtx3080", mode, 32, changes=changes).ipc
        assert rates[ports] <= 1.01 * bounds[ports], (ports, rates, bounds)
    assert bounds[2] == pytest.approx(2 * bounds[1])
    assert rates[2] > 1.6 * rates[1], rates
    # one writeback port: each result takes it for a cycle, and that is exactly the plateau
    changes = {"sm.writeback_ports": 1}
    predicted = v.predict(v.CASE["fp-ilp1"], "paper-rtx3080", mode, changes)
    assert predicted.bound == "writeback ports"
    assert predicted.plateau == pytest.approx(10 / 9)  # 9 of fp-ilp1's 10 instructions write a register
    measured = v.measure(v.CASE["fp-ilp1"], "paper-rtx3080", mode, 32, changes=changes).ipc
    assert measured == pytest.approx(predicted.plateau, rel=0.02)


def test_predictions_follow_the_configuration():
    paper, ampere = (v.machine(p, Mode.BASE) for p in v.PRESETS)
    # docs/memory-system.md's worked example: request 8, slice tags 187, DRAM, reply 8; the DRAM
    # part 82 + tCL + a line's burst on a row hit (95), + tRCD on a bank's first access, + tRP + tRCD
    # on a conflict
    assert [v.memory_latency(paper, "dram", row=r) for r in ("hit", "first", "conflict")] == [298, 309, 319]
    assert v.memory_latency(ampere, "dram") > v.memory_latency(paper, "dram")
    # chase-dram reads position j of warp 0's chain at line 2 + 64 j (buf at 256). Paper: 10 channels,
    # so every 5th position is in one channel, 64 x 5 / 10 = 32 lines on in it, a multiple of the
    # 16 banks: one bank, whose row (16 banks x 16 lines) changes at position 40. The measured
    # window (positions 16 to 47) has 27 row hits and 5 conflicts (positions 40 to 44).
    # Ampere: 16 channels, all positions in one, banks 4 apart: 4 banks open rows once, then hits.
    link = 2 + paper.sm.mem_unit.latency  # the loop's branch hides under the chain
    n = v.ITERATIONS[1] - v.ITERATIONS[0]
    case = v.CASE["chase-dram"]
    walk = v.one_warp_walk(v.kernel(case, v.ITERATIONS[1], Mode.BASE.form), paper, case)
    assert walk.rows == {"hit": 27, "conflict": 5}
    assert v.predict(case, "paper-rtx3080", Mode.BASE).latency == \
        (v.CHASE_LINKS * n * link + 27 * 298 + 5 * 319) / n
    walk = v.one_warp_walk(v.kernel(case, v.ITERATIONS[1], Mode.BASE.form), ampere, case)
    assert walk.rows == {"hit": 2 * n}
    assert v.predict(case, "ampere-rtx3070", Mode.BASE).latency == \
        v.CHASE_LINKS * (link + v.memory_latency(ampere, "dram"))
    assert v.shared_degree(v.CASE["shared-s32"], paper) == 32
    assert v.shared_degree(v.CASE["shared-s2"], paper) == 2


#: DRAM fields that change what the DRAM cases' one warp meets: a longer precharge (conflicts),
#: smaller rows (more conflicts), fewer channels and banks (other banks and rows), one narrow
#: channel (the stream's four loads queue on its bus), a long tRRD (activates of one channel spaced).
DRAM_CHANGES = (
    {"memory.dram.trp": 40},
    {"memory.dram.row_bytes": 512},
    {"memory.dram.channels": 8},
    {"memory.dram.banks": 4, "memory.dram.row_bytes": 256},
    {"memory.dram.channels": 1, "memory.dram.bytes_per_cycle": 4.0},
    {"memory.dram.trrd": 30, "memory.dram.row_bytes": 256},
)


@pytest.mark.parametrize("changes", DRAM_CHANGES, ids=lambda c: ",".join(f"{k[12:]}={x}" for k, x in c.items()))
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("name", ["chase-dram", "stream-dram"])
def test_one_warp_dram_latency_follows_the_device_timing(name, mode, changes):
    case = v.CASE[name]
    moved = []
    for preset_name in v.PRESETS:
        measured = v.measure(case, preset_name, mode, 1, changes=changes).latency()
        predicted = v.predict(case, preset_name, mode, changes).latency
        # the one case a cycle off: a register-bank port conflict, which the walk does not model
        # (with 4 ports per bank it measures the walk's figure; docs/validation.md, "Limits of the walk")
        untraced = (name, mode, preset_name, tuple(changes.items())) == (
            "stream-dram", Mode.DFLOW, "ampere-rtx3070", (("memory.dram.banks", 4), ("memory.dram.row_bytes", 256)))
        tolerance = 1.0 if untraced else TOLERANCE[mode]
        assert abs(measured - predicted) <= tolerance, (name, mode, preset_name, changes, measured, predicted)
        moved.append(predicted != v.predict(case, preset_name, mode).latency)
    assert any(moved)  # the change matters to the warp on one preset at least


def test_warp_dram_spaces_one_channels_activates_and_bursts():
    # four first accesses to four banks of one channel, one cycle apart (Ampere: tRRD 12 and a 128 B
    # burst of 16 DRAM cycles, 3.88 and 5.17 core cycles): the bus spaces the data, not tRRD
    config = v.machine("ampere-rtx3070", Mode.BASE)
    t = v.dram_timing(config)
    d = config.memory.dram
    dram = v.WarpDram(config)
    lines = [d.channels * b for b in range(4)]  # channel 0, banks 0 to 3, row 0
    done = [dram.read(c, line, 128) for c, line in enumerate(lines)]
    assert [s for _, s in done] == ["first"] * 4
    first = d.latency + t["trcd"] + t["tcl"]  # the first burst's start
    burst = 128 * t["per_byte"]
    assert t["trrd"] < burst
    assert [c for c, _ in done] == [math.ceil(first + (i + 1) * burst - 1e-9) for i in range(4)]
    # the same rows again, later: row hits; another row of bank 0: a conflict
    assert dram.read(1000, lines[0], 128) == (1000 + v.dram_unloaded(config, "hit"), "hit")
    other = d.channels * d.banks * (d.row_bytes // 128)  # bank 0's next row
    assert dram.read(2000, other, 128) == (2000 + v.dram_unloaded(config, "conflict"), "conflict")


def test_knee_of_a_synthetic_curve():
    warps = [1, 2, 4, 8, 16, 32, 64]
    rates = [min(0.25 * w, 2.0) for w in warps]  # slope 0.25, plateau 2: knee at 8
    assert v.knee(warps, rates) == (2.0, 8.0, True)
    # a curve that bends softly still meets its plateau where the slope says
    soft = [0.25, 0.5, 0.95, 1.6, 1.9, 2.0, 2.0]
    assert v.knee(warps, soft) == (2.0, 8.0, True)
    # still on its slope at the last point: the plateau and knee are lower bounds only
    linear = [0.1 * w for w in warps]
    plateau, k, reached = v.knee(warps, linear)
    assert (plateau, reached) == (pytest.approx(6.4), False) and k == pytest.approx(64)
    with pytest.raises(ValueError):
        v.knee([2, 1], [1.0, 2.0])
    with pytest.raises(ValueError):
        v.knee([1, 2], [0.0, 1.0])

"""Declared statistics (dualflow/models/statistic.py): merge, to_dict and plain values derived from one
declaration per statistic; the functional model's LaunchStats and the timing model's TimingStats
built on them; the timing model's warp orders."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dualflow.common.errors import ConfigError
from dualflow.isa import assemble
from dualflow.machine import GpuConfig, Scheduler
from dualflow.models import Device, LaunchStats
from dualflow.models.statistic import Statistics, add, counter, derived, label, setting, subtract
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.stats import STALL_REASONS, SmCounters, TimingStats
from dualflow.models.timing.warp_order import WARP_ORDERS, warp_order


@dataclass
class Toy(Statistics):
    name: str = label("*")
    lanes: int = setting(default=4)
    issued: int = counter("instructions", "issued", default=0)
    rate = derived("instructions/cycle", "issued / cycles", lambda s: s.issued / s.cycles if s.cycles else 0.0,
                   digits=2)
    cycles: int = counter("cycles", default=0)
    per_bank: list[int] = counter("accesses", "per bank", default_factory=lambda: [0, 0])
    by_kind: dict[str, int] = counter("instructions", "per kind", keys=("b", "a"), default_factory=dict)
    hidden: int = counter("x", written=False, default=0)


def test_one_declaration_gives_merge_dump_and_values():
    a = Toy("k", 8, issued=3, cycles=4, per_bank=[1, 2], by_kind={"a": 1}, hidden=1)
    b = Toy("k", 4, issued=1, cycles=2, per_bank=[3, 4], by_kind={"b": 2}, hidden=2)
    m = a.merge(b)
    assert (m.name, m.lanes, m.issued, m.cycles, m.per_bank, m.by_kind, m.hidden) == \
        ("k", 8, 4, 6, [4, 6], {"a": 1, "b": 2}, 3)
    assert a.merge(Toy("other")).name == "*"
    assert m.to_dict() == {
        "name": "k",
        "issued": {"value": 4, "unit": "instructions", "description": "issued"},
        "rate": {"value": 0.67, "unit": "instructions/cycle", "description": "issued / cycles"},
        "cycles": {"value": 6, "unit": "cycles"},
        "per_bank": {"value": [4, 6], "unit": "accesses", "description": "per bank"},
        "by_kind": {"value": {"b": 2, "a": 1}, "unit": "instructions", "description": "per kind"},
    }
    assert list(m.to_dict()) == list(m.values()) == ["name", "issued", "rate", "cycles", "per_bank", "by_kind"]
    assert m.values()["rate"] == m.rate == 4 / 6  # plain values are not rounded
    assert a.per_bank == [1, 2] and b.by_kind == {"b": 2}  # merging leaves its inputs alone


def test_add_and_subtract_give_fresh_containers():
    a = {"x": [1, 2], "y": 3}
    total = add(a, {"x": [1, 1], "y": 1, "z": 5})
    assert total == {"x": [2, 3], "y": 4, "z": 5}
    assert subtract(total, a) == {"x": [1, 1], "y": 1, "z": 5}
    total["x"][0] = 99
    assert a == {"x": [1, 2], "y": 3}


def test_launch_stats_plain_values():
    """``result.stats.warp_instructions`` is a number; ``to_dict`` keeps units."""
    k = assemble(".kernel t\n.form reg\n.param out\nexit\n").only
    dev = Device()
    result = dev.launch(k, grid=2, block=64, params=[dev.upload(np.zeros(4, np.uint32))])
    s = result.stats
    assert s.warp_instructions == s.values()["warp_instructions"] == 4
    assert s.to_dict()["warp_instructions"] == {"value": 4, "unit": "warp-instructions"}
    twice = s.merge(s)
    assert (twice.launches, twice.blocks, twice.warp_instructions) == (2, 4, 8)
    assert twice.per_pc.tolist() == [8]
    assert s.merge(LaunchStats("other", "reg")).per_pc is None  # per-pc counts only within one kernel


def test_timing_stats_merge_and_dump():
    k = assemble(".kernel t\n.form reg\n.param out\nbar\nexit\n").only
    config = GpuConfig(num_sms=2)
    dev = TimingDevice(config)
    for _ in range(2):
        dev.launch(k, grid=3, block=64, params=[dev.upload(np.zeros(4, np.uint32))])
    a, b = dev.timing
    m = a.merge(b)
    assert m.launches == 2 and m.cycles == a.cycles + b.cycles and m.barriers == 12
    assert m.warp_instructions == {c: a.warp_instructions[c] * 2 for c in a.warp_instructions}
    assert m.ipc == m.total_warp_instructions / m.cycles
    d = m.to_dict()
    assert list(d) == ["kernel", "launches", "cycles", "ipc", "warp_instructions", "thread_instructions", "stalls",
                       "rf_reads", "rf_writes", "rf_bank_conflicts", "rf_bank_conflict_rate", "collector_occupancy",
                       "achieved_occupancy", "sm_active_cycles", "barriers", "ibuffer_flushes", "memory"]
    assert d["ipc"]["value"] == round(m.ipc, 4)
    assert list(d["stalls"]["value"]) == list(STALL_REASONS)
    assert list(d["warp_instructions"]["value"]) == sorted(a.warp_instructions)
    # every scheduler-cycle of both SMs is charged to one reason
    assert sum(m.stalls.values()) == m.cycles * 2 * config.sm.schedulers


def test_sm_counters_are_the_declared_ones():
    """``SmCounters`` holds exactly the counters declared with a ``counters.`` source."""
    declared = {stat.source.removeprefix("counters.") for stat in TimingStats.declarations().values()
                if stat.source is not None and stat.source.startswith("counters.")}
    assert set(vars(SmCounters())) == declared


@pytest.mark.parametrize(("name", "last", "want"), [
    ("gto", None, "abcd"), ("gto", "c", "cabd"), ("lrr", None, "abcd"), ("lrr", "b", "cdab"), ("lrr", "d", "abcd")])
def test_warp_orders(name: str, last: str | None, want: str):
    warps = list("abcd")
    assert "".join(warp_order(name).order(warps, None if last is None else warps[warps.index(last)])) == want


def test_ready_first_choice():
    warps = [0, 1, 2, 3]
    gto = WARP_ORDERS["gto"]
    assert gto.choose(warps, 0, ready=lambda w: w in (0, 2)) == 0
    assert gto.choose(warps, 0, ready=lambda w: w in (0, 2), prefer=lambda w: w == 2) == 2
    assert gto.choose(warps, 0, ready=lambda w: w == 0, prefer=lambda w: w == 2) == 0
    assert gto.choose(warps, 0, ready=lambda w: False) is None


def test_warp_orders_are_named_by_the_machine():
    """Every scheduler the machine names has one policy, found by its name."""
    assert set(WARP_ORDERS) == set(Scheduler)
    assert warp_order("lrr") is WARP_ORDERS[Scheduler.LRR]
    with pytest.raises(ConfigError, match="fifo"):
        warp_order("fifo")

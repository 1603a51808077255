"""The warp scheduler (dualflow/rtl/scheduler.py) against its reference model over random ready patterns,
with and without the grant being taken. The reference (``WarpSchedulerModel``) is the timing
model's warp order (dualflow/models/timing/warp_order.py) with the RTL's policy state."""

from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from dualflow.common.errors import ConfigError
from dualflow.machine import SCHEDULERS
from dualflow.rtl.scheduler import WarpScheduler
from dualflow.testbench.blocks.models import WarpSchedulerModel


def _check_random(dut: WarpScheduler, policy: str, warps: int, rng: random.Random, *, two_level: bool) -> None:
    """Random ready (and, two-level, prefer) patterns, the grant taken or not, against the reference."""
    errors: list[str] = []
    model = WarpSchedulerModel(warps=warps, policy=policy, two_level=two_level)

    async def bench(ctx):
        for cycle in range(400):
            ready = rng.randrange(1 << warps) if rng.random() < 0.9 else 0
            prefer = rng.randrange(1 << warps) if two_level else 0
            take = rng.random() < 0.8
            ctx.set(dut.ready, ready)
            if two_level:
                ctx.set(dut.prefer, prefer)
            ctx.set(dut.issue, take)
            want = model.grant(ready, prefer)
            valid, warp, grant = ctx.get(dut.valid), ctx.get(dut.warp), ctx.get(dut.grant)
            if want is None:
                if valid:
                    errors.append(f"cycle {cycle}: nothing ready but valid")
            elif not valid or warp != want or grant != 1 << want:
                errors.append(f"cycle {cycle}: ready={ready:b} prefer={prefer:b} last={model.last}: "
                              f"want {want}, got {warp} ({grant:b})")
            model.step(ready, prefer, take)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert not errors, "\n".join(errors[:10])


@pytest.mark.parametrize("policy", SCHEDULERS)
@pytest.mark.parametrize("warps", [2, 8])
def test_scheduler_matches_reference(policy: str, warps: int):
    _check_random(WarpScheduler(warps=warps, policy=policy), policy, warps, random.Random(warps), two_level=False)


@pytest.mark.parametrize("policy", SCHEDULERS)
def test_two_level_scheduler_prefers_first_level(policy: str):
    """Ready-first (DFLOW issue): a ready warp in ``prefer`` always wins over one that is not; the
    GTO/LRR order (and its state) applies within the level."""
    _check_random(WarpScheduler(warps=4, policy=policy, two_level=True), policy, 4, random.Random(7), two_level=True)


def test_check_catches_a_wrong_policy():
    """Expect-fail: the reference of the other policy disagrees with the RTL, and the check says so."""
    with pytest.raises(AssertionError, match="want"):
        _check_random(WarpScheduler(warps=8, policy="gto"), "lrr", 8, random.Random(8), two_level=False)


def test_scheduler_rejects_unknown_policy():
    with pytest.raises(ConfigError, match="policy"):
        WarpScheduler(warps=4, policy="fifo")


def test_gto_greedy_warp_yields_to_a_ready_first_warp():
    """The case the DFLOW policy is for: GTO's greedy warp 0 has only an instruction that would wait
    in a collector unit (ready, not preferred); warp 2's instruction has its operands: warp 2 issues.
    Once warp 0's instruction has its operands too, GTO's greedy choice (now warp 2) holds again."""
    dut = WarpScheduler(warps=4, policy="gto", two_level=True)
    picks: list[int] = []

    async def bench(ctx):
        for ready, prefer in [(0b0001, 0b0001), (0b0101, 0b0100), (0b0101, 0b0101), (0b0001, 0b0000)]:
            ctx.set(dut.ready, ready)
            ctx.set(dut.prefer, prefer)
            ctx.set(dut.issue, 1)
            picks.append(ctx.get(dut.warp))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert picks == [0, 2, 2, 0]


def test_one_level_scheduler_has_no_prefer_port():
    dut = WarpScheduler(warps=4, policy="gto")
    dut._MustUse__silence = True  # built only to look at its ports
    assert not hasattr(dut, "prefer")
    with pytest.raises(ConfigError, match="two_level"):
        WarpScheduler(warps=4, policy="gto", two_level=1)

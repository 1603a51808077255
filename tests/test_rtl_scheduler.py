"""The warp scheduler (rtl/scheduler.py) against a Python reference of GTO and LRR over random
ready patterns, with and without the grant being taken."""

from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from dualflow.errors import ConfigError
from dualflow.rtl.scheduler import WarpScheduler


def _reference(policy: str, ready: int, last: int, n: int) -> int | None:
    ready_warps = [w for w in range(n) if ready >> w & 1]
    if not ready_warps:
        return None
    if policy == "gto":
        return last if last in ready_warps else ready_warps[0]
    after = [w for w in ready_warps if w > last]
    return after[0] if after else ready_warps[0]


@pytest.mark.parametrize("policy", ["gto", "lrr"])
@pytest.mark.parametrize("warps", [2, 8])
def test_scheduler_matches_reference(policy: str, warps: int):
    dut = WarpScheduler(warps=warps, policy=policy)
    rng = random.Random(warps)
    errors: list[str] = []

    async def bench(ctx):
        last = 0
        for cycle in range(400):
            ready = rng.randrange(1 << warps) if rng.random() < 0.9 else 0
            take = rng.random() < 0.8
            ctx.set(dut.ready, ready)
            ctx.set(dut.issue, take)
            want = _reference(policy, ready, last, warps)
            valid, warp, grant = ctx.get(dut.valid), ctx.get(dut.warp), ctx.get(dut.grant)
            if want is None:
                if valid:
                    errors.append(f"cycle {cycle}: nothing ready but valid")
            elif not valid or warp != want or grant != 1 << want:
                errors.append(f"cycle {cycle}: ready={ready:b} last={last}: want {want}, got {warp} ({grant:b})")
            if want is not None and take:
                last = want
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert not errors, "\n".join(errors[:10])


def test_scheduler_rejects_unknown_policy():
    with pytest.raises(ConfigError, match="policy"):
        WarpScheduler(warps=4, policy="fifo")

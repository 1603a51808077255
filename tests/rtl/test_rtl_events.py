"""The core's coverage-event monitor (dualflow/rtl/events.py) in Amaranth's simulator: each event is the
registered condition of its inputs, and the deepest SIMT stack is the maximum over every warp
(at 64 warps: the tree of maxima elaborates in well under a second, where a chain of Muxes that
named the running maximum twice grew as 2**warps)."""

from __future__ import annotations

import random

from amaranth.sim import Simulator

from dualflow.rtl.events import EventMonitor
from dualflow.rtl.params import CoreParams


def test_events_are_the_registered_conditions_and_the_deepest_stack_is_the_maximum():
    params = CoreParams(mode="dflow", warps=64, stack_depth=16)
    dut = EventMonitor(params)
    rng = random.Random(5)
    W = params.warps

    async def bench(ctx):
        for _ in range(40):
            depths = [rng.randrange(params.stack_depth + 1) for _ in range(W)]
            if rng.random() < 0.3:
                depths = [0] * W
                depths[rng.randrange(W)] = rng.randrange(1, params.stack_depth + 1)
            running, waiting = rng.getrandbits(W), rng.getrandbits(W) & rng.getrandbits(W)
            head_valid, head_blocked = rng.getrandbits(W), rng.getrandbits(W) & rng.getrandbits(W)
            conflict, cu_free = rng.getrandbits(1), rng.getrandbits(1)
            for w, d in enumerate(depths):
                ctx.set(dut.stack_depth[w], d)
            for name, value in (("running", running), ("waiting", waiting), ("head_valid", head_valid),
                                ("head_blocked", head_blocked), ("bank_conflict", conflict), ("cu_free", cu_free)):
                ctx.set(getattr(dut, name), value)
            await ctx.tick()
            live = running & ~waiting
            e = dut.events
            assert ctx.get(e.stack_depth) == max(depths)
            assert ctx.get(e.bank_conflict) == conflict and ctx.get(e.cu_full) == 1 - cu_free
            assert ctx.get(e.ring_guard) == int(bool(live & head_valid & head_blocked))
            assert ctx.get(e.barrier_wait) == int(bool(waiting) and bool(live))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()

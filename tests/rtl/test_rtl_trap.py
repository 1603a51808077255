"""The trap collector: the first trap since ``clear`` is held; simultaneous requests are taken in
the documented priority (control, LSU, stack, issue)."""

from __future__ import annotations

import itertools

from amaranth.sim import Simulator

from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams
from dualflow.rtl.trap import TRAP_SOURCES, TrapCollector

#: One cause per source, to tell them apart.
CAUSE = {"control": TrapCause.BARRIER, "lsu": TrapCause.MISALIGNED, "stack": TrapCause.STACK_EMPTY,
         "issue": TrapCause.ILLEGAL}


def test_priority_and_hold():
    dut = TrapCollector(CoreParams(warp_size=4, warps=4))
    seen = []

    async def bench(ctx):
        for n in range(1, len(TRAP_SOURCES) + 1):
            for chosen in itertools.combinations(TRAP_SOURCES, n):
                ctx.set(dut.clear, 1)
                await ctx.tick()
                ctx.set(dut.clear, 0)
                assert not ctx.get(dut.trap) and ctx.get(dut.cause) == TrapCause.NONE
                for i, name in enumerate(TRAP_SOURCES):
                    port = getattr(dut, name)
                    ctx.set(port.valid, name in chosen)
                    ctx.set(port.payload, {"cause": CAUSE[name], "pc": 10 + i, "warp": i})
                await ctx.tick()
                first = next(name for name in TRAP_SOURCES if name in chosen)
                i = TRAP_SOURCES.index(first)
                got = (ctx.get(dut.trap), ctx.get(dut.cause), ctx.get(dut.pc), ctx.get(dut.warp))
                assert got == (1, CAUSE[first], 10 + i, i), (chosen, got)
                # a later request of any source does not replace the recorded trap
                for name in TRAP_SOURCES:
                    ctx.set(getattr(dut, name).valid, 1)
                    ctx.set(getattr(dut, name).payload, {"cause": TrapCause.PC_RANGE, "pc": 99, "warp": 3})
                await ctx.tick()
                assert (ctx.get(dut.cause), ctx.get(dut.pc)) == (CAUSE[first], 10 + i)
                for name in TRAP_SOURCES:
                    ctx.set(getattr(dut, name).valid, 0)
                seen.append(first)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert seen.count("control") == 8 and seen.count("issue") == 1  # every subset of the 4 sources


def test_clear_wins_over_a_request():
    dut = TrapCollector(CoreParams(warp_size=4, warps=4))

    async def bench(ctx):
        ctx.set(dut.clear, 1)
        ctx.set(dut.issue.valid, 1)
        ctx.set(dut.issue.payload, {"cause": TrapCause.PARAM, "pc": 1, "warp": 0})
        await ctx.tick()
        assert not ctx.get(dut.trap) and ctx.get(dut.cause) == TrapCause.NONE
        ctx.set(dut.clear, 0)
        await ctx.tick()
        assert ctx.get(dut.trap) and ctx.get(dut.cause) == TrapCause.PARAM

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()

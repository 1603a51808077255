"""The DFLOW issue policy of the RTL core (docs/rtl.md, "Issue"): the collector's count of CUs
holding instructions with operands not ready, the scoreboard's lookahead port, and co-simulation
with the tightest limits against the golden model."""

from __future__ import annotations

import pytest
from amaranth.sim import Simulator

from dualflow.rtl.collector import OperandCollector
from dualflow.rtl.params import CoreParams
from dualflow.rtl.scoreboard import Scoreboard


def _run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def test_collector_reports_cus_waiting_for_operands():
    """A CU counts as waiting from allocation with a source not ready until that source's
    writeback; a CU whose sources are ready never counts. BASE has no such output."""
    params = CoreParams(mode="dflow", warp_size=4, warps=2, collector_units=2, ring=8, dmax=7)
    dut = OperandCollector(params, payload_width=8, tag_width=2)
    seen: list[list[tuple[int, int]]] = []

    def waiting(ctx):
        return [(c, ctx.get(dut.waiting[c].warp)) for c in range(2) if ctx.get(dut.waiting[c].valid)]

    async def bench(ctx):
        ctx.set(dut.dispatch[0].ready, 0)
        # warp 1: source entry 3 not ready; warp 0: source entry 2 ready
        for warp, index, ready in [(1, 3, 0), (0, 2, 1)]:
            ctx.set(dut.alloc.valid, 1)
            ctx.set(dut.alloc.payload.warp, warp)
            ctx.set(dut.alloc.payload.src[0].valid, 1)
            ctx.set(dut.alloc.payload.src[0].index, index)
            ctx.set(dut.alloc.payload.src[0].ready, ready)
            await ctx.tick()
        ctx.set(dut.alloc.valid, 0)
        for _ in range(3):
            seen.append(waiting(ctx))
            await ctx.tick()
        ctx.set(dut.wakeup[0].valid, 1)
        ctx.set(dut.wakeup[0].warp, 1)
        ctx.set(dut.wakeup[0].index, 3)
        seen.append(waiting(ctx))  # the wakeup lands at the clock edge
        await ctx.tick()
        ctx.set(dut.wakeup[0].valid, 0)
        seen.append(waiting(ctx))

    _run(dut, bench)
    assert seen == [[(0, 1)]] * 4 + [[]], seen
    base = OperandCollector(CoreParams(mode="base", warp_size=4, warps=2, collector_units=2))
    base._MustUse__silence = True  # built only to look at its ports
    assert not hasattr(base, "waiting")


def test_scoreboard_lookahead_port():
    """``peek`` answers like ``check[w].src_pending`` for a second instruction per warp."""
    params = CoreParams(mode="dflow", warp_size=4, warps=2, ring=8, dmax=7)
    dut = Scoreboard(params, lookahead=True)
    got: list[tuple[int, int]] = []

    async def bench(ctx):
        ctx.set(dut.issue.valid, 1)
        ctx.set(dut.issue.warp, 1)
        ctx.set(dut.issue.index, 5)
        await ctx.tick()
        ctx.set(dut.issue.valid, 0)
        for k, index in enumerate([5, 4, 5]):
            ctx.set(dut.peek[1].src[k].valid, k != 2)
            ctx.set(dut.peek[1].src[k].index, index)
            ctx.set(dut.peek[0].src[k].valid, 1)
            ctx.set(dut.peek[0].src[k].index, index)
        got.append((ctx.get(dut.peek[1].src_pending), ctx.get(dut.peek[0].src_pending)))
        ctx.set(dut.writeback[0].valid, 1)
        ctx.set(dut.writeback[0].warp, 1)
        ctx.set(dut.writeback[0].index, 5)
        got.append((ctx.get(dut.peek[1].src_pending), ctx.get(dut.peek[0].src_pending)))  # counts as done

    _run(dut, bench)
    assert got == [(0b001, 0), (0, 0)], got


@pytest.mark.parametrize("limits", [dict(dflow_waiting_per_warp=1), dict(dflow_waiting_per_warp=1,
                                                                          dflow_waiting_per_sm=1)])
def test_core_with_tight_waiting_limits_matches_golden_model(limits):
    """Co-simulation (Icarus) with one waiting CU per warp (and per core): the traces still match
    the golden model, and out-of-order completion still happens behind the slow load of ``ooo``."""
    from dualflow.testbench.core.directed import directed_case
    from dualflow.testbench.cosim import run_cosim

    params = CoreParams(mode="dflow", warp_size=4, warps=4, register_banks=4, collector_units=4,
                        alu_latency=2, **limits)
    results = run_cosim(params, [directed_case(n, params, seed=2) for n in ("memory_order", "ooo")])
    failed = [r for r in results if not r.ok]
    assert not failed, "\n\n".join(r.summary() for r in failed)
    for r in results:
        assert r.compare.matched == r.compare.model_records > 0
    ooo = next(r for r in results if r.name == "ooo")
    first: dict[tuple[int, str], int] = {}
    for i, rec in enumerate(ooo.rtl.records):
        first.setdefault((rec.warp, rec.op), i)
    assert any(first[(w, "ixor")] < first[(w, "ldg")] for w, op in first if op == "ldg"), \
        "no warp completed younger independent work before its slow load"

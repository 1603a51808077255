"""cocotb bench of ``Scoreboard``: every warp's check port against ``ScoreboardModel`` each cycle.

Each cycle every warp presents a random candidate (sources and destination among a few hot
entries, so dependencies are frequent), writebacks clear random pending entries, and in DFLOW
random collector reads are presented to the ring guard. The bench issues, like a scheduler, one
candidate the model says may issue (sometimes none: idle cycles). Checked every cycle:
``blocked`` and ``src_pending`` of every warp, including the same-cycle writeback bypass and
same-cycle issue/writeback of one entry.

Parameters: ``core``, ``writeback_ports``, ``cycles``.
"""

from __future__ import annotations

from typing import Any

import cocotb

from dualflow.machine.mode import ScoreboardKind
from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import bench_env, bench_ports, pack

from .harness import BlockBench, chance
from .models import ScoreboardModel


class ScoreboardBench(BlockBench):
    def __init__(self, dut: Any, params: dict, seed: int, inject: bool):
        super().__init__(dut, seed)
        self.core = p = CoreParams(**params["core"])
        self.wb_n = params.get("writeback_ports", 1)
        self.reads_n = 3 * p.collector_units
        self.model = ScoreboardModel(warps=p.warps, entries=p.entries_per_warp,
                                     slots=p.mode.scoreboard is ScoreboardKind.SLOTS, inject=inject)
        ports = bench_ports()
        self.src_layout = ports["check__0__src"]
        self.dst_layout = ports["check__0__dst"]
        self.elayout = ports["issue"]
        self.hot = min(p.entries_per_warp, 5)
        self.issue_rate = self.rng.choice([0.3, 0.8])
        self.wb_rate = self.rng.choice([0.2, 0.5])
        self.cands: list[tuple[list[int | None], int | None]] = []
        self.cleared: set[tuple[int, int]] = set()
        self.reads: set[tuple[int, int]] = set()
        self.issue: tuple[int, int] | None = None
        self.blocked_seen = self.issued = 0

    def idle(self) -> None:
        self.set("issue", 0)
        for j in range(self.wb_n):
            self.set(f"writeback__{j}", 0)
        if self.core.mode.scoreboard is ScoreboardKind.SLOTS:
            for r in range(self.reads_n):
                self.set(f"reads__{r}", 0)
        for w in range(self.core.warps):
            self.set(f"check__{w}__src", 0)
            self.set(f"check__{w}__dst", 0)

    def operand(self) -> int | None:
        return self.rng.randrange(self.hot) if chance(self.rng, 0.7) else None

    def drive(self) -> None:
        m, p = self.model, self.core
        self.cands = []
        for w in range(p.warps):
            srcs = [self.operand() for _ in range(3)]
            dst = self.operand()
            self.cands.append((srcs, dst))
            self.set(f"check__{w}__src", pack(self.src_layout, [{"valid": int(s is not None), "index": s or 0}
                                                               for s in srcs]))
            self.set(f"check__{w}__dst", pack(self.dst_layout, {"valid": int(dst is not None), "index": dst or 0}))
        pending = sorted((w, i) for w in range(p.warps) for i in range(p.entries_per_warp) if m.pending[w][i])
        self.cleared = set()
        for j in range(self.wb_n):
            e = None
            if pending and chance(self.rng, self.wb_rate):
                e = self.rng.choice(pending)
                if e in self.cleared:
                    e = None
            if e is not None:
                self.cleared.add(e)
            self.set(f"writeback__{j}", pack(self.elayout, {"valid": int(e is not None), "warp": e[0] if e else 0,
                                                            "index": e[1] if e else 0}))
        self.reads = set()
        if p.mode.scoreboard is ScoreboardKind.SLOTS:
            for r in range(self.reads_n):
                e = (self.rng.randrange(p.warps), self.rng.randrange(self.hot)) if chance(self.rng, 0.2) else None
                if e is not None:
                    self.reads.add(e)
                self.set(f"reads__{r}", pack(self.elayout, {"valid": int(e is not None), "warp": e[0] if e else 0,
                                                            "index": e[1] if e else 0}))
        # The scheduler: one warp whose candidate may issue (by the model), sometimes none.
        self.issue = None
        if chance(self.rng, self.issue_rate):
            free = [w for w in range(p.warps) if self.cands[w][1] is not None
                    and not m.check(w, *self.cands[w], self.cleared, self.reads)[0]]
            if free:
                w = self.rng.choice(free)
                self.issue = (w, self.cands[w][1])
        self.set("issue", pack(self.elayout, {"valid": int(self.issue is not None),
                                              "warp": self.issue[0] if self.issue else 0,
                                              "index": self.issue[1] if self.issue else 0}))

    def sample_and_check(self) -> None:
        m = self.model
        for w in range(self.core.warps):
            srcs, dst = self.cands[w]
            blocked, src_pending = m.check(w, srcs, dst, self.cleared, self.reads)
            self.blocked_seen += blocked
            where = f"warp {w} srcs {srcs} dst {dst}"
            self.expect(f"{where}: blocked", blocked, bool(self.get(f"check__{w}__blocked")))
            rtl = self.get(f"check__{w}__src_pending")
            self.expect(f"{where}: src_pending", src_pending, [bool(rtl >> k & 1) for k in range(3)])
        self.issued += self.issue is not None
        m.step(self.issue, self.cleared)


@cocotb.test()
async def random_checks(dut: Any) -> None:
    """Random candidates, issues, writebacks and collector reads; every check output compared."""
    params, seed, inject = bench_env()
    tb = ScoreboardBench(dut, params, seed, inject)
    await tb.start()
    await tb.run(params.get("cycles", 800))
    dut._log.info(f"{tb.issued} issued, {tb.blocked_seen} blocked verdicts")
    if tb.issued < 50 or tb.blocked_seen < 50:
        tb.fail(f"weak stimulus: {tb.issued} issues, {tb.blocked_seen} blocked verdicts")
    tb.finish()

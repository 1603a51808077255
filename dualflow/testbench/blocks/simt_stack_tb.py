"""cocotb bench of ``SimtStack`` against ``SimtStackModel`` (the executor's stack semantics).

Random commands of random warps: SSY and DIV pushes (up to overflow), SYNC and EXIT (exits retire
random lanes; a warp whose lanes are all gone starts again with a fresh mask), with RP values
scattered around a per-warp base that sits near the wrap of the RP width for some warps, so the
modular max of ``sync`` is exercised both ways; DFLOW commands carry a random reserved advance,
zero half the time (``reserved-ssy``: SSY's entry starts at rp + advance; the other operations
ignore it). Commands are held while the stack is busy, with
random idle cycles; responses see random backpressure. Checked: every response's warp, status,
pc, mask and rp in order; no response without SYNC/EXIT; an offered response stays unchanged
until taken; each response arrives within the documented latency bound; the sticky trap outputs.

With hands (``core`` with ``rings``) an RP is one per hand, each scattered around its own base,
and an SSY's advance goes to a random hand (the command's ``hand``): the entry's RPs, the
per-hand maximum at SYNC and every hand's RP at resume are checked.

Parameters: ``core``, ``depth``, ``cycles``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import cocotb

from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import bench_env, bench_ports, pack, unpack, width

from .harness import BlockBench, chance
from .models import (
    DIV,
    OP_DIV,
    OP_EXIT,
    OP_SSY,
    OP_SYNC,
    STATUS_RESUME,
    SYNC,
    TRAP_NO_SSY,
    TRAP_NONE,
    SimtStackModel,
    StackResult,
)


class SimtStackBench(BlockBench):
    def __init__(self, dut: Any, params: dict, seed: int, inject: bool):
        super().__init__(dut, seed)
        self.core = p = CoreParams(**params["core"])
        self.depth = params.get("depth", 8)
        ports = bench_ports()
        self.clayout, self.rlayout = ports["cmd__payload"], ports["resp__payload"]
        self.hands = p.hands if p.mode.ring else 1
        rp_desc = self.clayout["struct"]["rp"][1]
        self.rpw = width(rp_desc["array"][2]) if self.hands > 1 else width(rp_desc)
        self.pcw = width(self.clayout["struct"]["pc"][1])
        self.model = SimtStackModel(warps=p.warps, depth=self.depth, rp_bits=self.rpw, ring=p.mode.ring, inject=inject,
                                    hands=self.hands)
        self.full = (1 << p.warp_size) - 1
        self.alive = [self.full] * p.warps
        top = 1 << self.rpw
        self.rp_base = [[self.rng.choice([self.rng.randrange(top), top - 5]) if p.mode.ring else 0
                         for _ in range(self.hands)] for _ in range(p.warps)]
        self.cmd: dict | None = None
        self.expected: deque[tuple[StackResult, int, int]] = deque()  # (result, warp, cycle accepted)
        self.offered: dict | None = None
        self.resp_ready = False
        self.trap = (TRAP_NONE, 0)
        self.idle_rate = self.rng.choice([0.1, 0.5])
        self.ready_rate = self.rng.choice([0.4, 1.0])
        self.counts = {"ssy": 0, "div": 0, "sync": 0, "exit": 0, "resume": 0, "done": 0, "trap": 0}
        self.bound = 4 + 2 * self.depth  # the longest documented latency

    def idle(self) -> None:
        self.set("cmd__valid", 0)
        self.set("resp__ready", 0)

    def new_command(self) -> dict:
        p, m = self.core, self.model
        w = self.rng.randrange(p.warps)
        size = len(m.stacks[w])
        weights = [3, 3, 3, 2] if size < self.depth else [1, 1, 4, 3]
        op = self.rng.choices([OP_SSY, OP_DIV, OP_SYNC, OP_EXIT], weights)[0]
        if op == OP_SYNC and not any(e.kind == SYNC for e in m.stacks[w]) and chance(self.rng, 0.8):
            op = OP_SSY  # mostly well-formed programs; a few syncs without ssy (traps)
        rps = [(base + self.rng.randrange(-8, 9)) % (1 << self.rpw) if p.mode.ring else 0 for base in self.rp_base[w]]
        rp: int | list[int] = rps if self.hands > 1 else rps[0]
        mask = self.rng.getrandbits(p.warp_size) or 1
        if op == OP_EXIT:
            self.alive[w] &= ~self.rng.getrandbits(p.warp_size)
        if self.alive[w] == 0 and op != OP_EXIT and not m.stacks[w]:
            self.alive[w] = self.rng.getrandbits(p.warp_size) or self.full  # the warp restarts
        advance = self.rng.choice([0, self.rng.randrange(256)]) if p.mode.ring else 0
        return {"op": op, "warp": w, "pc": self.rng.getrandbits(self.pcw), "mask": mask, "rp": rp,
                **({"advance": advance} if p.mode.ring else {}), "alive": self.alive[w],
                **({"hand": self.rng.randrange(self.hands)} if self.hands > 1 else {})}

    def drive(self) -> None:
        if self.cmd is None and not chance(self.rng, self.idle_rate):
            self.cmd = self.new_command()
        self.set("cmd__valid", self.cmd is not None)
        if self.cmd is not None:
            self.set("cmd__payload", pack(self.clayout, self.cmd))
        self.resp_ready = chance(self.rng, self.ready_rate)
        self.set("resp__ready", self.resp_ready)

    def accept(self, c: dict) -> None:
        m, w = self.model, c["warp"]
        op = c["op"]
        if op in (OP_SSY, OP_DIV):
            self.counts["ssy" if op == OP_SSY else "div"] += 1
            cause = m.push(w, SYNC if op == OP_SSY else DIV, c["pc"], c["mask"], c["rp"],
                           c.get("advance", 0) if op == OP_SSY else 0, c.get("hand", 0))
            result = None
        elif op == OP_SYNC:
            self.counts["sync"] += 1
            result = m.sync(w, c["rp"], c["alive"])
            cause = result.trap
        else:
            self.counts["exit"] += 1
            result = m.exit(w, c["alive"])
            cause = result.trap
        if cause != TRAP_NONE and self.trap[0] == TRAP_NONE:
            self.trap = (cause, w)
        if result is not None:
            # Documented latency: first POP after 1 cycle (2 for a DFLOW sync, which raises the
            # SYNC entry first), 2 cycles per popped entry, 1 more when the stack ran empty;
            # a sync without ssy answers after 1 cycle.
            if result.trap == TRAP_NO_SSY:
                latency = 1
            else:
                first = 2 if (op == OP_SYNC and self.core.mode.ring) else 1
                latency = first + 2 * result.popped + (result.status != STATUS_RESUME)
            self.expected.append((result, w, self.cycle + latency))

    def sample_and_check(self) -> None:
        # Response side first: the stack answers at most one command at a time.
        valid = bool(self.get("resp__valid"))
        if self.offered is not None and not valid:
            self.fail("resp withdrew an offered response")
        if valid and self.offered is None and self.expected:
            self.expect(f"response latency to warp {self.expected[0][1]} (cycle due)", self.expected[0][2],
                        self.cycle)
        if valid:
            r = unpack(self.rlayout, self.get("resp__payload"))
            if self.offered is not None and r != self.offered:
                self.fail(f"resp changed while waiting: {self.offered} -> {r}")
            if not self.expected:
                self.fail(f"unexpected response {r}")
            elif self.resp_ready:
                want, w, _ = self.expected.popleft()
                rp = want.rp if self.hands == 1 or want.status == STATUS_RESUME else [0] * self.hands
                model = {"warp": w, "status": want.status, "pc": want.pc, "mask": want.mask, "rp": rp}
                self.expect(f"response to warp {w}", model, r)
                self.counts[["resume", "done", "trap"][want.status]] += 1
            self.offered = None if self.resp_ready else r
        if self.expected and self.offered is None and not valid:
            _, w, due = self.expected[0]
            if self.cycle > due + self.bound:
                self.fail(f"no response to warp {w} within {self.bound} cycles")
                self.expected.popleft()
        # The sticky trap, whenever every accepted command has been answered (an EMPTY trap is
        # raised while popping); this cycle's command shows from the next cycle on.
        if not self.expected and self.offered is None:
            model = (int(self.trap[0] != TRAP_NONE), self.trap[0], self.trap[1] if self.trap[0] else 0)
            rtl = (self.get("trap"), self.get("trap_cause"), self.get("trap_warp"))
            self.expect("trap (raised, cause, warp)", model, rtl)
        if self.cmd is not None and self.get("cmd__ready"):
            self.accept(self.cmd)
            self.cmd = None


@cocotb.test()
async def random_stack_operations(dut: Any) -> None:
    params, seed, inject = bench_env()
    tb = SimtStackBench(dut, params, seed, inject)
    await tb.start()
    await tb.run(params.get("cycles", 1500))
    dut._log.info(f"operations {tb.counts}")
    if tb.counts["resume"] < 20:
        tb.fail(f"weak stimulus: {tb.counts}")
    tb.finish()

"""cocotb bench of ``SpecialFunctionUnit`` (``fdiv``, ``fsqrt``) against ``models.fp32``.

The shared FP vectors of both SFU opcodes (directed corners: 0/0, x/0, inf/inf, roots of
negative values and of -0, denormal inputs and results, exact and tie-adjacent quotients; then
random operands weighted toward exponent edges) are cut into warp instructions and offered in a
shuffled order, with random idle cycles and random backpressure on the result stream. Checked:
every offered instruction is eventually taken, no two enter closer than ``sfu_interval`` cycles,
results leave in order with their tags and every lane's value equals the model's, and a result
whose output never waited leaves exactly ``sfu_latency`` cycles after it entered.

Parameters: ``core`` (CoreParams fields), ``random``, ``directed`` (as in fpu_tb), ``rounding``,
``issue_rate``, ``ready_rate`` (chance the result is taken when offered).
"""

from __future__ import annotations

from typing import Any

import cocotb

from dualflow.testbench.fp_vectors import SFU_OPS
from dualflow.testbench.sim import bench_env

from .fpu_tb import WarpInstructionBench
from .harness import chance


class SfuBench(WarpInstructionBench):
    def __init__(self, dut: Any, params: dict, seed: int):
        super().__init__(dut, params, seed, SFU_OPS, issue_rate=0.7)
        self.ready_rate = params.get("ready_rate", 0.8)
        self.offered = self.taking = False  # flight: [entry cycle, tag, instruction, waited]
        self.exact_latency = 0

    def drive(self) -> None:
        self.offered = self.offer()
        self.taking = chance(self.rng, self.ready_rate)
        self.set("o_ready", int(self.taking))

    def sample_and_check(self) -> None:
        p = self.core
        self.expect("busy", bool(self.flight), bool(self.get("busy")))  # state before this cycle's entry
        if self.offered and self.get("i_ready"):
            self.expect("entry interval respected", True, self.cycle - self.last_entry >= p.sfu_interval)
            tag, ins = self.entered()
            self.flight.append([self.cycle, tag, ins, False])
        if not self.get("o_valid"):
            if self.flight and not self.flight[0][3]:
                self.expect("result on time", True, self.cycle < self.flight[0][0] + p.sfu_latency)
            return
        if not self.flight:
            self.fail("[MODEL] no result due [RTL] o_valid")
            return
        entry, tag, ins, waited = self.flight[0]
        if not waited:
            self.expect(f"{ins[0].name.lower()} latency", p.sfu_latency, self.cycle - entry)
            self.exact_latency += 1
        if not self.taking:
            for f in self.flight:
                f[3] = True  # every result behind a waiting one may be late
            return
        self.flight.popleft()
        self.check_result(tag, ins)


@cocotb.test()
async def fdiv_and_fsqrt(dut: Any) -> None:
    """Directed and random vectors of both SFU opcodes, with idle cycles and backpressure."""
    params, seed, _ = bench_env()
    tb = SfuBench(dut, params, seed)
    total = await tb.run_all(4 * (tb.core.sfu_latency + 20))
    if tb.exact_latency == 0:
        tb.fail("weak stimulus: no result left without waiting, the latency was never checked")
    dut._log.info(f"{total} warp instructions, {tb.exact_latency} latencies checked")
    tb.finish()

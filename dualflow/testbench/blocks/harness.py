"""Pieces every block bench shares: clock and reset, flat port access, a cycle-stepping base class.

The benches are cycle-based: inputs are driven just after the falling clock edge, outputs are
sampled in the ``ReadOnly`` phase of that same half cycle (combinational outputs have settled,
registered ones show the state after the last rising edge), and the model steps once per cycle.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

CLOCK_NS = 10
#: The file ``BlockBench.finish`` writes into the run directory.
SUMMARY = "summary.json"


class CheckFailure(AssertionError):
    """A mismatch between the DUT and the bench's model; carries every differing field."""


class BlockBench:
    """Base of the block benches: owns the clock, reset, the cycle loop and a mismatch log.

    Subclasses implement ``drive`` (set inputs for this cycle), ``sample_and_check`` (read
    outputs, step the model, record mismatches) and may override ``idle`` (all inputs quiet).
    Mismatches are collected (at most ``max_reports`` printed) and raised together by ``finish``,
    which also writes ``SUMMARY`` into the run directory (the simulator's working directory):
    values compared, mismatches, and ``counts`` (what a subclass tallies, e.g. lanes per opcode),
    for scripts that print figures (benchmarks/fp_benches.py).
    """

    max_reports = 10

    def __init__(self, dut: Any, seed: int):
        self.dut = dut
        self.rng = random.Random(seed)
        self.cycle = 0
        self.errors: list[str] = []
        self.checked = 0
        self.counts: Counter[str] = Counter()

    # ------------------------------------------------------------------ ports
    def port(self, name: str) -> Any:
        return getattr(self.dut, name)

    def get(self, name: str) -> int:
        return int(getattr(self.dut, name).value)

    def set(self, name: str, value: int) -> None:
        getattr(self.dut, name).value = int(value)

    # ------------------------------------------------------------------ checking
    def expect(self, what: str, model: Any, rtl: Any) -> None:
        """Record one compared value; a difference is logged as ``[MODEL] ... [RTL] ...``."""
        self.checked += 1
        if model != rtl:
            self.fail(f"{what}: [MODEL] {model!r} [RTL] {rtl!r}")

    def fail(self, message: str) -> None:
        text = f"cycle {self.cycle}: {message}"
        if len(self.errors) < self.max_reports:
            self.dut._log.error(text)
        self.errors.append(text)

    def finish(self) -> None:
        self.dut._log.info(f"{self.checked} values compared, {len(self.errors)} mismatches")
        Path(SUMMARY).write_text(json.dumps({"checked": self.checked, "mismatches": len(self.errors),
                                             "counts": dict(sorted(self.counts.items()))}))
        if self.errors:
            raise CheckFailure(f"{len(self.errors)} mismatches; first: {self.errors[0]}")
        if self.checked == 0:
            raise CheckFailure("the bench compared nothing")

    # ------------------------------------------------------------------ running
    def idle(self) -> None:
        """Drive every input to its quiet value (used during reset)."""

    def drive(self) -> None:
        raise NotImplementedError

    def sample_and_check(self) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        """Start the clock and hold reset for a few cycles with quiet inputs."""
        Clock(self.dut.clk, CLOCK_NS, unit="ns").start()
        self.idle()
        self.dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def run(self, cycles: int) -> None:
        for _ in range(cycles):
            await FallingEdge(self.dut.clk)
            self.drive()
            await ReadOnly()
            self.sample_and_check()
            await RisingEdge(self.dut.clk)
            self.cycle += 1


def chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p

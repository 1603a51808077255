"""cocotb bench of ``FpPipeline`` (the FP32 unit) against ``models.fp32`` on the shared FP vectors.

The vectors of every FP-class opcode (dualflow/testbench/fp_vectors.py: directed corners, then random
operands weighted toward exponent edges) are cut into warp instructions of ``warp_size`` lanes
(``fsetp`` grouped by condition, since the condition is per instruction) and issued in a shuffled
order, one whenever ``i_ready`` and a random draw allow (idle cycles in between). Checked: every
result leaves exactly ``fp_latency`` cycles after its instruction entered, in order, with its
tag, and every lane's value equals the model's; ``i_ready`` follows ``fp_interval``.

Parameters: ``core`` (CoreParams fields), ``random`` (random vectors per opcode), ``directed``
(how many directed vectors per opcode, sampled; ``None``: all), ``rounding`` (the DUT's
``Rounding``: ``toward_zero`` is the expect-fail run), ``issue_rate``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import cocotb
import numpy as np

from dualflow.isa.opcodes import Opcode
from dualflow.rtl.params import CoreParams
from dualflow.testbench.fp_vectors import FP_OPS, expected, vectors
from dualflow.testbench.sim import bench_env, bench_ports, pack, unpack

from .harness import BlockBench, chance


def warp_instructions(ops: tuple[Opcode, ...], lanes: int, random: int, directed: int | None, seed: int) -> list:
    """(op, mod, a, b, c, expected) warp instructions of every opcode in ``ops``, shuffled."""
    rng = np.random.default_rng(seed)
    out = []
    for op in ops:
        v = vectors(op, random, seed)
        exp = expected(v)
        order = np.arange(len(v))
        if directed is not None:  # a sample of the directed vectors, all of the random ones
            n_dir = len(v) - random
            order = np.concatenate([np.sort(rng.choice(n_dir, min(directed, n_dir), replace=False)),
                                    np.arange(n_dir, len(v))])
        for mod in np.unique(v.mod[order]):
            idx = order[v.mod[order] == mod]
            idx = np.concatenate([idx, idx[: (-len(idx)) % lanes]])  # pad the last instruction
            for k in range(0, len(idx), lanes):
                sel = idx[k:k + lanes]
                out.append((op, int(mod), v.a[sel].tolist(), v.b[sel].tolist(), v.c[sel].tolist(),
                            exp[sel].tolist()))
    rng.shuffle(out)
    return out


class WarpInstructionBench(BlockBench):
    """Shared by the FP unit benches: the shuffled warp instructions of ``ops`` still to enter
    (``todo``), those in flight (``flight``), the port layouts, and the tag counter."""

    def __init__(self, dut: Any, params: dict, seed: int, ops: tuple[Opcode, ...], issue_rate: float):
        super().__init__(dut, seed)
        self.core = CoreParams(**params["core"])
        ports = bench_ports()
        self.in_layout, self.out_layout = ports["i"], ports["o_result"]
        self.tag_bits = ports["o_tag"]
        self.todo = deque(warp_instructions(ops, self.core.warp_size, params.get("random", 200),
                                            params.get("directed"), seed))
        self.issue_rate = params.get("issue_rate", issue_rate)
        self.flight: deque = deque()
        self.last_entry = -(1 << 30)
        self.tag = 0

    def idle(self) -> None:
        for name in ("i_valid", "i", *(["o_ready"] if "o_ready" in bench_ports() else [])):
            self.set(name, 0)

    @property
    def done(self) -> bool:
        return not self.todo and not self.flight

    def offer(self) -> bool:
        """Maybe drive the next instruction (with the next tag) on ``i``; True if driven."""
        offered = bool(self.todo) and chance(self.rng, self.issue_rate)
        if offered:
            op, mod, a, b, c, _ = self.todo[0]
            self.set("i", pack(self.in_layout, {"op": int(op), "mod": mod, "mask": (1 << self.core.warp_size) - 1,
                                                "tag": self.tag, "a": a, "b": b, "c": c}))
        self.set("i_valid", int(offered))
        return offered

    def entered(self) -> tuple:
        """The offered instruction entered this cycle: take it off ``todo``, advance the tag."""
        self.last_entry = self.cycle
        tag, self.tag = self.tag, (self.tag + 1) % (1 << self.tag_bits)
        return tag, self.todo.popleft()

    async def run_all(self, cycles_per_instruction: int) -> int:
        """Start, then run until every instruction has entered and left (a failure if that takes
        more than ``cycles_per_instruction`` per instruction); returns the instruction count."""
        await self.start()
        total = len(self.todo)
        while not self.done and self.cycle < (total + 10) * cycles_per_instruction:
            await self.run(64)
        if not self.done:
            self.fail(f"[MODEL] {total} instructions done [RTL] {len(self.todo)} never entered, "
                      f"{len(self.flight)} never left")
        return total

    def check_result(self, tag: int, instruction: tuple) -> None:
        """The result on ``o_tag``/``o_result`` against ``instruction``'s expected values."""
        op, mod, a, b, c, exp = instruction
        name = op.name.lower()
        self.expect(f"{name} tag", tag, self.get("o_tag"))
        got = unpack(self.out_layout, self.get("o_result"))
        self.counts[name] += len(exp)  # lane values of this opcode (a padded last instruction repeats some)
        for n, (want, rtl) in enumerate(zip(exp, got)):
            self.expect(f"{name} mod={mod} lane {n} a={a[n]:#010x} b={b[n]:#010x} c={c[n]:#010x}",
                        f"{want:#010x}", f"{rtl:#010x}")


class FpuBench(WarpInstructionBench):
    def __init__(self, dut: Any, params: dict, seed: int):
        super().__init__(dut, params, seed, FP_OPS, issue_rate=0.8)
        self.offered = False  # flight: (due cycle, tag, instruction)

    def drive(self) -> None:
        self.offered = self.offer()

    def sample_and_check(self) -> None:
        p = self.core
        ready = bool(self.get("i_ready"))
        self.expect("i_ready", self.cycle - self.last_entry >= p.fp_interval, ready)
        if self.offered and ready:
            tag, ins = self.entered()
            self.flight.append((self.cycle + p.fp_latency, tag, ins))
        valid = bool(self.get("o_valid"))
        due = bool(self.flight) and self.flight[0][0] == self.cycle
        self.expect("o_valid", due, valid)
        if due:
            _, tag, ins = self.flight.popleft()
            if valid:
                self.check_result(tag, ins)


@cocotb.test()
async def every_fp_opcode(dut: Any) -> None:
    """Directed and random vectors of every FP-class opcode through the pipeline."""
    params, seed, _ = bench_env()
    tb = FpuBench(dut, params, seed)
    total = await tb.run_all(4 * (tb.core.fp_interval + tb.core.fp_latency))
    dut._log.info(f"{total} warp instructions, {tb.checked} values compared")
    tb.finish()

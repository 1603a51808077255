"""The RTL integer ALU (dualflow/rtl/alu.py) against the functional model's value semantics (dualflow/models/alu.py),
for every integer opcode with random and edge-case operands, at two latencies."""

from __future__ import annotations

import numpy as np
import pytest
from amaranth.sim import Simulator

from dualflow.isa.opcodes import INT_CMPS, Opcode, VoteMode
from dualflow.models import alu as model
from dualflow.rtl.alu import ALU_OPCODES, IntegerAlu
from dualflow.rtl.params import CoreParams

U32 = np.uint32
EDGES = [0, 1, 2, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFE0]


def _expected(op: Opcode, mod: int, mask: np.ndarray, a, b, c) -> np.ndarray:
    if op in (Opcode.MOV, Opcode.S2R, Opcode.LDC):
        return b
    if op is Opcode.NOP:
        return np.zeros_like(a)
    if op in (Opcode.ISETP, Opcode.USETP):
        return model.compare(op, mod)(a, b)
    if op is Opcode.VOTE:
        pred = (a != 0) & mask
        if mod == VoteMode.ANY:
            r = int(pred.any())
        elif mod == VoteMode.ALL:
            r = int((pred | ~mask).all())
        else:
            r = int(sum(1 << i for i in np.flatnonzero(pred)))
        return np.full_like(a, r)
    if op in model.BINARY:
        return model.BINARY[op](a, b)
    if op in model.UNARY:
        return model.UNARY[op](a)
    return model.TERNARY[op](a, b, c)


def _mods(op: Opcode) -> list[int]:
    if op in (Opcode.ISETP, Opcode.USETP):
        return [int(c) for c in INT_CMPS]
    if op is Opcode.VOTE:
        return [int(v) for v in VoteMode]
    return [0]


@pytest.mark.parametrize("latency", [1, 3])
def test_alu_matches_model(latency: int):
    params = CoreParams(warp_size=4, alu_latency=latency)
    dut = IntegerAlu(params, tag_width=4)
    rng = np.random.default_rng(7)
    cases = []
    for op in sorted(ALU_OPCODES):
        for mod in _mods(op):
            for _ in range(12):
                pick = lambda: np.array([rng.choice(EDGES) if rng.random() < 0.4 else rng.integers(0, 1 << 32)
                                         for _ in range(4)], dtype=U32)
                a, b, c = pick(), pick(), pick()
                if rng.random() < 0.3:
                    b = a.copy()  # equal operands for the compares
                mask = rng.random(4) < 0.7
                cases.append((op, mod, mask, a, b, c))
    errors: list[str] = []
    seen = [0]

    async def bench(ctx):
        n = 0
        for cycle in range(len(cases) + latency + 2):
            if cycle < len(cases):
                op, mod, mask, a, b, c = cases[cycle]
                ctx.set(dut.i_valid, 1)
                ctx.set(dut.i, {"op": int(op), "mod": mod, "tag": cycle % 16,
                                "mask": int(sum(int(v) << i for i, v in enumerate(mask))),
                                "a": [int(x) for x in a], "b": [int(x) for x in b], "c": [int(x) for x in c]})
            else:
                ctx.set(dut.i_valid, 0)
            if ctx.get(dut.o_valid):
                op, mod, mask, a, b, c = cases[n]
                got = [int(v) for v in ctx.get(dut.o_result)]
                want = [int(v) for v in _expected(op, mod, mask, a, b, c)]
                if ctx.get(dut.o_tag) != n % 16:
                    errors.append(f"case {n} {op.name}: tag {ctx.get(dut.o_tag)}")
                if got != want:
                    errors.append(f"case {n} {op.name}.{mod} a={a} b={b} c={c} mask={mask}: want {want} got {got}")
                n += 1
                seen[0] += 1
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert not errors, f"{len(errors)} of {len(cases)} differ:\n" + "\n".join(errors[:10])
    assert seen[0] == len(cases)


def test_alu_latency_is_the_parameter():
    params = CoreParams(warp_size=4, alu_latency=4)
    dut = IntegerAlu(params, tag_width=2)
    out_at: list[int] = []

    async def bench(ctx):
        ctx.set(dut.i, {"op": int(Opcode.IADD), "a": [1, 2, 3, 4], "b": [1, 1, 1, 1], "tag": 2, "mask": 15})
        ctx.set(dut.i_valid, 1)
        for cycle in range(8):
            if ctx.get(dut.o_valid):
                out_at.append(cycle)
            await ctx.tick()
            ctx.set(dut.i_valid, 0)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert out_at == [4]

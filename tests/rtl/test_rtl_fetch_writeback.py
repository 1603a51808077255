"""The fetch unit (dualflow/rtl/fetch.py) and the writeback arbiter (dualflow/rtl/writeback.py) on their own."""

from __future__ import annotations

from amaranth.lib import data
from amaranth.sim import Simulator

from dualflow.isa import Instruction, Opcode
from dualflow.rtl.fetch import FetchUnit
from dualflow.rtl.params import CoreParams
from dualflow.rtl.units import FIXED_LATENCY, UNITS, ExecUnit
from dualflow.rtl.writeback import WritebackArbiter, WritebackSlots

PROGRAM = [
    Instruction(Opcode.IADD, dst=1, a=1, bimm=True, imm=1),
    Instruction(Opcode.IMUL, dst=2, a=1, b=1),
    Instruction(Opcode.BRA, bimm=True, imm=5),  # control: the warp's fetch stops here
    Instruction(Opcode.NOP),
    Instruction(Opcode.NOP),
    Instruction(Opcode.EXIT),
]


def _run(dut, bench, clock: bool = True):
    sim = Simulator(dut)
    if clock:
        sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


async def _load_program(ctx, dut) -> None:
    """Write ``PROGRAM`` through the instruction-memory port."""
    for addr, ins in enumerate(PROGRAM):
        ctx.set(dut.load_en, 1)
        ctx.set(dut.load_addr, addr)
        ctx.set(dut.load_data, ins.encode())
        await ctx.tick()
    ctx.set(dut.load_en, 0)


def test_fetch_buffers_each_warp_in_order_and_stops_at_control():
    params = CoreParams(mode="base", warp_size=4, warps=2, imem_words=16)
    dut = FetchUnit(params)
    seen: dict[int, list[tuple[int, int]]] = {0: [], 1: []}

    async def bench(ctx):
        await _load_program(ctx, dut)
        ctx.set(dut.enable, 0b11)
        redirected = False
        for cycle in range(40):
            consume = 0
            for w in range(2):
                if ctx.get(dut.ib_valid[w]) and (w == 0 or cycle % 3 == 0):  # warp 1 drains slowly
                    seen[w].append((ctx.get(dut.ib_pc[w]), ctx.get(dut.ib_inst[w].op).value))
                    consume |= 1 << w
            ctx.set(dut.consume, consume)
            ctx.set(dut.redirect_valid, 0)
            if cycle == 25 and not redirected:  # the "control unit" resolves warp 0's bra
                ctx.set(dut.redirect_valid, 1)
                ctx.set(dut.redirect_warp, 0)
                ctx.set(dut.redirect_pc, 5)
                redirected = True
            await ctx.tick()
        ctx.set(dut.consume, 0)

    _run(dut, bench)
    ops = {w: [pc for pc, _ in seen[w]] for w in seen}
    # warp 0: up to the branch, nothing after it until redirected, then the target
    assert ops[0] == [0, 1, 2, 5], ops
    # warp 1 is never redirected: it stops after its branch
    assert ops[1] == [0, 1, 2], ops
    assert seen[0][2][1] == int(Opcode.BRA) and seen[0][3][1] == int(Opcode.EXIT)


def test_fetch_two_entry_buffer_shows_the_next_instruction():
    """DFLOW: two entries per warp; ``ib_next`` is the instruction after the head, in order, and
    the buffer holds nothing past a control instruction until the redirect."""
    params = CoreParams(mode="dflow", warp_size=4, warps=2, imem_words=16)
    dut = FetchUnit(params)
    assert dut.depth == 2
    seen: dict[int, list[int]] = {0: [], 1: []}
    pairs: list[tuple[int, int]] = []  # (head pc, next pc) of warp 1 while both are buffered

    async def bench(ctx):
        await _load_program(ctx, dut)
        ctx.set(dut.enable, 0b11)
        for cycle in range(40):
            consume = 0
            for w in range(2):
                if ctx.get(dut.ib_valid[w]) and (w == 0 or cycle % 4 == 0):  # warp 1 drains slowly
                    seen[w].append(ctx.get(dut.ib_pc[w]))
                    consume |= 1 << w
            if ctx.get(dut.ib_valid[1]) and ctx.get(dut.ib_next_valid[1]):
                head = ctx.get(dut.ib_pc[1])
                pairs.append((head, head + 1))
                assert ctx.get(dut.ib_next[1].op).value == int(PROGRAM[head + 1].op)
            ctx.set(dut.consume, consume)
            ctx.set(dut.redirect_valid, cycle == 25)
            ctx.set(dut.redirect_warp, 0)
            ctx.set(dut.redirect_pc, 5)
            await ctx.tick()
        ctx.set(dut.consume, 0)

    _run(dut, bench)
    assert seen[0] == [0, 1, 2, 5], seen
    assert seen[1] == [0, 1, 2], seen
    assert (0, 1) in pairs and (1, 2) in pairs and all(head < 2 for head, _ in pairs)  # never past the bra


def test_writeback_priority_and_waiting_flag():
    """Table order ALU > FPU > SFU > LSU > CTRL; only the units that can wait see ``ready``, and
    ``others_waiting`` counts those alone (the fixed-latency ALU and FPU are never waiting)."""
    layout = data.StructLayout({"id": 8})
    dut = WritebackArbiter(layout)
    order = [row.unit for row in UNITS]
    assert order == [ExecUnit.ALU, ExecUnit.FPU, ExecUnit.SFU, ExecUnit.LSU, ExecUnit.CTRL]
    # per cycle: the set of units with a completion offered
    offers = [set(order), set(order[1:]), set(order[2:]), set(order[3:]), {ExecUnit.CTRL},
              {ExecUnit.ALU, ExecUnit.FPU}, {ExecUnit.FPU}, set()]
    log: list[tuple[str | None, int, int]] = []

    async def bench(ctx):
        for cycle, valid in enumerate(offers):
            for k, unit in enumerate(order):
                port = dut.source_port(unit)
                ctx.set(port.valid, unit in valid)
                ctx.set(port.payload, {"id": 10 * k + cycle})
            winner = next((u for u in order if u in valid), None)
            if ctx.get(dut.out.valid):
                log.append((ctx.get(dut.source).name, ctx.get(dut.out.payload.id), ctx.get(dut.others_waiting)))
            else:
                log.append((None, 0, ctx.get(dut.others_waiting)))
            for row in UNITS:
                if row.waits:
                    assert ctx.get(dut.source_port(row.unit).ready) == (row.unit == winner), (cycle, row.unit)
            await ctx.delay(1e-6)

    _run(dut, bench, clock=False)
    assert log == [("ALU", 0, 1), ("FPU", 11, 1), ("SFU", 22, 1), ("LSU", 33, 1), ("CTRL", 44, 1),
                   ("ALU", 5, 0), ("FPU", 16, 0), (None, 0, 0)]


def test_writeback_slots_reserve_the_completion_cycle():
    """An entry into a fixed-latency unit reserves its completion cycle: a later entry due in the
    same cycle is held, the ALU wins a same-cycle tie, and no two completions ever coincide."""
    distance = {ExecUnit.ALU: 3, ExecUnit.FPU: 4}
    dut = WritebackSlots(distance)
    alu, fpu = FIXED_LATENCY.index(ExecUnit.ALU), FIXED_LATENCY.index(ExecUnit.FPU)
    # per cycle: (ALU request, FPU request)
    requests = [(0, 1), (1, 0), (1, 1), (1, 1), (0, 0), (1, 1), (0, 1), (0, 0), (0, 0), (0, 0)]
    grants: list[tuple[int, int]] = []

    async def bench(ctx):
        for ra, rf in requests:
            ctx.set(dut.request[alu], ra)
            ctx.set(dut.request[fpu], rf)
            await ctx.delay(1e-7)
            grants.append((ra & ctx.get(dut.free[alu]), rf & ctx.get(dut.free[fpu])))
            await ctx.tick()

    _run(dut, bench)
    # cycle 0: FPU enters, due at 4; cycle 1: the ALU's entry would be due at 4 too: held;
    # cycle 2: both enter (due 5 and 6); cycle 3: ALU due 6 is taken, FPU due 7 enters;
    # cycle 5: ALU due 8 enters, the FPU's due 9 too; cycle 6: FPU due 10 enters.
    assert grants == [(0, 1), (0, 0), (1, 1), (0, 1), (0, 0), (1, 1), (0, 1), (0, 0), (0, 0), (0, 0)]
    done = [c + (distance[ExecUnit.ALU] if u == alu else distance[ExecUnit.FPU])
            for c, g in enumerate(grants) for u in (alu, fpu) if g[u]]
    assert len(done) == len(set(done))

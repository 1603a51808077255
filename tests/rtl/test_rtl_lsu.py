"""The load/store unit (dualflow/rtl/lsu.py) on its own: shared-memory banks against a Python model (bank
conflicts, several lanes on one word), and the global port's ordering rules against a memory that
answers out of order."""

from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from dualflow.rtl.decode import SPACE_CODES
from dualflow.rtl.lsu import LoadStoreUnit
from dualflow.rtl.params import CoreParams

LANES = 4


def _sim(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


async def _send(ctx, dut, **fields):
    """Offer one instruction until the LSU takes it."""
    ctx.set(dut.i.payload, fields)
    ctx.set(dut.i.valid, 1)
    while True:
        taken = ctx.get(dut.i.ready)
        await ctx.tick()
        if taken:
            break
    ctx.set(dut.i.valid, 0)


def test_shared_memory_matches_model():
    params = CoreParams(mode="dflow", warp_size=LANES, warps=2, shared_bytes=64)
    dut = LoadStoreUnit(params, info_width=8)
    rng = random.Random(5)
    words = 16
    model = [0] * words
    errors: list[str] = []
    cycles: dict[str, list[int]] = {"free": [], "conflict": []}

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for n in range(120):
            store = rng.random() < 0.5
            kind = rng.choice(["free", "conflict", "random"])
            if kind == "free":
                base = rng.randrange(words // LANES) * LANES
                addr = [4 * (base + lane) for lane in range(LANES)]  # one word per bank
            elif kind == "conflict":
                addr = [4 * (rng.randrange(words // LANES) * LANES)] * LANES  # every lane on bank 0
            else:
                addr = [4 * rng.randrange(words) for _ in range(LANES)]
            mask = rng.randrange(1, 1 << LANES) if kind == "random" else (1 << LANES) - 1
            data = [rng.randrange(1 << 32) for _ in range(LANES)]
            start = ctx.get(dut.idle)
            await _send(ctx, dut, warp=0, store=store, space=SPACE_CODES["shared"], color=0, offset=0, mask=mask,
                        a=addr, b=data, info=n)
            spent = 1
            while not ctx.get(dut.o.valid):
                await ctx.tick()
                spent += 1
            out = ctx.get(dut.o.payload)
            if kind in cycles and start:
                cycles[kind].append(spent)
            if out.info != n:
                errors.append(f"op {n}: info {out.info}")
            for lane in range(LANES):
                if not mask >> lane & 1:
                    continue
                if store:
                    model[addr[lane] // 4] = data[lane]  # lanes in order: the highest lane stays
                elif out.values[lane] != model[addr[lane] // 4]:
                    errors.append(f"op {n} lane {lane} [{addr[lane]:#x}]: [MODEL] {model[addr[lane] // 4]:#x} "
                                  f"[RTL] {out.values[lane]:#x}")
            await ctx.tick()

    _sim(dut, bench)
    assert not errors, "\n".join(errors[:10])
    # a conflict-free access is faster than one with every lane in one bank
    assert max(cycles["free"]) < min(cycles["conflict"]), cycles


class OutOfOrderMemory:
    """Answers requests after random delays, in random order; performs an access when it answers."""

    def __init__(self, rng: random.Random):
        self.rng, self.words, self.pending, self.log = rng, {}, [], []

    def accept(self, req: dict, now: int) -> None:
        self.pending.append((now + self.rng.randint(1, 12), req))
        self.log.append(("send", req["tag"], now))

    def due(self, now: int):
        ready = [p for p in self.pending if p[0] <= now]
        return self.rng.choice(ready) if ready else None

    def perform(self, item) -> list[int]:
        self.pending.remove(item)
        req = item[1]
        out = []
        for lane in range(LANES):
            if req["store"]:
                self.words[req["addr"][lane]] = req["data"][lane]
                out.append(0)
            else:
                out.append(self.words.get(req["addr"][lane], 0))
        return out


@pytest.mark.parametrize("mode", ["base", "dflow"])
def test_global_port_keeps_store_load_order(mode: str):
    """A store and a load of the same words by one warp: the load is not sent before the store is
    acknowledged (BASE always; DFLOW with the same color), and returns the stored data; with
    different colors (DFLOW) the load may go first."""
    params = CoreParams(mode=mode, warp_size=LANES, warps=2)
    dut = LoadStoreUnit(params, info_width=8, outstanding=4)
    rng = random.Random(11)
    mem = OutOfOrderMemory(rng)
    results: dict[int, list[int]] = {}
    sends: list[tuple[int, int]] = []  # (info, cycle)
    acks: dict[int, int] = {}

    ops = []
    for n in range(0, 40, 2):
        addr = [0x1000 + 16 * n + 4 * lane for lane in range(LANES)]
        data = [rng.randrange(1 << 32) for _ in range(LANES)]
        same_color = n % 4 == 0
        ops.append(dict(warp=n % 2, store=1, space=SPACE_CODES["global"], color=1, offset=0, mask=15, a=addr,
                        b=data, info=n))
        ops.append(dict(warp=n % 2, store=0, space=SPACE_CODES["global"], color=1 if same_color else 2, offset=0,
                        mask=15, a=addr, b=[0] * LANES, info=n + 1))

    async def bench(ctx):
        cycle = 0
        queue = list(ops)
        tag_info: dict[int, int] = {}
        presenting = None
        ctx.set(dut.o.ready, 1)
        ctx.set(dut.mem_req.ready, 1)
        while (queue or mem.pending or presenting or len(results) < len(ops)) and cycle < 3000:
            if queue:
                ctx.set(dut.i.payload, queue[0])
                ctx.set(dut.i.valid, 1)
            else:
                ctx.set(dut.i.valid, 0)
            if presenting is None:
                item = mem.due(cycle)
                if item is not None:
                    presenting = (item[1]["tag"], mem.perform(item), item[1])
            ctx.set(dut.mem_resp.valid, presenting is not None)
            if presenting is not None:
                ctx.set(dut.mem_resp.payload, {"tag": presenting[0], "data": presenting[1]})
            # sample
            took_in = queue and ctx.get(dut.i.ready)
            if ctx.get(dut.mem_req.valid):
                req = ctx.get(dut.mem_req.payload)
                request = {"tag": req.tag, "store": req.store, "addr": list(req.addr), "data": list(req.data)}
                mem.accept(request, cycle)
                info = next(op["info"] for op in ops if op["a"] == request["addr"] and op["store"] == request["store"])
                tag_info[req.tag] = info
                sends.append((info, cycle))
            if presenting is not None and ctx.get(dut.mem_resp.ready):
                acks[tag_info[presenting[0]]] = cycle
                presenting = None
            if ctx.get(dut.o.valid):
                out = ctx.get(dut.o.payload)
                results[out.info] = list(out.values)
            if took_in:
                queue.pop(0)
            await ctx.tick()
            cycle += 1

    _sim(dut, bench)
    assert len(results) == len(ops)
    sent_at = dict(sends)
    overtook = 0
    for store, load in zip(ops[::2], ops[1::2]):
        ordered = mode == "base" or store["color"] == load["color"]
        if ordered:
            assert sent_at[load["info"]] > acks[store["info"]], (store["info"], sent_at, acks)
            assert results[load["info"]] == store["b"]
        elif sent_at[load["info"]] <= acks[store["info"]]:
            overtook += 1
    if mode == "dflow":
        assert overtook > 0  # different colors really are free to reorder

"""cocotb bench of ``RegisterPointers``: random advances and sets against ``RegisterPointerModel``.

Each cycle an issue may advance a random warp's RP by 1 (a producer) or by up to 255 (``rpinc``),
and a resume may set a random warp's RP, sometimes the same warp (set wins). Every warp's RP is
compared every cycle, across the wrap of the RP width.

Parameters: ``core``, ``cycles``.
"""

from __future__ import annotations

from typing import Any

import cocotb

from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import bench_env, bench_ports, pack, width

from .harness import BlockBench, chance
from .models import RegisterPointerModel


class RegisterPointerBench(BlockBench):
    def __init__(self, dut: Any, params: dict, seed: int, inject: bool):
        super().__init__(dut, seed)
        self.core = CoreParams(**params["core"])
        ports = bench_ports()
        self.bits = width(ports["rp__0"])
        self.model = RegisterPointerModel(warps=self.core.warps, bits=self.bits, inject=inject)
        self.advance: tuple[int, int] | None = None
        self.put: tuple[int, int] | None = None
        self.alayout, self.slayout = ports["advance"], ports["set"]

    def idle(self) -> None:
        self.set("advance", 0)
        self.set("set", 0)

    def drive(self) -> None:
        w = self.core.warps
        self.advance = None
        if chance(self.rng, 0.7):
            count = 1 if chance(self.rng, 0.7) else self.rng.randrange(1, 256)
            self.advance = (self.rng.randrange(w), count)
        self.put = None
        if chance(self.rng, 0.15):
            warp = self.advance[0] if self.advance and chance(self.rng, 0.3) else self.rng.randrange(w)
            # Near the top of the range now and then, so the counters wrap.
            value = self.rng.choice([self.rng.getrandbits(self.bits), (1 << self.bits) - self.rng.randrange(1, 300)])
            self.put = (warp, value)
        a, s = self.advance, self.put
        self.set("advance", pack(self.alayout, {"valid": 1, "warp": a[0], "count": a[1]}) if a else 0)
        self.set("set", pack(self.slayout, {"valid": 1, "warp": s[0], "rp": s[1]}) if s else 0)

    def sample_and_check(self) -> None:
        for w in range(self.core.warps):
            self.expect(f"rp[{w}]", self.model.rp[w], self.get(f"rp__{w}"))
        self.model.step(self.advance, self.put)


@cocotb.test()
async def random_advance_and_set(dut: Any) -> None:
    params, seed, inject = bench_env()
    tb = RegisterPointerBench(dut, params, seed, inject)
    await tb.start()
    await tb.run(params.get("cycles", 600))
    tb.finish()

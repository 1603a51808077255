"""cocotb bench of ``HandPointersTop`` (one ``RegisterPointers`` per hand, ``hand_entry``): random
per-hand advances, SIMT-stack-like resumes and entry probes against ``HandPointerModel``.

Each cycle an issue may advance one hand of a random warp by 1 (a producer writing it) or by up
to 255 (``rpinc k -> h``). Now and then a warp *diverges*: the bench parks every hand's RP of it,
as an ``ssy``'s stack entry holds them (sometimes plus a reserved advance on one hand); a later
*join* sets every hand's RP to the larger of the parked and the current one, per hand (the
stack's per-hand max), a *restore* puts the parked ones back (the second path's start). Now and
then a set lands near the top of the RP width, so the counters wrap. A probe names a warp, hand
and distance; the source entry (``hand_base[h] + (RP_h - d) mod ring_h``) and the destination
entry are compared, with every warp's RP of every hand, each cycle. ``counts`` tallies the
joins whose hands differed, and the probes whose position wrapped round their hand's ring.

Parameters: ``core`` (with ``rings``), ``cycles``.
"""

from __future__ import annotations

from typing import Any

import cocotb

from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import bench_env, bench_ports, pack, width

from .harness import BlockBench, chance
from .models import HandPointerModel


def later(a: int, b: int, bits: int) -> int:
    """The later of two RPs of one warp, compared modulo ``bits`` (docs/isa.md)."""
    return a if (a - b) % (1 << bits) < 1 << (bits - 1) else b


class HandPointersBench(BlockBench):
    def __init__(self, dut: Any, params: dict, seed: int, inject: bool):
        super().__init__(dut, seed)
        self.core = CoreParams(**params["core"])
        ports = bench_ports()
        self.bits = width(ports["rp__0__0"])
        self.hands = self.core.hands
        self.model = HandPointerModel(warps=self.core.warps, rings=self.core.ring_sizes, bits=self.bits,
                                      inject=inject)
        self.parked: dict[int, list[int]] = {}
        self.advance: tuple[int, int, int] | None = None
        self.put: tuple[int, list[int]] | None = None
        self.probe = (0, 0, 0)
        self.alayout, self.slayout, self.playout = ports["advance"], ports["set"], ports["probe"]

    def idle(self) -> None:
        for name in ("advance", "set", "probe"):
            self.set(name, 0)

    def _resume(self) -> tuple[int, list[int]] | None:
        """A stack-like set of every hand of one warp: diverge (park), join (per-hand max) or restore."""
        w = self.rng.randrange(self.core.warps)
        now = self.model.rp[w]
        if w not in self.parked:
            if chance(self.rng, 0.1):  # near the top of the width: the counters wrap
                return w, [(1 << self.bits) - self.rng.randrange(1, 300) for _ in range(self.hands)]
            parked = list(now)
            if chance(self.rng, 0.5):  # a reserving ssy: its hand starts k further at the join
                h = self.rng.randrange(self.hands)
                parked[h] = (parked[h] + self.rng.randint(1, 4)) & ((1 << self.bits) - 1)
            self.parked[w] = parked
            return None
        parked = self.parked.pop(w)
        if chance(self.rng, 0.3):
            return w, parked
        joined = [later(a, b, self.bits) for a, b in zip(parked, now)]
        self.counts["joins"] += 1
        self.counts["joins with hands differing"] += any(a != b for a, b in zip(parked, now))
        return w, joined

    def drive(self) -> None:
        self.advance = None
        if chance(self.rng, 0.7):
            count = 1 if chance(self.rng, 0.7) else self.rng.randrange(1, 256)
            self.advance = (self.rng.randrange(self.core.warps), self.rng.randrange(self.hands), count)
        self.put = self._resume() if chance(self.rng, 0.15) else None
        if self.put is not None and self.advance is not None and chance(self.rng, 0.3):
            self.advance = (self.put[0], *self.advance[1:])  # the same warp: set wins
        w, h = self.rng.randrange(self.core.warps), self.rng.randrange(self.hands)
        self.probe = (w, h, self.rng.randrange(1, min(self.core.ring_sizes[h], 256)))
        a, s = self.advance, self.put
        self.set("advance", pack(self.alayout, {"valid": 1, "warp": a[0], "hand": a[1], "count": a[2]}) if a else 0)
        self.set("set", pack(self.slayout, {"valid": 1, "warp": s[0], "rp": s[1]}) if s else 0)
        self.set("probe", pack(self.playout, {"warp": w, "hand": h, "distance": self.probe[2]}))

    def sample_and_check(self) -> None:
        for w in range(self.core.warps):
            for h in range(self.hands):
                self.expect(f"rp[{w}][{h}]", self.model.rp[w][h], self.get(f"rp__{w}__{h}"))
        w, h, d = self.probe
        self.expect(f"source entry warp {w} hand {h} distance {d}", self.model.entry(w, h, d), self.get("source"))
        self.expect(f"dest entry warp {w} hand {h}", self.model.entry(w, h), self.get("dest"))
        self.counts["probes wrapped round their ring"] += self.model.rp[w][h] - d < 0 or \
            self.model.rp[w][h] >= self.core.ring_sizes[h]
        self.model.step(self.advance, self.put)


@cocotb.test()
async def random_hand_advances_and_resumes(dut: Any) -> None:
    params, seed, inject = bench_env()
    tb = HandPointersBench(dut, params, seed, inject)
    await tb.start()
    await tb.run(params.get("cycles", 600))
    tb.finish()

"""cocotb bench of ``BankedRegisterFile``: random reads and writes against ``RegisterFileModel``.

Every requester and write port runs a random driver that holds its request until it is accepted
(backpressure from the arbiter and from write conflicts) and idles randomly in between. Each
cycle the bench checks the write ready signals, the exact read grants of the rotating arbiter,
the ``conflict`` output, and the tagged read data of the previous cycle's grants against the model.

Parameters (``DUALFLOW_BENCH_PARAMS``): ``core`` (CoreParams fields), ``write_ports``, ``cycles``.
"""

from __future__ import annotations

from typing import Any

import cocotb

from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import bench_env, bench_ports, pack, unpack

from .harness import BlockBench, chance
from .models import MASK32, RegisterFileModel


class RegisterFileBench(BlockBench):
    def __init__(self, dut: Any, params: dict, seed: int, inject: bool):
        super().__init__(dut, seed)
        self.core = CoreParams(**params["core"])
        self.reads_n = self.core.collector_units * 3
        self.writes_n = params.get("write_ports", 1)
        self.entries = self.core.entries_per_warp
        self.model = RegisterFileModel(warps=self.core.warps, lanes=self.core.warp_size, banks=self.core.register_banks,
                                       entries=self.entries, read_ports=self.reads_n, write_ports=self.writes_n,
                                       inject=inject)
        ports = bench_ports()
        self.rlayout = ports["read__0__payload"]
        self.wlayout = ports["write__0__payload"]
        self.data_layout = self.wlayout["struct"]["data"][1]
        self.reads: list[tuple[int, int] | None] = [None] * self.reads_n
        self.writes: list[tuple[int, int, int, list[int]] | None] = [None] * self.writes_n
        self.expected: dict[int, tuple[int, list[int]]] = {}  # bank -> (requester, data) due this cycle
        self.read_rate = self.rng.choice([0.15, 0.4, 0.8])
        self.write_rate = self.rng.choice([0.2, 0.5, 0.9])
        self.grants = self.responses = self.conflicts = 0

    def entry(self) -> tuple[int, int]:
        return self.rng.randrange(self.core.warps), self.rng.randrange(self.entries)

    def idle(self) -> None:
        for i in range(self.reads_n):
            self.set(f"read__{i}__valid", 0)
        for j in range(self.writes_n):
            self.set(f"write__{j}__valid", 0)

    def drive(self) -> None:
        for i in range(self.reads_n):
            if self.reads[i] is None and chance(self.rng, self.read_rate):
                self.reads[i] = self.entry()
            r = self.reads[i]
            self.set(f"read__{i}__valid", r is not None)
            if r is not None:
                self.set(f"read__{i}__payload", pack(self.rlayout, {"warp": r[0], "index": r[1]}))
        for j in range(self.writes_n):
            if self.writes[j] is None and chance(self.rng, self.write_rate):
                w, idx = self.entry()
                mask = self.rng.choice([(1 << self.core.warp_size) - 1, self.rng.getrandbits(self.core.warp_size)])
                self.writes[j] = (w, idx, mask, [self.rng.getrandbits(32) for _ in range(self.core.warp_size)])
            wr = self.writes[j]
            self.set(f"write__{j}__valid", wr is not None)
            if wr is not None:
                self.set(f"write__{j}__payload",
                         pack(self.wlayout, {"warp": wr[0], "index": wr[1], "mask": wr[2], "data": wr[3]}))

    def sample_and_check(self) -> None:
        m = self.model
        # Responses of last cycle's grants.
        for b in range(self.core.register_banks):
            valid = self.get(f"response__{b}__valid")
            want = self.expected.get(b)
            self.expect(f"response[{b}].valid", want is not None, bool(valid))
            if want is not None and valid:
                self.responses += 1
                req = self.get(f"response__{b}__requester")
                data = unpack(self.data_layout, self.get(f"response__{b}__data"))
                self.expect(f"response[{b}].requester", want[0], req)
                if data != want[1]:
                    self.fail(f"response[{b}].data for requester {want[0]}: [MODEL] {[hex(x) for x in want[1]]} "
                              f"[RTL] {[hex(x & MASK32) for x in data]}")
                self.checked += 1
        # Writes: ready rule, then the banks they take.
        wready_model = m.write_ready([(w[0], w[1]) if w else None for w in self.writes])
        busy = set()
        accepted = []
        for j, wr in enumerate(self.writes):
            if wr is None:
                continue
            rdy = bool(self.get(f"write__{j}__ready"))
            self.expect(f"write[{j}].ready", wready_model[j], rdy)
            if rdy:
                busy.add(m.bank(wr[0], wr[1]))
                accepted.append(j)
        # Reads: the exact grant of the rotating arbiter.
        grants = m.arbitrate(self.reads, busy)
        self.expected = {}
        conflict = False
        for i, r in enumerate(self.reads):
            if r is None:
                continue
            rdy = bool(self.get(f"read__{i}__ready"))
            self.expect(f"read[{i}].ready (grant) for {r}", grants[i], rdy)
            conflict |= not grants[i]
            if grants[i]:
                self.grants += 1
                self.expected[m.bank(*r)] = (i, m.value(*r))
                self.reads[i] = None
        self.conflicts += conflict
        self.expect("conflict", conflict, bool(self.get("conflict")))
        for j in accepted:
            w, idx, mask, data = self.writes[j]
            m.write(w, idx, mask, data)
            self.writes[j] = None


@cocotb.test()
async def random_reads_and_writes(dut: Any) -> None:
    """Random traffic on every port with idle gaps and held (backpressured) requests."""
    params, seed, inject = bench_env()
    tb = RegisterFileBench(dut, params, seed, inject)
    await tb.start()
    await tb.run(params.get("cycles", 1200))
    dut._log.info(f"grants {tb.grants}, responses {tb.responses}, conflict cycles {tb.conflicts}, "
                  f"read rate {tb.read_rate}, write rate {tb.write_rate}")
    if tb.responses < 50:
        tb.fail(f"only {tb.responses} read responses: the stimulus did not exercise the reads")
    tb.finish()

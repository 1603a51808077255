"""cocotb bench of the SIMT core: runs the launches ``dualflow/testbench/cosim.py`` prepared and dumps what
the core retired.

For each job (one launch) and each of its blocks in turn: reset, load the program through the
instruction-memory port, write special registers (the block's ctaid), parameters, initial warp
masks and the tid table through the configuration ports, pulse ``start``, then step cycle by
cycle: the global-memory model (random latency, out of order, backpressure) answers the core's
requests, and every record on the retirement-trace port is collected. A block ends when the core
reports ``done`` (or traps, or runs out of cycles); global memory carries over to the next block.
Results (trace records, cycles, register-file bank conflicts, the cycles of each coverage event of
the core's ``events`` port (dualflow/rtl/events.py), trap, final global memory) go to the JSON file the
host names; the host compares them with the golden model, so this bench only fails
on a broken protocol.

Inputs are driven just after the falling edge; outputs are sampled in the read-only phase of
the same half cycle (dualflow/testbench/blocks/harness.py).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from typing import Any

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.handle import HierarchyObject
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, Timer

from dualflow.common.atomic_write import atomic_write
from dualflow.models.memory import GlobalMemory
from dualflow.testbench.core.protocol import JOBS_ENV, RESULTS_ENV, TID_ROWS
from dualflow.testbench.global_memory import GlobalMemoryModel, MemoryModelError
from dualflow.testbench.sim import bench_env, bench_ports, pack, unpack

CLOCK_NS = 10
#: Yosys's Verilog puts this register in every ``always @*`` block so that simulators evaluate the
#: block at time 0; Icarus 11 sees no event from its declaration initializer, so blocks whose
#: inputs never change would stay X. Writing it once from the bench provides that event.
_COMB_KICK = "dump_module"


def kick_combinational(handle: Any) -> int:
    """Touch the time-0 trigger register of every module instance; returns how many."""
    count = 0
    for sub in handle:
        if _COMB_KICK in sub._name:
            sub.value = 1
            count += 1
        elif isinstance(sub, HierarchyObject):
            count += kick_combinational(sub)
    return count


class CoreBench:
    """Owns the clock, reset, the program loader, the memory model and the trace monitor."""

    def __init__(self, dut: Any, params: dict, ports: dict, inject: bool = False):
        self.dut, self.p, self.inject = dut, params, inject
        self.trace_desc = ports.get("trace__payload")  # None: a core built without the trace port
        self.tid_desc = ports["tid_data"]
        self.req_desc = ports["mem_req__payload"]
        self.resp_desc = ports["mem_resp__payload"]
        self.events_desc = ports["events"]
        self.clock_started = False

    def set(self, name: str, value: int) -> None:
        getattr(self.dut, name).value = int(value)

    def get(self, name: str) -> int:
        return int(getattr(self.dut, name).value)

    def quiet(self) -> None:
        for name in ("load_en", "cfg_en", "tid_en", "start", "mem_req__ready", "mem_resp__valid", "load_addr",
                     "load_data", "cfg_addr", "cfg_data", "tid_addr", "tid_data", "mem_resp__payload"):
            self.set(name, 0)

    async def reset(self) -> None:
        if not self.clock_started:
            kick_combinational(self.dut)
            await Timer(1, unit="ns")
            cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
            self.clock_started = True
        await FallingEdge(self.dut.clk)
        self.quiet()
        self.set("rst", 1)
        for _ in range(2):
            await FallingEdge(self.dut.clk)
        self.set("rst", 0)

    async def write_ports(self, job: dict, block: dict) -> None:
        for addr, word in enumerate(job["words"]):
            self.set("load_en", 1)
            self.set("load_addr", addr)
            self.set("load_data", word)
            await FallingEdge(self.dut.clk)
        self.set("load_en", 0)
        for addr, value in {**job["cfg"], **block}.items():
            self.set("cfg_en", 1)
            self.set("cfg_addr", int(addr))
            self.set("cfg_data", value & 0xFFFFFFFF)
            await FallingEdge(self.dut.clk)
        self.set("cfg_en", 0)
        for warp, *dims in job["tid"]:
            for d, lanes in enumerate(dims):
                self.set("tid_en", 1)
                self.set("tid_addr", warp * TID_ROWS + d)
                self.set("tid_data", pack(self.tid_desc, lanes))
                await FallingEdge(self.dut.clk)
        self.set("tid_en", 0)

    async def run_job(self, job: dict) -> dict:
        """Every block of the launch in linear order; global memory carries over, cycles add up."""
        memory = GlobalMemory(1 << 30)
        memory.words = np.array(job["memory"]["words"], dtype=np.uint32)
        memory.valid = np.array(job["memory"]["valid"], dtype=bool)
        rng = random.Random(job["seed"])
        out: dict = {"name": job["name"], "trace": [], "cycles": 0, "blocks": 0, "sim_seconds": 0.0,
                     "bank_conflicts": 0}
        seen: Counter = Counter()  # cycles per value of the events port
        totals = {"requests": 0, "loads": 0, "stores": 0, "reordered": 0, "max_in_flight": 0}
        for index, block in enumerate(job["blocks"]):
            # local memory is per thread: a fresh model per block, the same global memory
            model = GlobalMemoryModel(memory, lanes=self.p["warp_size"], local_bytes=job["local_bytes"], rng=rng,
                                      min_latency=job["min_latency"], max_latency=job["max_latency"])
            await self.run_block(job, index, block, model, out, seen)
            st = model.stats
            for key in ("requests", "loads", "stores", "reordered"):
                totals[key] += getattr(st, key)
            totals["max_in_flight"] = max(totals["max_in_flight"], st.max_in_flight)
            out["blocks"] += 1
            if "trap" in out or "timeout" in out or "error" in out:
                break
        out["memory"] = memory.words.tolist()
        out["mem_stats"] = totals
        out["events"] = self.event_cycles(seen)
        return out

    def event_cycles(self, seen: Counter) -> dict:
        """Cycles per event flag, and per SIMT-stack depth, from the cycles per port value."""
        flags: Counter = Counter()
        depths: Counter = Counter()
        for raw, cycles in seen.items():
            fields = unpack(self.events_desc, raw)
            depths[str(fields.pop("stack_depth"))] += cycles
            for name, value in fields.items():
                flags[name] += cycles if value else 0
        return {**flags, "stack_depth": dict(depths)}

    async def run_block(self, job: dict, index: int, block: dict, model: GlobalMemoryModel, out: dict,
                        seen: Counter) -> None:
        await self.reset()
        await self.write_ports(job, block)
        self.set("start", 1)
        await FallingEdge(self.dut.clk)
        self.set("start", 0)
        cycles = 0
        started = time.perf_counter()
        try:
            while True:
                await FallingEdge(self.dut.clk)
                ready, answer = model.drive()
                self.set("mem_req__ready", ready)
                self.set("mem_resp__valid", answer is not None)
                if answer is not None:
                    self.set("mem_resp__payload", pack(self.resp_desc, answer))
                await ReadOnly()
                cycles += 1
                seen[int(self.dut.events.value)] += 1
                if self.trace_desc is not None and self.get("trace__valid"):
                    record = unpack(self.trace_desc, self.dut.trace__payload.value)
                    record["block"] = index
                    record["cycle"] = out["cycles"] + cycles  # core cycle of the launch it retired in
                    if self.inject and record["info"]["writes"] and "injected" not in out:
                        lane = (record["info"]["mask"] & -record["info"]["mask"]).bit_length() - 1
                        record["values"][lane] ^= 1  # the expect-fail run: one wrong bit
                        out["injected"] = True
                    out["trace"].append(record)
                req_valid = bool(self.get("mem_req__valid"))
                req = unpack(self.req_desc, self.dut.mem_req__payload.value) if req_valid else None
                model.sample(req_valid, req, bool(self.get("mem_resp__ready")))
                if self.get("trap"):
                    out["trap"] = {"cause": self.get("trap_cause"), "pc": self.get("trap_pc"),
                                   "warp": self.get("trap_warp"), "block": index}
                    break
                if self.get("done"):
                    break
                if cycles >= job["max_cycles"]:
                    out["timeout"] = True
                    break
        except MemoryModelError as exc:
            out["error"] = f"block {index}: {exc}"
        # register-file bank conflicts of the block, up to the cycle that ended it
        out["bank_conflicts"] += self.get("bank_conflicts")
        await RisingEdge(self.dut.clk)
        out["sim_seconds"] += time.perf_counter() - started
        out["cycles"] += cycles


@cocotb.test()
async def run_launches(dut: Any) -> None:
    """Run every prepared launch and write what the core retired."""
    params, seed, inject = bench_env()
    with open(os.environ[JOBS_ENV]) as src:
        jobs = json.load(src)["jobs"]
    bench = CoreBench(dut, params, bench_ports(), inject)
    results = []
    for job in jobs:
        results.append(await bench.run_job(job))
        dut._log.info(f"{job['name']} seed {job['seed']}: {results[-1]['cycles']} cycles, "
                      f"{len(results[-1]['trace'])} records")
    atomic_write(os.environ[RESULTS_ENV], json.dumps(results))
    del seed

"""Co-simulation of the RTL core against the golden functional model.

For each case (a kernel, a block shape, a memory set-up): run the functional model with a trace
(``Device.launch(..., trace=True)``), run the same launch on the generated Verilog core under
Icarus (cocotb bench ``dualflow.testbench.core.core_tb``, global memory answered by
``GlobalMemoryModel`` with random latency, out of order), turn the core's retirement-trace port
records into a ``Trace`` and compare the two with ``trace_compare`` (per warp, program order).
Final global memory is compared word by word as well.

All cases of one parameter set run in one simulator process (one Verilog build, reset between
cases); each case carries its own seed.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dualflow.common.atomic_write import atomic_write
from dualflow.common.errors import ConfigError, DualflowError, KernelFault
from dualflow.isa import Form, Instruction, Kernel, Opcode, SpecialReg, Variant, format_instruction
from dualflow.machine.functional import FunctionalConfig
from dualflow.models.device import Device
from dualflow.models.trace import HandTraceRecord, Trace, TraceRecord
from dualflow.rtl.configuration import CFG_PARAM_BASE, CFG_SHARED_LIMIT, cfg_mask_base
from dualflow.rtl.core import SimtCore
from dualflow.rtl.decode import core_variants
from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams
from dualflow.rtl.register_pointer import rp_width

from .core.protocol import JOBS_ENV, RESULTS_ENV
from .faults import FaultCheck, check_fault
from .trace_compare import CompareResult, compare_traces, write_report

if TYPE_CHECKING:
    from dualflow.synth.gate_sim import GateLevel

TEST_MODULE = "dualflow.testbench.core.core_tb"

#: ``setup(device) -> launch parameters``: allocate and fill global memory, return the params.
Setup = Callable[[Device], Sequence[int]]


@dataclass
class CosimCase:
    """One launch on the core: every block of the grid, one after the other.

    Attributes
    ----------
    name: label for reports. kernel: the kernel (its form must match the core's mode).
    block: block shape (threads; at most lanes * warps). setup: fills memory, returns params.
    seed: the memory model's seed for this case. max_cycles: give up after this many cycles
    (per block). max_instructions: the golden model's instruction budget for the launch (default:
    ``max_cycles`` per block, as the core retires at most one instruction per cycle, and at most
    the functional model's own default). grid: grid shape; the core holds one block, so the bench runs them in linear
    order (x fastest), global memory carrying over, as a GPU with one SM would.
    """

    name: str
    kernel: Kernel
    block: int | tuple[int, ...]
    setup: Setup | None = None
    seed: int = 1
    max_cycles: int = 20000
    max_instructions: int | None = None
    min_latency: int = 1
    max_latency: int = 40
    grid: int | tuple[int, ...] = 1


@dataclass
class CaseResult:
    name: str
    seed: int
    compare: CompareResult | None
    cycles: int = 0
    trap: str | None = None
    timeout: bool = False
    memory_mismatches: list[str] = field(default_factory=list)
    error: str | None = None
    mem_stats: dict = field(default_factory=dict)
    rtl: Trace | None = None  #: the RTL's records in retirement order (out of order within a warp)
    #: the core cycle (of the launch, blocks added up) at which each record of ``rtl`` retired
    retire_cycles: list[int] = field(default_factory=list)
    waves: str | None = None  #: waveform file of the run (``waves=True``)
    sim_seconds: float = 0.0  #: wall time of the simulated run (from start to done, in the simulator)
    blocks: int = 0  #: blocks the core ran (all of the grid unless it stopped early)
    fault: FaultCheck | None = None  #: the golden run faulted: did the RTL stop alike?
    golden_fault: KernelFault | None = None  #: the golden model's fault, when it faulted
    memory: np.ndarray | None = None  #: the core's global memory (words) when it stopped
    #: register-file read requests that lost their bank, per request and cycle (the timing
    #: model's ``rf_bank_conflicts``), over every block
    bank_conflicts: int = 0
    #: cycles of each event of the core's ``events`` port (dualflow/rtl/events.py), and ``stack_depth``:
    #: cycles per deepest SIMT-stack depth, over every block
    events: dict = field(default_factory=dict)
    #: the core had a retirement-trace port (``CoreParams.trace``); without it only the final
    #: memory and how the run stopped are compared
    traced: bool = True

    @property
    def ok(self) -> bool:
        if self.traced and (self.compare is None or not self.compare.ok):
            return False
        if self.fault is not None:  # an expected stop: the RTL had to stop for the same reason
            return self.fault.agree
        return not self.trap and not self.timeout and not self.memory_mismatches and not self.error

    def summary(self) -> str:
        head = f"[{self.name} seed {self.seed}] {self.cycles} cycles, {self.bank_conflicts} register bank conflicts"
        lines = [head]
        if self.fault is not None:
            lines.append(f"{'expected fault' if self.fault.agree else 'FAULT MISMATCH'}: {self.fault.message}")
        else:
            if self.error:
                lines.append(f"error: {self.error}")
            if self.trap:
                lines.append(f"core trapped: {self.trap}")
            if self.timeout:
                lines.append("timeout: the core did not finish")
        if self.compare is not None:
            lines.append(self.compare.summary())
        elif not self.traced:
            lines.append("no trace port (trace=False): the final memory and how the run stopped compared")
        if self.memory_mismatches:
            lines.append(f"{len(self.memory_mismatches)} global memory words differ, e.g. "
                         + "; ".join(self.memory_mismatches[:5]))
        return "\n".join(lines)


def dim3(block: int | tuple[int, ...]) -> tuple[int, int, int]:
    dims = (block,) if isinstance(block, int) else tuple(block)
    return tuple(dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def check_case(params: CoreParams, case: CosimCase) -> None:
    """Reject a case the core cannot run, with a message naming what does not fit."""
    k = case.kernel
    want = params.mode.form
    if k.form is not want:
        raise ConfigError(f"{case.name}: kernel {k.name!r} is {k.form.value.upper()} form; a {params.mode} core "
                          f"runs {want.value.upper()} form")
    for what, dims in (("block", case.block), ("grid", case.grid)):
        if not all(isinstance(d, int) and d >= 1 for d in dim3(dims)) or len(dim3(dims)) != 3:
            raise ConfigError(f"{case.name}: {what} {dims!r} must be 1 to 3 positive integers")
    bx, by, bz = dim3(case.block)
    if bx * by * bz > params.warp_size * params.warps:
        raise ConfigError(f"{case.name}: block of {bx * by * bz} threads exceeds the core's "
                          f"{params.warps} warps x {params.warp_size} lanes")
    if len(k.code) > params.imem_words:
        raise ConfigError(f"{case.name}: {len(k.code)} instructions exceed imem_words {params.imem_words}")
    if k.shared_bytes > params.shared_bytes:
        raise ConfigError(f"{case.name}: .shared {k.shared_bytes} exceeds the core's {params.shared_bytes} bytes")
    if len(k.params) > params.param_words:
        raise ConfigError(f"{case.name}: {len(k.params)} parameters exceed the core's param_words "
                          f"{params.param_words}")
    if params.mode.form is Form.DFLOW:
        runs = core_variants(params)
        missing = k.variants - runs
        if missing:
            hint = (" (a core built with --uniform-operands does)" if missing == {Variant.UNIFORM_OPERANDS} else "")
            raise ConfigError(f"{case.name}: kernel {k.name!r} uses .variant "
                              f"{', '.join(sorted(v.value for v in missing))}, which this RTL core does not implement"
                              f"{hint} (it implements {', '.join(sorted(v.value for v in runs)) or 'none'})")
        if k.rings != params.ring_sizes:
            if len(k.rings) == 1 and params.hands == 1:
                raise ConfigError(f"{case.name}: kernel ring {k.ring} differs from the core's ring {params.ring}")
            raise ConfigError(f"{case.name}: kernel rings {' '.join(map(str, k.rings))} differ from the core's "
                              f"rings {' '.join(map(str, params.ring_sizes))} (a kernel of .variant hands runs on a "
                              f"core built with its rings, one per hand: --rings {' '.join(map(str, k.rings))})")
        if k.dmax > params.dmax:
            raise ConfigError(f"{case.name}: kernel dmax {k.dmax} exceeds the core's dmax {params.dmax}")
    elif k.regs > params.regs:
        raise ConfigError(f"{case.name}: kernel uses {k.regs} registers, the core has {params.regs}")


def golden_budget(case: CosimCase, warp_size: int) -> int:
    """The golden model's instruction budget for ``case``: ``case.max_instructions``, else what
    the core could retire before ``max_cycles`` stops it (one instruction per cycle and block), at
    most the functional model's default; so an endless loop ends in both, not only in the RTL."""
    if case.max_instructions is not None:
        return case.max_instructions
    gx, gy, gz = dim3(case.grid)
    bx, by, bz = dim3(case.block)
    warps = gx * gy * gz * -(-(bx * by * bz) // warp_size)
    return min(case.max_cycles * gx * gy * gz, FunctionalConfig(warp_size=warp_size).instruction_budget(warps))


def _job(params: CoreParams, case: CosimCase) -> tuple[dict, Trace, Device, Device, KernelFault | None]:
    """Run the golden model; describe the RTL launch as JSON. A golden fault is returned, not raised."""
    check_case(params, case)
    L = params.warp_size
    config = FunctionalConfig(warp_size=L, max_warp_instructions=golden_budget(case, L))
    dev = Device(config)
    launch_params = list(case.setup(dev)) if case.setup else []
    before = Device(config)  # the memory image the RTL starts from
    before.memory.words = dev.memory.words.copy()
    before.memory.valid = dev.memory.valid.copy()
    gx, gy, gz = dim3(case.grid)
    fault = None
    try:
        trace = dev.launch(case.kernel, grid=(gx, gy, gz), block=dim3(case.block), params=launch_params,
                           trace=True).trace
    except KernelFault as exc:  # the RTL must stop alike; the records before the fault still compare
        fault, trace = exc, dev.traces[-1]
    bx, by, bz = dim3(case.block)
    threads = bx * by * bz
    nwarps = -(-threads // L)
    cfg = {int(SpecialReg.NTID_X): bx, int(SpecialReg.NTID_Y): by, int(SpecialReg.NTID_Z): bz,
           int(SpecialReg.NCTAID_X): gx, int(SpecialReg.NCTAID_Y): gy, int(SpecialReg.NCTAID_Z): gz,
           int(SpecialReg.NWARPID): nwarps, CFG_SHARED_LIMIT: case.kernel.shared_bytes}
    # Per block, in the functional model's linear order: the block's ctaid registers.
    blocks = [{str(int(SpecialReg.CTAID_X)): x, str(int(SpecialReg.CTAID_Y)): y, str(int(SpecialReg.CTAID_Z)): z}
              for z in range(gz) for y in range(gy) for x in range(gx)]
    for i, word in enumerate(trace.config["params"]):
        cfg[CFG_PARAM_BASE + i] = word
    tid_rows = []
    for w in range(params.warps):
        t = [w * L + lane for lane in range(L)]
        mask = sum(1 << lane for lane in range(L) if t[lane] < threads)
        cfg[cfg_mask_base(params) + w] = mask
        if mask:
            tid_rows.append([w, [x % bx for x in t], [(x // bx) % by for x in t], [x // (bx * by) for x in t]])
    words = case.kernel.words()
    job = {"name": case.name, "seed": case.seed, "words": words, "cfg": {str(k): v for k, v in cfg.items()},
           "tid": tid_rows, "blocks": blocks, "local_bytes": case.kernel.local_bytes, "max_cycles": case.max_cycles,
           "min_latency": case.min_latency, "max_latency": case.max_latency,
           "memory": {"words": before.memory.words.tolist(), "valid": before.memory.valid.tolist()}}
    return job, trace, dev, before, fault


def op_name(op: int, mod: int, form: Form) -> str:
    """Mnemonic with its ``.mod`` suffix exactly as the functional model's trace writes it."""
    try:
        opcode = Opcode(op)
    except ValueError:
        return f"op{op:#04x}"
    return format_instruction(Instruction(op=opcode, mod=mod), form).split(" ")[0]


def rtl_trace(kernel: Kernel, lanes: int, raw: list[dict], params: CoreParams) -> Trace:
    """Trace records from the core's trace port (as dumped by the bench). A hands kernel's records
    name the written hand (the port's ``hand``; 0 on a core of one ring), and the slot written
    is the port's entry less the hand's ``hand_base``, as the golden trace records them."""
    form = kernel.form
    hands = params.mode.ring and kernel.hands
    records = []
    for r in raw:
        info = r["info"]
        mask = info["mask"]
        hand = info.get("hand", 0) if hands else None
        dst = info["dst"] - (params.hand_base[hand] if hands else 0)

        def lanes_of(values, mask=mask):
            return tuple(v if mask >> i & 1 else 0 for i, v in enumerate(values))

        writes = bool(info["writes"])
        records.append((HandTraceRecord if hands else TraceRecord)(
            block=r["block"], warp=info["warp"], seq=info["seq"], pc=info["pc"],
            op=op_name(info["op"], info["mod"], form),
            rp=info["rp"] if params.mode.ring else None, mask=mask, dst=dst if writes else None,
            values=lanes_of(r["values"]) if writes else None,
            addrs=lanes_of(r["addrs"]) if info["mem"] else None,
            data=lanes_of(r["data"]) if info["store"] else None, **({"hand": hand} if hands else {})))
    return Trace(kernel.name, form.value, lanes, {"rtl": params.to_dict()}, records)


def run_cosim(params: CoreParams, cases: Sequence[CosimCase], *, bench_seed: int = 1,
              report_dir: str | Path | None = None, max_print: int = 10, inject: bool = False,
              waves: bool = False, simulator: str = "icarus", gate: GateLevel | None = None) -> list[CaseResult]:
    """Run every case on the golden model and on the RTL core built with ``params``.

    ``simulator``: the HDL simulator that runs the core (``run_bench``'s choice).
    ``gate``: run this mapped netlist of the core instead (``synth.gate_sim.gate_level``: cells,
    macro models and a VCD of its nets, under Icarus); the results name the VCD as ``waves``.

    ``inject``: the bench corrupts one value of every case's RTL trace (an expect-fail check that
    the comparison can fail). ``waves``: build with waveform dumping (its own build directory) and
    name the waveform file in each result."""
    from .sim import build_dir_for, run_bench

    prepared = [_job(params, case) for case in cases]
    name = f"simt_core_{params.mode}"
    bdir = build_dir_for(name, params.to_dict())
    bdir.mkdir(parents=True, exist_ok=True)
    tag = f"{os.getpid()}-{random.Random().randrange(1 << 30)}"
    jobs_path = bdir / f"jobs-{tag}.json"
    results_path = bdir / f"results-{tag}.json"
    atomic_write(jobs_path, json.dumps({"params": params.to_dict(), "jobs": [j for j, *_ in prepared]}))
    wave_file = None
    try:
        env = {JOBS_ENV: str(jobs_path), RESULTS_ENV: str(results_path)}
        if gate is not None:
            log, wave_file = _run_gate_level(gate, params, env, bench_seed)
        elif waves:
            log, wave_file = _run_with_waves(name, params, env, bench_seed)
        else:
            log = run_bench(name=name, make_component=lambda: SimtCore(params), params=params.to_dict(),
                            test_module=TEST_MODULE, seed=bench_seed, run_name=f"run-{tag}", inject=inject,
                            extra_env=env, simulator=simulator).log
        if not results_path.exists():
            raise DualflowError(f"the core bench wrote no results (log: {log})")
        outcome = json.loads(results_path.read_text())
    finally:
        for path in (jobs_path, results_path):
            if path.exists():
                path.unlink()
    results = []
    for case, (_spec, golden, dev, _before, fault), out in zip(cases, prepared, outcome):
        trap = out.get("trap")
        if trap is not None:
            trap = (f"{TrapCause(trap['cause']).name} at pc {trap['pc']} block {trap.get('block', 0)} "
                    f"warp {trap['warp']}")
        res = CaseResult(case.name, case.seed, None, cycles=out.get("cycles", 0), trap=trap,
                         timeout=bool(out.get("timeout")), error=out.get("error"), mem_stats=out.get("mem_stats", {}),
                         traced=params.trace)
        trace = rtl_trace(case.kernel, params.warp_size, out.get("trace", []), params) if params.trace else None
        res.rtl = trace
        res.retire_cycles = [int(r["cycle"]) for r in out.get("trace", [])]
        res.sim_seconds = float(out.get("sim_seconds", 0.0))
        res.blocks = int(out.get("blocks", 0))
        res.bank_conflicts = int(out.get("bank_conflicts", 0))
        res.events = out.get("events", {})
        res.waves = wave_file
        if trace is not None:
            res.compare = compare_traces(golden, trace, kernel=case.kernel, max_print=max_print,
                                         rp_bits=rp_width(params) if params.mode.ring else None,
                                         stopped=fault is not None)
        final = out.get("memory")
        if final is not None:
            res.memory = np.array(final, dtype=np.uint32)
        if fault is not None:
            # Both stopped early, at different points of other warps: memory is not comparable.
            res.golden_fault = fault
            res.fault = check_fault(fault, out.get("trap"), res.error, res.timeout)
        elif final is not None:
            want = dev.memory.words
            got = res.memory
            n = min(len(want), len(got))
            for word in np.flatnonzero(want[:n] != got[:n])[:50]:
                res.memory_mismatches.append(f"[{int(word) * 4:#x}] [MODEL] {int(want[word]):#x} "
                                             f"[RTL] {int(got[word]):#x}")
        if report_dir is not None:
            write_report(res.compare, Path(report_dir) / f"{case.name}-seed{case.seed}.json",
                         extra={"params": params.to_dict(), "seed": case.seed, "cycles": res.cycles,
                                "trap": res.trap, "timeout": res.timeout,
                                "fault": None if res.fault is None else res.fault.message,
                                "memory_mismatches": res.memory_mismatches, "mem_stats": res.mem_stats})
        results.append(res)
    return results


def _run_with_waves(name: str, params: CoreParams, env: dict, seed: int) -> tuple[Path, str | None]:
    """Build and run the core bench with waveform dumping, in a build directory of its own."""
    from amaranth.back import verilog
    from cocotb_tools.runner import get_runner

    from .sim import PARAMS_ENV, PORTS_ENV, SEED_ENV, build_dir_for, describe_ports, icarus_friendly

    bdir = build_dir_for(f"{name}-waves", params.to_dict())
    bdir.mkdir(parents=True, exist_ok=True)
    source = bdir / f"{name}.v"
    core = SimtCore(params)
    source.write_text(icarus_friendly(verilog.convert(core, name=name, emit_src=False)))
    ports = bdir / "ports.json"
    ports.write_text(json.dumps(describe_ports(core)))
    runner = get_runner("icarus")
    runner.build(sources=[source], hdl_toplevel=name, build_dir=bdir, timescale=("1ns", "1ps"), waves=True,
                 log_file=bdir / "build.log")
    log = bdir / "sim.log"
    try:
        runner.test(test_module=TEST_MODULE, hdl_toplevel=name, build_dir=bdir, test_dir=bdir, seed=seed,
                    timescale=("1ns", "1ps"), waves=True, log_file=log,
                    extra_env={**env, PARAMS_ENV: json.dumps(params.to_dict()), SEED_ENV: str(seed),
                               PORTS_ENV: str(ports)})
    except SystemExit:
        pass  # a failed cocotb test; the results file tells
    dumps = sorted(list(bdir.glob("*.fst")) + list(bdir.glob("*.vcd")), key=lambda p: p.stat().st_mtime)
    return log, str(dumps[-1]) if dumps else None


def _vcd_icarus():
    """cocotb's Icarus runner, except that ``vvp`` writes the design's own ``$dumpfile`` as VCD:
    cocotb passes ``-none`` (no dump) without ``waves`` and ``-fst`` with them (cocotb 2.1's
    ``_test_command``)."""
    from cocotb_tools.runner import Icarus

    class VcdIcarus(Icarus):
        def _test_command(self):
            return [[("-vcd" if arg == "-none" else arg) for arg in cmd] for cmd in super()._test_command()]

    return VcdIcarus()


def _run_gate_level(gate: GateLevel, params: CoreParams, env: dict, seed: int) -> tuple[Path, str | None]:
    """Build and run the core bench on a mapped netlist under Icarus, its nets dumped to ``gate.vcd``."""
    from dualflow.synth.gate_sim import DUMP_TOP

    from .sim import PARAMS_ENV, PORTS_ENV, SEED_ENV, describe_ports

    bdir = gate.vcd.parent
    ports = bdir / "ports.json"
    ports.write_text(json.dumps(describe_ports(SimtCore(params))))
    runner = _vcd_icarus()
    runner.build(sources=gate.sources, hdl_toplevel=gate.top, build_dir=bdir, timescale=("1ns", "1ps"),
                 build_args=["-s", DUMP_TOP], log_file=bdir / "build.log")
    log = bdir / "sim.log"
    gate.vcd.unlink(missing_ok=True)
    try:
        runner.test(test_module=TEST_MODULE, hdl_toplevel=gate.top, build_dir=bdir, test_dir=bdir, seed=seed,
                    timescale=("1ns", "1ps"), log_file=log,
                    extra_env={**env, PARAMS_ENV: json.dumps(params.to_dict()), SEED_ENV: str(seed),
                               PORTS_ENV: str(ports)})
    except SystemExit:
        pass  # a failed cocotb test; the results file tells
    return log, str(gate.vcd) if gate.vcd.exists() else None

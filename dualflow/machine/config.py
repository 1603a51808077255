"""Configuration of the performance model: a tree of typed, documented, validated dataclasses.

``GpuConfig`` -> ``SmConfig`` -> ``UnitConfig`` per execution-unit class, and ``MemoryConfig``
for the memory system. Every field carries its unit and meaning in its metadata
(``describe()`` lists them); construction validates; ``to_dict`` is written with every result
and ``from_dict`` reads it back, so a result file names exactly the machine that produced it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import Any

from dualflow.common.errors import ConfigError
from dualflow.isa.opcodes import UnitClass

from .fields import check_ints, check_positive_number, check_type, doc
from .memory import MemoryConfig
from .mode import Mode
from .schedulers import Scheduler
from .window import BankMap, CollectorPartition, DflowWindow, IssueOrder, SendAhead


@dataclass(frozen=True)
class UnitConfig:
    """One class of execution units in an SM: ``count`` identical pipelines."""

    latency: int = field(metadata=doc("cycles", "from dispatch to result ready for writeback"))
    interval: int = field(default=1, metadata=doc(
        "cycles", "initiation interval: a pipeline accepts a new warp instruction this often"))
    count: int = field(default=1, metadata=doc("pipelines", "identical pipelines of this class per SM"))

    def __post_init__(self) -> None:
        check_ints(self, "latency", "interval", "count")


#: The most SMs a GPU may have (``GpuConfig.num_sms``): each SM is simulated, with its own
#: caches and warp state, so a mistyped count must not fill the host's memory.
MAX_SMS = 1024
#: The most threads an SM may hold (``SmConfig.max_threads``): 2048 warps of 32.
MAX_SM_THREADS = 65536


@dataclass(frozen=True)
class SmConfig:
    """One streaming multiprocessor: occupancy limits, front end, issue, operand collector, units."""

    warp_size: int = field(default=32, metadata=doc("lanes", "threads per warp"))
    max_threads: int = field(default=2048, metadata=doc("threads", "resident threads per SM",
                                                        maximum=MAX_SM_THREADS))
    max_ctas: int = field(default=32, metadata=doc("blocks", "resident thread blocks per SM"))
    registers: int = field(default=65536, metadata=doc(
        "32-bit registers", "register-file capacity per SM; BASE allocates registers per thread, "
        "D-FLOW ring entries per warp, times the warp size"))
    shared_bytes: int = field(default=128 * 1024, metadata=doc("bytes", "shared memory per SM"))
    schedulers: int = field(default=4, metadata=doc("schedulers", "warp schedulers; warp w goes to w mod n"))
    scheduler: Scheduler = field(default=Scheduler.GTO, metadata=doc("policy", "warp-scheduler policy: gto or lrr"))
    ibuffer_entries: int = field(default=2, metadata=doc("instructions", "instruction-buffer depth per warp"))
    fetch_width: int = field(default=2, metadata=doc(
        "instructions", "instructions one fetch brings into a warp's buffer; one warp fetches per cycle"))
    fetch_warps: int = field(default=4, metadata=doc(
        "warps/cycle", "warps that fetch in one cycle, each up to fetch_width instructions, round robin "
        "(GPGPU-Sim fetches and decodes -gpgpu_inst_fetch_throughput times per cycle; SM86: 4)"))
    fetch_past_branches: bool = field(default=True, metadata=doc(
        "", "fetch goes on past a branch, sync or exit as if it fell through; when the warp's next instruction "
        "in the buffer is not at its pc (the branch went elsewhere), the buffer is flushed and fetch restarts "
        "there (GPGPU-Sim's control-hazard flush at issue). False: fetch stops at them until they complete"))
    fetch_latency: int = field(default=1, metadata=doc("cycles", "from fetch to decoded in the buffer"))
    collector_units: int = field(default=8, metadata=doc(
        "units", "operand-collector units per SM (D-FLOW: the out-of-order window)"))
    collector_partition: CollectorPartition = field(default=CollectorPartition.SHARED, metadata=doc(
        "policy", "shared: every collector unit, execution pipeline and register bank serves every scheduler; "
        "scheduler: each scheduler has its own equal share of them (sub-cores: GPGPU-Sim's "
        "-gpgpu_sub_core_model 1, on in SM86); pipelines of a class are shared when their count does not divide"))
    dflow_window: DflowWindow = field(default=DflowWindow.RESERVE, metadata=doc(
        "policy", "D-FLOW: pool-limited: at most dflow_waiting_per_warp collector units per warp and "
        "dflow_waiting_per_sm per pool of units (the SM's, or the scheduler's share) may hold an instruction "
        "whose operands are in flight; per-warp: only the per-warp limit; reserve: the per-warp limit, and a unit "
        "takes a waiting instruction only while more units of its pool stay free than dflow_reserve"))
    dflow_reserve: int = field(default=5, metadata=doc(
        "units", "D-FLOW, window reserve: collector units of its pool a waiting instruction must leave free (per "
        "sub-core with collector_partition scheduler); one per scheduler of the pool and one more, chosen by "
        "measurement (docs/timing-model.md, 'The D-FLOW window')"))
    dflow_send_ahead: SendAhead = field(default=SendAhead.ANY, metadata=doc(
        "policy", "D-FLOW: any: a warp may send an instruction whose operands are in flight ahead into a collector "
        "unit when its next instruction could then issue; loads: only when that next instruction is a load"))
    dflow_issue_order: IssueOrder = field(default=IssueOrder.READY_FIRST, metadata=doc(
        "policy", "D-FLOW: ready-first: a scheduler issues an instruction whose operands are ready if any warp "
        "has one, and sends one ahead to wait only otherwise; oldest-first: the first warp in its order that "
        "can issue does"))
    dflow_waiting_per_warp: int = field(default=4, metadata=doc(
        "units", "D-FLOW: collector units one warp may hold while their operands are still in flight; "
        "at the limit the warp's next instruction waits at issue for its operands (a true dependency). "
        "Keeps warps stalled on long loads from filling the shared collector units"))
    dflow_waiting_per_sm: int = field(default=4, metadata=doc(
        "units", "D-FLOW, pool-limited window: collector units of a pool (the SM's, or a sub-core's) that may "
        "hold instructions whose operands are still in flight; the rest stay available to instructions that "
        "can dispatch at once"))
    register_banks: int = field(default=8, metadata=doc(
        "banks", "register-file banks, register_bank_ports reads or writes each per cycle; entry e of "
        "warp w is in bank (e + w) mod banks"))
    register_bank_ports: int = field(default=2, metadata=doc(
        "accesses/cycle", "reads or writes one register-file bank serves per cycle "
        "(GPGPU-Sim -gpgpu_reg_file_port_throughput; SM86: 2)"))
    register_bank_map: BankMap = field(default=BankMap.SCHEDULER, metadata=doc(
        "policy", "warp: entry e of warp slot w in bank (e + w) mod banks; scheduler: in the banks of w's "
        "scheduler (banks / schedulers of them; with banks that do not divide, gcd(banks, schedulers) groups), "
        "(e + w) mod that; sub-cores (collector_partition scheduler) always use their scheduler's banks"))
    writeback_ports: int = field(default=8, metadata=doc(
        "results/cycle", "register-file writebacks per cycle (GPGPU-Sim -gpgpu_pipeline_widths EX_WB; SM86: 8)"))
    const_latency: int = field(default=8, metadata=doc("cycles", "parameter (ldc) load through the constant cache"))
    cta_launch_latency: int = field(default=10, metadata=doc(
        "cycles", "from a free slot to a new block's first fetch"))
    int_unit: UnitConfig = field(default=UnitConfig(4, 2, 4), metadata=doc(
        "", "integer ALU: add, logic, shifts, compares, moves, s2r, vote"))
    fp_unit: UnitConfig = field(default=UnitConfig(4, 1, 4), metadata=doc("", "FP32 add/mul/fma/compare/convert"))
    sfu_unit: UnitConfig = field(default=UnitConfig(21, 8, 4), metadata=doc("", "FP32 divide and square root"))
    mem_unit: UnitConfig = field(default=UnitConfig(1, 1, 1), metadata=doc(
        "", "load/store unit: address stage before the memory system (which adds its own latency)"))
    ctrl_unit: UnitConfig = field(default=UnitConfig(2, 1, 4), metadata=doc(
        "", "branch unit: fetch resumes after a branch, sync or exit completes"))

    def __post_init__(self) -> None:
        check_ints(self, "warp_size", "max_threads", "max_ctas", "registers", "shared_bytes", "schedulers",
                  "ibuffer_entries", "fetch_width", "fetch_latency", "collector_units", "register_banks",
                  "dflow_waiting_per_warp", "dflow_waiting_per_sm", "fetch_warps", "register_bank_ports",
                  "writeback_ports")
        if not isinstance(self.fetch_past_branches, bool):
            raise ConfigError(f"SmConfig.fetch_past_branches must be True or False, not {self.fetch_past_branches!r}")
        check_ints(self, "const_latency", "cta_launch_latency", "dflow_reserve", minimum=0)
        if self.warp_size > 32:
            raise ConfigError(f"SmConfig.warp_size must be at most 32, not {self.warp_size}")
        object.__setattr__(self, "scheduler", Scheduler.parse(self.scheduler, "SmConfig.scheduler"))
        for name, choice in (("collector_partition", CollectorPartition), ("dflow_window", DflowWindow),
                             ("dflow_issue_order", IssueOrder), ("register_bank_map", BankMap),
                             ("dflow_send_ahead", SendAhead)):
            object.__setattr__(self, name, choice.parse(getattr(self, name), f"SmConfig.{name}"))
        if self.collector_partition is CollectorPartition.SCHEDULER:
            for name in ("collector_units", "register_banks"):
                if getattr(self, name) % self.schedulers:
                    raise ConfigError(f"SmConfig.{name} ({getattr(self, name)}) must divide among the "
                                      f"{self.schedulers} schedulers when collector_partition is 'scheduler'")
        for name in ("int_unit", "fp_unit", "sfu_unit", "mem_unit", "ctrl_unit"):
            check_type(self, name, UnitConfig)
        if self.max_threads % self.warp_size:
            raise ConfigError(f"SmConfig.max_threads ({self.max_threads}) must be a multiple of the warp size")

    @property
    def max_warps(self) -> int:
        return self.max_threads // self.warp_size

    @property
    def bank_groups(self) -> int:
        """Groups the register banks are split into: one per scheduler (sub-cores, or the
        ``scheduler`` map when the banks divide among the schedulers; else as many as divide both,
        schedulers s and s + groups sharing one), or one for the SM."""
        if self.collector_partition is CollectorPartition.SCHEDULER:
            return self.schedulers
        return math.gcd(self.register_banks, self.schedulers) if self.register_bank_map is BankMap.SCHEDULER else 1

    @property
    def partitions(self) -> int:
        """Equal shares the collector units, pipelines and register banks are split into."""
        return self.schedulers if self.collector_partition is CollectorPartition.SCHEDULER else 1

    def unit(self, cls: UnitClass) -> UnitConfig:
        return {UnitClass.INT: self.int_unit, UnitClass.FP: self.fp_unit, UnitClass.SFU: self.sfu_unit,
                UnitClass.MEM: self.mem_unit, UnitClass.CTRL: self.ctrl_unit}[cls]


@dataclass(frozen=True)
class GpuConfig:
    """The whole GPU: SMs, clock, memory system, and the mode the SMs run in."""

    name: str = field(default="custom", metadata=doc("", "preset this configuration came from"))
    mode: Mode = field(default=Mode.BASE, metadata=doc(
        "", "base: REG form, in-order dispatch, scoreboard with false dependencies; "
        "dflow: DFLOW form, out-of-order dispatch from the collector, true dependencies only"))
    num_sms: int = field(default=68, metadata=doc("SMs", "streaming multiprocessors", maximum=MAX_SMS))
    core_clock_mhz: float = field(default=1440.0, metadata=doc("MHz", "SM clock; every latency is in its cycles"))
    kernel_launch_latency: int = field(default=0, metadata=doc(
        "cycles", "each launch's overhead before its blocks start: part of the launch's cycles, every SM idle"))
    sm: SmConfig = field(default_factory=SmConfig, metadata=doc("", "one SM"))
    memory: MemoryConfig = field(default_factory=MemoryConfig, metadata=doc("", "memory system"))

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode.parse(self.mode, "GpuConfig.mode"))
        check_ints(self, "num_sms")
        check_ints(self, "kernel_launch_latency", minimum=0)
        check_positive_number(self, "core_clock_mhz")
        check_type(self, "sm", SmConfig)
        check_type(self, "memory", MemoryConfig)

    def replace(self, **changes: Any) -> GpuConfig:
        """A copy with fields changed; dotted names reach into the tree (``sm.max_threads=1024``)."""
        return _replace_tree(self, changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> GpuConfig:
        """The configuration ``to_dict`` wrote (fields left out take their defaults). A key that
        names no field, or a sub-tree that is not a dict, is a ConfigError naming its dotted path."""
        return _from_dict(cls, data)


def _replace_tree(obj: Any, changes: dict[str, Any]) -> Any:
    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    names = {f.name for f in fields(obj)}
    for key, value in changes.items():
        head, _, rest = key.partition(".")
        if head not in names:
            raise ConfigError(f"{type(obj).__name__} has no field {head!r} (have: {', '.join(sorted(names))})")
        if rest and not dataclasses.is_dataclass(getattr(obj, head)):
            raise ConfigError(f"{type(obj).__name__}.{head} is a single value, not a group of fields: "
                              f"no field {rest!r} in it")
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[head] = value
    for head, sub in nested.items():
        direct[head] = _replace_tree(getattr(obj, head), sub)
    return dataclasses.replace(obj, **direct)


def _from_dict(cls: type, data: dict, where: str = "") -> Any:
    """``cls`` from ``data``; ``where`` is the dotted path of ``data`` in the tree, for messages."""
    known = {f.name: f for f in fields(cls)}
    for key in data:
        if key not in known:
            raise ConfigError(f"{where}{key}: {cls.__name__} has no field {key!r} (have: {', '.join(known)})")
    kwargs = {}
    for key, value in data.items():
        f = known[key]
        sub = f.default_factory if f.default_factory is not dataclasses.MISSING else None
        default = f.default if f.default is not dataclasses.MISSING else None
        template = sub() if sub is not None else default
        if dataclasses.is_dataclass(template):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}{key}: expected an object of {type(template).__name__} fields, "
                                  f"not {value!r}")
            value = _from_dict(type(template), value, f"{where}{key}.")
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[key] = value
    return cls(**kwargs)


def describe(cls: type = GpuConfig, prefix: str = "") -> dict[str, dict]:
    """Dotted field name -> {default, unit, description}, for the whole tree."""
    out: dict[str, dict] = {}
    for f in fields(cls):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(default):
            out[prefix + f.name] = {"default": None, **f.metadata}
            out.update(describe(type(default), prefix + f.name + "."))
        else:
            out[prefix + f.name] = {"default": default, **f.metadata}
    return out

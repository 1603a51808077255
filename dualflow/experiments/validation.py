"""Little's-law validation of the performance model on microbenchmarks (docs/validation.md).

Each case is a loop written in REG assembly (``program``) and converted to DFLOW with the
converter, run on one SM with W resident warps. What is measured is the steady state: every
quantity is the difference of two launches that differ only in the trip count (``ITERATIONS``),
so the prologue, the epilogue, cold caches of the first lap and the drain at the end cancel.

What is predicted comes from the configuration alone (``predict``):

- the one-warp iteration latency: ``one_warp_walk`` issues the loop of the kernel actually run
  (REG or converted DFLOW form) in order, one warp, with the latencies the model composes
  (``memory_latency``): an instruction issues when its sources are written back, its collector
  unit reads them the next cycle and dispatches the cycle after (2 cycles), the unit adds its
  latency; the front end as configured: instruction buffer, fetch width and latency, and a taken
  branch restarting fetch the cycle after it issues (``fetch_past_branches``) or when it completes
  (fetch stopping at branches); the warp's collector units and pipelines (its sub-core's share
  with ``collector_partition`` scheduler), each pipeline taking one instruction per interval.
  D-FLOW may send one instruction ahead to wait in a collector unit as the window allows
  (``dflow_window``: the per-warp limit, the pool's for pool-limited, ``dflow_reserve`` free
  units for reserve; ``dflow_send_ahead``; the next instruction must be able to issue). A DRAM load is timed on
  its own line (``WarpDram``: the bank's row state, open, none yet or another, from the address
  mapping and the lines read before it; the device timing; the channel's activates and bus).
  The walk runs the longer trip count and takes the window ``measure`` differences;
- the plateau: the tightest throughput bound of one SM (``throughput_bounds``): issue, fetch
  (``fetch_warps`` slots a cycle, wrong-path fetches counted: ``fetch_slots``), each unit class,
  collector units, register-file banks and their ports, writeback ports, the L1/shared port,
  L1 MSHRs (Little's law on the walk's mean miss round trip), DRAM bandwidth;
- the knee: warps needed = plateau x latency / work per warp-iteration.

The measured knee is the intersection of the one-warp slope with the measured plateau (the
largest rate over the warp counts): the same rule as the prediction, so the two compare
directly (``knee``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from dualflow.isa import Form, Kernel, Opcode, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.isa.opcodes import UnitClass
from dualflow.machine.config import GpuConfig
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.memory import dram_place
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset
from dualflow.machine.window import DflowWindow, SendAhead
from dualflow.models.device import Device
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.program import StaticInstruction, decode_kernel

WARPS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
PRESETS = ("paper-rtx3080", "ampere-rtx3070")
#: Warps the data layout leaves room for; every preset is raised to this many resident warps
#: (``sm.max_threads``), so the curves of both presets share one axis.
MAX_WARPS = 64
#: The two trip counts whose difference is measured: the first exceeds the L1 chase's ring
#: (``L1_RING``), so both runs are past the cold first lap.
ITERATIONS = (8, 24)
#: Positions of the L1-resident pointer ring of each warp: 64 warps x 4 lines x 128 B = 32 KB,
#: half the smaller preset's L1.
L1_RING = 4
#: Instructions of the dependent or independent chains in one iteration of an ALU case.
CHAIN_OPS = 8
#: Dependent loads per iteration of a chase case, dependent shared loads of a shared case,
#: independent loads of the bandwidth case.
CHASE_LINKS = 2
SHARED_LINKS = 4
STREAM_LOADS = 4


@dataclass(frozen=True)
class Case:
    """One microbenchmark. ``kind``: alu, chase, stream, load-use or shared."""

    name: str
    kind: str
    unit: str = "fp"  # alu: fp or int
    ilp: int = 1  # alu: independent chains
    level: str = ""  # global loads: where they are served, l1, l2 or dram
    stride: int = 0  # shared: words between consecutive lanes
    about: str = field(default="", compare=False)

    @property
    def bandwidth(self) -> bool:
        """Rates in bytes/cycle (the memory system's throughput) instead of IPC."""
        return self.kind == "stream"


CASES = (
    *(Case(f"fp-ilp{k}", "alu", "fp", k, about=f"{k} independent FFMA chain(s), {CHAIN_OPS} FFMAs per iteration")
      for k in (1, 2, 4)),
    *(Case(f"int-ilp{k}", "alu", "int", k, about=f"{k} independent IADD chain(s), {CHAIN_OPS} IADDs per iteration")
      for k in (1, 2, 4)),
    Case("chase-l1", "chase", level="l1", about=f"pointer chase over a ring of {L1_RING} lines per warp (L1 hits)"),
    Case("chase-l2", "chase", level="l2", about="pointer chase over fresh lines that a first launch left in L2"),
    Case("chase-dram", "chase", level="dram", about="pointer chase over lines never touched before (DRAM)"),
    Case("stream-dram", "stream", level="dram",
         about=f"{STREAM_LOADS} independent coalesced loads of fresh lines per iteration (DRAM bandwidth)"),
    Case("load-use", "load-use", level="l1",
         about="two L1-hit loads into one register, each used at once (register reuse)"),
    *(Case(f"shared-s{s}", "shared", stride=s, about=f"dependent shared loads, lanes {s} word(s) apart")
      for s in (1, 2, 4, 32)),
)
CASE = {c.name: c for c in CASES}


# ---------------------------------------------------------------------------------------- kernels
def program(case: Case, iterations: int, line_bytes: int = 128) -> str:
    """REG-form assembly of ``case`` running ``iterations`` loop trips. ``r1`` is the thread's
    word in ``buf`` (buf + 4 x global thread id), where its data starts; ``r3`` its word in
    ``out``, where the result is stored (apart, so a launch leaves the data as it found it)."""
    stride = MAX_WARPS * line_bytes  # from one position of a warp's data to its next
    result = "r10"
    if case.kind == "alu":
        fp = case.unit == "fp"
        # each link reads only its chain's register: no loop invariant for the converter to carry
        op = "ffma r{c}, r{c}, r{c}, r{c}" if fp else "iadd r{c}, r{c}, r{c}"
        setup = [f"mov r{10 + c}, {c + 1}{'.0' if fp else ''}" for c in range(case.ilp)]
        body = [op.format(c=10 + i % case.ilp) for i in range(CHAIN_OPS)]
        # every chain stays live: their sum is stored
        body_tail = [f"{'fadd' if fp else 'iadd'} r10, r10, r{10 + c}" for c in range(1, case.ilp)]
    elif case.kind == "chase":
        setup, body, result, body_tail = ["mov r5, r1"], ["ldg r5, [r5]"] * CHASE_LINKS, "r5", []
    elif case.kind == "stream":
        setup = ["mov r9, r1", "mov r20, 0"]
        body = [f"ldg r{5 + j}, [r9+{j * stride}]" for j in range(STREAM_LOADS)]
        body += [f"iadd r9, r9, {STREAM_LOADS * stride}"] + [f"iadd r20, r20, r{5 + j}" for j in range(STREAM_LOADS)]
        result, body_tail = "r20", []
    elif case.kind == "load-use":
        # the same two lines every iteration: L1 hits after the first
        setup = ["mov r20, 0", "mov r21, 0"]
        body = ["ldg r5, [r1]", "iadd r20, r20, r5", f"ldg r5, [r1+{stride}]", "iadd r21, r21, r5"]
        result, body_tail = "r20", ["iadd r20, r20, r21"]
    elif case.kind == "shared":
        # lane l of warp w (in its block) owns word s*l + (w mod s) + 32*s*(w div s): 32 words per
        # warp, disjoint, each bank serving s of a warp's lanes (conflict degree s)
        s = case.stride
        setup = ["s2r r6, %laneid", "s2r r7, %warpid", f"imul r6, r6, {s}", f"iand r8, r7, {s - 1}",
                 f"ishr r7, r7, {s.bit_length() - 1}", f"imul r7, r7, {32 * s}", "iadd r6, r6, r8",
                 "iadd r6, r6, r7", "ishl r6, r6, 2", "sts [r6], r6"]  # the word holds its own address
        body, result, body_tail = ["lds r6, [r6]"] * SHARED_LINKS, "r6", []
    else:
        raise ValueError(case.kind)
    shared = ".shared 4096\n" if case.kind == "shared" else ""
    lines = [f".kernel {case.name.replace('-', '_')}", ".form reg", shared.strip(), ".param buf", ".param out",
             "s2r r0, %tid.x", "s2r r1, %ctaid.x", "s2r r2, %ntid.x", "imad r0, r1, r2, r0", "ishl r0, r0, 2",
             "ldc r1, buf", "iadd r1, r1, r0", "ldc r3, out", "iadd r3, r3, r0", f"mov r4, {iterations}", *setup,
             "LOOP:", "isub r4, r4, 1", *body, "brnz r4, LOOP", *body_tail, f"stg [r3], {result}", "exit"]
    return "\n".join(f"    {x}" if x and not x.startswith((".", "LOOP:")) else x for x in lines if x) + "\n"


@cache
def kernel(case: Case, iterations: int, form: Form, line_bytes: int = 128) -> Kernel:
    """The case's kernel in ``form`` (DFLOW: converted from the REG form)."""
    k = assemble(program(case, iterations, line_bytes)).only
    return convert_kernel(k)[0] if form is Form.DFLOW else k


def machine(preset_name: str, mode: Mode, changes: Mapping[str, Any] | None = None) -> GpuConfig:
    """One SM of the preset in ``mode``, holding ``MAX_WARPS`` warps; ``changes``: further fields
    to set (dotted names, ``GpuConfig.replace``), e.g. ``{"sm.fetch_warps": 1}``."""
    base = preset(preset_name)
    return base.replace(**{"mode": mode, "num_sms": 1, "sm.max_threads": base.sm.warp_size * MAX_WARPS,
                           **(changes or {})})


def _data(case: Case, iterations: int, config: GpuConfig, base: int) -> np.ndarray:
    """The words of ``buf`` (at device address ``base``) for ``case``."""
    ws, line = config.sm.warp_size, config.memory.l1.line_bytes
    stride = MAX_WARPS * line
    thread_words = MAX_WARPS * ws
    if case.kind == "chase":
        positions = L1_RING if case.level == "l1" else CHASE_LINKS * iterations + 1
        words = np.zeros(positions * stride // 4, dtype=np.uint32)
        own = base + 4 * np.arange(thread_words, dtype=np.int64)  # position 0 of every thread
        for j in range(positions):  # position j points at position j + 1 (the L1 ring wraps)
            nxt = (j + 1) % positions
            words[(j * stride + own - base) // 4] = own + nxt * stride
        return words
    if case.kind == "stream":
        return np.zeros((STREAM_LOADS * iterations + 1) * stride // 4, dtype=np.uint32)
    if case.kind == "load-use":
        return np.zeros(2 * stride // 4, dtype=np.uint32)
    return np.zeros(thread_words, dtype=np.uint32)


def _buffer(dev: Device, case: Case, iterations: int, config: GpuConfig) -> int:
    """Allocate ``buf`` on ``dev``; its address, line-aligned so that a warp's 32 words are one
    transaction."""
    line = config.memory.l1.line_bytes
    raw = dev.alloc(_data(case, iterations, config, 0).nbytes + line)
    return -(-raw // line) * line


def buffer_base(case: Case, iterations: int, config: GpuConfig) -> int:
    """The address of ``buf`` in ``run``: its first allocation on a new device (the allocator is
    deterministic, so a functional device gives the timing device's address)."""
    return _buffer(Device(FunctionalConfig(warp_size=config.sm.warp_size)), case, iterations, config)


@dataclass(frozen=True)
class Sample:
    cycles: int
    warp_instructions: int


def run(case: Case, preset_name: str, mode: Mode, warps: int, iterations: int,
        changes: Mapping[str, Any] | None = None) -> Sample:
    """One launch of ``case`` with ``warps`` warps on one SM (one block; two above 32 warps).
    The L2 chase runs its launch twice on one device and returns the second: the first leaves
    the lines in L2, and the L1 is invalidated between launches."""
    if warps > MAX_WARPS:
        raise ValueError(f"at most {MAX_WARPS} warps")
    config = machine(preset_name, mode, changes)
    ws, line = config.sm.warp_size, config.memory.l1.line_bytes
    if ws * 4 > line:
        raise ValueError("a warp's words must fit one line")
    k = kernel(case, iterations, mode.form, line)
    dev = TimingDevice(config)
    base = _buffer(dev, case, iterations, config)
    dev.copy_in(base, _data(case, iterations, config, base))
    out = dev.alloc(4 * MAX_WARPS * ws)
    blocks = 1 if warps <= 32 else 2  # a block holds at most 1024 threads
    for _ in range(2 if case.level == "l2" else 1):
        dev.launch(k, grid=blocks, block=ws * warps // blocks, params=[base, out])
    t = dev.timing[-1]
    return Sample(t.cycles, t.total_warp_instructions)


@dataclass(frozen=True)
class Point:
    """Steady state at one warp count: the difference of the two trip counts."""

    warps: int
    cycles: int  # extra cycles of the longer run
    instructions: int  # extra warp-instructions
    iterations: int  # extra iterations per warp

    @property
    def ipc(self) -> float:
        return self.instructions / self.cycles

    def latency(self) -> float:
        """Cycles per iteration (of each warp)."""
        return self.cycles / self.iterations


def measure(case: Case, preset_name: str, mode: Mode, warps: int,
            iterations: tuple[int, int] = ITERATIONS, changes: Mapping[str, Any] | None = None) -> Point:
    lo, hi = (run(case, preset_name, mode, warps, n, changes) for n in iterations)
    return Point(warps, hi.cycles - lo.cycles, hi.warp_instructions - lo.warp_instructions,
                 iterations[1] - iterations[0])


def bytes_per_iteration(case: Case, config: GpuConfig) -> int:
    """Bytes a warp loads per iteration (the bandwidth cases' work)."""
    return STREAM_LOADS * config.memory.l1.line_bytes if case.kind == "stream" else 0


# ------------------------------------------------------------------------------------ prediction
#: What an L2 read miss finds at its DRAM bank: the row open (``hit``), no row open yet (``first``:
#: the bank's first access), another row open (``conflict``).
ROW_STATES = ("hit", "first", "conflict")


def dram_timing(config: GpuConfig) -> dict[str, float]:
    """The device timing fields in core cycles, fractional (the model counts them so), and
    ``per_byte``: the core cycles one byte takes on a channel's data bus."""
    d = config.memory.dram
    ratio = config.core_clock_mhz / d.clock_mhz  # core cycles per DRAM cycle
    out = {name: getattr(d, name) * ratio for name in ("tcl", "trcd", "trp", "tras", "trc", "trrd", "trtp", "tccd")}
    out["per_byte"] = ratio / d.bytes_per_cycle
    return out


def dram_unloaded(config: GpuConfig, row: str = "hit", nbytes: int | None = None) -> int:
    """Core cycles from an L2 read miss leaving its slice to all ``nbytes`` (a line) at the slice,
    on an idle channel whose bank is in state ``row`` (``ROW_STATES``), as
    dualflow/models/timing/memory/dram.py's docstring composes them: the request reaches the controller
    ``latency`` core cycles later; the read command follows at once on a row hit, after the
    activate and tRCD on a first access, after the precharge, tRP and tRCD on a conflict; the
    data starts tCL after the command and takes ``nbytes / bytes_per_cycle`` on the bus; the end
    is rounded up to a core cycle. (On an idle bank tRAS, tRC, tRTP and tCCD are long past.)"""
    if row not in ROW_STATES:
        raise ValueError(f"row state {row!r} (have: {', '.join(ROW_STATES)})")
    t = dram_timing(config)
    nbytes = config.memory.l2.line_bytes if nbytes is None else nbytes
    before = {"hit": 0.0, "first": t["trcd"], "conflict": t["trp"] + t["trcd"]}[row]
    return math.ceil(config.memory.dram.latency + before + t["tcl"] + nbytes * t["per_byte"] - 1e-9)


def _first_fit(busy: list[tuple[float, float]], earliest: float, length: float) -> float:
    """The first start at or after ``earliest`` of ``length`` cycles that overlaps none of the
    ``busy`` intervals (sorted, disjoint)."""
    start = earliest
    for lo, hi in busy:
        if start + length <= lo:
            break
        if hi > start:
            start = hi
    return start


class WarpDram:
    """The DRAM as the L2 read misses of one warp find it: the open row of every bank, the
    activates of every channel and its data bus, under the rules of dualflow/models/timing/memory/dram.py's
    docstring (written out here from the configuration, not taken from the model's ``Dram``):

    - a line's channel, bank and row: the address mapping (``DramConfig``);
    - the request reaches the controller at ``a`` = its cycle + ``latency``;
    - row hit: read command at ``max(a, the bank's previous column command + tCCD)``;
    - first access (no row open): activate at ``max(a, previous activate + tRC)``; conflict:
      precharge at ``p = max(a, activate + tRAS, last read command + tRTP)``, activate at
      ``max(p + tRP, previous activate + tRC)``; the activate in the first gap of the channel's
      activates (tRRD apart); read command tRCD after it;
    - the burst in the first gap of the channel's data bus from the command + tCL (a busy bus
      delays the command with it); the data is at the slice when the burst ends, rounded up.

    What one warp cannot meet is left out: writes (the cases store once, after the loop, into
    the write-back L2) and ``frfcfs``'s hits to a bank's previous row (that row closed a round
    trip before the warp's next request)."""

    def __init__(self, config: GpuConfig):
        d = config.memory.dram
        self.channels, self.banks, self.latency = d.channels, d.banks, d.latency
        self.lines_per_row = d.row_bytes // config.memory.l2.line_bytes
        self.row_interleaved = d.row_interleaved
        self.t = dram_timing(config)
        self.open_row: dict[int, int] = {}
        self.activated: dict[int, float] = {}
        self.pre_ready: dict[int, float] = {}
        self.col_ready: dict[int, float] = {}
        self.activates: dict[int, list[tuple[float, float]]] = {}
        self.bus: dict[int, list[tuple[float, float]]] = {}
        self.states: Counter = Counter()  # ROW_STATES -> requests

    def read(self, cycle: int, line: int, nbytes: int) -> tuple[int, str]:
        """A read of ``nbytes`` of L2 line ``line`` leaving its slice at ``cycle``: the cycle the
        data is at the slice, and the row state the request found."""
        t = self.t
        a = cycle + self.latency
        channel, bank, row = dram_place(line, self.channels, self.banks, self.lines_per_row, self.row_interleaved)
        if self.open_row.get(bank) == row:
            state, cas = "hit", max(a, self.col_ready[bank])
        else:
            if bank not in self.open_row:
                state, act = "first", a
            else:
                state = "conflict"
                act = max(a, self.pre_ready[bank]) + t["trp"]
            act = max(act, self.activated.get(bank, -math.inf) + t["trc"])
            acts = self.activates.setdefault(channel, [])
            act = _first_fit(acts, act, t["trrd"])
            acts.append((act, act + t["trrd"]))
            acts.sort()
            self.open_row[bank], self.activated[bank], self.pre_ready[bank] = row, act, act + t["tras"]
            cas = act + t["trcd"]
        length = nbytes * t["per_byte"]
        bus = self.bus.setdefault(channel, [])
        start = _first_fit(bus, cas + t["tcl"], length)
        bus.append((start, start + length))
        bus.sort()
        issued = start - t["tcl"]
        self.col_ready[bank] = issued + t["tccd"]
        self.pre_ready[bank] = max(self.pre_ready[bank], issued + t["trtp"])
        self.states[state] += 1
        return math.ceil(start + length - 1e-9), state


def dram_lines(case: Case, config: GpuConfig, base: int, count: int) -> list[int]:
    """L2 lines of the first ``count`` global loads of the DRAM cases' loop in warp 0, in issue
    order: the chase follows its pointers from position 0 to 1, 2, ... (``_data``), the stream's
    loads go up by a position each; position j is ``MAX_WARPS`` lines after position j - 1."""
    if case.kind not in ("chase", "stream"):
        raise ValueError(f"{case.name}: not a case whose loads walk the buffer")
    line = config.memory.l2.line_bytes
    stride = MAX_WARPS * config.memory.l1.line_bytes
    return [(base + j * stride) // line for j in range(count)]


def dram_bytes_per_cycle(config: GpuConfig) -> float:
    """All channels' bandwidth in bytes per core cycle."""
    d = config.memory.dram
    return d.channels * d.bytes_per_cycle * d.clock_mhz / config.core_clock_mhz


def memory_latency(config: GpuConfig, level: str, shared_degree: int = 1, row: str = "hit") -> int:
    """Unloaded cycles from a coalesced one-line access leaving the load/store unit (its L1 port
    cycle) to its data back at the SM, as the memory system composes them; ``row``: the DRAM
    bank's state (``ROW_STATES``) for a DRAM access."""
    m = config.memory
    if level == "l1":
        return m.l1.hit_latency
    if level == "l2":  # L1 miss: request crosses, slice tags, reply crosses
        return 2 * m.interconnect.latency + m.l2.hit_latency
    if level == "dram":  # L2 miss too: the request crosses, the slice tags, the DRAM, the reply crosses
        return 2 * m.interconnect.latency + m.l2.hit_latency + dram_unloaded(config, row, m.l1.line_bytes)
    if level == "shared":  # one port cycle per bank round; the data after the last
        return shared_degree * m.shared.bank_interval - 1 + m.shared.latency
    raise ValueError(level)


def shared_degree(case: Case, config: GpuConfig) -> int:
    """Conflict degree of the shared case's warp access: the most distinct words one bank must
    serve, summed over the parts of the warp served one after another (lane l reads word s*l)."""
    sh, lanes = config.memory.shared, config.sm.warp_size
    words_per_bank = sh.bank_bytes // 4 or 1
    part = -(-lanes // sh.warp_parts)
    total = 0
    for first in range(0, lanes, part):
        banks = Counter((case.stride * lane // words_per_bank) % sh.banks for lane in range(first, first + part))
        total += max(banks.values())
    return total


@dataclass
class Walk:
    """One warp's steady-state loop: cycles and work per iteration."""

    latency: float  # cycles per iteration
    instructions: float = 0.0
    by_unit: dict = field(default_factory=dict)  # UnitClass -> instructions
    collector: float = 0.0  # instructions through a collector unit
    reads: float = 0.0  # register-file operand reads
    writes: float = 0.0  # register-file writebacks
    fetches: float = 0.0  # fetch slots when fetch binds (fetch_slots)
    port_cycles: float = 0.0  # L1/shared port cycles
    missed_sectors: float = 0.0  # L1 sectors fetched from L2 or DRAM
    dram_bytes: float = 0.0
    misses: float = 0.0  # L1 misses (loads served by the L2 or DRAM)
    miss_cycles: float = 0.0  # their round trips from the L1 port, summed
    rows: Counter = field(default_factory=Counter)  # DRAM row states (ROW_STATES) met

    @property
    def miss_latency(self) -> float:
        """Mean round trip of an L1 miss, from its L1 port cycle to its data back."""
        return self.miss_cycles / self.misses


def _level(ins: StaticInstruction, case: Case) -> str:
    if ins.space == "shared":
        return "shared"
    if ins.space == "local":
        return "l1"  # the converter's spills: cached in the L1, write-back
    return case.level


def pipes_per_pool(count: int, parts: int) -> int:
    """Pipelines of a class of ``count`` that one pool of collector units (one of ``parts``:
    ``SmConfig.partitions``) dispatches to: its equal share, or all of them when they do not
    divide among the pools (dualflow/models/timing/sm.py, ``_pipe_range``)."""
    return count // parts if parts > 1 and count % parts == 0 else count


def fetch_slots(run_len: int, config: GpuConfig, at_end: bool = False) -> int:
    """Fetch slots a warp spends on a straight run of ``run_len`` instructions (from a redirect's
    target to a taken branch, inclusive) when fetch is the bottleneck, so its buffer is empty when
    its turn comes: every slot brings ``min(fetch_width, ibuffer_entries)`` instructions.

    Fetching past branches (``sm.fetch_past_branches``), the buffer is only flushed when its next
    instruction is a wrong-path one: if the branch ends its group, one more slot is spent on the
    fall-through before fetch can restart at the target (not when the branch is the code's last
    instruction: then fetch redirects by itself). A branch inside a group wastes the rest of it."""
    sm = config.sm
    group = min(sm.fetch_width, sm.ibuffer_entries)
    slots = -(-run_len // group)
    if sm.fetch_past_branches and run_len % group == 0 and not at_end:
        slots += 1
    return slots


def one_warp_walk(k: Kernel, config: GpuConfig, case: Case, iterations: tuple[int, int] = ITERATIONS,
                  base: int | None = None) -> Walk:
    """Issue the loop of ``k`` (from its label ``LOOP``, every branch taken) for one warp, in
    order, with the configuration's latencies, for ``iterations[1]`` iterations; what is
    measured between the ends of iterations ``iterations[0]`` and ``iterations[1]`` gives cycles
    and work per iteration, as ``measure`` takes the difference of the two trip counts. The end
    of an iteration is the last writeback of it and of everything before it (what the code after
    the loop waits for). Some loops do not settle into a steady state of one pass (load-use in
    D-FLOW repeats every third pass), so the window must be the measured one.

    A value is ready for an instruction issuing in the cycle of its writeback (BASE: the
    scoreboard clears before issue; D-FLOW: the collector reads it the next cycle). An issued
    instruction's collector unit reads in the next cycle and dispatches in the one after (+2)
    to a free pipeline of its class; its result is back ``unit.latency`` later (+ the memory
    latency of a load).

    The warp is warp 0 of scheduler 0; its pool (``SmConfig.partitions``) has
    ``collector_units / partitions`` units, each held from issue to dispatch (an instruction
    waits at issue while they are all held), and its pipelines of a class are the pool's share
    when the count divides (``pipes_per_pool``). A pipeline takes an instruction every
    ``interval`` cycles (a memory access: its port cycles, if more). BASE dispatches a warp's
    units in order; D-FLOW in any order, cycle by cycle, the oldest ready unit first, so a unit
    ready earlier goes before an older one still waiting for its operands.

    D-FLOW sends an instruction whose operands are in flight ahead into a unit (the first cycle
    from which it may, before its operands are back) when the model's ``_try_issue`` would: a
    unit of the pool is free; the warp holds fewer than ``dflow_waiting_per_warp`` waiting units
    (a unit waits until it has read its operands); with ``dflow_window`` pool-limited, fewer than
    ``dflow_waiting_per_sm`` wait in the pool (one warp: the warp's), with reserve, more than
    ``dflow_reserve`` units of the pool stay free; and its next instruction is in the buffer,
    does not read its result, could issue then, and is a load if ``dflow_send_ahead`` is loads.
    ``dflow_issue_order`` does not matter to one warp: ready-first tries the one warp again,
    allowing the wait, when it could not issue with ready operands.

    The front end: instruction i of a straight run is fetched in the first cycle in which the
    buffer has room (instruction i - ``ibuffer_entries`` has issued, issue comes before fetch
    in a cycle) and fewer than ``fetch_width`` of the run were fetched already, not before the
    run's start; it can issue ``fetch_latency`` later. A taken branch starts a new run at its
    target: with ``fetch_past_branches`` the cycle after the branch issues (the scheduler finds
    the fall-through in the buffer, flushes it, and fetch restarts there in the same cycle; in
    the branch's own cycle if it is the code's last instruction, where fetch redirects by
    itself); without, when the branch completes (fetch stops at it until then). One warp always
    gets a fetch slot (``fetch_warps`` >= 1).
    A load served by the L1 or the L2 adds ``memory_latency``. A DRAM load (the DRAM cases read
    fresh lines, each once) leaves its L2 slice ``interconnect.latency + l2.hit_latency`` after
    its L1 port cycle; ``WarpDram`` times it on its line (``dram_lines``, the buffer at ``base``,
    by default where ``run`` puts it) with the rows, activates and buses the warp's earlier
    requests left, and the reply crosses back: so row hits, first activates and conflicts come
    where they do in the run, and the stream's loads to one channel queue on its bus.
    Not modelled at one warp: register-bank conflicts (none of the cases has two accesses in
    flight that need one bank at once with two ports).
    """
    sm, mem = config.sm, config.memory
    static = decode_kernel(k)
    dflow = k.form is Form.DFLOW
    head = next(pc for pc, name in k.labels.items() if name == "LOOP")
    ready: dict[int, int] = {}  # register or ring position -> writeback cycle
    read_at: dict[int, int] = {}  # ring position -> last cycle a collector unit reads it
    waiting: list[int] = []  # D-FLOW: cycles at which this warp's waiting collector units read
    # the warp's pool of collector units and its pipelines: its scheduler's share with sub-cores
    parts = sm.partitions
    capacity = sm.collector_units // parts
    held: dict[int, int] = {}  # instruction (walk order) -> dispatch cycle of its collector unit, held till then
    # D-FLOW: an ALU instruction's pipeline claim, while nothing has read its result yet (``claim``):
    # instruction -> (cycle it could dispatch, cycles it holds the pipeline, latency, ring position or None)
    movable: dict[int, tuple[int, int, int, int | None]] = {}
    producer: dict[int, int] = {}  # ring position -> the instruction that writes it
    pipes = {cls: [[] for _ in range(pipes_per_pool(sm.unit(cls).count, parts))] for cls in UnitClass}
    last_dispatch = 0  # BASE: a warp's collector units dispatch in order
    window = sm.dflow_window
    loads_only = sm.dflow_send_ahead is SendAhead.LOADS

    def pool_units(c: int) -> int:
        """Collector units of the warp's pool held in cycle ``c`` (dispatch frees one before issue)."""
        return sum(1 for d in held.values() if d > c)

    def may_wait(c: int) -> bool:
        """May an instruction whose operands are in flight take a unit in cycle ``c`` (the window)?"""
        units = pool_units(c)
        n = sum(1 for r in waiting if r > c)  # this warp's waiting units (the pool's: one warp)
        if units >= capacity or n >= sm.dflow_waiting_per_warp:
            return False
        if window is DflowWindow.POOL_LIMITED:
            return n < sm.dflow_waiting_per_sm
        if window is DflowWindow.RESERVE:
            return capacity - units > sm.dflow_reserve
        return True

    def claim(cls: UnitClass, at_least: int, busy: int, me: int) -> int:
        """The first cycle from ``at_least`` at which a pipeline of the pool's ``cls`` is free for
        ``busy`` cycles: take it. Dispatch goes cycle by cycle, oldest unit first among the ready
        ones: a unit that could dispatch earlier than an older one (D-FLOW: the older one waited
        for its operands) takes the pipeline first, and the older one goes after it (its result
        moves later, which only instructions walked after this one read)."""
        nonlocal written

        def stays(owner: int) -> bool:
            return owner not in movable or movable[owner][0] <= at_least

        fits = [(_first_fit([(a, b) for a, b, o in iv if stays(o)], at_least, busy), j)
                for j, iv in enumerate(pipes[cls])]
        at, j = min(fits)
        iv = pipes[cls][j]
        bumped = [x for x in iv if x[0] < at + busy and at < x[1]]
        for x in bumped:
            iv.remove(x)
        iv.append((at, at + busy, me))
        iv.sort()
        held[me] = int(at)
        for _, _, owner in bumped:
            earliest_at, its_busy, latency, key = movable[owner]
            done = claim(cls, earliest_at, its_busy, owner) + latency
            if key is not None:
                ready[key] = done
            written = max(written, done)
        return int(at)
    entries, width = sm.ibuffer_entries, sm.fetch_width
    degree = shared_degree(case, config) if case.kind == "shared" else 1
    dram, lines = WarpDram(config), []
    if case.level == "dram":
        per_iteration = CHASE_LINKS if case.kind == "chase" else STREAM_LOADS
        base = buffer_base(case, iterations[1], config) if base is None else base
        lines = dram_lines(case, config, base, per_iteration * iterations[1])
    # the current straight run: its first fetch cycle, and each instruction's fetch and issue cycle
    run_start, fetched, issued = 0, [], []

    def fetch_cycle(i: int) -> int:
        """Fetch cycle of the run's instruction i, all before it fetched and i - entries issued."""
        c = fetched[i - 1] if i else run_start
        if i >= entries:
            c = max(c, issued[i - entries])
        if i >= width:
            c = max(c, fetched[i - width] + 1)
        return c

    last, rp, pc, branches, loads, written, seq = -1, 0, head, 0, 0, 0, 0
    ends: dict[int, int] = {}  # iterations done at a visit of the head -> the last writeback before it
    work: list[tuple[int, Walk]] = []  # (iterations done at its start, work) of every pass
    cur = Walk(0.0)
    while True:
        at_head = pc == head
        if at_head:
            if branches > iterations[1]:
                raise ValueError(f"{k.name}: no pass of the loop ends after {iterations[1]} iterations")
            ends[branches] = written
            if branches == iterations[1]:
                break
            cur = Walk(0.0)
            work.append((branches, cur))
        ins = static[pc]
        code = k.code[pc]
        seq += 1
        i = len(issued)
        fetched.append(fetch_cycle(i))
        keys = [rp - d for d in ins.unique_sources] if dflow else list(ins.unique_sources)
        src = max((ready.get(key, 0) for key in keys), default=0)
        for key in keys:  # read: its producer's result is final
            movable.pop(producer.get(key, -1), None)
        earliest = max(last + 1, fetched[i] + sm.fetch_latency)
        if not dflow and ins.dst >= 0:
            earliest = max(earliest, ready.get(ins.dst, 0))  # WAW: a false dependency in BASE
        if dflow and ins.produces:  # ring guard on the slot's previous position
            old = rp - k.ring
            movable.pop(producer.get(old, -1), None)
            earliest = max(earliest, ready.get(old, 0), read_at.get(old, 0))
        issue = max(earliest, src)
        if ins.needs_cu:  # a free unit of its pool ("collector_full" otherwise)
            while pool_units(issue) >= capacity:
                issue += 1
        if (dflow and ins.needs_cu and src > earliest and not ins.redirect and pc + 1 < len(static)
                and entries >= 2):
            nxt = static[pc + 1]
            rp2 = rp + 1 if ins.produces else rp
            if not (ins.produces and any(rp2 - d == rp for d in nxt.sources)) and (nxt.is_load or not loads_only):
                nsrc = max((ready.get(rp2 - d, 0) for d in nxt.unique_sources), default=0)
                # the next instruction must be in the buffer (fetched in an earlier cycle); its fetch
                # waits only for issues up to i - 1 (entries >= 2), so this one's is not needed yet
                issued.append(-1)  # placeholder, not read by fetch_cycle(i + 1)
                fetched.append(fetch_cycle(i + 1))
                nxt_in = fetched.pop() + 1
                issued.pop()
                for c in range(max(earliest, nsrc, nxt_in), min(src, issue)):  # the first the window lets wait
                    if may_wait(c):
                        issue = c
                        waiting.append(src + 1)
                        break
        last = issue
        issued.append(issue)
        start = max(issue, src)  # the cycle its last operand can be read, less one
        for key in keys:
            if dflow:
                read_at[key] = max(read_at.get(key, 0), start + 1)
        unit = sm.unit(ins.unit)
        # the collector reads operands the cycle after issue and dispatches the cycle after that;
        # with nothing to read (mov of a constant) it dispatches the cycle after issue
        collect = 2 if keys else 1
        dispatch = issue  # without a collector unit (operand-less redirects): no pipeline either
        if ins.needs_cu:
            busy = unit.interval  # a pipeline takes one every interval; a memory access holds it its port cycles
            if ins.is_load or ins.is_store:
                if ins.space == "shared":
                    busy = max(busy, degree * mem.shared.bank_interval)
                elif ins.space != "param":
                    busy = max(busy, -(-1 // mem.l1.transactions_per_cycle))
            dispatch = claim(ins.unit, max(start + collect, last_dispatch), busy, seq)
            if not dflow:
                last_dispatch = dispatch
            elif not (ins.is_mem or ins.redirect):  # (a memory access is not re-timed)
                movable[seq] = (start + collect, busy, unit.latency, rp if ins.produces else None)
        done = dispatch + unit.latency
        if ins.is_load:
            if ins.space == "param":
                done += sm.const_latency
            else:
                lvl = _level(ins, case)
                if lvl == "dram":
                    port = done  # its L1 port cycle
                    slice_done, state = dram.read(port + mem.interconnect.latency + mem.l2.hit_latency,
                                                  lines[loads], mem.l1.line_bytes)
                    loads += 1
                    done = slice_done + mem.interconnect.latency
                    cur.rows[state] += 1
                else:
                    port = done
                    done += memory_latency(config, lvl, degree)
                if lvl in ("l2", "dram"):
                    cur.misses += 1
                    cur.miss_cycles += done - port
                cur.port_cycles += degree * mem.shared.bank_interval if lvl == "shared" else \
                    1 / mem.l1.transactions_per_cycle
                if lvl in ("l2", "dram"):
                    cur.missed_sectors += mem.l1.line_bytes // mem.l1.sector_bytes
                if lvl == "dram":
                    cur.dram_bytes += mem.l1.line_bytes
        elif ins.is_store and ins.space != "shared":
            cur.port_cycles += 1 / mem.l1.transactions_per_cycle
        elif ins.is_store:
            cur.port_cycles += degree * mem.shared.bank_interval
        cur.instructions += 1
        cur.by_unit[ins.unit] = cur.by_unit.get(ins.unit, 0) + (0 if ins.issue_only else 1)
        cur.collector += ins.needs_cu
        cur.reads += len(keys)
        cur.writes += ins.produces
        if ins.produces:
            ready[rp if dflow else ins.dst] = done
            producer[rp if dflow else ins.dst] = seq
        written = max(written, done)
        if dflow and ins.produces:
            rp += 1
        elif code.op is Opcode.RPINC:
            rp += code.imm
        if ins.redirect:
            if code.op not in (Opcode.BRA, Opcode.BRNZ, Opcode.BRZ):
                raise ValueError(f"{k.name}: the loop may only branch (pc {pc} is {code.op.name})")
            at_end = pc + 1 == len(static)
            cur.fetches += fetch_slots(len(issued), config, at_end)
            branches += code.op is not Opcode.BRA
            if sm.fetch_past_branches:
                run_start = issue if at_end else issue + 1
            else:  # operand-less redirects go straight to the branch unit; the others through a collector
                run_start = dispatch + sm.ctrl_unit.latency
            fetched, issued = [], []
            pc = code.imm
        else:
            pc += 1
    if iterations[0] not in ends:
        raise ValueError(f"{k.name}: no pass of the loop ends after {iterations[0]} iterations")
    n = iterations[1] - iterations[0]  # the passes in the window may hold 2 iterations (the converter unrolled)
    window = [w for start, w in work if start >= iterations[0]]
    out = Walk((ends[iterations[1]] - ends[iterations[0]]) / n)
    for name in ("instructions", "collector", "reads", "writes", "fetches", "port_cycles", "missed_sectors",
                 "dram_bytes", "misses", "miss_cycles"):
        setattr(out, name, sum(getattr(w, name) for w in window) / n)
    for w in window:
        for u, c in w.by_unit.items():
            out.by_unit[u] = out.by_unit.get(u, 0) + c / n
        out.rows.update(w.rows)
    return out


def throughput_bounds(walk: Walk, config: GpuConfig, case: Case) -> dict[str, float]:
    """Warp-instructions per cycle one SM can sustain on this loop, per structure. Sub-cores
    (``collector_partition`` scheduler) change none of them: with the warps spread evenly over
    the schedulers, each sub-core's share of the collector units, pipelines (a class whose count
    does not divide is shared by all) and banks serves its share of the warps, and the SM's
    totals are the same."""
    sm, mem = config.sm, config.memory
    n = walk.instructions
    # fetch_warps slots a cycle, each spent as fetch_slots counts (wrong-path fetches included)
    out = {"issue": float(sm.schedulers), "fetch": sm.fetch_warps * n / walk.fetches}
    for cls in UnitClass:
        if walk.by_unit.get(cls):
            u = sm.unit(cls)
            out[f"{cls.value} unit"] = u.count / u.interval * n / walk.by_unit[cls]
    # a collector unit is held from issue to dispatch: two cycles at least
    out["collector units"] = sm.collector_units / 2 * n / walk.collector
    # every bank serves register_bank_ports reads or writes a cycle
    out["register banks"] = sm.register_banks * sm.register_bank_ports * n / (walk.reads + walk.writes)
    out["writeback ports"] = sm.writeback_ports * n / walk.writes
    if walk.port_cycles:
        out["L1/shared port"] = n / walk.port_cycles
    if walk.missed_sectors:  # Little's law on the MSHRs: each held for the miss's round trip
        out["L1 MSHRs"] = mem.l1.mshr_entries / walk.miss_latency * n / walk.missed_sectors
    if walk.dram_bytes:
        out["DRAM bandwidth"] = dram_bytes_per_cycle(config) * n / walk.dram_bytes
    return out


@dataclass(frozen=True)
class Prediction:
    latency: float  # one warp, cycles per iteration
    plateau: float  # IPC, or bytes/cycle for bandwidth cases
    bound: str  # the structure that sets the plateau
    knee: float  # warps
    instructions: float  # per warp-iteration


def predict(case: Case, preset_name: str, mode: Mode, changes: Mapping[str, Any] | None = None) -> Prediction:
    config = machine(preset_name, mode, changes)
    walk = one_warp_walk(kernel(case, ITERATIONS[1], mode.form, config.memory.l1.line_bytes), config, case)
    bounds = throughput_bounds(walk, config, case)
    bound = min(bounds, key=bounds.get)
    ipc = bounds[bound]
    knee = ipc * walk.latency / walk.instructions  # Little: warps = throughput x latency / work per warp
    per_instruction = bytes_per_iteration(case, config) / walk.instructions
    plateau = ipc * per_instruction if case.bandwidth else ipc
    return Prediction(walk.latency, plateau, bound, knee, walk.instructions)


# ----------------------------------------------------------------------------------- knee and rows
#: A curve whose last point is still this close to the one-warp line has not bent yet: its
#: plateau and knee are lower bounds.
ON_SLOPE = 0.95


def knee(warps: list[int] | tuple[int, ...], rates: list[float]) -> tuple[float, float, bool]:
    """(plateau, knee, reached) of a measured curve: the plateau is its largest rate, the knee
    the warp count at which the line through the origin and the first point (the low-warp slope)
    reaches the plateau. ``reached`` is False when the last point still lies on that line
    (within ``ON_SLOPE``): the curve never bent, and plateau and knee are only lower bounds."""
    if not warps or len(warps) != len(rates):
        raise ValueError("one rate per warp count, at least one")
    if any(b <= a for a, b in zip(warps, warps[1:])):
        raise ValueError("warp counts must ascend")
    slope = rates[0] / warps[0]
    if slope <= 0:
        raise ValueError("the first rate must be positive")
    plateau = max(rates)
    return plateau, plateau / slope, rates[-1] < ON_SLOPE * slope * warps[-1]


@dataclass(frozen=True)
class Row:
    case: Case
    mode: Mode
    preset: str
    predicted: Prediction
    points: tuple[Point, ...]
    rates: tuple[float, ...]  # IPC or bytes/cycle per warp count

    @property
    def latency(self) -> float:
        """Measured one-warp cycles per iteration."""
        return self.points[0].latency()

    @property
    def plateau_knee(self) -> tuple[float, float, bool]:
        return knee([p.warps for p in self.points], list(self.rates))


def row(case: Case, preset_name: str, mode: Mode, warps: tuple[int, ...] = WARPS) -> Row:
    if warps[0] != 1:
        raise ValueError("the curve starts at one warp (its one-warp latency)")
    config = machine(preset_name, mode)
    points = tuple(measure(case, preset_name, mode, w) for w in warps)
    if case.bandwidth:
        per = bytes_per_iteration(case, config)
        rates = tuple(p.warps * p.iterations * per / p.cycles for p in points)
    else:
        rates = tuple(p.ipc for p in points)
    return Row(case, mode, preset_name, predict(case, preset_name, mode), points, rates)


def deviation(measured: float, predicted: float) -> float:
    return measured / predicted - 1

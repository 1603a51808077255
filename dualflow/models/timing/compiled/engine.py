"""``CompiledGpu``: the compiled timing engine's driver, a drop-in for ``models.timing.gpu.Gpu``.

A launch runs in two steps. The functional pre-run (``.streams.build_streams``) executes it
and records, per warp, what it issues; then the compiled SM pipeline and GPU loop (gpu.py,
sm.py) time those streams on the compiled memory system (memory.py). The result equals the
reference engine's (``Gpu``) in every statistic, in the memory system's state and statistics, in
``cycle`` and in ``issue_log``.

Fallback. When the pre-run cannot give streams whose timing is independent of the order the
warps run in (a fault, the instruction budget, a data race between warps), ``build_streams``
undoes it and returns None, and the launch runs on a reference ``Gpu`` kept for that purpose.
What one launch leaves for the next must then carry across exactly, in both directions:

- the memory system's state (caches, MSHRs, interconnect and DRAM timelines, port cycles, the
  cumulative counters its statistics are differences of, and with a queued DRAM controller the
  writes still queued and the memory system's events: between launches no access is in flight,
  memory_queue_transfer.py): copied into the reference ``MemorySystem`` before the launch and
  back after it;
- ``cycle`` (where the next launch starts);
- per SM: the fetch round-robin pointer (``fetch_rr``, which persists across launches), the
  pipelines' busy-until cycles and the register banks' last-granted cycles (these two lie in
  the past at the next launch's start unless a unit's initiation interval exceeds its latency;
  carried so nothing depends on that), and ``seq`` and ``warp_age`` (only their order matters
  within a launch; carried anyway). The compiled engine keeps them in its SM state, made with
  the engine (a new ``Sm``'s values), which its reset leaves alone (the CARRIED
  arrays and ``SV_CARRIED`` of layout.py).

Everything else an ``Sm`` keeps is empty or reset at a launch's start (completion and wake
heaps, collector units, resident warps and blocks, ``last_cycle``), or is only read for warps
resident in the same launch (``last_issued``, ``sched_clean_until``, ``last_reasons``). Per-launch
statistics are differences of counters, so each engine's own counters serve.

Errors. A deadlock raises the reference's ``TimingDeadlock`` (its message names the SM, cycle,
warp and pc; the reference also appends a line trace of its state; with a queued DRAM
controller, SMs left waiting for a memory system with no event left raise its message too). A D-FLOW memory-ordering
violation raises the reference's ``MemoryOrderViolation`` with the same message (the streams
say which older access the younger one conflicts with: ``order_conflict``); memory and the
per-pc counts then hold the whole launch's functional effects, where the reference stops at
the violating dispatch. An ordering check farther back than the streams record (63 ordered
accesses of one warp) raises a ``DualflowError`` asking for the reference engine.
"""

from __future__ import annotations

import numpy as np

from dualflow.common.errors import DualflowError, TimingDeadlock
from dualflow.isa import Form, Kernel, Opcode
from dualflow.machine.config import GpuConfig
from dualflow.machine.footprint import entries_per_warp
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import Mode, check_implemented
from dualflow.models.executor import Geometry
from dualflow.models.memory import GlobalMemory

from ..gpu import Gpu, check_launch
from ..ordering import check_reorder
from ..program import PerKernel, StaticInstruction, decoded
from ..sm import UNIT_CLASSES
from ..stats import DeferredTree, TimingStats, sm_totals
from .codes import STALL_IDLE
from .core import (
    ERR_DEADLOCK,
    ERR_MEMORY_DEADLOCK,
    ERR_ORDER,
    ERR_ORDER_FAR,
    HT_DST,
    HT_SRC,
    HT_UNIQ,
    HT_WIDTH,
    MAX_SOURCES,
    OP_BAR,
    OP_EXIT,
    OP_MEMBAR,
    OP_OTHER,
    SPACES,
    ST_COLOR,
    ST_DST,
    ST_IS_MEM,
    ST_IS_STORE,
    ST_ISSUE_ONLY,
    ST_NEEDS_CU,
    ST_NSRC,
    ST_NUNIQ,
    ST_OP,
    ST_ORDERED,
    ST_PRODUCES,
    ST_REDIRECT,
    ST_SPACE,
    ST_SRC,
    ST_UNIQ,
    ST_UNIT,
    ST_WIDTH,
    W_BLOCK,
    W_REC,
    W_WID,
    Code,
    Streams,
    code_ref,
    streams_ref,
)
from .counters import counter_views
from .declare import settings_values
from .gpu import launch_sums, run_launch
from .layout import SETTINGS, SV_CARRIED, Settings, SettingsRef, settings_ref
from .memory import CompiledMemory, counters_tree
from .sm_state import SmStates
from .streams import Executors, LaunchStreams, build_streams

_OPS = {Opcode.MEMBAR: OP_MEMBAR, Opcode.BAR: OP_BAR, Opcode.EXIT: OP_EXIT}
#: The modes the compiled engine builds: their capabilities (``Settings.register_file``,
#: ``dispatch``) are the ones its code has branches for; any other mode is refused.
MODES = (Mode.BASE, Mode.DFLOW)


def encode_code(static: list[StaticInstruction]) -> np.ndarray:
    """``decode_kernel``'s facts as one int64 row per pc (columns ``ST_*``)."""
    st = np.zeros((max(len(static), 1), ST_WIDTH), dtype=np.int64)
    for ins in static:
        if len(ins.sources) > MAX_SOURCES:
            raise AssertionError(f"pc {ins.pc}: more than {MAX_SOURCES} sources")
        if not ins.needs_cu and not ins.issue_only and (ins.produces or ins.sources):
            raise AssertionError(f"pc {ins.pc}: sm.py sends it to the branch unit without operands")
        row = st[ins.pc]
        row[ST_UNIT] = UNIT_CLASSES.index(ins.unit)
        row[ST_PRODUCES], row[ST_DST] = ins.produces, ins.dst
        row[ST_NSRC], row[ST_NUNIQ] = len(ins.sources), len(ins.unique_sources)
        row[ST_SRC:ST_SRC + len(ins.sources)] = ins.sources
        row[ST_UNIQ:ST_UNIQ + len(ins.unique_sources)] = ins.unique_sources
        row[ST_REDIRECT], row[ST_ISSUE_ONLY], row[ST_NEEDS_CU] = ins.redirect, ins.issue_only, ins.needs_cu
        row[ST_IS_MEM], row[ST_ORDERED], row[ST_IS_STORE] = ins.is_mem, ins.ordered, ins.is_store
        row[ST_SPACE] = SPACES.index(ins.space)
        row[ST_OP] = _OPS.get(ins.op, OP_OTHER)
        row[ST_COLOR] = ins.color
    return st


class _KernelPlan:
    """What the engine derives from a kernel once: its decoded instructions, their encoding and
    its ``CodeRef``, and the ``Settings`` of each launch shape seen with their ``SettingsRef``."""

    def __init__(self, kernel: Kernel, units: np.ndarray):
        self.static = decoded(kernel)
        self.table = encode_code(self.static)
        self.code_ref = code_ref(Code(table=self.table, units=units, rings=hand_rings(kernel),
                                      hands=encode_hands(self.static)))
        self.settings: dict[tuple, tuple[Settings, SettingsRef]] = {}


def encode_hands(static: list[StaticInstruction]) -> np.ndarray:
    """``Code.hands``: per pc, the hands of its sources and unique sources and the hand it
    writes (columns ``HT_*``; all 0 without ``Variant.HANDS``)."""
    ht = np.zeros((max(len(static), 1), HT_WIDTH), dtype=np.int64)
    for ins in static:
        row = ht[ins.pc]
        row[HT_SRC:HT_SRC + len(ins.source_hands)] = ins.source_hands
        row[HT_UNIQ:HT_UNIQ + len(ins.unique_hands)] = ins.unique_hands
        row[HT_DST] = ins.dst_hand
    return ht


def hand_rings(kernel: Kernel) -> np.ndarray:
    """``Code.rings``: per hand, its ring and its base in the warp's slot space (the rings
    before it); one row, the ring at base 0, without ``Variant.HANDS``."""
    rings = kernel.rings if kernel.form is Form.DFLOW and kernel.hands else (max(kernel.ring, 1),)
    return np.array([[n, sum(rings[:h])] for h, n in enumerate(rings)], dtype=np.int64)


def encode_streams(streams: LaunchStreams, st: np.ndarray) -> Streams:
    """``LaunchStreams`` as int64 arrays, with each record's ordinal among its warp's ordered
    memory records (counted over all records: only differences within a warp are used)."""
    def i64(a):
        return np.ascontiguousarray(a, dtype=np.int64)

    pc = i64(streams.pc)
    ordered = st[pc, ST_ORDERED] if len(pc) else np.zeros(0, dtype=np.int64)
    return Streams(
        first=i64(streams.first), count=i64(streams.count), pc=pc, threads=i64(streams.threads),
        rp=i64(streams.rp), exits=i64(streams.exits), access=i64(streams.access),
        ordinal=np.cumsum(ordered) - ordered, tx_first=i64(streams.tx_first), tx_count=i64(streams.tx_count),
        degree=i64(streams.degree), order_conflict=i64(streams.order_conflict), tx_line=i64(streams.tx_line),
        tx_sectors=i64(streams.tx_sectors))


class CompiledGpu:
    """SMs and the memory system, compiled; ``run`` simulates one launch and returns its timing
    (the same interface and results as ``Gpu``)."""

    def __init__(self, config: GpuConfig, *, record_issue: bool = False, record_dram: bool = False):
        """``record_issue``: keep every issue as (cycle, block, warp, pc) in ``issue_log``;
        ``record_dram``: every DRAM request (``memory.dram_requests()``)."""
        check_implemented(config.mode, MODES, "the compiled timing engine")
        self.config = config
        self.memory = CompiledMemory(config.memory, config.num_sms, config.core_clock_mhz, record_dram=record_dram)
        self.cycle = 0  # where the next launch starts
        self.issue_log: list[tuple[int, int, int, int]] | None = [] if record_issue else None
        sm = config.sm
        self._pipe_count = max(sm.unit(cls).count for cls in UNIT_CLASSES)
        self._units = np.array([[sm.unit(cls).latency, sm.unit(cls).interval, sm.unit(cls).count]
                                for cls in UNIT_CLASSES], dtype=np.int64)
        self._reference: Gpu | None = None
        # the SM state; what carries from one launch to the next (module docstring) is kept in
        # it. Made here, as the reference's SMs and both memory systems are (4.8 MB at 68 SMs);
        # a launch whose D-FLOW ring needs a wider board makes it anew, keeping what carries.
        self._states = SmStates()
        self._states.fresh(self._gpu_settings(), self._pipe_count)
        self._plans = PerKernel(lambda kernel: _KernelPlan(kernel, self._units))
        self._executors = Executors()  # the pre-run's, restarted by later launches of a kernel

    # ------------------------------------------------------------------ a launch
    def run(self, kernel: Kernel, geo: Geometry, params: np.ndarray, memory: GlobalMemory,
            fconfig: FunctionalConfig, warp_counts: np.ndarray, thread_counts: np.ndarray) -> TimingStats:
        cfg = self.config
        shared, registers = check_launch(cfg, kernel, geo)
        mcfg = cfg.memory
        streams = build_streams(kernel, geo, params, memory, fconfig, warp_counts, thread_counts,
                                line_bytes=mcfg.l1.line_bytes, sector_bytes=mcfg.l1.sector_bytes,
                                shared_cfg=mcfg.shared, warp_size=cfg.sm.warp_size, local_bytes=kernel.local_bytes,
                                executors=self._executors)
        if streams is None:
            return self._run_reference(kernel, geo, params, memory, fconfig, warp_counts, thread_counts)
        plan = self._plans(kernel)
        shape = geo, shared, registers, self.issue_log is not None
        if shape not in plan.settings:
            settings = self._settings(kernel, geo, shared, registers, len(plan.static))
            plan.settings[shape] = settings, settings_ref(settings)
        settings, settings_ref_ = plan.settings[shape]
        state, state_ref = self._states.fresh(settings, self._pipe_count)  # arrays read here; njit code gets the ref
        begin = self.cycle
        self.memory.flush_l1(begin)  # GPUs invalidate L1 between launches
        before = self.memory.counters()
        end = run_launch(state_ref, settings_ref_, plan.code_ref, streams_ref(encode_streams(streams, plan.table)),
                         self.memory.state, begin + cfg.kernel_launch_latency)  # blocks start after the overhead
        if state.err[0]:
            self._raise(kernel, plan.static, streams, state)
        if self.issue_log is not None:
            self.issue_log.extend(map(tuple, state.heaps.log[:state.log_n[0]].tolist()))
        state.stalls[:, STALL_IDLE] += cfg.kernel_launch_latency * cfg.sm.schedulers  # every SM idles through it
        cycles = end + 1 - begin
        self.cycle = end + 1
        memory_tree = DeferredTree(counters_tree, self.memory.counters(), before, self.memory.smem_interval,
                                   cfg.num_sms)
        views = counter_views(launch_sums(state_ref).tolist(), state)
        return TimingStats.of_launch(kernel.name, cfg, sm_totals(views), cycles=cycles, memory=memory_tree)

    def _gpu_settings(self) -> Settings:
        """The ``Settings`` the GPU's configuration fixes (the launch's at their defaults)."""
        return Settings(**settings_values(SETTINGS, self.config, record_issue=self.issue_log is not None))

    def _settings(self, kernel: Kernel, geo: Geometry, shared: int, registers: int, code_length: int) -> Settings:
        """The ``Settings`` of a launch of ``kernel`` with this shape."""
        return self._gpu_settings()._replace(
            ring=max(kernel.capacity, 1), code_length=code_length, warps_per_block=geo.warps_per_block,
            num_blocks=geo.num_blocks, block_shared=shared, block_registers=registers,
            entries=entries_per_warp(kernel, self.config.mode),
            hands=len(kernel.rings) if kernel.form is Form.DFLOW and kernel.hands else 0)

    def _raise(self, kernel: Kernel, static: list[StaticInstruction], streams: LaunchStreams, state) -> None:
        code, sm, slot = (int(x) for x in state.err[:3])
        block, wid = int(state.wv[sm, slot, W_BLOCK]), int(state.wv[sm, slot, W_WID])
        name = f"block {block} warp {wid}"
        if code == ERR_ORDER:  # the reference's exception and message: check_reorder on a conflicting word
            older, younger = static[int(state.err[3])], static[int(state.err[4])]
            word, lane = np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool)
            check_reorder(kernel.name, name, older, word, lane, younger, word, lane)
            raise AssertionError("the streams report an ordering conflict check_reorder does not see")
        if code == ERR_ORDER_FAR:
            raise DualflowError(f"kernel {kernel.name!r}, {name}: pc {int(state.err[4])} would pass pc "
                                f"{int(state.err[3])}, more than 63 memory accesses back, which the compiled "
                                "engine cannot check; run it with the reference engine")
        if code == ERR_MEMORY_DEADLOCK:
            raise TimingDeadlock(f"timing model deadlock in launch of {kernel.name!r}: SMs wait for the memory "
                                "system, which has nothing left to do")
        if code == ERR_DEADLOCK:
            rec = int(state.wv[sm, slot, W_REC])
            raise TimingDeadlock(f"timing model deadlock on SM {sm} at cycle {int(state.err[3])}: {name} at pc "
                                f"{int(streams.pc[rec])} can never proceed (kernel {kernel.name!r})")
        raise AssertionError(f"compiled timing engine: internal error {state.err.tolist()} ({name})")

    # ------------------------------------------------------------------ fallback
    def _run_reference(self, kernel, geo, params, memory, fconfig, warp_counts, thread_counts) -> TimingStats:
        """Run one launch on the reference engine, carrying the state across (module docstring)."""
        ref = self._reference
        if ref is None:
            ref = self._reference = Gpu(self.config)
        ref.issue_log = self.issue_log
        for sm in ref.sms:
            sm.issue_log = self.issue_log
        state = self._states.state
        self._carry(ref, state, into_state=False)
        ref.cycle = self.cycle
        self.memory.store_into(ref.memory)
        timing = ref.run(kernel, geo, params, memory, fconfig, warp_counts, thread_counts)
        self.memory = CompiledMemory.from_reference(ref.memory)
        self.cycle = ref.cycle
        self._carry(ref, state, into_state=True)
        return timing

    @staticmethod
    def _carry(ref: Gpu, state, *, into_state: bool) -> None:
        """Copy what carries across launches (per SM: the scalars of ``layout.SV_CARRIED``, the
        pipelines' and register banks' busy-until cycles) between the reference engine's SMs and
        the compiled SM state."""
        for i, sm in enumerate(ref.sms):
            if into_state:
                for column, name in SV_CARRIED:
                    state.sv[i, column] = getattr(sm, name)
                for k, cls in enumerate(UNIT_CLASSES):
                    state.pipes[i, k, :len(sm.pipes[cls])] = sm.pipes[cls]
                col = sm.collector  # its banks' (cycle, accesses) as collector.claim_bank's one number
                state.bank_busy[i] = [c * col.ports + n - 1 if c >= 0 else -1
                                      for c, n in zip(col._bank_cycle, col._bank_uses)]
            else:
                for column, name in SV_CARRIED:
                    setattr(sm, name, int(state.sv[i, column]))
                for k, cls in enumerate(UNIT_CLASSES):
                    sm.pipes[cls] = state.pipes[i, k, :len(sm.pipes[cls])].tolist()
                col, busy = sm.collector, state.bank_busy[i].tolist()
                col._bank_cycle = [v // col.ports if v >= 0 else -1 for v in busy]
                col._bank_uses = [v % col.ports + 1 if v >= 0 else 0 for v in busy]

"""The whole GPU: block dispatch across SMs, the global event loop, one launch at a time.

SMs advance in global cycle order (a heap of the next cycle each SM needs), so requests reach
the shared memory system in time order and the run is deterministic: ties go to the lower SM.
Blocks are dispatched in order, each to the next SM with room (threads, blocks, shared memory,
register file: registers per thread in BASE, ring entries per warp in D-FLOW, with
``Variant.HANDS`` every hand's ring: ``Kernel.capacity``), round robin at the start of a launch
and then wherever a block finishes.
"""

from __future__ import annotations

import heapq

import numpy as np

from dualflow.common.errors import ConfigError, KernelFault, TimingDeadlock
from dualflow.isa import Form, Kernel
from dualflow.machine.config import GpuConfig
from dualflow.machine.footprint import block_registers, entries_per_warp
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import Mode, check_implemented
from dualflow.models.executor import BatchExecutor, Geometry
from dualflow.models.memory import GlobalMemory

from .memory.system import MemorySystem
from .program import decoded
from .sm import Sm
from .stats import TimingStats, diff_memory, launch_counts, sm_totals
from .warp import Cta


class BlockDoesNotFit(ConfigError):
    """A launch's block needs more than an empty SM offers (threads, blocks, shared memory, registers)."""


#: The modes the timing model builds (both engines): another mode is refused, not run as one of these.
TIMING_MODES = (Mode.BASE, Mode.DFLOW)

#: Warps whose architectural state one functional executor holds (blocks are grouped so).
EXECUTOR_WARPS = 4096


def check_launch(config: GpuConfig, kernel: Kernel, geo: Geometry) -> tuple[int, int]:
    """Refuse a launch the GPU cannot run (the kernel's form is not the mode's, another warp
    size, a block larger than an empty SM); returns the shared bytes and register-file entries
    one block holds. Both engines call it."""
    want = config.mode.form
    if kernel.form is not want:
        raise ConfigError(f"kernel {kernel.name!r} is in {kernel.form.value.upper()} form; the {config.mode} "
                          f"GPU runs {want.value.upper()} form")
    sm = config.sm
    if geo.warp_size != sm.warp_size:
        raise ConfigError(f"functional warp size {geo.warp_size} differs from the SM's {sm.warp_size}")
    wpb = geo.warps_per_block
    shared, registers = kernel.shared_bytes, block_registers(kernel, config.mode, sm.warp_size, wpb)
    if not (wpb * sm.warp_size <= sm.max_threads and sm.max_ctas > 0 and shared <= sm.shared_bytes
            and registers <= sm.registers):  # what Sm.fits says of an empty SM
        raise BlockDoesNotFit(
            f"launch of {kernel.name!r}: one block ({wpb} warps, {shared} B shared, {registers} registers) "
            f"does not fit an SM ({sm.max_threads} threads, {sm.max_ctas} blocks, "
            f"{sm.shared_bytes} B shared, {sm.registers} registers)")
    return shared, registers


class Gpu:
    """SMs and the memory system; ``run`` simulates one launch and returns its timing."""

    def __init__(self, config: GpuConfig, *, record_issue: bool = False, record_dram: bool = False):
        """``record_issue``: keep every issue as (cycle, block, warp, pc) in ``issue_log`` (for tests
        and debugging; cycles count from the start of the first launch). ``record_dram``: keep every
        DRAM request (``memory.dram_requests()``)."""
        check_implemented(config.mode, TIMING_MODES, "the timing model")
        self.config = config
        self.memory = MemorySystem(config.memory, config.num_sms, config.core_clock_mhz, record_dram=record_dram)
        self.sms = [Sm(i, config.sm, self.memory, mode=config.mode) for i in range(config.num_sms)]
        self.cycle = 0  # where the next launch starts
        self.issue_log: list[tuple[int, int, int, int]] | None = [] if record_issue else None
        for sm in self.sms:
            sm.issue_log = self.issue_log

    def block_footprint(self, kernel: Kernel, warps: int) -> tuple[int, int]:
        """Shared bytes and register-file entries (32-bit registers) one block holds."""
        return kernel.shared_bytes, block_registers(kernel, self.config.mode, self.config.sm.warp_size, warps)

    def run(self, kernel: Kernel, geo: Geometry, params: np.ndarray, memory: GlobalMemory,
            fconfig: FunctionalConfig, warp_counts: np.ndarray, thread_counts: np.ndarray) -> TimingStats:
        cfg = self.config
        wpb = geo.warps_per_block
        shared, registers = check_launch(cfg, kernel, geo)
        static = decoded(kernel)
        budget = [0]
        launch_warps = geo.num_blocks * wpb
        limit = fconfig.instruction_budget(launch_warps)

        # counted in Python lists (cheaper per call than numpy scalars), added to the arrays at the end
        warps_at = [0] * len(kernel.code)
        threads_at = [0] * len(kernel.code)

        def count(pc: int, threads: int) -> None:
            warps_at[pc] += 1
            threads_at[pc] += threads
            budget[0] += 1
            if budget[0] > limit:
                raise KernelFault(fconfig.budget_exceeded(launch_warps), kernel=kernel.name, pc=pc)

        for sm in self.sms:
            sm.static, sm.kernel_name, sm.count = static, kernel.name, count
            sm.ring, sm.local_bytes, sm.warps_per_block = kernel.capacity, kernel.local_bytes, wpb
            sm.rings = kernel.rings if kernel.form is Form.DFLOW and kernel.hands else None
            sm.last_cycle = -1
        before = sm_totals(self.sms)
        begin = self.cycle
        start = begin + cfg.kernel_launch_latency  # blocks start after the launch's overhead
        self.memory.flush_l1(begin)  # GPUs invalidate L1 between launches
        mem_before = self.memory.stats()

        per_chunk = max(1, EXECUTOR_WARPS // wpb)
        executors: dict[int, BatchExecutor] = {}
        left_in_chunk: dict[int, int] = {}

        def executor_for(block: int) -> tuple[BatchExecutor, int]:
            chunk = block // per_chunk
            if chunk not in executors:
                start = chunk * per_chunk
                blocks = range(start, min(start + per_chunk, geo.num_blocks))
                executors[chunk] = BatchExecutor(kernel, geo, blocks, params, memory, fconfig, warp_counts,
                                                 thread_counts, budget, None)
                left_in_chunk[chunk] = len(blocks)
            return executors[chunk], (block - chunk * per_chunk) * wpb

        next_block = 0
        heap: list[tuple[int, int]] = []
        scheduled = [None] * len(self.sms)

        def schedule(sm: Sm, cycle: int) -> None:
            if scheduled[sm.index] is None or cycle < scheduled[sm.index]:
                scheduled[sm.index] = cycle
                heapq.heappush(heap, (cycle, sm.index))

        entries = entries_per_warp(kernel, cfg.mode)

        def place(sm: Sm, cycle: int) -> None:
            nonlocal next_block
            ex, first = executor_for(next_block)
            cta = Cta(next_block, geo.threads_per_block, shared, registers)
            sm.add_cta(cta, ex, first, wpb, cycle + cfg.sm.cta_launch_latency, entries)
            next_block += 1

        # at the start, one block per SM per pass (round robin), as a block dispatcher does
        progress = True
        while progress and next_block < geo.num_blocks:
            progress = False
            for sm in self.sms:
                if next_block < geo.num_blocks and sm.fits(wpb, shared, registers):
                    place(sm, start)
                    progress = True
                    schedule(sm, start)
        for sm in self.sms:
            sm.on_wake = lambda index, cycle: schedule(self.sms[index], cycle)
        memsys = self.memory  # (``memory`` is the launch's global memory)
        end = start
        while heap or memsys.queued and any(sm.memory_waits for sm in self.sms):
            # the memory system's own events (queued DRAM) come first in their cycle
            event = memsys.next_event()
            if event is not None and (not heap or event <= heap[0][0]):
                memsys.advance(event)
                continue
            if not heap:
                raise TimingDeadlock(f"timing model deadlock in launch of {kernel.name!r}: SMs wait for the "
                                    "memory system, which has nothing left to do")
            cycle, i = heapq.heappop(heap)
            if scheduled[i] != cycle:
                continue
            scheduled[i] = None
            sm = self.sms[i]
            nxt = sm.tick(cycle)
            end = max(end, cycle)
            if sm.finished_ctas:
                for cta in sm.finished_ctas:
                    chunk = cta.block // per_chunk
                    left_in_chunk[chunk] -= 1
                    if not left_in_chunk[chunk]:
                        del executors[chunk], left_in_chunk[chunk]  # free its architectural state
                sm.finished_ctas.clear()
                placed = False
                while next_block < geo.num_blocks and sm.fits(wpb, shared, registers):
                    place(sm, cycle)
                    placed = True
                if placed:
                    nxt = cycle + 1 if nxt is None else min(nxt, cycle + 1)
            if nxt is not None:
                schedule(sm, nxt)
        warp_counts += np.array(warps_at, dtype=np.int64)
        thread_counts += np.array(threads_at, dtype=np.int64)
        for sm in self.sms:  # every SM idles through the launch latency, and one that ran out of
            idle = end - max(sm.last_cycle, start - 1) + start - begin  # blocks early until the end
            sm.counters.stalls["idle"] += idle * cfg.sm.schedulers
        cycles = end + 1 - begin
        self.cycle = end + 1
        return TimingStats.of_launch(kernel.name, cfg, launch_counts(self.sms, before), cycles=cycles,
                                     memory=diff_memory(self.memory.stats(), mem_before))

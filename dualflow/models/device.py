"""Host API of the functional model, in the style of the CUDA runtime.

    dev = Device()
    a = dev.alloc(4 * n)                 # cudaMalloc
    dev.copy_in(a, host_array)           # cudaMemcpy host -> device
    result = dev.launch(kernel, grid=(g,), block=(256,), params=[a, n], trace=True)
    out = dev.copy_out(a, n, np.float32) # cudaMemcpy device -> host

Launches run to completion in order and share global memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dualflow.common.errors import ConfigError, KernelFault
from dualflow.isa import Form, Kernel, Module
from dualflow.machine.functional import FunctionalConfig

from .executor import BatchExecutor, Geometry
from .memory import GlobalMemory
from .stats import LaunchStats
from .trace import Trace, TraceRecord


class LaunchRecord(NamedTuple):
    """One launch as the host asked for it (grid and block as given, parameters as passed)."""

    kernel: str
    grid: object
    block: object
    params: list


@dataclass
class LaunchResult:
    stats: LaunchStats
    trace: Trace | None


def _dim3(value: int | Sequence[int], what: str) -> tuple[int, int, int]:
    def is_int(d) -> bool:
        return isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))

    try:
        dims = (value,) if is_int(value) else tuple(value)
    except TypeError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(not is_int(d) or d < 1 for d in dims):
        raise ConfigError(f"launch {what} must be 1 to 3 positive integers, not {value!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


class Device:
    """One GPU as the functional model sees it: global memory and in-order launches."""

    def __init__(self, config: FunctionalConfig | None = None, *, trace: bool = False):
        """``trace``: record a retirement trace of every launch (kept in ``traces``) unless a
        launch says otherwise."""
        self.config = config or FunctionalConfig()
        self.memory = GlobalMemory(self.config.global_memory_bytes)
        self.history: list[LaunchStats] = []
        self.trace_default = trace
        self.traces: list[Trace] = []
        self.launches: list[LaunchRecord] = []  # every launch, in order

    def alloc(self, nbytes: int) -> int:
        return self.memory.alloc(nbytes)

    def free(self, addr: int) -> None:
        self.memory.free(addr)

    def copy_in(self, addr: int, data: np.ndarray) -> None:
        self.memory.write(addr, np.asarray(data))

    def copy_out(self, addr: int, count: int, dtype=np.uint32) -> np.ndarray:
        return self.memory.read(addr, count, dtype)

    def upload(self, data: np.ndarray) -> int:
        """Allocate and copy in, in one step; returns the device address."""
        data = np.ascontiguousarray(data)
        addr = self.alloc(max(4, data.nbytes))
        self.copy_in(addr, data)
        return addr

    def _check_launch(self, kernel: Kernel, geo: Geometry, params: Sequence) -> np.ndarray:
        cfg = self.config
        name = f"launch of {kernel.name!r}"
        if geo.threads_per_block > cfg.max_threads_per_block:
            raise ConfigError(f"{name}: block of {geo.threads_per_block} threads exceeds the limit of "
                              f"{cfg.max_threads_per_block}")
        for axis, (have, limit) in enumerate(zip(geo.block, cfg.max_block_dim)):
            if have > limit:
                raise ConfigError(f"{name}: block dimension {'xyz'[axis]} = {have} exceeds {limit}")
        for axis, (have, limit) in enumerate(zip(geo.grid, cfg.max_grid_dim)):
            if have > limit:
                raise ConfigError(f"{name}: grid dimension {'xyz'[axis]} = {have} exceeds {limit}")
        if kernel.shared_bytes > cfg.max_shared_bytes:
            raise ConfigError(f"{name}: {kernel.shared_bytes} bytes of shared memory per block exceed "
                              f"{cfg.max_shared_bytes}")
        if kernel.local_bytes > cfg.max_local_bytes:
            raise ConfigError(f"{name}: {kernel.local_bytes} bytes of local memory per thread exceed "
                              f"{cfg.max_local_bytes}")
        if len(params) != len(kernel.params):
            raise ConfigError(f"{name}: kernel takes {len(kernel.params)} parameters "
                              f"({', '.join(kernel.params) or 'none'}), got {len(params)}")
        words = []
        for pname, value in zip(kernel.params, params):
            if isinstance(value, (float, np.floating)):
                words.append(int(np.float32(value).view(np.uint32)))
            elif isinstance(value, (int, np.integer)) and -(1 << 31) <= value < (1 << 32):
                words.append(int(value) & 0xFFFFFFFF)
            else:
                raise ConfigError(f"{name}: parameter {pname} = {value!r} is not a 32-bit integer or float")
        return np.array(words, dtype=np.uint32)

    def launch(self, kernel: Kernel, grid: int | Sequence[int], block: int | Sequence[int],
               params: Sequence = (), *, trace: bool | None = None) -> LaunchResult:
        """Run ``kernel`` over the whole grid; returns its statistics and, on request, its trace."""
        if trace is None:
            trace = self.trace_default
        geo, words, warp_counts, thread_counts = self._begin_launch(kernel, grid, block, params)
        budget = [0]
        records: list[TraceRecord] | None = [] if trace else None
        per_batch = max(1, self.config.batch_warps // geo.warps_per_block)
        try:
            for start in range(0, geo.num_blocks, per_batch):
                blocks = range(start, min(start + per_batch, geo.num_blocks))
                BatchExecutor(kernel, geo, blocks, words, self.memory, self.config, warp_counts,
                              thread_counts, budget, records).run()
        except KernelFault:
            if records is not None:  # keep what retired before the fault: it is what one debugs
                self.traces.append(self._trace(kernel, geo, words, records, partial=True))
            raise
        stats = self._end_launch(kernel, geo, warp_counts, thread_counts)
        result_trace = None
        if records is not None:
            result_trace = self._trace(kernel, geo, words, records)
            self.traces.append(result_trace)
        return LaunchResult(stats, result_trace)

    def _begin_launch(self, kernel: Kernel, grid, block, params: Sequence):
        """Log and check a launch; returns its geometry, parameter words and zeroed per-pc counters."""
        if not isinstance(kernel, Kernel):
            if isinstance(kernel, Module):
                raise ConfigError(f"launch takes one kernel, not the module {kernel.path} (kernels "
                                  f"{', '.join(kernel.kernels)}): pass module.only or module[name]")
            raise ConfigError(f"launch takes a Kernel, not {type(kernel).__name__}")
        if not isinstance(params, (Sequence, np.ndarray)) or isinstance(params, (str, bytes)):
            raise ConfigError(f"launch of {kernel.name!r}: params must be a list of parameter values "
                              f"({', '.join(kernel.params) or 'none'}), not {type(params).__name__}")
        self.launches.append(LaunchRecord(kernel.name, grid, block, list(params)))
        geo = Geometry(_dim3(grid, "grid"), _dim3(block, "block"), self.config.warp_size)
        words = self._check_launch(kernel, geo, params)
        n = len(kernel.code)
        return geo, words, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)

    def _end_launch(self, kernel: Kernel, geo: Geometry, warp_counts: np.ndarray,
                    thread_counts: np.ndarray) -> LaunchStats:
        """The launch's statistics from its per-pc counters, kept in ``history``."""
        stats = LaunchStats.from_counts(kernel, warp_counts, thread_counts, blocks=geo.num_blocks,
                                        threads=geo.num_blocks * geo.threads_per_block,
                                        warps=geo.num_blocks * geo.warps_per_block,
                                        warp_size=geo.warp_size)
        self.history.append(stats)
        return stats

    def _trace(self, kernel: Kernel, geo: Geometry, words: np.ndarray, records: list[TraceRecord],
               partial: bool = False) -> Trace:
        config = {"functional": self.config.to_dict(), "grid": list(geo.grid), "block": list(geo.block),
                  "params": [int(w) for w in words]}
        if kernel.form is Form.DFLOW:
            config.update(ring=kernel.ring, dmax=kernel.dmax)
            if kernel.hands:  # one ring per hand (Variant.HANDS); absent otherwise, so other traces are unchanged
                config["rings"] = list(kernel.rings)
        if partial:
            config["partial"] = True  # the launch faulted after these records
        return Trace(kernel.name, kernel.form.value, geo.warp_size, config, records)

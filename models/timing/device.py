"""``TimingDevice``: the functional model's host API with the timing model underneath.

Host drivers (the workloads' ``execute``) run unchanged: every ``launch`` is simulated on the
GPU model, which executes each instruction in the functional model when it issues, so memory
results are the functional model's; the per-launch timing is kept in ``timing``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from dualflow.errors import ConfigError
from dualflow.isa import Kernel
from dualflow.models.config import FunctionalConfig
from dualflow.models.device import Device, LaunchRecord, LaunchResult, _dim3
from dualflow.models.executor import Geometry
from dualflow.models.stats import LaunchStats

from .config import GpuConfig
from .gpu import Gpu
from .stats import TimingStats


class TimingDevice(Device):
    """A device whose launches run on the cycle-level GPU model."""

    def __init__(self, config: GpuConfig, functional: FunctionalConfig | None = None, *,
                 record_issue: bool = False):
        functional = functional or FunctionalConfig(warp_size=config.sm.warp_size)
        super().__init__(functional)
        self.gpu_config = config
        self.gpu = Gpu(config, record_issue=record_issue)
        self.timing: list[TimingStats] = []
        self.sim_seconds = 0.0  # wall time spent simulating launches

    def launch(self, kernel: Kernel, grid: int | Sequence[int], block: int | Sequence[int],
               params: Sequence = (), *, trace: bool | None = None) -> LaunchResult:
        if trace:
            raise ConfigError("the timing device does not record retirement traces; use the functional Device")
        self.launches.append(LaunchRecord(kernel.name, grid, block, list(params)))
        geo = Geometry(_dim3(grid, "grid"), _dim3(block, "block"), self.config.warp_size)
        words = self._check_launch(kernel, geo, params)
        n = len(kernel.code)
        warp_counts = np.zeros(n, dtype=np.int64)
        thread_counts = np.zeros(n, dtype=np.int64)
        start = time.perf_counter()
        timing = self.gpu.run(kernel, geo, words, self.memory, self.config, warp_counts, thread_counts)
        self.sim_seconds += time.perf_counter() - start
        stats = LaunchStats.from_counts(kernel, warp_counts, thread_counts, blocks=geo.num_blocks,
                                        threads=geo.num_blocks * geo.threads_per_block,
                                        warps=geo.num_blocks * geo.warps_per_block, warp_size=geo.warp_size)
        self.history.append(stats)
        self.timing.append(timing)
        return LaunchResult(stats, None)

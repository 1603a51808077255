"""``TimingDevice``: the functional model's host API with the timing model underneath.

Host drivers (the workloads' ``execute``) run unchanged: every ``launch`` is simulated on the
GPU model, so memory results are the functional model's; the per-launch timing is kept in
``timing``. Two engines give the same results: ``"compiled"`` (the default,
dualflow/models/timing/compiled/engine.py) runs the launch functionally first and times the recorded
instruction streams in compiled code; ``"reference"`` (dualflow/models/timing/gpu.py) executes each
instruction in the functional model when it issues, in Python, and is what the compiled engine
is checked against.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from dualflow.common.errors import ConfigError
from dualflow.isa import Kernel
from dualflow.machine.config import GpuConfig
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import check_implemented
from dualflow.models.device import Device, LaunchResult

from .gpu import TIMING_MODES, Gpu
from .stats import TimingStats

#: The timing engines (``TimingDevice(engine=...)``).
ENGINES = ("reference", "compiled")


class TimingDevice(Device):
    """A device whose launches run on the cycle-level GPU model."""

    def __init__(self, config: GpuConfig, functional: FunctionalConfig | None = None, *,
                 record_issue: bool = False, record_dram: bool = False, engine: str = "compiled"):
        if engine not in ENGINES:
            raise ConfigError(f"unknown timing engine {engine!r} (have: {', '.join(ENGINES)})")
        check_implemented(config.mode, TIMING_MODES, "the timing model")  # before either engine reads it
        functional = functional or FunctionalConfig(warp_size=config.sm.warp_size)
        super().__init__(functional)
        self.gpu_config = config
        self.engine = engine
        if engine == "compiled":
            from .compiled.engine import CompiledGpu  # imports numba: only when asked for

            self.gpu = CompiledGpu(config, record_issue=record_issue, record_dram=record_dram)
        else:
            self.gpu = Gpu(config, record_issue=record_issue, record_dram=record_dram)
        self.timing: list[TimingStats] = []
        self.sim_seconds = 0.0  # wall time spent simulating launches
        #: called after each launch with its ``TimingStats`` and wall seconds (a progress bar)
        self.on_launch: Callable[[TimingStats, float], None] | None = None

    def launch(self, kernel: Kernel, grid: int | Sequence[int], block: int | Sequence[int],
               params: Sequence = (), *, trace: bool | None = None) -> LaunchResult:
        if trace:
            raise ConfigError("the timing device does not record retirement traces; use the functional Device")
        geo, words, warp_counts, thread_counts = self._begin_launch(kernel, grid, block, params)
        start = time.perf_counter()
        timing = self.gpu.run(kernel, geo, words, self.memory, self.config, warp_counts, thread_counts)
        seconds = time.perf_counter() - start
        self.sim_seconds += seconds
        if self.on_launch is not None:
            self.on_launch(timing, seconds)
        stats = self._end_launch(kernel, geo, warp_counts, thread_counts)
        self.timing.append(timing)
        return LaunchResult(stats, None)

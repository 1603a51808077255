"""Run one workload on the performance model and check it, as one JSON-ready result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dualflow.experiments.progress import LaunchProgress
from dualflow.isa import Form
from dualflow.isa.convert.options import DEFAULT_CONVERSION, ConversionOptions
from dualflow.kernels.mode_form import kernel_form
from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import WorkloadRun, run_workload
from dualflow.machine.config import GpuConfig
from dualflow.machine.functional import FunctionalConfig
from dualflow.models.statistic import merge_launches
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.stats import TimingStats


@dataclass
class SimResult:
    """A checked workload run with its timing, per kernel and in total."""

    workload: str
    size: str
    seed: int
    config: GpuConfig
    run: WorkloadRun = field(repr=False)
    total: TimingStats
    by_kernel: dict[str, TimingStats]
    wall_seconds: float  # simulating the launches (not generating inputs, converting or checking)

    @property
    def cycles(self) -> int:
        return self.total.cycles

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload, "size": self.size, "seed": self.seed, "mode": self.config.mode,
            "check": self.run.verdict,
            "functional": self.run.total.to_dict(),
            "timing": self.total.to_dict(),
            "kernels": {name: t.to_dict() for name, t in self.by_kernel.items()},
            "wall_seconds": round(self.wall_seconds, 3),
            "config": self.config.to_dict(),
        }


def simulate(name: str, config: GpuConfig, size: str = "small", seed: int = 1,
             params: dict[str, Any] | None = None, max_instructions: int | None = None,
             progress: bool = False, engine: str = "compiled",
             conversion: ConversionOptions = DEFAULT_CONVERSION) -> SimResult:
    """Run workload ``name`` (in the form of its mode's kernels: REG on BASE, DFLOW on D-FLOW,
    converted with the ``conversion`` options) on the GPU ``config``;
    ``max_instructions``: each launch's instruction budget (default: ``FunctionalConfig``'s rule);
    ``progress``: a progress bar per launch on standard error (when it is a terminal);
    ``engine``: the timing engine (``TimingDevice``'s; both give the same result)."""
    workload = get_workload(name)
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size,
                                                   max_warp_instructions=max_instructions), engine=engine)
    form = kernel_form(config.mode)
    bar = LaunchProgress(f"{workload.name} ({size}, {config.mode})") if progress else None
    device.on_launch = bar
    try:
        run = run_workload(workload, size=size, form=form, seed=seed, params=params, device=device,
                           conversion=conversion if form is Form.DFLOW else DEFAULT_CONVERSION)
    finally:
        if bar is not None:
            bar.close()
    wall = device.sim_seconds
    total, by_kernel = merge_launches(device.timing)
    return SimResult(workload.name, size, seed, config, run, total, by_kernel, wall)

"""Speed of the timing streams' pre-run (``build_streams``) against the functional model alone.

Runs workloads in both forms, several times, and prints median rates in thread-instructions per
second of launch CPU time (process time, steadier than wall time on a shared machine; input
generation and checks left out), with the size of the largest launch's streams.
Usage: python benchmarks/streams_speed.py [--repeat N] [--size small] [names...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: numpy's elementwise work is single-threaded

from dualflow.isa import Form  # noqa: E402
from dualflow.kernels.registry import get_workload  # noqa: E402
from dualflow.kernels.workload import run_workload  # noqa: E402
from dualflow.machine.config import GpuConfig  # noqa: E402
from dualflow.machine.functional import FunctionalConfig  # noqa: E402
from dualflow.machine.mode import Mode  # noqa: E402
from dualflow.models.device import Device, LaunchResult  # noqa: E402
from dualflow.models.timing.compiled.streams import build_streams  # noqa: E402


class TimedDevice(Device):
    """The functional model, timing its launches."""

    def __init__(self, config: FunctionalConfig):
        super().__init__(config)
        self.seconds = 0.0

    def launch(self, *args, **kwargs) -> LaunchResult:
        start = time.process_time()
        result = super().launch(*args, **kwargs)
        self.seconds += time.process_time() - start
        return result


class StreamsDevice(Device):
    """Builds each launch's streams (and keeps none: only their size)."""

    def __init__(self, config: FunctionalConfig, gpu: GpuConfig):
        super().__init__(config)
        self.gpu = gpu
        self.seconds = 0.0
        self.largest = 0
        self.fallbacks = 0

    def launch(self, kernel, grid, block, params=(), *, trace=None) -> LaunchResult:
        geo, words, warp_counts, thread_counts = self._begin_launch(kernel, grid, block, params)
        l1 = self.gpu.memory.l1
        start = time.process_time()
        streams = build_streams(kernel, geo, words, self.memory, self.config, warp_counts, thread_counts,
                                line_bytes=l1.line_bytes, sector_bytes=l1.sector_bytes,
                                shared_cfg=self.gpu.memory.shared, warp_size=geo.warp_size,
                                local_bytes=kernel.local_bytes)
        self.seconds += time.process_time() - start
        if streams is None:
            self.fallbacks += 1
            raise RuntimeError(f"launch of {kernel.name} falls back to the reference engine")
        self.largest = max(self.largest, streams.nbytes)
        return LaunchResult(self._end_launch(kernel, geo, warp_counts, thread_counts), None)


def measure(name: str, size: str, form: Form, repeat: int) -> tuple[float, float, int, int]:
    """Median rates (functional, streams) in thread-instructions/s, thread instructions, bytes."""
    config = FunctionalConfig()
    rates: dict[str, list[float]] = {"functional": [], "streams": []}
    largest = instructions = 0
    for _ in range(repeat):
        for kind in rates:
            gpu = GpuConfig(mode=Mode.of_form(form))
            dev = TimedDevice(config) if kind == "functional" else StreamsDevice(config, gpu)
            run = run_workload(get_workload(name), size=size, form=form, device=dev)
            instructions = run.total.thread_instructions
            rates[kind].append(instructions / dev.seconds)
            if kind == "streams":
                largest = dev.largest
    return statistics.median(rates["functional"]), statistics.median(rates["streams"]), instructions, largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=["pathfinder", "gaussian"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size", default="small")
    args = parser.parse_args()
    print(f"streams pre-run speed, size {args.size}, median of {args.repeat} runs (launch CPU time only)")
    print(f"{'workload':<11} {'form':<6} {'thread-instr':>13} {'functional M/s':>15} {'streams M/s':>12} "
          f"{'ratio':>6} {'largest streams MB':>19}")
    for name in args.names:
        for form in Form:
            functional, streams, instructions, largest = measure(name, args.size, form, args.repeat)
            print(f"{name:<11} {form.value:<6} {instructions:>13} {functional / 1e6:>15.2f} {streams / 1e6:>12.2f} "
                  f"{streams / functional:>6.2f} {largest / 1e6:>19.1f}")


if __name__ == "__main__":
    main()

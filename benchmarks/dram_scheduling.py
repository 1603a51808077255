"""The reservation model's DRAM scheduling against a queued FR-FCFS controller, on the DRAM
requests of real runs (dualflow/experiments/dram_scheduling.py; docs/memory-system.md, "How far frfcfs is
from a queued FR-FCFS").

Each workload runs whole on the ``paper-rtx3080`` preset with its DRAM requests recorded
(``TimingDevice(record_dram=True)``); they are then served again, at their recorded cycles, four
ways: the reservation model's ``fcfs`` and ``frfcfs`` (the latter reproduces every answer of the
run, which is checked), and a controller with a 64-entry queue per channel under FCFS and FR-FCFS.
The table gives, per way, the reads' latency from the controller (mean, median, 95th percentile,
core cycles), the row-hit rate of all requests, the requests served ahead of an older one of their
bank, and the mean against the run's (``vs run``).

    python benchmarks/dram_scheduling.py [--size paper] [--modes base,dflow] [--queue 64] [workload ...]
"""

from __future__ import annotations

import argparse
import math

from dualflow.experiments.dram_scheduling import QUEUE_ENTRIES, Request, compare, requests_of, reservation
from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.presets import preset
from dualflow.models.timing.device import TimingDevice

WORKLOADS = ("gaussian", "lud", "pathfinder", "nn", "bfs", "hotspot", "nw", "divloop", "reduce", "vadd")


def recorded(workload: str, size: str, mode: str) -> tuple[list[Request], int]:
    """A whole run's DRAM requests, and how many of its reads the reservation replay answers
    differently from the run (0: the replay is the run)."""
    config = preset("paper-rtx3080").replace(mode=mode)
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size), record_dram=True)
    run_workload(get_workload(workload), size=size, form=config.mode.form, device=device)
    requests, answers = requests_of(device.gpu.memory.dram_requests())
    memory = config.memory
    served = reservation(memory.dram, config.core_clock_mhz, memory.l2.line_bytes, requests)
    return requests, sum(1 for a, e in zip(answers, served.ends) if a is not None and math.ceil(e - 1e-9) != a)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=WORKLOADS)
    parser.add_argument("--size", default="paper")
    parser.add_argument("--modes", default="base,dflow")
    parser.add_argument("--queue", type=int, default=QUEUE_ENTRIES, help="queued controller's entries per channel")
    args = parser.parse_args(argv)
    config = preset("paper-rtx3080")
    memory = config.memory
    print(f"paper-rtx3080, size {args.size}, queue {args.queue}; read latency from the controller (core cycles)")
    print(f"{'workload':<11}{'mode':<6}{'requests':>9}  {'served by':<20}{'mean':>8}{'median':>8}{'p95':>8}"
          f"{'row hits':>9}{'reordered':>10}{'vs run':>8}")
    status = 0
    for name in args.workloads:
        for mode in args.modes.split(","):
            requests, mismatched = recorded(name, args.size, mode)
            if mismatched:
                print(f"{name:<11}{mode:<6}the replay differs from the run on {mismatched} reads")
                status = 1
            if not requests:
                print(f"{name:<11}{mode:<6}{0:>9}  no DRAM requests")
                continue
            ways = compare(memory.dram, config.core_clock_mhz, memory.l2.line_bytes, requests, queue=args.queue)
            run = next(w for w in ways if w.name == "reservation frfcfs")
            for w in ways:
                print(f"{name:<11}{mode:<6}{len(requests):>9}  {w.name:<20}{w.mean:>8.1f}{w.median:>8.1f}"
                      f"{w.p95:>8.1f}{w.row_hit_rate:>9.2f}{w.reordered:>10}{w.mean / run.mean:>8.3f}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())

"""Speed of the performance model on the ``paper-rtx3080`` preset (68 SMs).

For each workload and mode: simulated warp-instructions, thread-instructions and cycles per second
of wall time spent simulating launches (input generation, conversion and checks excluded), median
of ``--repeat`` runs; and the peak resident memory of the whole process.

    python benchmarks/timing_speed.py [--size small] [--repeat 3] [workload ...]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys

from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset
from dualflow.models.timing.simulate import simulate

DEFAULT = ("gaussian", "lud", "pathfinder", "nn", "hotspot")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=DEFAULT)
    parser.add_argument("--size", default="small")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"paper-rtx3080, size {args.size}, median of {args.repeat} runs")
    print(f"{'workload':<11}{'mode':<6}{'cycles':>11}{'warp-instr':>12}{'warp-instr/s':>14}"
          f"{'thread-instr/s':>16}{'cycles/s':>11}")
    rates = []
    for name in args.workloads:
        for mode in Mode:
            config = preset("paper-rtx3080").replace(mode=mode)
            runs = [simulate(name, config, size=args.size) for _ in range(args.repeat)]
            wall = statistics.median(r.wall_seconds for r in runs)
            t = runs[0].total
            wi, ti = t.total_warp_instructions, sum(t.thread_instructions.values())
            rates.append(ti / wall)
            print(f"{name:<11}{mode:<6}{t.cycles:>11,}{wi:>12,}{wi / wall:>14,.0f}{ti / wall:>16,.0f}"
                  f"{t.cycles / wall:>11,.0f}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"median thread-instructions/s over all runs: {statistics.median(rates):,.0f}; "
          f"peak resident memory {peak:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

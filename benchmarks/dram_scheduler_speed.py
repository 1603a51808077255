"""Wall time of the compiled timing engine with each DRAM scheduler, side by side.

The queued controllers (``queued-frfcfs``, ``queued-fcfs``) time every read when its bank picks
it, through the memory system's events, where the reservation schedulers (``frfcfs``, ``fcfs``)
answer it when it is made; this measures what that costs. For each workload and mode, every
scheduler runs the same workload in a fresh process on ``paper-rtx3080`` (``timing_speed.measure``:
after a tiny warm-up that loads the compiled code, launches' wall seconds only), ``--repeat``
times, the schedulers' runs interleaved in every round (so that a change of the machine's load
falls on all of them); the table gives the median seconds, the simulated cycles (which the
schedulers change), and each scheduler's time over the first one's.

    python benchmarks/dram_scheduler_speed.py [--size paper] [--repeat 3] [--modes base,dflow]
        [--schedulers frfcfs,queued-frfcfs] [workload ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import timing_speed  # noqa: E402  (the same measurement, in a fresh process)


def in_fresh_process(workload: str, size: str, mode: str, scheduler: str) -> dict:
    args = [workload, size, mode, "compiled", None, {"memory.dram.scheduler": scheduler}]
    out = subprocess.run([sys.executable, timing_speed.__file__, "--worker", json.dumps(args)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=("pathfinder", "hotspot"))
    parser.add_argument("--size", default="paper")
    parser.add_argument("--modes", default="base,dflow")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--schedulers", default="frfcfs,queued-frfcfs")
    args = parser.parse_args(argv)
    schedulers = args.schedulers.split(",")
    print(f"compiled engine, paper-rtx3080, size {args.size}, median of {args.repeat} runs, each in a fresh "
          f"process, the schedulers' runs interleaved")
    head = f"{'workload':<11}{'mode':<6}{'launch':>7}"
    for scheduler in schedulers:
        head += f" | {scheduler:>14}{'cycles':>12}{'x':>7}"
    print(head)
    for name in args.workloads:
        for mode in args.modes.split(","):
            samples: dict[str, list[dict]] = {sch: [] for sch in schedulers}
            for _ in range(args.repeat):
                for scheduler in schedulers:
                    samples[scheduler].append(in_fresh_process(name, args.size, mode, scheduler))
            wall = {sch: statistics.median(r["seconds"] for r in samples[sch]) for sch in schedulers}
            line = f"{name:<11}{mode:<6}{samples[schedulers[0]][0]['launches']:>7}"
            for scheduler in schedulers:
                line += (f" | {wall[scheduler]:>12.2f} s{samples[scheduler][0]['cycles']:>12,}"
                         f"{wall[scheduler] / wall[schedulers[0]]:>6.2f}x")
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

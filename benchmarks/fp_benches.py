"""The FP32 unit's and the SFU's block benches at full size: every directed vector and N random
operand sets per opcode through a 32-lane unit, against dualflow/models/fp32.py, and the expect-fail run
with the injected rounding bug (round toward zero), which must report mismatches.

Prints, per unit: per opcode the directed and random vectors and the lane values compared, the
mismatches, and the wall time (build included); then the injected bug's mismatch count. Exits 1
if a correct unit mismatches or the injected bug goes unseen. The same vectors (seed) give the
same counts. Usage:

    python benchmarks/fp_benches.py [--random 100000] [--simulator verilator|icarus] [--units fpu,sfu]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from dualflow.testbench.blocks.benches import run_block_bench
from dualflow.testbench.blocks.harness import SUMMARY
from dualflow.testbench.fp_vectors import FP_OPS, SFU_OPS, directed

#: The full-size units: 32 lanes at the default timing (``CoreParams``: FP 4 / 1, SFU 21 / 8).
UNITS = {"fpu": ({"warp_size": 32, "fp_latency": 4, "fp_interval": 1}, FP_OPS),
         "sfu": ({"warp_size": 32, "sfu_latency": 21, "sfu_interval": 8}, SFU_OPS)}
SEED = 17
#: Random vectors per opcode of the expect-fail run: enough to meet the truncation many times.
BUG_RANDOM = 2000


def run(name: str, params: dict, simulator: str) -> tuple[dict, float, bool]:
    started = time.perf_counter()
    result = run_block_bench(name, params, seed=SEED, simulator=simulator)
    wall = time.perf_counter() - started
    summary = result.log.parent / SUMMARY
    if not summary.exists():
        sys.exit(f"fp_benches: the {name} bench wrote no {SUMMARY} (simulator died?); log: {result.log}")
    return json.loads(summary.read_text()), wall, result.ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=100_000, help="random vectors per opcode (default 10^5)")
    ap.add_argument("--simulator", default="verilator", choices=("verilator", "icarus"))
    ap.add_argument("--units", default="fpu,sfu")
    args = ap.parse_args()
    status = 0
    for name in args.units.split(","):
        if name not in UNITS:
            sys.exit(f"fp_benches: no unit {name!r} (have: {', '.join(UNITS)})")
        core, ops = UNITS[name]
        summary, wall, ok = run(name, {"core": core, "random": args.random, "directed": None}, args.simulator)
        print(f"{name} ({', '.join(f'{k} {v}' for k, v in core.items())}; {args.simulator}, seed {SEED})")
        print(f"  {'opcode':<8}{'directed':>10}{'random':>10}{'lane values':>14}")
        for op in ops:
            key = op.name.lower()
            print(f"  {key:<8}{len(directed(op)):>10,}{args.random:>10,}{summary['counts'].get(key, 0):>14,}")
        values = sum(summary["counts"].values())
        print(f"  {values:,} lane values, {summary['mismatches']} mismatches, {summary['checked']:,} checks in all "
              f"(values, tags, latencies, ready), {wall:.0f} s wall")
        bug, _, bug_ok = run(name, {"core": core, "random": BUG_RANDOM, "directed": None, "rounding": "toward_zero"},
                             args.simulator)
        print(f"  injected bug (round toward zero, {BUG_RANDOM:,} random per opcode): "
              f"{bug['mismatches']:,} mismatches{'' if not bug_ok else ' -- NOT CAUGHT'}")
        status |= (not ok) or summary["mismatches"] > 0 or bug_ok or bug["mismatches"] == 0
    return int(status)


if __name__ == "__main__":
    sys.exit(main())

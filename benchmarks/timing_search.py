"""The search for D-FLOW timing-model deadlocks: random structured programs (lane-dependent loops,
early exits to shared tails, barrier phases, spills) on the D-FLOW timing model in both engines,
each on a window configuration drawn from its seed (preset, collector units 2..16, window policy,
send-ahead rule, issue order), against the functional model
(dualflow/testbench/randprog/timing_programs.py).

    python benchmarks/timing_search.py --count 10000 -j 2 [--start-seed 1] [--json out.json]

Prints the outcomes (ok, deadlock, mismatch, engines differ, error) in all and per value of each
configuration field (each failure as it happens, and a line of counts every 500 programs); exits 1
if any program failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from dualflow.common.atomic_write import atomic_write
from dualflow.testbench.randprog.timing_programs import run_search


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--start-seed", type=int, default=1)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--json", help="write the counts and the failures here")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    outcomes: dict[str, int] = {}

    def progress(result) -> None:  # a line per 500 programs: what a stopped campaign had reached
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
        done = sum(outcomes.values())
        if done % 500 == 0:
            print(f"[{done}/{args.count}] " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())), flush=True)
        if result.outcome != "ok":
            print("  " + result.summary(), flush=True)

    tally = run_search(range(args.start_seed, args.start_seed + args.count), jobs=args.jobs, progress=progress)
    print(tally.report())
    print(f"wall time: {time.perf_counter() - started:.0f} s")
    if args.json:
        atomic_write(args.json, json.dumps({"total": tally.total, "outcomes": tally.outcomes,
                                            "by_field": tally.by_field,
                                            "failures": [r.summary() for r in tally.failures]}, indent=1) + "\n")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())

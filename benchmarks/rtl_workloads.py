"""Every Rodinia-style workload at ``tiny`` on the RTL core, both modes: does every launch match the
golden model, and what does it cost to simulate?

For each workload and mode, all launches of the host driver run in one simulator process
(``dualflow/testbench/workload_cosim.py``, as ``dualflow cosim --workload NAME`` does) on the smallest core of
8 lanes and at least 16 warps that holds the workload's largest block and, in BASE, its registers
(``workload_cosim.core_for``; ``--lanes`` another warp size). A workload the core cannot run (a
warp-synchronous kernel on narrower warps) is reported as refused, with the reason. Prints one row per
(workload, mode): launches matched, warp instructions (records), core cycles, the simulated run's
seconds and rate (cycles per second, cocotb bench included), and the wall time including the golden
model and any build. Usage:

    python benchmarks/rtl_workloads.py [--workloads vadd,reduce | --suite compiled] [--modes dflow,base]
                                       [--simulator icarus|verilator] [--json out.json]

``--suite hand-written`` (the default) runs the ten hand-written workloads, ``--suite compiled``
the compiled suite (CUDA C through the front end), ``--suite all`` both.
"""

from __future__ import annotations

import argparse
import json
import time

from dualflow.common.atomic_write import atomic_write
from dualflow.common.errors import ConfigError
from dualflow.kernels.registry import COMPILED, HAND_WRITTEN, WORKLOADS
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import run_cosim
from dualflow.testbench.workload_cosim import core_for, workload_cases

SUITES = {"hand-written": list(HAND_WRITTEN), "compiled": list(COMPILED), "all": list(WORKLOADS)}
LANES = 8


def measure(name: str, mode: str, size: str, simulator: str, lanes: int) -> dict:
    started = time.perf_counter()
    wc = workload_cases(name, CoreParams(mode=mode, warp_size=lanes, warps=16), size=size)
    params = core_for(wc, CoreParams(mode=mode, warp_size=lanes, warps=16))
    results = run_cosim(params, wc.cases, simulator=simulator)
    wall = time.perf_counter() - started
    cycles = sum(r.cycles for r in results)
    sim = sum(r.sim_seconds for r in results)
    return {"workload": name, "mode": mode, "size": size, "simulator": simulator, "lanes": lanes, "warps": params.warps,
            "launches": len(results), "matched": sum(r.ok for r in results),
            "records": sum(r.compare.rtl_records for r in results if r.compare), "cycles": cycles,
            "sim_seconds": round(sim, 1), "cycles_per_second": round(cycles / max(sim, 1e-9)),
            "wall_seconds": round(wall, 1), "failures": [r.summary() for r in results if not r.ok][:2]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", help="comma-separated names (default: the --suite)")
    ap.add_argument("--suite", choices=list(SUITES), default="hand-written")
    ap.add_argument("--modes", default="dflow,base")
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--simulator", default="icarus")
    ap.add_argument("--lanes", type=int, default=LANES, help=f"the core's warp size (default {LANES})")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"{'workload':<16}{'mode':<6}{'core':>6}{'launches':>10}{'records':>9}{'cycles':>9}"
          f"{'sim s':>8}{'cyc/s':>7}{'wall s':>8}")
    names = args.workloads.split(",") if args.workloads else SUITES[args.suite]
    for name in names:
        for mode in args.modes.split(","):
            try:
                row = measure(name, mode, args.size, args.simulator, args.lanes)
            except ConfigError as exc:  # a workload this core cannot run: say so, go on
                rows.append({"workload": name, "mode": mode, "size": args.size, "refused": str(exc)})
                print(f"{name:<16}{mode:<6} refused: {exc}", flush=True)
                continue
            rows.append(row)
            core = f"{args.lanes}x{row['warps']}"
            print(f"{name:<16}{mode:<6}{core:>6}{row['matched']:>5} of {row['launches']:<2}"
                  f"{row['records']:>9}{row['cycles']:>9}{row['sim_seconds']:>8}{row['cycles_per_second']:>7}"
                  f"{row['wall_seconds']:>8}", flush=True)
            for failure in row["failures"]:
                print("   ", failure.replace("\n", "\n    "))
    if args.json:
        atomic_write(args.json, json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

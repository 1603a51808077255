"""The compiled suite's figures (docs/workloads.md, "The compiled suite"): per workload compiled
from CUDA C, what the front end made of it and how it runs on the paper's GPU.

    python benchmarks/frontend_suite.py [--size paper] [--preset paper-rtx3080] [-j 2] [NAME ...]

Columns: PTX and REG static instructions (all kernels), registers per thread (the largest kernel),
spilled values; dynamic warp instructions of the D-FLOW forms over REG's (the converter's
original form and the default variant form at BASE's register capacity); BASE, D-FLOW and
variant-form cycles and speedups over BASE; BASE's achieved occupancy and active-SM fraction
(SM-cycles with a resident warp over cycles x SMs). Every run is checked against its numpy
reference. Prints a markdown table; the figures in the docs come from it.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dualflow.experiments.design_points import BASE, DFLOW, VARIANT  # noqa: E402
from dualflow.frontend import CompileOptions, compile_file  # noqa: E402
from dualflow.kernels.registry import WORKLOADS  # noqa: E402


def measure(name: str, size: str, preset_name: str) -> dict:
    from dualflow.experiments.simulate import simulate
    from dualflow.machine.presets import preset

    wl = WORKLOADS[name]
    reports = compile_file(wl.cuda_source, CompileOptions(flags=wl.cuda_flags)).reports.values()
    row = {"name": name, "suite": wl.suite,
           "ptx": sum(r.ptx_instructions for r in reports), "reg": sum(r.reg_instructions for r in reports),
           "registers": max(r.registers for r in reports), "spilled": sum(r.spilled_values for r in reports)}
    config = preset(preset_name)
    for point in (BASE, DFLOW, VARIANT):
        result = simulate(name, config.replace(mode=point.mode.value), size=size, conversion=point.conversion_for(name))
        t = result.total
        row[point.name] = {"cycles": t.cycles, "warp_instructions": result.run.total.warp_instructions,
                           "occupancy": t.to_dict()["achieved_occupancy"]["value"],
                           "active_sms": t.sm_active_cycles / (t.cycles * t.num_sms) if t.cycles else 0.0}
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="workloads (default: every compiled one)")
    parser.add_argument("--size", default="paper")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    names = args.names or [n for n, w in WORKLOADS.items() if w.origin == "compiled"]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(measure, names, [args.size] * len(names), [args.preset] * len(names)))
    print(f"size {args.size}, preset {args.preset}; every run checked against numpy\n")
    print("| workload | suite | PTX | REG | regs | spilled | D/R instr | V/R instr | BASE cycles | D-FLOW x "
          "| variant x | occupancy | active SMs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b, d, v = r["base"], r["dflow"], r["variant"]
        print(f"| {r['name']} | {r['suite']} | {r['ptx']} | {r['reg']} | {r['registers']} | {r['spilled']} | "
              f"{d['warp_instructions'] / b['warp_instructions']:.3f} | "
              f"{v['warp_instructions'] / b['warp_instructions']:.3f} | "
              f"{b['cycles']:,} | {b['cycles'] / d['cycles']:.3f} | {b['cycles'] / v['cycles']:.3f} | "
              f"{b['occupancy']:.3f} | {b['active_sms']:.3f} |")
    filled = sum(1 for r in rows if r["base"]["active_sms"] >= 0.9)
    print(f"\n{filled} of {len(rows)} keep at least 90% of the SMs active in BASE")
    return 0


if __name__ == "__main__":
    sys.exit(main())

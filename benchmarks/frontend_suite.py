"""The compiled suite's figures (docs/workloads.md, "The compiled suite"): per workload compiled
from CUDA C, what the front end made of it and how it runs on the paper's GPU.

    python benchmarks/frontend_suite.py [--size paper] [--preset paper-rtx3080] [-j 2] [NAME ...]
    python benchmarks/frontend_suite.py --results results      # the runs of `dualflow reproduce` instead

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
from dualflow.kernels.registry import WORKLOADS, kernel_set  # noqa: E402


def compiled_row(name: str) -> dict:
    wl = WORKLOADS[name]
    reports = compile_file(wl.cuda_source, CompileOptions(flags=wl.cuda_flags)).reports.values()
    return {"name": name, "suite": wl.suite, "set": kernel_set(name),
            "ptx": sum(r.ptx_instructions for r in reports), "reg": sum(r.reg_instructions for r in reports),
            "registers": max(r.registers for r in reports), "spilled": sum(r.spilled_values for r in reports)}


def point_figures(timing: dict, functional: dict, num_sms: int) -> dict:
    """A run's figures from its statistics as ``to_dict`` writes them (values under "value")."""
    cycles = timing["cycles"]["value"]
    return {"cycles": cycles, "warp_instructions": functional["warp_instructions"]["value"],
            "occupancy": timing["achieved_occupancy"]["value"],
            "active_sms": timing["sm_active_cycles"]["value"] / (cycles * num_sms) if cycles else 0.0}


def measure(name: str, size: str, preset_name: str) -> dict:
    from dualflow.experiments.simulate import simulate
    from dualflow.machine.presets import preset

    row = compiled_row(name)
    config = preset(preset_name)
    for point in (BASE, DFLOW, VARIANT):
        result = simulate(name, config.replace(mode=point.mode.value), size=size,
                          conversion=point.conversion_for(name, config.sm))
        full = result.to_dict()
        row[point.name] = point_figures(full["timing"], full["functional"], config.num_sms)
    return row


def from_results(name: str, results: Path, preset_name: str) -> dict:
    """The figures of ``name`` from a ``dualflow reproduce`` folder's runs (warps 64)."""
    import json

    row = compiled_row(name)
    for point in (BASE, DFLOW, VARIANT):
        path = results / "runs" / preset_name / f"{point.experiment}-{name}-{point.mode.value}-w64.json"
        try:
            full = json.loads(path.read_text())
        except OSError:
            raise SystemExit(f"{path}: not found (run `dualflow reproduce -o {results}` with {name})") from None
        # a run the timing model could not finish (issue 35's deadlock) has no figures
        row[point.name] = (None if "deadlock" in full
                           else point_figures(full["timing"], full["functional"], full["config"]["num_sms"]))
    return row


def json_size(results: Path) -> str:
    import json

    return json.loads((results / "meta.json").read_text())["size"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="workloads (default: every compiled one)")
    parser.add_argument("--size", default="paper")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--results", type=Path, help="read the runs of a `dualflow reproduce` folder")
    args = parser.parse_args(argv)
    names = args.names or [n for n, w in WORKLOADS.items() if w.origin == "compiled"]
    if args.results is not None and not args.names:  # the compiled workloads the folder ran
        names = [n for n in names if (args.results / "runs" / args.preset / f"paper-{n}-base-w64.json").exists()]
    if args.results is not None:
        rows = [from_results(name, args.results, args.preset) for name in names]
        size = json_size(args.results)
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(measure, names, [args.size] * len(names), [args.preset] * len(names)))
        size = args.size
    print(f"size {size}, preset {args.preset}; every run checked against numpy\n")
    print("| workload | suite | set | PTX | REG | regs | spilled | D/R instr | V/R instr | BASE cycles | D-FLOW x "
          "| variant x | occupancy | active SMs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    def ratios(b: dict, other: dict | None) -> tuple[str, str]:  # instructions and speedup over BASE
        if other is None:
            return "deadlock", "deadlock"
        return (f"{other['warp_instructions'] / b['warp_instructions']:.3f}",
                f"{b['cycles'] / other['cycles']:.3f}")

    for r in rows:
        b = r["base"]
        (di, dx), (vi, vx) = ratios(b, r["dflow"]), ratios(b, r["variant"])
        print(f"| {r['name']} | {r['suite']} | {r['set']} | {r['ptx']} | {r['reg']} | {r['registers']} | "
              f"{r['spilled']} | {di} | {vi} | {b['cycles']:,} | {dx} | {vx} | {b['occupancy']:.3f} | "
              f"{b['active_sms']:.3f} |")
    filled = sum(1 for r in rows if r["base"]["active_sms"] >= 0.9)
    print(f"\n{filled} of {len(rows)} keep at least 90% of the SMs active in BASE")
    for which in ("training", "held-back", "all"):
        print(summary(which, [r for r in rows if which in ("all", r["set"])]))
    return 0


def summary(which: str, rows: list[dict]) -> str:
    """One set's line for each D-FLOW form: kernels at least as fast as BASE, the geometric mean
    speedup, the largest instruction ratio over REG (issue 35's bars)."""
    from statistics import geometric_mean

    parts = []
    for point in ("dflow", "variant"):
        done = [r for r in rows if r[point] is not None]
        if not done:
            continue
        speed = [r["base"]["cycles"] / r[point]["cycles"] for r in done]
        ratio = max((r[point]["warp_instructions"] / r["base"]["warp_instructions"], r["name"]) for r in done)
        parts.append(f"{point}: {sum(x >= 1 for x in speed)} of {len(done)} at least as fast as BASE, geomean "
                     f"{geometric_mean(speed):.3f}, largest instruction ratio {ratio[0]:.3f} ({ratio[1]})")
    return f"{which} ({len(rows)}): " + "; ".join(parts)


if __name__ == "__main__":
    sys.exit(main())

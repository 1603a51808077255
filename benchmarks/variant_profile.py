"""Where the default variant form's cycles go against BASE's, per workload (docs/converter.md,
"Cycles at BASE's register capacity": the measurements behind each kernel below 1.0).

Runs each workload in BASE and in the default variant form as ``dualflow reproduce``'s variant
design point converts it (``VARIANT.conversion_for``: its ring on the preset), both checked
against the workload's reference, and prints side by side: cycles and speedup; warp
instructions by unit class; what the warp schedulers did (``TimingStats.stalls``, as fractions
of scheduler-cycles); achieved occupancy; memory traffic (L1 and shared warp accesses, L1 load
transactions and hit rate, local writebacks, L2 read hit rate, DRAM bytes, row-buffer hit rate
and data-bus busy channel-cycles per cycle) and the mean load latency; and the
collector units' occupancy. Every figure is a statistic of the timing model's registry, summed
over launches.

    python benchmarks/variant_profile.py [--size paper] [--preset paper-rtx3080] [-j N] workload ...
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor

from dualflow.cli.options import positive
from dualflow.experiments.design_points import VARIANT
from dualflow.experiments.simulate import simulate
from dualflow.kernels.registry import WORKLOADS, kernel_set
from dualflow.machine.presets import preset
from dualflow.models.timing.stats import STALL_REASONS


def figures(job: tuple[str, str, str, bool]) -> dict[str, float]:
    """One checked run's figures (the variant form when ``job[3]``), flat and named."""
    name, size, preset_name, variant = job
    config = preset(preset_name).replace(mode="dflow" if variant else "base")
    conversion = VARIANT.conversion_for(name, config.sm) if variant else VARIANT.conversion
    t = simulate(name, config, size=size, conversion=conversion).total
    m = {unit: {k: v["value"] for k, v in stats.items() if isinstance(v, dict) and "value" in v}
         for unit, stats in t.memory.items()}  # each memory statistic as the registry writes it
    out: dict[str, float] = {"cycles": t.cycles, "occupancy": t.achieved_occupancy,
                             "collector occupancy": t.collector_occupancy}
    if variant:
        out["ring"] = conversion.ring
    out.update({f"warp-instructions {k}": v for k, v in t.warp_instructions.items() if v})
    scheduler_cycles = sum(t.stalls.values()) or 1
    out.update({f"stall {k}": t.stalls[k] / scheduler_cycles for k in STALL_REASONS if t.stalls.get(k)})
    out.update({"L1 warp accesses": m["l1"]["accesses"], "shared warp accesses": m["shared"]["accesses"],
                "L1 load transactions": m["l1"]["load_transactions"], "L1 load hit rate": m["l1"]["load_hit_rate"],
                "L1 local writebacks": m["l1"]["writebacks"], "DRAM bytes read": m["dram"]["read_bytes"],
                "DRAM bytes written": m["dram"]["write_bytes"], "DRAM row hit rate": m["dram"]["row_hit_rate"],
                "DRAM bus busy / cycle": m["dram"]["busy_cycles"] / max(t.cycles, 1),
                "L2 read hit rate": m["l2"]["read_hit_rate"], "mean load latency": m["loads"]["average_latency"]})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--size", default="paper")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("-j", "--jobs", type=positive, default=1)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}")
    jobs = [(name, args.size, args.preset, variant) for name in args.workloads for variant in (False, True)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(figures, jobs))
    print(f"{args.preset}, size {args.size}: BASE against the default variant form (the variant design point); "
          "stalls as fractions of scheduler-cycles")
    for i, name in enumerate(args.workloads):
        base, variant = runs[2 * i], runs[2 * i + 1]
        print(f"\n{name} ({kernel_set(name)}): speedup {base['cycles'] / variant['cycles']:.3f} at ring "
              f"{variant['ring']}")
        print(f"  {'':<28}{'BASE':>14}{'variant':>14}")
        for key in dict.fromkeys([*base, *variant]):
            if key == "ring":
                continue
            a, b = base.get(key, 0), variant.get(key, 0)
            fmt = ">14.3f" if isinstance(a, float) or isinstance(b, float) else ">14,"
            print(f"  {key:<28}{a:{fmt}}{b:{fmt}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much any latency hiding could gain on a workload: BASE against BASE with k times the
resident threads (docs/converter.md, "What latency hiding can gain").

D-FLOW's out-of-order issue hides a warp's latency with the warp's own independent instructions;
more resident warps hide it with other warps' instructions. A workload that BASE runs no faster
with twice the threads, twice the blocks, twice the register file and twice the shared memory per
SM (all else equal: schedulers, collector units, caches, memory) is not bound by latency its warps
leave exposed, and a latency-hiding scheme cannot speed it up much beyond what it saves in
instructions. Where the grid does not fill the SMs (BASE's occupancy low) more room adds no warps,
and the headroom says nothing: there D-FLOW's own gain is the measure. Prints per workload its
set, BASE's cycles and occupancy, then with k times the room, and the headroom (BASE's cycles
over those); last each set's geometric mean, over all workloads and over those BASE fills at
least half (occupancy 0.5). ``--variant`` adds the default variant form's speedup over BASE on the
unchanged preset (``dualflow reproduce``'s variant design point), measured in the same run.

    python benchmarks/latency_headroom.py [--size paper] [--preset paper-rtx3080] [--factor 2]
                                          [--variant] [-j N] [workload ...]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from statistics import geometric_mean

from dualflow.cli.options import positive
from dualflow.experiments.design_points import VARIANT
from dualflow.experiments.simulate import simulate
from dualflow.kernels.registry import WORKLOADS, kernel_set
from dualflow.machine.config import GpuConfig
from dualflow.machine.presets import preset

#: The SM fields that bound the warps it holds (``machine/footprint.py``), scaled together.
ROOM = ("max_threads", "max_ctas", "registers", "shared_bytes")
#: BASE fills an SM at least this much for its headroom to measure latency (the summary's second line).
FILLED = 0.5


def roomier(config: GpuConfig, factor: int) -> GpuConfig:
    """``config`` with ``factor`` times every field that bounds the warps an SM holds."""
    return config.replace(**{f"sm.{name}": factor * getattr(config.sm, name) for name in ROOM})


def run(job: tuple[str, str, GpuConfig, bool]) -> tuple[int, float]:
    """Cycles and achieved occupancy of one checked run (D-FLOW in the variant form when ``job[3]``)."""
    name, size, config, variant = job
    if variant:
        config = config.replace(mode="dflow")
        result = simulate(name, config, size=size, conversion=VARIANT.conversion_for(name, config.sm))
    else:
        result = simulate(name, config.replace(mode="base"), size=size)
    return result.total.cycles, result.total.achieved_occupancy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=sorted(WORKLOADS))
    parser.add_argument("--size", default="paper")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("--factor", type=positive, default=2, help="the room's multiple (default 2)")
    parser.add_argument("--variant", action="store_true", help="also run the default variant form")
    parser.add_argument("-j", "--jobs", type=positive, default=1)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}")
    config = preset(args.preset)
    kinds = [("base", config, False), ("room", roomier(config, args.factor), False)]
    if args.variant:
        kinds.append(("variant", config, True))
    jobs = [(name, args.size, cfg, variant) for name in args.workloads for _, cfg, variant in kinds]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(((name, kind) for name in args.workloads for kind, _, _ in kinds), pool.map(run, jobs)))
    print(f"{args.preset}, size {args.size}: BASE, and BASE with {args.factor}x "
          f"{', '.join(ROOM)} per SM (room); headroom = BASE cycles / room cycles"
          + ("; variant: the default variant form's speedup over BASE" if args.variant else ""))
    print(f"{'workload':<15}{'set':<10}{'BASE cycles':>12}{'occ.':>7}{'room cycles':>12}{'occ.':>7}{'headroom':>9}"
          + (f"{'variant':>9}" if args.variant else ""))
    rows = []
    for name in args.workloads:
        (base, occ), (room, room_occ) = results[name, "base"], results[name, "room"]
        row = {"set": kernel_set(name), "occupancy": occ, "headroom": base / room}
        line = f"{name:<15}{row['set']:<10}{base:>12,}{occ:>7.3f}{room:>12,}{room_occ:>7.3f}{row['headroom']:>9.3f}"
        if args.variant:
            row["variant"] = base / results[name, "variant"][0]
            line += f"{row['variant']:>9.3f}"
        rows.append(row)
        print(line)
    print()
    for which in ("training", "held-back", "all"):
        for filled in (False, True):
            chosen = [r for r in rows if which in (r["set"], "all") and (not filled or r["occupancy"] >= FILLED)]
            if not chosen:
                continue
            scope = f"{which} ({len(chosen)}{f', BASE occupancy at least {FILLED}' if filled else ''})"
            text = f"  {scope}: headroom geomean {geometric_mean([r['headroom'] for r in chosen]):.3f}"
            if args.variant:
                text += (f"; variant speedup geomean {geometric_mean([r['variant'] for r in chosen]):.3f}, "
                         f"{sum(r['variant'] >= 1 for r in chosen)} at least as fast as BASE")
            print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

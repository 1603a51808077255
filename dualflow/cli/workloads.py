"""Commands that run samples and workloads on the functional model: ``dualflow demo``, ``trace``,
``bench list|run``, ``overhead``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dualflow.common.atomic_write import atomic_write, check_output
from dualflow.common.errors import ConfigError

from .options import MAX_N, add_max_instructions, add_rings, add_variants, int_in, seed, variants_of


def _functional(args):
    """The functional model's configuration of a run: the defaults, with ``--max-instructions``."""
    from dualflow.machine.functional import FunctionalConfig

    return FunctionalConfig(max_warp_instructions=args.max_instructions)


def cmd_demo(args) -> int:
    from dualflow.isa import Form
    from dualflow.kernels.samples import SAMPLES, run_sample

    if args.json is not None:
        check_output(args.json, "--json")
    results = []
    print(f"Sample kernels on the functional model (n = {args.n}, seed {args.seed}); outputs checked "
          "bit-exact against numpy.\n")
    print(f"{'kernel':<9} {'form':<6} {'check':<6} {'warp-instr':>11} {'thread-instr':>13} "
          f"{'SIMD eff.':>9} {'int':>6} {'fp':>6} {'sfu':>5} {'mem':>6} {'ctrl':>6}")
    for name in SAMPLES:
        base = None
        for form in (Form.REG, Form.DFLOW):
            run = run_sample(name, form, n=args.n, seed=args.seed)
            s = run.total
            d = s.to_dict()
            c = {k: v["warp"] for k, v in s.by_class.items()}
            print(f"{name:<9} {form.value:<6} {'ok':<6} {s.warp_instructions:>11} {s.thread_instructions:>13} "
                  f"{d['simd_efficiency']['value']:>9.3f} {c['int']:>6} {c['fp']:>6} {c['sfu']:>5} "
                  f"{c['mem']:>6} {c['ctrl']:>6}")
            if base is None:
                base = s.warp_instructions
            else:
                print(f"{'':<9} {'':<6} DFLOW / REG dynamic warp instructions: {s.warp_instructions / base:.3f}")
            results.append({"sample": name, "form": form.value, "check": "ok", "stats": d})
    if args.json is not None:
        atomic_write(args.json, json.dumps({"n": args.n, "seed": args.seed, "results": results}, indent=1))
        print(f"\nwrote {args.json}")
    return 0


def cmd_trace(args) -> int:
    from dualflow.isa import Form
    from dualflow.kernels.samples import run_sample

    check_output(args.output, "-o")
    run = run_sample(args.sample, Form(args.form), n=args.n, seed=args.seed, trace=True, config=_functional(args))
    run.traces[0].write(args.output)
    if args.output != "-":
        print(f"{args.sample} ({args.form}): {len(run.traces[0].records)} records, check ok; wrote {args.output}")
    return 0


def _stats_line(label: str, s) -> str:
    c = {k: v["warp"] for k, v in s.by_class.items()}
    eff = s.to_dict()["simd_efficiency"]["value"]
    return (f"{label:<18} {s.launches:>6} {s.warp_instructions:>12} {s.thread_instructions:>14} {eff:>6.3f} "
            f"{c['int']:>9} {c['fp']:>9} {c['sfu']:>7} {c['mem']:>9} {c['ctrl']:>9}")


def cmd_bench_list(args) -> int:
    from dualflow.kernels.registry import WORKLOADS, kernel_set

    width = max(map(len, WORKLOADS)) + 1
    for name, wl in WORKLOADS.items():
        sizes = "; ".join(f"{k}: " + ", ".join(f"{p}={v}" for p, v in params.items()) for k, params in wl.sizes.items())
        source = getattr(wl, "cuda_source", None) or wl.source
        print(f"{name:<{width}} {wl.description}")
        print(f"{'':<{width}} from   {wl.origin}, {wl.suite}: {Path(source).name}; {kernel_set(name)} set")
        print(f"{'':<{width}} sizes  {sizes}")
    return 0


def cmd_bench_run(args) -> int:
    from dualflow.isa import Form
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload

    if args.json is not None:
        check_output(args.json, "--json")
    run = run_workload(get_workload(args.name), args.size, Form(args.form), seed=args.seed, config=_functional(args))
    params = ", ".join(f"{k}={v}" for k, v in run.params.items())
    print(f"{run.workload} ({run.form.value}, size {run.size}: {params}; seed {run.seed})")
    print(f"check: ok: {run.verdict}")
    print(f"{'kernel':<18} {'launch':>6} {'warp-instr':>12} {'thread-instr':>14} {'SIMD':>6} "
          f"{'int':>9} {'fp':>9} {'sfu':>7} {'mem':>9} {'ctrl':>9}")
    for name, s in run.by_kernel.items():
        print(_stats_line(name, s))
    if len(run.by_kernel) > 1:
        print(_stats_line("total", run.total))
    if args.json is not None:
        atomic_write(args.json, json.dumps(run.to_dict(), indent=1))
        print(f"wrote {args.json}")
    return 0


def cmd_overhead(args) -> int:
    from dualflow.common.atomic_write import check_folder
    from dualflow.isa.opcodes import Variant
    from dualflow.kernels.overhead import CAUSES, CDF_POINTS, MARKER, cdf, measure, summarize, write_results
    from dualflow.kernels.registry import WORKLOADS, get_workload

    if args.output is not None:
        check_folder(args.output, MARKER, "-o")
    names = args.workloads or list(WORKLOADS)
    for name in names:  # a bad name fails before any work
        get_workload(name)
    if args.capacity is not None and args.rings is not None:
        raise ConfigError("overhead: give --capacity or --rings, not both")
    rows, rings = [], {}
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name} ...", file=sys.stderr, flush=True)
        rings[name] = args.ring if args.capacity is None else _variant_ring(name, args.capacity, args.dmax,
                                                                           variants_of(args))
        rows.extend(measure(name, args.size, dmax=args.dmax, ring=rings[name], seed=args.seed,
                            variants=variants_of(args), rings=args.rings))
    summary = summarize(rows)
    variants = ", ".join(args.variants) or "none"
    ring = (f"ring {args.ring}" if args.capacity is None else
            f"each workload's ring budget as the variant design point chooses it on {args.capacity} "
            "(BASE's register capacity, or more where that spills; listed below)")
    print(f"DFLOW / REG instruction counts, converted with Dmax {args.dmax}, {ring}, variants {variants}, "
          f"size {args.size}")
    print(f"{'workload':<11} {'static':>13} {'dynamic':>21} {'ratio':>6}  " + " ".join(f"{c:>10}" for c in CAUSES)
          + f" {'removed':>10} {'sunk':>10}")
    for name, w in summary.items():
        ratio = w["dynamic_dflow"]["total"] / max(1, w["dynamic_reg"]["total"])
        base = max(1, w["dynamic_reg"]["total"])
        print(f"{name:<11} {w['static_reg']:>5} -> {w['static_dflow']:>5} {w['dynamic_reg']['total']:>9} -> "
              f"{w['dynamic_dflow']['total']:>9} {ratio:>6.3f}  "
              + " ".join(f"{w['added'][c] / base:>10.3f}" for c in CAUSES) + f" {w['removed'] / base:>10.3f}"
              + f" {w['sunk'] / base:>10.3f}")
    print("\n" + "\n".join(_set_lines(summary)))
    if args.capacity is not None:
        print(f"\nring budget per workload on {args.capacity}: " + ", ".join(f"{n} {r}" for n, r in rings.items()))
    if Variant.HANDS in variants_of(args):
        print("\nrings per kernel (hands s, t, u, v in order; their sum is the register file per warp, "
              "in entries per lane)")
        for r in rows:
            print(f"{r.workload:<11} {r.kernel:<24} {' + '.join(map(str, r.rings))} = {sum(r.rings)}")
    if args.loops:
        from dualflow.isa.convert.breakdown import format_breakdown

        print("\nadded instructions per loop (executed; each instruction counts for its innermost loop)")
        for r in rows:
            if any(loop.added for loop in r.loops):
                print(f"{r.workload} {r.kernel}")
                print("\n".join(format_breakdown(r.loops, CAUSES)))
    print(f"\ndynamic operand-distance CDF\n{'workload':<11} " + " ".join(f"<={d:<4}" for d in CDF_POINTS))
    for name, w in summary.items():
        c = cdf(w["distances"])
        print(f"{name:<11} " + " ".join(f"{c[min(d, len(c) - 1)]:<6.3f}" for d in CDF_POINTS))
    if args.output is not None:
        config = {"size": args.size, "dmax": args.dmax, "ring": args.ring if args.capacity is None else rings,
                  "variants": sorted(args.variants), **({"capacity": args.capacity} if args.capacity else {}),
                  **({"rings": list(args.rings)} if args.rings else {}),
                  "seed": args.seed, "workloads": names}
        for path in write_results(rows, Path(args.output), config):
            print(f"wrote {path}")
    return 0


def _variant_ring(name: str, preset_name: str, dmax: int, variants) -> int:
    """The ring budget of ``name`` on a preset as the variant design point chooses it
    (``design_points.variant_ring``), for a conversion with these variants and Dmax."""
    from dualflow.experiments.design_points import variant_ring
    from dualflow.isa import Form
    from dualflow.isa.convert import ConversionOptions
    from dualflow.kernels.registry import get_workload
    from dualflow.machine.presets import preset

    return variant_ring(get_workload(name)().module(Form.REG), preset(preset_name).sm,
                        ConversionOptions(variants, dmax=dmax))


def _set_lines(summary: dict) -> list[str]:
    """Per kernel set (``registry.kernel_set``) of the workloads measured: the largest DFLOW/REG
    ratio, and how many are above 1.05 (issue 35's bar)."""
    from dualflow.kernels.registry import kernel_set

    lines = []
    for which in ("training", "held-back"):
        ratios = {name: w["dynamic_dflow"]["total"] / max(1, w["dynamic_reg"]["total"])
                  for name, w in summary.items() if kernel_set(name) == which}
        if ratios:
            worst = sorted(ratios, key=lambda n: -ratios[n])[:5]
            lines.append(f"{which} set ({len(ratios)}): {sum(r > 1.05 for r in ratios.values())} above 1.05; "
                         "largest " + ", ".join(f"{n} {ratios[n]:.3f}" for n in worst))
    return lines


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the functional-model subcommands on the top-level subparsers."""
    from dualflow.isa.encoding import OPERAND_MAX
    from dualflow.isa.kernel import MAX_RING
    from dualflow.kernels.samples import SAMPLES
    from dualflow.machine.presets import PRESETS

    p = sub.add_parser("demo", help="run the sample kernels in both forms, check them, print statistics")
    p.add_argument("--n", type=int_in(1, MAX_N), default=4096, help=f"problem size (default 4096, at most {MAX_N:,})")
    p.add_argument("--seed", type=seed, default=1, help="input seed (default 1)")
    p.add_argument("--json", help="also write the results as JSON to this file")
    p.set_defaults(func=cmd_demo)

    bench = sub.add_parser("bench", help="workloads: list them, or run one with its reference check")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True, metavar="ACTION")
    p = bench_sub.add_parser("list", help="list the workloads and their sizes")
    p.set_defaults(func=cmd_bench_list)
    p = bench_sub.add_parser("run", help="run one workload in the functional model and check it")
    p.add_argument("name", help="workload name (see `dualflow bench list`)")
    p.add_argument("--size", default="small", help="tiny, small, paper, or another size the workload defines")
    p.add_argument("--form", choices=["reg", "dflow"], default="reg")
    p.add_argument("--seed", type=seed, default=1)
    add_max_instructions(p)
    p.add_argument("--json", help="also write the check result and statistics as JSON to this file")
    p.set_defaults(func=cmd_bench_run)

    p = sub.add_parser("overhead", help="instruction overhead and operand distances of converted workloads")
    p.add_argument("workloads", nargs="*", help="workload names (default: all)")
    p.add_argument("--size", default="small")
    p.add_argument("--dmax", type=int_in(1, OPERAND_MAX), default=31, help=f"default 31, at most {OPERAND_MAX}")
    p.add_argument("--ring", type=int_in(2, MAX_RING), default=32, help=f"default 32, at most {MAX_RING:,}")
    p.add_argument("--seed", type=seed, default=1)
    p.add_argument("--loops", action="store_true", help="also print, per kernel, the added instructions per loop")
    p.add_argument("--capacity", choices=sorted(PRESETS), default=None, metavar="PRESET",
                   help="instead of --ring: each workload's ring budget on this preset as `dualflow reproduce`'s "
                        "variant form has it: at BASE's register capacity (the SM's register file per thread at "
                        "full occupancy, or BASE's registers per thread where more), or larger where that spills")
    add_variants(p)
    add_rings(p)
    p.add_argument("-o", "--output", help="folder for CSV (incl. loops.csv), JSON and the CDF plot")
    p.set_defaults(func=cmd_overhead)

    p = sub.add_parser("trace", help="run one sample and write its retirement trace (JSON lines)")
    p.add_argument("sample", choices=sorted(SAMPLES))
    p.add_argument("--form", choices=["reg", "dflow"], default="dflow")
    p.add_argument("--n", type=int_in(1, MAX_N), default=256, help=f"problem size (default 256, at most {MAX_N:,})")
    p.add_argument("--seed", type=seed, default=1)
    add_max_instructions(p)
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=cmd_trace)

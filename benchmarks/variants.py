"""DFLOW variants on the timing model: BASE, the converted original DFLOW form and each variant,
side by side (docs/converter.md, "Variants").

Every workload runs on ``--preset`` (default ``paper-rtx3080``) in BASE (REG form) and in D-FLOW
with its kernels converted by the converter (default Dmax and ring) without variants, with each
variant alone and with all of them together (``VARIANTS``; the hand-written DFLOW forms of the
samples are not used, so that every column is the converter's); each run is checked against the
workload's reference. The table gives cycles, warp-instructions and the speedup over BASE.
``--capacity`` prints instead the register-file capacity one warp holds in each form
(``dualflow/machine/footprint.py``'s rule: BASE the most registers any kernel uses, D-FLOW its kernels'
rings; bytes = entries x lanes x 4), no runs.
``--equal-capacity`` converts each workload for a ring of BASE's registers per thread (Dmax one
less, at least the converter's minimum), so both modes hold the same register file per warp, and
adds the DFLOW/REG instruction ratio.
``--sweep 16,20,24,...`` sweeps the register-file capacity instead: each workload converted for
each ring budget (entries per warp; Dmax min(31, budget - 1), at least the converter's minimum;
a budget the converter refuses is skipped, with its reason), every column (default original and
all) run on the preset's register file per SM, where the timing model fits as many warps as the
footprint (``entries_per_warp``) allows, and BASE with its own registers. Per workload: BASE's
cycles, entries and bytes per warp and occupancy; per budget, each column's speedup over BASE
and the occupancy of its run (mean resident warps per SM over SM-cycles with work, and that over
the most warps an SM holds); last, the smallest budget at which each column is at least as fast
as BASE (entries, bytes per warp and their ratio to BASE's), or "never in the swept range".
``--variant-ring`` runs the default variant form (column ``all``) as ``dualflow reproduce``'s
variant design point converts it: each workload at its ring at BASE's register capacity
(``design_points.capacity_ring``) and at the ring the point chooses (``variant_ring``: larger
where the capacity ring spills), with each one's speedup, occupancy and the two sets' counts.
``-j N`` runs the runs on N processes (the output does not depend on N); ``--set
KEY=VALUE`` changes the preset (``dualflow sim``'s ``--set``, for example ``num_sms=1``).

    python benchmarks/variants.py [--size small] [--preset paper-rtx3080] [--set KEY=VALUE ...]
                                  [--capacity | --equal-capacity | --sweep BUDGETS | --variant-ring]
                                  [-j N]
                                  [--columns original,all] [workload ...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from statistics import geometric_mean
from typing import NamedTuple

from dualflow.cli.options import int_list, positive
from dualflow.cli.timing import parse_settings
from dualflow.common.errors import ConfigError, DualflowError
from dualflow.experiments.design_points import VARIANT, capacity_ring, variant_ring
from dualflow.isa import DEFAULT_DMAX, DEFAULT_RING, Form, Module, Variant
from dualflow.isa.convert import VARIANTS as CONVERTER_VARIANTS
from dualflow.isa.convert import ConvertError, convert_module
from dualflow.isa.convert.codegen import MIN_DMAX
from dualflow.isa.kernel import MAX_RING
from dualflow.kernels.registry import WORKLOADS, kernel_set
from dualflow.kernels.workload import run_workload, with_dflow_form
from dualflow.machine.config import GpuConfig
from dualflow.machine.footprint import entries_per_warp
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.presets import preset
from dualflow.models.statistic import merge_launches
from dualflow.models.timing.device import TimingDevice
from dualflow.models.timing.gpu import BlockDoesNotFit

#: The variants timed: every one the converter uses.
TIMED_VARIANTS = CONVERTER_VARIANTS
#: The columns after BASE: the original form, each variant alone, then all of them together.
VARIANTS: tuple[tuple[str, frozenset[Variant]], ...] = (
    ("original", frozenset()), *((v.value, frozenset({v})) for v in Variant if v in TIMED_VARIANTS),
    ("all", TIMED_VARIANTS))
#: Width of a column's cycle count (its header: the column's label and " cycles").
CYCLES_WIDTH = max(len(label) for label, _ in VARIANTS) + 9
#: The columns ``--sweep`` runs unless ``--columns`` says otherwise.
SWEEP_COLUMNS = ("original", "all")


class Run(NamedTuple):
    """One checked run on the timing model: cycles, warp-instructions, and the occupancy the
    timing model had (its statistics, over the SM-cycles with a resident warp): mean resident
    warps per SM, and that over the most warps an SM holds (``achieved_occupancy``)."""

    cycles: int
    instructions: int
    warps: float
    occupancy: float


class SweepJob(NamedTuple):
    """One run of ``--sweep``: BASE when ``label`` is None (``budget`` 0), else the column
    ``label`` converted for a ring budget of ``budget`` entries per warp."""

    name: str
    size: str
    config: GpuConfig
    label: str | None
    budget: int


def run(name: str, size: str, config: GpuConfig, form: Form, module: Module | None) -> Run:
    """One checked run on ``config`` in ``form``'s mode (``module``: the DFLOW form to use)."""
    workload = WORKLOADS[name] if module is None else with_dflow_form(WORKLOADS[name], module)
    config = config.replace(mode="base" if form is Form.REG else "dflow")
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size))
    run_workload(workload, size, form, device=device)
    total, _ = merge_launches(device.timing)
    warps = total.resident_warps / total.sm_active_cycles if total.sm_active_cycles else 0.0
    return Run(total.cycles, total.total_warp_instructions, warps, total.achieved_occupancy)


def base_entries(reg: Module) -> int:
    """Register-file entries (per lane) one warp holds in BASE: the most registers any kernel of
    the workload uses (``entries_per_warp``)."""
    return max(entries_per_warp(k, "base") for k in reg)


def capacity_table(workloads: list[str], warp_size: int) -> str:
    """Bytes of register file one warp holds, BASE against each DFLOW form (``--capacity``)."""
    lines = [f"register-file bytes per warp ({warp_size} lanes): BASE, then each DFLOW form (and its ratio to BASE)",
             f"{'workload':<11}{'BASE':>8}" + "".join(f"{label:>{CYCLES_WIDTH}}" for label, _ in VARIANTS)]
    for name in workloads:
        reg = WORKLOADS[name]().module(Form.REG)
        base = 4 * warp_size * base_entries(reg)
        cells = []
        for _, variants in VARIANTS:
            module, _ = convert_module(reg, variants=variants)
            dflow = 4 * warp_size * max(entries_per_warp(k, "dflow") for k in module)
            cells.append(f"{f'{dflow:,} ({dflow / base:.2f})':>{CYCLES_WIDTH}}")
        lines.append(f"{name:<11}{base:>8,}" + "".join(cells))
    return "\n".join(lines)


def sweep_dmax(budget: int) -> int:
    """Dmax of the conversion for a ring budget: min(DEFAULT_DMAX, budget - 1), at least the
    converter's MIN_DMAX (a budget too small for it is then refused by the converter)."""
    return max(min(DEFAULT_DMAX, budget - 1), MIN_DMAX)


def sweep_run(job: SweepJob) -> Run | str:
    """One run of a sweep (in a worker process). Where the converter refuses the budget, or a block
    does not fit an SM, the reason instead; any other error (a result that differs from the
    reference, a fault) is a DualflowError naming the run (plain, so that it crosses processes)."""
    if job.label is None:
        module = None
    else:
        try:
            module, _ = convert_module(WORKLOADS[job.name]().module(Form.REG), dmax=sweep_dmax(job.budget),
                                       ring=job.budget, variants=dict(VARIANTS)[job.label])
        except ConvertError as exc:
            return f"the converter refuses: {exc}"
    try:
        return run(job.name, job.size, job.config, Form.REG if module is None else Form.DFLOW, module)
    except BlockDoesNotFit as exc:
        return str(exc)
    except DualflowError as exc:
        run_name = f"{job.name} {job.label} at {job.budget}" if job.label else f"{job.name} BASE"
        raise DualflowError(f"{run_name}: {type(exc).__name__}: {exc}") from None


def equal_budget(name: str) -> int:
    """``--equal-capacity``'s ring budget for a workload: BASE's registers per thread, at least
    the converter's smallest."""
    return max(base_entries(WORKLOADS[name]().module(Form.REG)), MIN_DMAX + 1)


def sweep(workloads: list[str], size: str, config: GpuConfig, columns: tuple[str, ...],
          budgets: tuple[int, ...] | Callable[[str], tuple[int, ...]] | None,
          jobs: int = 1) -> dict[tuple[str, str | None, int], Run | str]:
    """Every run of a sweep, keyed (workload, column label, budget), BASE's as (workload, None,
    0), in that order whatever ``jobs`` (processes; progress on stderr). ``budgets`` None: each
    workload's ``equal_budget``; a function: a workload's own budgets."""
    def budgets_of(name: str) -> tuple[int, ...]:
        if budgets is None:
            return (equal_budget(name),)
        return budgets(name) if callable(budgets) else budgets

    todo = [SweepJob(name, size, config, None, 0) for name in workloads]
    todo += [SweepJob(name, size, config, label, budget) for name in workloads for label in columns
             for budget in budgets_of(name)]
    done: dict[tuple[str, str | None, int], Run | str] = {}

    def finish(job: SweepJob, result: Run | str) -> None:
        done[job.name, job.label, job.budget] = result
        print(f"done {len(done)}/{len(todo)}: {job.name} {job.label or 'BASE'}"
              + (f" at {job.budget}" if job.label else ""), file=sys.stderr, flush=True)

    if jobs == 1:
        for job in todo:
            finish(job, sweep_run(job))
    else:
        pool = ProcessPoolExecutor(max_workers=jobs)
        try:
            futures = {pool.submit(sweep_run, job): job for job in todo}
            for future in as_completed(futures):
                finish(futures[future], future.result())
        finally:  # on an error, the runs not yet started are not waited for
            pool.shutdown(wait=False, cancel_futures=True)
    return {(job.name, job.label, job.budget): done[job.name, job.label, job.budget] for job in todo}


def matches_at(speedups: dict[int, float]) -> int | None:
    """The smallest budget at which a column is at least as fast as BASE (speedup at least 1), or
    None when it is at none of those given."""
    return min((budget for budget, speedup in speedups.items() if speedup >= 1.0), default=None)


def sweep_table(results: dict[tuple[str, str | None, int], Run | str], workloads: list[str],
                columns: tuple[str, ...], budgets: tuple[int, ...], config: GpuConfig, title: str) -> str:
    """``--sweep``'s report of ``sweep``'s ``results``: per workload BASE, one row per budget, the
    budgets skipped and why, and where each column matches BASE."""
    lanes, most = config.sm.warp_size, config.sm.max_warps
    lines = [f"{title}, register file {4 * config.sm.registers:,} B per SM, at most {most} warps per SM: "
             f"D-FLOW converted for each ring budget (entries per warp; bytes = entries x {lanes} lanes x 4; "
             f"Dmax min({DEFAULT_DMAX}, budget - 1)); per column its speedup over BASE, the occupancy "
             f"(mean resident warps per SM / {most}, over SM-cycles with work) and the mean resident warps per SM; "
             "it matches BASE at the smallest budget with a speedup of at least 1 (cycles at most BASE's)"]
    cell = max(len(label) for label in columns) + 10  # the column's label and " speedup", 2 spaces
    for name in workloads:
        entries = base_entries(WORKLOADS[name]().module(Form.REG))
        base_bytes = 4 * lanes * entries
        base = results[name, None, 0]
        lines.append("")
        if isinstance(base, str):
            lines.append(f"{name}: BASE does not run: {base}")
            continue
        lines.append(f"{name}: BASE {entries} entries per warp ({base_bytes:,} B), {base.cycles:,} cycles, "
                     f"occupancy {base.occupancy:.3f} ({base.warps:.1f} warps per SM)")
        lines.append(f"{'budget':>8}{'B/warp':>9}{'/BASE':>7}" + "".join(
            f"{label + ' speedup':>{cell}}{'occ.':>7}{'warps':>7}" for label in columns))
        skipped = []
        for budget in budgets:
            cells = []
            for label in columns:
                r = results[name, label, budget]
                if isinstance(r, str):
                    cells.append(f"{'skipped':>{cell}}{'':>14}")
                    skipped.append(f"  skipped {label} at {budget}: {r}")
                else:
                    cells.append(f"{base.cycles / r.cycles:>{cell}.4f}{r.occupancy:>7.3f}{r.warps:>7.1f}")
            lines.append((f"{budget:>8}{4 * lanes * budget:>9,}{budget / entries:>7.2f}" + "".join(cells)).rstrip())
        lines += skipped
        for label in columns:
            at = matches_at({budget: base.cycles / r.cycles for budget in budgets
                             if isinstance(r := results[name, label, budget], Run)})
            where = ("never in the swept range" if at is None else
                     f"{at} entries per warp ({4 * lanes * at:,} B, {at / entries:.2f} of BASE's)")
            lines.append(f"  {label} matches BASE at: {where}")
    lines += set_summaries(results, workloads, columns, budgets)
    return "\n".join(lines)


def set_summaries(results: dict[tuple[str, str | None, int], Run | str], workloads: list[str],
                  columns: tuple[str, ...], budgets: tuple[int, ...]) -> list[str]:
    """Per budget and column, the training and the held-back workloads apart
    (``registry.kernel_set``): how many are at least as fast as BASE and the geometric mean
    speedup (a skipped run counts as not)."""
    lines = ["", "By set (training: the kernels written here; held-back: the independent ones):"]
    for budget in budgets:
        for label in columns:
            parts = []
            for which in ("training", "held-back"):
                speed = []
                for name in workloads:
                    base, r = results[name, None, 0], results[name, label, budget]
                    if kernel_set(name) == which and isinstance(base, Run):
                        speed.append(base.cycles / r.cycles if isinstance(r, Run) else 0.0)
                if speed:
                    mean = geometric_mean(speed) if all(speed) else 0.0
                    parts.append(f"{which} {sum(x >= 1 for x in speed)} of {len(speed)} at least as fast as BASE, "
                                 f"geomean {mean:.3f}")
            lines.append(f"  {label} at {budget}: " + "; ".join(parts))
    return lines


def variant_rings(workloads: list[str], config: GpuConfig) -> dict[str, tuple[int, int]]:
    """Per workload, its ring at BASE's register capacity and the ring the variant design point
    converts it for (``design_points.capacity_ring`` and ``variant_ring``)."""
    rings = {}
    for name in workloads:
        reg = WORKLOADS[name]().module(Form.REG)
        rings[name] = (capacity_ring(reg, config.sm), variant_ring(reg, config.sm, VARIANT.conversion))
        print(f"rings of {name}: {rings[name][0]} at capacity, {rings[name][1]} chosen", file=sys.stderr, flush=True)
    return rings


def variant_ring_table(results: dict[tuple[str, str | None, int], Run | str], rings: dict[str, tuple[int, int]],
                       title: str) -> str:
    """``--variant-ring``'s report: per workload the default variant form at its capacity ring and
    at the ring the design point chooses, then each set's counts and geometric means for both."""
    lines = [f"{title}: the default variant form at BASE's register capacity (capacity_ring) and at the "
             "ring the variant design point chooses (variant_ring); speedup over BASE, occupancy",
             f"{'workload':<15}{'set':<10}{'capacity':>9}{'speedup':>9}{'occ.':>7}{'chosen':>8}{'speedup':>9}"
             f"{'occ.':>7}{'BASE occ.':>10}"]
    speed: dict[tuple[str, str], list[float]] = {}
    for name, (least, chosen) in rings.items():
        base, at_least, at_chosen = results[name, None, 0], results[name, "all", least], results[name, "all", chosen]
        row = f"{name:<15}{kernel_set(name):<10}"
        for ring, r, key in ((least, at_least, "capacity"), (chosen, at_chosen, "chosen")):
            ok = isinstance(r, Run) and isinstance(base, Run)
            x = base.cycles / r.cycles if ok else 0.0
            speed.setdefault((kernel_set(name), key), []).append(x)
            row += f"{ring:>{9 if key == 'capacity' else 8}}" + (f"{x:>9.4f}{r.occupancy:>7.3f}" if ok else
                                                                   f"{'-':>9}{'-':>7}")
        row += f"{base.occupancy:>10.3f}" if isinstance(base, Run) else f"{'-':>10}"
        lines.append(row)
    lines.append("")
    for which in ("training", "held-back", "all"):
        for key in ("capacity", "chosen"):
            xs = [x for (s, k), v in speed.items() if k == key and which in (s, "all") for x in v]
            if xs:
                mean = geometric_mean(xs) if all(xs) else 0.0
                lines.append(f"  {which} at the {key} ring: {sum(x >= 1 for x in xs)} of {len(xs)} at least as fast "
                             f"as BASE, geomean {mean:.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=sorted(WORKLOADS))
    parser.add_argument("--size", default="small")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change a field of the preset (repeatable; for example num_sms=1)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--capacity", action="store_true", help="print the register-file capacity per warp only")
    mode.add_argument("--equal-capacity", action="store_true",
                      help="convert for a ring of BASE's registers per thread (equal register file per warp)")
    mode.add_argument("--sweep", type=int_list(1, MAX_RING), metavar="BUDGETS",
                      help="convert for each of these ring budgets (entries per warp, comma separated) and run "
                           "each at the preset's register file per SM")
    mode.add_argument("--variant-ring", action="store_true",
                      help="the default variant form at each workload's capacity ring and at the ring the "
                           "variant design point chooses")
    parser.add_argument("-j", "--jobs", type=positive, default=1, help="processes of the runs (default 1)")
    parser.add_argument("--columns", help="the DFLOW columns to run, comma separated (default: "
                        + ",".join(label for label, _ in VARIANTS) + "; with --sweep "
                        + ",".join(SWEEP_COLUMNS) + ")")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)} (have: {', '.join(sorted(WORKLOADS))})")
    sizeless = [name for name in args.workloads if args.size not in WORKLOADS[name].sizes]
    if sizeless:
        parser.error(f"size {args.size!r} unknown to {', '.join(sizeless)}")
    try:
        config = preset(args.preset).replace(**parse_settings(args.set))
    except ConfigError as exc:
        parser.error(str(exc))
    columns = VARIANTS
    if args.columns:
        chosen = args.columns.split(",")
        unknown = sorted(set(chosen) - {label for label, _ in VARIANTS})
        if unknown:
            parser.error(f"unknown column {', '.join(unknown)} (have: {', '.join(label for label, _ in VARIANTS)})")
        columns = tuple(c for c in VARIANTS if c[0] in chosen)
    if args.capacity:
        print(capacity_table(args.workloads, config.sm.warp_size))
        return 0
    title = f"{args.preset}{''.join(f' --set {item}' for item in args.set)}, size {args.size}"
    if args.sweep:
        labels = tuple(label for label, _ in columns) if args.columns else SWEEP_COLUMNS
        budgets = tuple(sorted(set(args.sweep)))
        try:
            results = sweep(args.workloads, args.size, config, labels, budgets, args.jobs)
        except DualflowError as exc:  # a run whose results differ from the reference, for one
            print(f"variants.py: error: {exc}", file=sys.stderr)
            return 1
        print(sweep_table(results, args.workloads, labels, budgets, config, title))
        return 0
    if args.variant_ring:
        rings = variant_rings(args.workloads, config)
        try:
            results = sweep(args.workloads, args.size, config, ("all",), lambda name: tuple(sorted(set(rings[name]))),
                            args.jobs)
        except DualflowError as exc:
            print(f"variants.py: error: {exc}", file=sys.stderr)
            return 1
        print(variant_ring_table(results, rings, title))
        return 0
    scope = "rings of BASE's registers per thread" if args.equal_capacity else "the default ring"
    labels = tuple(label for label, _ in columns)
    try:
        results = sweep(args.workloads, args.size, config, labels, None if args.equal_capacity else (DEFAULT_RING,),
                        args.jobs)
    except DualflowError as exc:
        print(f"variants.py: error: {exc}", file=sys.stderr)
        return 1
    print(f"{title}, {scope}: cycles, warp-instructions (and their ratio to BASE's) and speedup over BASE")
    print(f"{'workload':<11}{'ring':>5}{'BASE cycles':>12}" + "".join(
        f"{label + ' cycles':>{CYCLES_WIDTH}}{'instr.':>11}{'ratio':>7}{'speedup':>8}" for label in labels))
    for name in args.workloads:
        ring = equal_budget(name) if args.equal_capacity else DEFAULT_RING
        base = results[name, None, 0]
        cells = []
        for label in labels:
            r = results[name, label, ring]
            if isinstance(r, str) or isinstance(base, str):
                print(f"variants.py: error: {name} {label}: {r if isinstance(r, str) else base}", file=sys.stderr)
                return 1
            cells.append(f"{r.cycles:>{CYCLES_WIDTH},}{r.instructions:>11,}{r.instructions / base.instructions:>7.3f}"
                         f"{base.cycles / r.cycles:>8.3f}")
        print(f"{name:<11}{ring:>5}{base.cycles:>12,}" + "".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""DFLOW variants on the timing model: BASE, the converted original DFLOW form and each variant,
side by side (docs/converter.md, "Variants").

Every workload runs on ``--preset`` (default ``paper-rtx3080``) in BASE (REG form) and in D-FLOW
with its kernels converted by the converter (default Dmax and ring) without variants, with each
variant alone and with all of them together (``VARIANTS``; the hand-written DFLOW forms of the
samples are not used, so that every column is the converter's); each run is checked against the
workload's reference. The table gives cycles, warp-instructions and the speedup over BASE.
``--capacity`` prints instead the register-file capacity one warp holds in each form
(``machine/footprint.py``'s rule: BASE the most registers any kernel uses, D-FLOW its kernels'
rings; bytes = entries x lanes x 4), no runs.
``--equal-capacity`` converts each workload for a ring of BASE's registers per thread (Dmax one
less, at least the converter's minimum), so both modes hold the same register file per warp, and
adds the DFLOW/REG instruction ratio.

    python benchmarks/variants.py [--size small] [--preset paper-rtx3080] [--capacity | --equal-capacity]
                                  [--columns original,all] [workload ...]
"""

from __future__ import annotations

import argparse

from dualflow.isa import DEFAULT_RING, Form, Module, Variant
from dualflow.isa.convert import VARIANTS as CONVERTER_VARIANTS
from dualflow.isa.convert import convert_module
from dualflow.isa.convert.codegen import MIN_DMAX
from dualflow.kernels.registry import WORKLOADS
from dualflow.kernels.workload import run_workload, with_dflow_form
from dualflow.machine.footprint import entries_per_warp
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.presets import preset
from dualflow.models.statistic import merge_launches
from dualflow.models.timing.device import TimingDevice

#: The variants timed: every one the converter uses.
TIMED_VARIANTS = CONVERTER_VARIANTS
#: The columns after BASE: the original form, each variant alone, then all of them together.
VARIANTS: tuple[tuple[str, frozenset[Variant]], ...] = (
    ("original", frozenset()), *((v.value, frozenset({v})) for v in Variant if v in TIMED_VARIANTS),
    ("all", TIMED_VARIANTS))
#: Width of a column's cycle count (its header: the column's label and " cycles").
CYCLES_WIDTH = max(len(label) for label, _ in VARIANTS) + 9


def run(name: str, size: str, preset_name: str, form: Form, module: Module | None) -> tuple[int, int]:
    """Cycles and warp-instructions of one checked run (``module``: the DFLOW form to use)."""
    workload = WORKLOADS[name] if module is None else with_dflow_form(WORKLOADS[name], module)
    config = preset(preset_name).replace(mode="base" if form is Form.REG else "dflow")
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size))
    run_workload(workload, size, form, device=device)
    total, _ = merge_launches(device.timing)
    return total.cycles, total.total_warp_instructions


def capacity_table(workloads: list[str], warp_size: int) -> str:
    """Bytes of register file one warp holds, BASE against each DFLOW form (``--capacity``)."""
    lines = [f"register-file bytes per warp ({warp_size} lanes): BASE, then each DFLOW form (and its ratio to BASE)",
             f"{'workload':<11}{'BASE':>8}" + "".join(f"{label:>{CYCLES_WIDTH}}" for label, _ in VARIANTS)]
    for name in workloads:
        reg = WORKLOADS[name]().module(Form.REG)
        base = 4 * warp_size * max(entries_per_warp(k, "base") for k in reg)
        cells = []
        for _, variants in VARIANTS:
            module, _ = convert_module(reg, variants=variants)
            dflow = 4 * warp_size * max(entries_per_warp(k, "dflow") for k in module)
            cells.append(f"{f'{dflow:,} ({dflow / base:.2f})':>{CYCLES_WIDTH}}")
        lines.append(f"{name:<11}{base:>8,}" + "".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=sorted(WORKLOADS))
    parser.add_argument("--size", default="small")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("--capacity", action="store_true", help="print the register-file capacity per warp only")
    parser.add_argument("--equal-capacity", action="store_true",
                        help="convert for a ring of BASE's registers per thread (equal register file per warp)")
    parser.add_argument("--columns", help="the DFLOW columns to run, comma separated (default: "
                        + ",".join(label for label, _ in VARIANTS) + ")")
    args = parser.parse_args(argv)
    columns = VARIANTS
    if args.columns:
        chosen = args.columns.split(",")
        unknown = sorted(set(chosen) - {label for label, _ in VARIANTS})
        if unknown:
            parser.error(f"unknown column {', '.join(unknown)} (have: {', '.join(label for label, _ in VARIANTS)})")
        columns = tuple(c for c in VARIANTS if c[0] in chosen)
    if args.capacity:
        print(capacity_table(args.workloads, preset(args.preset).sm.warp_size))
        return 0
    scope = "rings of BASE's registers per thread" if args.equal_capacity else "the default ring"
    print(f"{args.preset}, size {args.size}, {scope}: cycles, warp-instructions (and their ratio to BASE's) and "
          "speedup over BASE")
    print(f"{'workload':<11}{'ring':>5}{'BASE cycles':>12}" + "".join(
        f"{label + ' cycles':>{CYCLES_WIDTH}}{'instr.':>11}{'ratio':>7}{'speedup':>8}" for label, _ in columns))
    for name in args.workloads:
        reg = WORKLOADS[name]().module(Form.REG)
        ring = DEFAULT_RING
        if args.equal_capacity:
            ring = max(max(entries_per_warp(k, "base") for k in reg), MIN_DMAX + 1)
        base_cycles, base_instructions = run(name, args.size, args.preset, Form.REG, None)
        cells = []
        for _, variants in columns:
            module, _ = convert_module(reg, dmax=ring - 1, ring=ring, variants=variants)
            cycles, instructions = run(name, args.size, args.preset, Form.DFLOW, module)
            cells.append(f"{cycles:>{CYCLES_WIDTH},}{instructions:>11,}{instructions / base_instructions:>7.3f}"
                         f"{base_cycles / cycles:>8.3f}")
        print(f"{name:<11}{ring:>5}{base_cycles:>12,}" + "".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

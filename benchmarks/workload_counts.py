"""Dynamic warp-instruction counts of every workload at a size (default: paper), in both forms.

Each run is checked against its reference. Prints a table (and wall time per run); this is the
source of the counts recorded in docs/workloads.md. ``--loops`` prints instead, per kernel, where
the converter's added instructions run: per loop and cause (docs/converter.md). Usage:
    python benchmarks/workload_counts.py [--size paper] [--forms reg,dflow] [--loops] [NAME ...]
"""

from __future__ import annotations

import argparse
import time

from dualflow.isa import Form
from dualflow.isa.convert import convert_module
from dualflow.isa.convert.breakdown import format_breakdown, loop_breakdown
from dualflow.kernels.overhead import CAUSES
from dualflow.kernels.registry import WORKLOADS
from dualflow.kernels.workload import run_workload, with_dflow_form


def print_loops(name: str, size: str) -> None:
    """Per kernel of a workload, converted at Dmax 31, the added instructions per loop and cause."""
    wl = WORKLOADS[name]
    reg = wl().module(Form.REG)
    dflow, reports = convert_module(reg)

    Converted = with_dflow_form(wl, dflow)

    run = run_workload(Converted, size, Form.DFLOW)
    for kernel, stats in run.by_kernel.items():
        print(f"{name}/{kernel}: {stats.warp_instructions} DFLOW warp-instructions")
        print("\n".join(format_breakdown(loop_breakdown(reports[kernel], stats.per_pc), CAUSES)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="workloads (default: all)")
    parser.add_argument("--size", default="paper")
    parser.add_argument("--forms", default="reg,dflow")
    parser.add_argument("--loops", action="store_true", help="per-loop breakdown of the converter's overhead")
    args = parser.parse_args()
    if args.loops:
        for name in args.names or list(WORKLOADS):
            print_loops(name, args.size)
        return
    forms = [Form(f) for f in args.forms.split(",")]
    print(f"size {args.size}; DFLOW through the converter (Dmax 31, ring 32) unless hand-written")
    print(f"{'workload':<11} {'launches':>8} " + " ".join(f"{f.value + ' warp-instr':>18} {'s':>6}" for f in forms)
          + ("  DFLOW/REG" if len(forms) == 2 else "") + "  check")
    for name in args.names or list(WORKLOADS):
        counts, cells = [], []
        for form in forms:
            start = time.perf_counter()
            run = run_workload(WORKLOADS[name], args.size, form)
            elapsed = time.perf_counter() - start
            counts.append(run.total.warp_instructions)
            cells.append(f"{run.total.warp_instructions:>18} {elapsed:>6.1f}")
        ratio = f"  {counts[1] / counts[0]:>9.3f}" if len(counts) == 2 else ""
        print(f"{name:<11} {run.total.launches:>8} " + " ".join(cells) + ratio + f"  ok: {run.verdict}", flush=True)


if __name__ == "__main__":
    main()

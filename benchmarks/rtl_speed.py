"""RTL core speed under Icarus (simulated core cycles per second) and its synthesis table.

Runs the directed co-simulation programs (testbench/core/programs.py) on the generated core in
both modes, and reports per program the core cycles, warp instructions retired, IPC, and the
simulator's rate (cycles per wall-clock second of the simulated run, cocotb bench included;
build and golden model excluded). With ``--synth``, also synthesizes both modes with Yosys and
prints cells per block side by side. Usage:

    python benchmarks/rtl_speed.py [--lanes 4 --warps 4] [--programs alu,loop] [--synth] [--json out.json]
"""

from __future__ import annotations

import argparse
import json

from dualflow.atomic_write import atomic_write
from dualflow.isa import Form
from dualflow.rtl.params import CoreParams
from dualflow.testbench.core.programs import PROGRAMS, kernel
from dualflow.testbench.cosim import CosimCase, run_cosim


def measure(params: CoreParams, names: list[str], seed: int) -> list[dict]:
    form = Form.DFLOW if params.dflow else Form.REG
    cases = [CosimCase(n, kernel(n, form, ring=params.ring), PROGRAMS[n].block, PROGRAMS[n].setup, seed=seed)
             for n in names]
    rows = []
    for r in run_cosim(params, cases):
        instructions = r.compare.rtl_records
        rows.append({"program": r.name, "mode": params.mode, "ok": r.ok, "cycles": r.cycles,
                     "warp_instructions": instructions, "ipc": instructions / max(r.cycles, 1),
                     "sim_seconds": r.sim_seconds, "cycles_per_second": r.cycles / max(r.sim_seconds, 1e-9)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=4)
    parser.add_argument("--warps", type=int, default=4)
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated program names")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--synth", action="store_true", help="also synthesize both modes (minutes)")
    parser.add_argument("--json", help="write every figure as JSON")
    args = parser.parse_args()
    names = [n for n in args.programs.split(",") if n]
    rows = []
    for mode in ("base", "dflow"):
        rows += measure(CoreParams(mode=mode, lanes=args.lanes, warps=args.warps), names, args.seed)
    print(f"RTL core under Icarus: {args.lanes} lanes, {args.warps} warps, seed {args.seed}")
    print(f"{'program':<16} {'mode':<6} {'ok':<5} {'cycles':>7} {'warp-instr':>10} {'IPC':>6} {'cycles/s':>9}")
    for row in rows:
        print(f"{row['program']:<16} {row['mode']:<6} {str(row['ok']):<5} {row['cycles']:>7} "
              f"{row['warp_instructions']:>10} {row['ipc']:>6.3f} {row['cycles_per_second']:>9.1f}")
    for mode in ("base", "dflow"):
        mine = [r for r in rows if r["mode"] == mode]
        cycles = sum(r["cycles"] for r in mine)
        seconds = sum(r["sim_seconds"] for r in mine)
        print(f"{mode}: {cycles} cycles in {seconds:.1f} s of simulation = {cycles / max(seconds, 1e-9):.1f} cycles/s")
    out = {"params": {"lanes": args.lanes, "warps": args.warps}, "runs": rows}
    if args.synth:
        from dualflow.synth.yosys import compare_table, synthesize

        reports = {m: synthesize(CoreParams(mode=m, lanes=args.lanes, warps=args.warps)) for m in ("base", "dflow")}
        print(compare_table(reports["base"], reports["dflow"]))
        out["synth"] = {m: r.to_dict() for m, r in reports.items()}
    if args.json:
        atomic_write(args.json, json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

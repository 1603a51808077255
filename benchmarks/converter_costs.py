"""What the REG-to-DFLOW converter costs each workload, in instructions and in cycles.

For every workload (the converter's DFLOW form for all of them, the samples' hand-written DFLOW
kernels aside) and size: the dynamic warp-instruction ratio DFLOW / REG (as `dualflow overhead`
prints it), the local-memory instructions executed (`ldl`, `stl`) in both forms, and the timing
model's cycles on a preset in D-FLOW mode (converted code) and BASE mode (REG code), both runs
checked against the workload's reference. The figures of docs/converter.md ("Latency") come from
this script's output. Usage:

    python benchmarks/converter_costs.py [--sizes tiny,small] [--preset paper-rtx3080]
                                         [--dmax 31 --ring 32] [--json FILE] [NAME ...]
                                         [--load-cost X] [--store-cost X]

``--load-cost``, ``--store-cost``: the converter's LOCAL_LOAD_COST and LOCAL_STORE_COST (what a
local-memory load or store weighs against a relay when it chooses), to measure other weights.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import dualflow.isa.convert.costs as costs
from dualflow.isa import Form, Module, Opcode
from dualflow.isa.convert import convert_module
from dualflow.kernels.registry import WORKLOADS
from dualflow.kernels.workload import run_workload, with_dflow_form
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.presets import preset
from dualflow.models.statistic import merge_launches
from dualflow.models.timing.device import TimingDevice

LOCAL = (Opcode.LDL, Opcode.STL)


def local_instructions(module: Module, by_kernel) -> int:
    """Warp-instructions of ``ldl``/``stl`` executed, from the per-pc counts of each kernel."""
    total = 0
    for name, stats in by_kernel.items():
        code = module[name].code
        total += sum(int(n) for pc, n in enumerate(stats.per_pc) if code[pc].op in LOCAL)
    return total


def measure(name: str, size: str, preset_name: str, dmax: int, ring: int) -> dict:
    wl_cls = WORKLOADS[name]
    reg = wl_cls().module(Form.REG)
    dflow, _ = convert_module(reg, dmax=dmax, ring=ring)

    Converted = with_dflow_form(wl_cls, dflow)  # the converter's DFLOW form, also for samples with hand-written code

    row = {"workload": name, "size": size}
    for mode, form, module in (("base", Form.REG, reg), ("dflow", Form.DFLOW, dflow)):
        config = preset(preset_name).replace(mode=mode)
        device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size))
        run = run_workload(Converted, size=size, form=form, device=device)
        total, _ = merge_launches(device.timing)
        row[mode] = {"warp_instructions": run.total.warp_instructions, "cycles": total.cycles,
                     "local": local_instructions(module, run.by_kernel), "check": run.verdict}
    row["ratio"] = row["dflow"]["warp_instructions"] / row["base"]["warp_instructions"]
    row["speedup"] = row["base"]["cycles"] / row["dflow"]["cycles"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="workloads (default: all)")
    parser.add_argument("--sizes", default="tiny,small")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("--dmax", type=int, default=31)
    parser.add_argument("--ring", type=int, default=32)
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--load-cost", type=float, default=costs.LOCAL_LOAD_COST)
    parser.add_argument("--store-cost", type=float, default=costs.LOCAL_STORE_COST)
    args = parser.parse_args()
    costs.LOCAL_LOAD_COST, costs.LOCAL_STORE_COST = args.load_cost, args.store_cost
    rows = []
    print(f"preset {args.preset}; DFLOW from the converter at Dmax {args.dmax}, ring {args.ring}, local load "
          f"cost {args.load_cost:g}, store cost {args.store_cost:g}; compiled timing engine")
    print(f"{'workload':<11} {'size':<6} {'REG instr':>10} {'DFLOW instr':>11} {'ratio':>6} "
          f"{'ldl/stl REG':>11} {'ldl/stl DFLOW':>13} {'BASE cyc':>9} {'D-FLOW cyc':>10} {'BASE/D-FLOW':>11} {'s':>5}")
    for size in args.sizes.split(","):
        for name in args.names or list(WORKLOADS):
            if size not in WORKLOADS[name].sizes:
                continue
            start = time.perf_counter()
            r = measure(name, size, args.preset, args.dmax, args.ring)
            rows.append(r)
            b, d = r["base"], r["dflow"]
            print(f"{name:<11} {size:<6} {b['warp_instructions']:>10} {d['warp_instructions']:>11} {r['ratio']:>6.3f} "
                  f"{b['local']:>11} {d['local']:>13} {b['cycles']:>9} {d['cycles']:>10} {r['speedup']:>11.3f} "
                  f"{time.perf_counter() - start:>5.1f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()

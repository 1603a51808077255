"""``dualflow synth --liberty LIB``: the core's logic area per block in um^2, memories as macros."""

from __future__ import annotations

import json
import sys

from dualflow.atomic_write import atomic_write
from dualflow.rtl.params import CoreParams
from dualflow.synth.asic import compare_area_table, map_core
from dualflow.synth.liberty import NODE_NM, find_liberty, read_library


def synth_area(args, params: dict[str, CoreParams]) -> int:
    """Map each mode's core to ``args.liberty``; print the table (BASE and DFLOW side by side), ``--json``."""
    library = read_library(find_liberty(args.liberty))
    reports = {}
    for mode, p in params.items():
        reports[mode] = map_core(p, library, node_nm=NODE_NM.get(args.liberty))
        print(f"{mode}: mapped to {library.name} in {reports[mode].seconds:.0f} s", file=sys.stderr)
    if len(reports) == 2:
        print(compare_area_table(reports["base"], reports["dflow"]))
    else:
        (report,) = reports.values()
        for name, block in report.blocks().items():
            print(f"{name:<14} {block['area']:>12,.0f} um^2 {block['flop_area']:>12,.0f} um^2 flip-flops")
        total = report.total()
        memories = "" if total["memory_area"] is None else f", memories {total['memory_area']:,.0f} um^2"
        print(f"total logic {total['area']:,.0f} um^2{memories}; memories: "
              + ", ".join(f"{m.block}.{m.name} {m.macro}" for m in report.memories))
    if args.json is not None:
        atomic_write(args.json, json.dumps({m: r.to_dict() for m, r in reports.items()}, indent=1) + "\n")
    return 0

"""``dualflow synth --liberty LIB``: the core's logic area per block in um^2, memories as macros;
with ``--timing``, also its critical path and achievable clock (OpenSTA on a timing-driven mapping)."""

from __future__ import annotations

import json
import sys

from dualflow.common.atomic_write import atomic_write
from dualflow.rtl.params import CoreParams
from dualflow.synth.asic import compare_area_table, map_core
from dualflow.synth.cacti_build import require_cacti
from dualflow.synth.liberty import NODE_NM, find_liberty, read_library


def _timing(args, params: dict[str, CoreParams], library) -> dict:
    """Each mode's timing (``dualflow/synth/core_timing.py``), printed BASE vs DFLOW or alone."""
    from dualflow.synth.core_timing import compare_timing_table, time_core

    timings = {}
    for mode, p in params.items():
        timings[mode] = time_core(p, library, NODE_NM.get(args.liberty), delay_target_ps=args.delay_target)
        print(f"{mode}: timing-driven mapping in {timings[mode].netlist.seconds:.0f} s, OpenSTA in "
              f"{timings[mode].timing.seconds:.0f} s", file=sys.stderr)
    print()
    if len(timings) == 2:
        print(compare_timing_table(timings["base"], timings["dflow"]))
    else:
        (t,) = timings.values()
        print(f"critical path: {t.timing.worst.summary() if t.timing.worst else 'none'}")
        print(f"achievable clock {t.timing.achievable_period_ns:.2f} ns ({t.timing.frequency_mhz:.1f} MHz); "
              f"macro cycle time {t.timing.min_period_ns:.2f} ns; {t.timing.endpoints:,} endpoints checked")
    return timings


def _scaled(args, library, reports: dict, timings: dict) -> dict:
    """Each mode's logic, memory and core area (and clock, with timing) scaled to ``--scale-to``'s node;
    nothing for a library of unknown node (a Liberty file given by path)."""
    from dualflow.energy import rtl_scaler

    if NODE_NM.get(args.liberty) is None:
        return {}
    scaler = rtl_scaler(NODE_NM.get(args.liberty), library.units.nominal_voltage, args.scale_to)
    print()
    print(scaler.heading)
    out = {}
    for mode, report in reports.items():
        total = report.total()
        memory = total["memory_area"] or 0.0
        figures = {"logic_mm2": scaler.area(total["area"] / 1e6).value, "memory_mm2": scaler.area(memory / 1e6).value,
                   "core_mm2": scaler.area((total["area"] + memory) / 1e6).value}
        line = (f"{mode.upper():<6} logic {figures['logic_mm2']:.4f} mm^2, memories {figures['memory_mm2']:.4f} mm^2, "
                f"core {figures['core_mm2']:.4f} mm^2")
        if mode in timings:
            period = scaler.delay(timings[mode].timing.achievable_period_ns).value
            figures["period_ns"], figures["clock_mhz"] = period, 1000.0 / period
            line += f"; achievable period {period:.3f} ns ({1000.0 / period:,.0f} MHz)"
        print(line)
        out[mode] = {"heading": scaler.heading, **figures}
    return out


def synth_area(args, params: dict[str, CoreParams]) -> int:
    """Map each mode's core to ``args.liberty``; print the table (BASE and DFLOW side by side), ``--json``;
    with ``args.timing``, the critical path and clock too."""
    library = read_library(find_liberty(args.liberty))
    if NODE_NM.get(args.liberty) is not None:
        require_cacti()  # the memories' figures come from it: say so before minutes of mapping, not after
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
    timings = _timing(args, params, library) if args.timing else {}
    scaled = _scaled(args, library, reports, timings)
    if args.json is not None:
        atomic_write(args.json, json.dumps({m: {**r.to_dict(), **({"timing": timings[m].to_dict()} if timings else {}),
                                                **({"scaled": scaled[m]} if scaled else {})}
                                            for m, r in reports.items()}, indent=1) + "\n")
    return 0

"""``dualflow energy``: one workload on the cycle-level GPU model, and the energy of the whole GPU
for that run (energy/), per component with its source."""

from __future__ import annotations

import argparse
import json

from dualflow.common.atomic_write import atomic_write, check_output
from dualflow.common.errors import ConfigError
from dualflow.machine.mode import MODES

from .options import positive, seed


def energy_lines(report) -> list[str]:
    """The report as text: one line per component, then total, power, EDP and the RF share."""
    t = report.table
    lines = [f"  technology {t.technology.node} at {t.technology.vdd} V; register file "
             f"{t.rf_registers:,} registers per SM, {t.rf_area_mm2:.3f} mm^2 per SM (scaled); logic clock "
             f"{t.clock_gating}",
             f"  {'component':<16}{'count':>16}{'energy (nJ)':>14}{'share':>8}"]
    total = report.total_joules
    for c in report.components:
        count = "" if c.count is None else f"{c.count:,.0f}"
        if c.joules is None:
            lines.append(f"  {c.name:<16}{count:>16}{'not modelled':>14}")
        else:
            lines.append(f"  {c.name:<16}{count:>16}{c.joules * 1e9:>14.3f}{100 * c.joules / total:>7.1f}%")
    lines += [f"  total {total * 1e9:,.3f} nJ in {report.seconds * 1e6:,.3f} us: average {report.average_watts:.2f} W, "
              f"EDP {report.edp:.4g} J s; chip (without the board's constant power) {report.chip_joules * 1e9:,.3f} nJ",
              f"  register file: {100 * report.rf_share:.1f}% of the total, {100 * report.rf_dynamic_share:.1f}% of "
              f"the dynamic energy (events, {report.dynamic_joules * 1e9:,.3f} nJ)",
              f"  not modelled (not in the total): {', '.join(report.pending)}"]
    return lines


def table_lines(table) -> list[str]:
    """The energy table as Markdown: each event's energy, each static power, the RF's area."""
    tech = table.technology
    lines = [f"**{table.config_name}**: {tech.node} at {tech.vdd} V; register file {table.rf_registers:,} "
             f"registers per SM; core logic from the RTL runs of {table.mode}, clock {table.clock_gating}", "",
             "| event | one count is | energy (pJ) | source |", "|---|---|---:|---|"]
    for name, e in table.events.items():
        pj = "not modelled" if e.pj is None else f"{e.pj:.4g}"
        lines.append(f"| {name} | {e.unit} | {pj} | {e.source} |")
    lines += ["", "| static power | whole GPU (W) | source |", "|---|---:|---|"]
    for name, p in table.static.items():
        lines.append(f"| {name} | {'not modelled' if p.watts is None else f'{p.watts:.4g}'} | {p.source} |")
    lines += ["", f"Register file per SM: {table.rf_area_mm2:.4f} mm^2 ({table.rf_area_source})"]
    return lines


def cmd_energy(args) -> int:
    from dualflow.energy import energy_table, gpu_energy
    from dualflow.experiments.simulate import simulate

    from .timing import _config

    config = _config(args)
    # no technology or no RTL data: fails before simulating
    table = energy_table(config, args.rf_registers, args.sram_node, clock_gating=args.clock_gating)
    if args.table:
        if args.workload is not None or args.json is not None:
            raise ConfigError("--table prints the energy table alone: give no workload and no --json")
        print("\n".join(table_lines(table)))
        return 0
    if args.workload is None:
        raise ConfigError("give a workload to run (or --table for the energy table alone)")
    if args.json is not None:
        check_output(args.json, "--json")
    result = simulate(args.workload, config, size=args.size, seed=args.seed, progress=True)
    report = gpu_energy(result.total, config, table=table)
    print(f"{result.workload} ({result.size}) on {config.name}, {config.mode}: {result.run.verdict}; "
          f"{result.total.cycles:,} cycles")
    print("\n".join(energy_lines(report)))
    if args.json is not None:
        out = {**result.to_dict(), "energy": report.to_dict()}
        atomic_write(args.json, json.dumps(out, indent=1) + "\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    from dualflow.energy.rtl_events import CLOCK_GATING
    from dualflow.energy.table import DEFAULT_CLOCK_GATING, DEFAULT_SRAM_NODE, SRAM_BASES
    from dualflow.machine.presets import PRESETS

    p = sub.add_parser("energy", help="run one workload on the cycle-level GPU model and print the whole GPU's "
                       "energy per component, average power, EDP and the register file's share (docs/energy.md)")
    p.add_argument("workload", nargs="?", help="workload name (see `dualflow bench list`)")
    p.add_argument("--table", action="store_true", help="print the energy per event and the static powers of the "
                   "GPU, with their sources, and run nothing")
    p.add_argument("--size", default="small", help="workload size (default small)")
    p.add_argument("--mode", choices=MODES, default=None, help="base or dflow (default base)")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None, help="named GPU (default paper-rtx3080)")
    p.add_argument("--config", metavar="FILE", help="the GPU configuration in a JSON file instead of a preset")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a configuration field (repeatable)")
    p.add_argument("--rf-registers", type=positive, default=None, metavar="N",
                   help="build a register file of N 32-bit registers per SM (default the configuration's "
                        "sm.registers)")
    p.add_argument("--sram-node", type=int, choices=sorted(SRAM_BASES), default=DEFAULT_SRAM_NODE,
                   help=f"CACTI node of the SRAM arrays, scaled from there to the GPU's (default {DEFAULT_SRAM_NODE})")
    p.add_argument("--clock-gating", choices=CLOCK_GATING, default=DEFAULT_CLOCK_GATING,
                   help="core-logic clock: 'gated' none beyond the events (a lower bound), 'ungated' the RTL's "
                        "clock on every cycle an SM has work (an upper bound; default "
                        f"{DEFAULT_CLOCK_GATING}; docs/energy.md)")
    p.add_argument("--seed", type=seed, default=1, help="seed of the inputs (default 1)")
    p.add_argument("--json", help="write the run's statistics and the energy report here")
    p.set_defaults(func=cmd_energy)

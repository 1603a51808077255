"""``dualflow power --workload NAME``: dynamic and leakage power per block of the mapped core, from the
switching activity of a gate-level run of the workload, BASE and DFLOW side by side."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dualflow.machine import MODES

from .options import positive, seed

#: Simulators of the gate-level run: Icarus runs the library's UDP cell models as they are.
GATE_SIMULATORS = ("icarus",)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def _workload_value(text: str) -> tuple[str, int]:
    key, sep, value = text.partition("=")
    try:
        if not sep or not key:
            raise ValueError
        return key, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=INTEGER, not {text!r}") from None


def _what_matched(params: dict) -> str:
    """What a run compared with the golden model: the trace, or the memory of a core without one."""
    return "trace" if params.get("trace", True) else "memory (no trace port)"


def _table(runs: dict) -> str:
    """Per block and mode: internal, switching, clock, leakage (uW) and macros, then totals."""
    from dualflow.synth.power import PowerReport

    modes = list(runs)
    reports: dict[str, PowerReport] = {m: runs[m].report for m in modes}
    first = reports[modes[0]]
    lines = [f"power per block, {first.library} at {first.voltage:g} V, {first.clock_mhz:g} MHz, average over the run "
             f"window (uW); internal tables at {first.transition_ns:g} ns input transition; no wires"]
    head = f"{'block':<14}" + "".join(f" {m.upper() + ' ' + k:>15}" for k in ("internal", "switching", "clock",
                                                                             "leakage", "total") for m in modes)
    lines.append(head)
    names = sorted({b for r in reports.values() for b in r.blocks})

    def uw(r: PowerReport, joules: float) -> float:
        return joules / r.seconds * 1e6 if r.cycles else 0.0

    def row(label: str, blocks: dict) -> str:
        cells = []
        for k in ("internal", "switching", "clock", "leakage", "total"):
            for m in modes:
                r, b = reports[m], blocks[m]
                if b is None:
                    cells.append(f" {'-':>15}")
                    continue
                if k == "leakage":
                    value = b.leakage_w * 1e6
                elif k == "total":
                    value = uw(r, b.energy["internal"] + b.energy["switching"] + b.energy["clock"]) + b.leakage_w * 1e6
                else:
                    value = uw(r, b.energy[k])
                cells.append(f" {value:>15,.1f}")
        return f"{label:<14}" + "".join(cells)

    for name in names:
        lines.append(row(name, {m: reports[m].blocks.get(name) for m in modes}))
    totals = {m: reports[m].total() for m in modes}
    lines.append(row("logic total", totals))
    lines.append("")
    lines.append("memory macros (dualflow/synth/sram.py), over the run: accesses from the enables at each clock edge")
    lines.append(f"{'macro':<26}" + "".join(f" {m.upper() + ' ' + k:>14}" for k in ("count", "reads", "writes", "uW")
                                          for m in modes))
    macros = sorted({k for r in reports.values() for k in r.macros})
    for name in macros:
        cells = []
        for k in ("instances", "reads", "writes", "uW"):
            for m in modes:
                info = reports[m].macros.get(name)
                if info is None:
                    cells.append(f" {'-':>14}")
                elif k == "uW":
                    joules = (info["reads"] * info["read_energy_pj"] + info["writes"] * info["write_energy_pj"]) * 1e-12
                    cells.append(f" {uw(reports[m], joules) + info['instances'] * info['leakage_uw']:>14,.1f}")
                else:
                    cells.append(f" {info[k]:>14,}")
        lines.append(f"{name:<26}" + "".join(cells))
    lines.append("")
    for m in modes:
        r, t = reports[m], totals[m]
        macro_j = t.energy["macro_read"] + t.energy["macro_write"] + t.macro_leakage_w * r.seconds
        logic_j = r.energy_j(t) - macro_j
        lines.append(f"{m.upper()}: {r.cycles:,} cycles in the window ({runs[m].bench_cycles:,} by the bench), "
                     f"energy {r.energy_j(t) * 1e9:,.2f} nJ (logic {logic_j * 1e9:,.2f}, memories "
                     f"{macro_j * 1e9:,.2f}), average {r.energy_j(t) / r.seconds * 1e3 if r.cycles else 0:,.2f} mW; "
                     f"default activity on {r.default_nets} of {r.nets} nets, "
                     f"{100 * r.default_energy / r.energy_j(t) if r.cycles else 0:.2f}% of the energy; "
                     f"{_what_matched(runs[m].params)} {'matches' if runs[m].matched else 'DOES NOT MATCH'} "
                     f"the golden model")
    if len(modes) == 2:
        a, b = (reports[m].energy_j(totals[m]) for m in modes)
        lines.append(f"{modes[1].upper()} / {modes[0].upper()} energy: {b / a:.3f}" if a else "")
    return "\n".join(lines)


def _scaled(runs: dict, liberty: str, preset: str) -> str:
    """Each run's dynamic energy and leakage power scaled to ``preset``'s node (the runs were made in
    ``liberty``)."""
    from dualflow.energy import rtl_scaler
    from dualflow.synth.liberty import NODE_NM

    reports = {m: r.report for m, r in runs.items()}
    scaler = rtl_scaler(NODE_NM.get(liberty), next(iter(reports.values())).voltage, preset)
    lines = [scaler.heading]
    for mode, r in reports.items():
        t = r.total()
        leakage = t.leakage_w + t.macro_leakage_w
        lines.append(f"{mode.upper():<6} dynamic energy of the run {scaler.energy(t.dynamic).value * 1e9:,.3f} nJ "
                     f"(measured {t.dynamic * 1e9:,.2f}), leakage {scaler.leakage(leakage).value * 1e6:,.4f} uW "
                     f"(measured {leakage * 1e6:,.1f})")
    return "\n".join(lines)


def _saved_runs(paths: list[str]) -> dict:
    """The runs of ``--json`` files written before, by mode (a later file's mode replaces an earlier's)."""
    from dualflow.common.errors import ConfigError
    from dualflow.synth.power import PowerReport
    from dualflow.testbench.gate_power import RunPower

    runs = {}
    for path in paths:
        try:
            saved = json.loads(Path(path).read_text())
            for mode, d in saved.items():
                runs[mode] = RunPower(mode, PowerReport.from_dict(d), d["matched"], "", d["bench_cycles"],
                                      d["sim_seconds"], 0, d["params"])
        except OSError as e:
            raise ConfigError(f"--from-json {path}: {e.strerror}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ConfigError(f"--from-json {path}: not a `dualflow power --json` file ({e!r})") from None
    return {m: runs[m] for m in MODES if m in runs}


def cmd_power(args) -> int:
    from dualflow.common.atomic_write import atomic_write, check_output
    from dualflow.common.errors import ConfigError
    from dualflow.kernels.registry import get_workload
    from dualflow.synth.liberty import NODE_NM, find_liberty, read_library
    from dualflow.testbench.gate_power import workload_power

    from .rtl import _params

    if args.from_json:
        runs = _saved_runs(args.from_json)
        print(_table(runs))
        print(_scaled(runs, args.liberty, args.scale_to))
        return 0
    if args.workload is None:
        raise ConfigError("power: give --workload NAME (or --from-json FILE ...)")
    if args.json is not None:
        check_output(args.json, "--json")
    get_workload(args.workload)  # an unknown name is an error before anything runs
    library = read_library(find_liberty(args.liberty))
    node_nm = NODE_NM.get(args.liberty)
    if node_nm is None:
        raise ConfigError(f"--liberty {args.liberty}: no known process node, so no SRAM model of its memories "
                          f"(known: {', '.join(NODE_NM)})")
    modes = MODES if args.mode in (None, "both") else (args.mode,)
    if args.netlist and len(modes) != 1:
        raise ConfigError("--netlist is the netlist of one core: give --mode base or --mode dflow with it")

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    runs = {}
    for mode in modes:
        runs[mode] = workload_power(args.workload, _params(args, mode=mode), library, node_nm=node_nm, size=args.size,
                                    seed=args.seed, clock_mhz=args.clock_mhz, netlist=args.netlist,
                                    max_cycles=args.max_cycles, values=dict(args.set or []),
                                    max_block_threads=args.max_block_threads, log=log)
    print(_table(runs))
    print(_scaled(runs, args.liberty, args.scale_to))
    if args.json is not None:
        figures = {m: r.to_dict() for m, r in runs.items()}
        atomic_write(args.json, json.dumps(figures, indent=1) + "\n")
    return 0 if all(r.matched for r in runs.values()) else 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    from dualflow.testbench.gate_power import DEFAULT_CLOCK_MHZ

    from .rtl import _add_param_options, add_scale_option

    p = sub.add_parser("power", help="power per block of the mapped core from a gate-level run of a workload, "
                       "BASE and DFLOW side by side")
    p.add_argument("--workload", metavar="NAME", help="workload whose launches run on the core")
    p.add_argument("--from-json", nargs="+", metavar="FILE", help="instead of running: print the table of runs "
                   "saved with --json (e.g. one file per mode)")
    p.add_argument("--size", default="tiny", help="workload size (default tiny)")
    p.add_argument("--set", type=_workload_value, action="append", metavar="K=V",
                   help="override one of the size's parameters (an integer), e.g. --set canes=60; repeatable")
    p.add_argument("--max-block-threads", type=positive, metavar="N", help="the device's largest block, for a "
                   "workload that sizes its blocks by it (nn): a smaller block fits a core of fewer warps")
    p.add_argument("--liberty", default="osu018", metavar="LIB", help="cell library (default osu018)")
    p.add_argument("--clock-mhz", type=_positive_float, default=DEFAULT_CLOCK_MHZ,
                   help=f"clock of the average power and leakage energy (default {DEFAULT_CLOCK_MHZ:g})")
    p.add_argument("--simulator", default="icarus", choices=GATE_SIMULATORS,
                   help="simulator of the gate-level run (default icarus)")
    p.add_argument("--seed", type=seed, default=1, help="seed of the inputs and of the memory latencies")
    p.add_argument("--max-cycles", type=positive, default=100000, help="give up on a block after this many cycles "
                   "(default 100000)")
    p.add_argument("--netlist", metavar="DIR", help="use this mapped netlist (map_design's out_dir) of the core "
                   "instead of mapping it (one --mode)")
    p.add_argument("--json", help="also write the figures (per block energy per cycle, macro accesses) as JSON")
    _add_param_options(p, mode_choices=(*MODES, "both"))
    add_scale_option(p)
    p.set_defaults(func=cmd_power)

"""Command-line actions of the RTL part: ``dualflow rtl generate``, ``dualflow cosim``, ``dualflow synth``.

Every ``CoreParams`` field is an option (``--warp-size 8``, ``--collector-units 4``, ...); a value the
core cannot take is reported as an error naming the field and the rule, with a non-zero exit.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from dualflow.machine import MODES, SCHEDULERS
from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import SIMULATORS

from .launch import add_launch_options, given_launch_options
from .options import add_max_instructions, add_variants, positive, seed, variants_of

_CHOICES = {"mode": MODES, "scheduler": SCHEDULERS}
#: Help for fields whose default is derived from the others.
_DERIVED = {"shared_banks": "default one per lane, min(warp_size, shared_bytes / 4)",
            "ring": "default 32; with --rings, hand 0's"}
#: Help for on/off fields.
_FLAGS = {"read_check": "DFLOW: trap illegal DFLOW reads (written bits); off builds the core without the check",
          "trace": "the retirement-trace port and the fields only it reads; off builds the core without them",
          "uniform_operands": "DFLOW, .variant uniform-operands: a source field flagged uniform reads a kernel "
                              "parameter word or a uniform special register; off: such words trap ILLEGAL"}


def _add_param_options(p: argparse.ArgumentParser, *, skip: tuple[str, ...] = (),
                       mode_choices: tuple[str, ...] = MODES) -> None:
    p.add_argument("--config", metavar="FILE",
                   help="build the core as one SM of this GPU configuration (JSON, as `dualflow sim --json` "
                        "writes it): warp size, banks, collector units, scheduler, ALU latency and issue limits "
                        "come from its sm section; the other core options still apply")
    for f in dataclasses.fields(CoreParams):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        if f.name == "mode":
            p.add_argument(flag, choices=mode_choices, default=None, help=f"default {f.default}")
        elif f.name in _CHOICES:
            p.add_argument(flag, choices=_CHOICES[f.name], default=None, help=f"default {f.default}")
        elif f.name == "rings":
            p.add_argument(flag, type=int, nargs="+", default=None, metavar="N",
                           help="DFLOW, .variant hands: the ring of each hand (2 to 4 powers of two: one RP per "
                                "hand); default one ring of --ring entries, the original form")
        elif f.type in (bool, "bool"):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                           help=_FLAGS.get(f.name, "") + f" (default {'on' if f.default else 'off'})")
        else:
            p.add_argument(flag, type=int, default=None, metavar="N", help=_DERIVED.get(f.name, f"default {f.default}"))


def _params(args, **override) -> CoreParams:
    """The core the options describe. With ``--config FILE`` (a GPU configuration, as a timing run
    writes it) the core is one SM of that GPU (``CoreParams.from_sm``): the SM's fields come from the
    file, the mode too unless ``--mode`` is given, and only the RTL-only fields are options."""
    from dualflow.common.errors import ConfigError
    from dualflow.rtl.params import SM_FIELDS

    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(CoreParams)
              if getattr(args, f.name, None) is not None}
    values.update(override)
    if getattr(args, "config", None) is None:
        return CoreParams(**values)
    from dualflow.machine import load_config

    gpu = load_config(args.config)
    clash = [name for name in SM_FIELDS if name in values]
    if clash:
        flags = ", ".join("--" + name.replace("_", "-") for name in clash)
        raise ConfigError(f"{flags}: given by --config {args.config} (sm.{SM_FIELDS[clash[0]]}); "
                          f"change the configuration file instead")
    mode = values.pop("mode", gpu.mode)
    warps = values.pop("warps", CoreParams.__dataclass_fields__["warps"].default)
    return CoreParams.from_sm(gpu.sm, mode, warps=warps, **values)


def cmd_generate(args) -> int:
    from dualflow.common.atomic_write import check_output
    from dualflow.rtl.generate import write_core_verilog

    check_output(args.output, "-o")
    params = _params(args)
    path = write_core_verilog(params, args.output, name=args.name)
    print(f"wrote {path} ({params.mode}, {params.warp_size} lanes, {params.warps} warps)")
    return 0


def cmd_cosim(args) -> int:
    from dualflow.common.errors import ConfigError
    from dualflow.testbench.cosim import CosimCase, run_cosim

    from .launch import parse_values, program_launch

    chosen = [name for name, value in (("an assembly file", args.program), ("--workload", args.workload),
                                       ("--random", args.random), ("--random-program", args.random_program))
              if value is not None]
    if len(chosen) != 1:
        raise ConfigError("cosim: give one of an assembly file, --workload NAME, --random N or --random-program SEED"
                          + (f" (not {' and '.join(chosen)})" if chosen else ""))
    if args.netlist is not None and args.workload is None:
        raise ConfigError("--netlist is an option of --workload")
    if args.random is not None or args.random_program is not None:
        from .rtl_random import cmd_random

        return cmd_random(args)
    if args.mode == "both" or args.params is not None or args.fault is not None:
        raise ConfigError("--mode both, --params and --fault are options of --random and --random-program")
    params = _params(args)
    if args.workload is not None:
        from dualflow.testbench.workload_cosim import core_for, summary, workload_cases

        given = given_launch_options(args, allowed=("--value",))
        if given:
            raise ConfigError(f"{', '.join(given)}: options of an assembly file, not of --workload")
        if args.netlist is not None and args.simulator != "icarus":
            raise ConfigError("--netlist runs under Icarus (the cell library's UDP models), not --simulator "
                              f"{args.simulator}")
        wc = workload_cases(args.workload, params, size=args.size, seed=args.seed,
                            values=parse_values(args.value), max_cycles=args.max_cycles,
                            max_instructions=args.max_instructions, variants=variants_of(args))
        params = core_for(wc, params, keep=[name for name in ("warps", "regs", "shared_bytes")
                                                 if getattr(args, name) is not None])
        gate = _gate_level(args.netlist, params) if args.netlist is not None else None
        results = run_cosim(params, wc.cases, report_dir=args.report, max_print=args.max_print,
                            simulator=args.simulator, gate=gate)
        print(summary(wc, results))
        if gate is not None:
            print(f"gate-level run of {args.netlist}; its nets' activity: {gate.vcd}")
        return 0 if all(r.ok for r in results) else 1
    launch = program_launch(args.program, args, mode=params.mode, machine="core",
                            default_block=(params.warp_size * params.warps,), dmax=params.dmax, ring=params.ring)
    case = CosimCase(launch.kernel.name, launch.kernel, launch.block, launch.params, seed=args.seed,
                     max_cycles=args.max_cycles, max_instructions=args.max_instructions, grid=launch.grid)
    (result,) = run_cosim(params, [case], report_dir=args.report, waves=args.waves, max_print=args.max_print,
                          simulator=args.simulator)
    print(result.summary())
    if args.waves and result.waves:
        print(f"waveform: {result.waves}")
    return 0 if result.ok else 1


def _gate_level(netlist: str, params: CoreParams):
    """The mapped netlist in folder ``netlist`` (of ``SimtCore(params)``), ready for a gate-level run."""
    from pathlib import Path

    from dualflow.synth.gate_sim import gate_level
    from dualflow.synth.liberty import find_liberty, read_library
    from dualflow.testbench.gate_power import POWER_BUILD

    return gate_level(netlist, read_library(find_liberty("osu018")), f"core_{params.mode}",
                      POWER_BUILD / f"sim-{Path(netlist).resolve().name}")


def cmd_lint(args) -> int:
    """``dualflow rtl lint``: generate (or take ``--verilog``) and lint; status 1 if anything is left."""
    from dualflow.testbench.verilator import WAIVERS, lint_core, lint_verilog

    waivers = None if args.no_waivers else WAIVERS
    if args.verilog:
        result = lint_verilog(args.verilog, waivers=waivers)
    else:
        result = lint_core(_params(args), out_dir=args.out_dir, waivers=waivers)
    print(result.summary(max_print=args.max_print))
    return 0 if result.ok else 1


def cmd_synth(args) -> int:
    from dualflow.common.atomic_write import atomic_write, check_output
    from dualflow.synth.yosys import compare_table, synthesize

    if args.json is not None:
        check_output(args.json, "--json")
    modes = MODES if args.mode is None else (args.mode,)
    if args.timing and args.liberty is None:
        from dualflow.common.errors import ConfigError

        raise ConfigError("--timing needs --liberty (a standard-cell library to time the core in)")
    if args.liberty is not None:
        from .asic import synth_area

        return synth_area(args, {mode: _params(args, mode=mode) for mode in modes})
    reports = {mode: synthesize(_params(args, mode=mode)) for mode in modes}
    if len(reports) == 2:
        print(compare_table(reports["base"], reports["dflow"]))
    else:
        (report,) = reports.values()
        for block in report.blocks:
            print(f"{block.name:<40} {block.cells * block.instances:>10,} cells {block.memory_bits:>10,} memory bits")
        print(f"total {report.total()}")
    if args.json is not None:
        atomic_write(args.json, json.dumps({m: r.to_dict() for m, r in reports.items()}, indent=1) + "\n")
    return 0


def add_scale_option(p: argparse.ArgumentParser) -> None:
    """``--scale-to PRESET``: the GPU preset whose node the library's figures are also scaled to."""
    from dualflow.energy import TECHNOLOGIES

    p.add_argument("--scale-to", choices=sorted(TECHNOLOGIES), default="paper-rtx3080", metavar="PRESET",
                   help="with --liberty: also print the figures scaled to this GPU preset's node (Stillmaker & Baas; "
                        f"labelled as scaled; {', '.join(sorted(TECHNOLOGIES))}; default paper-rtx3080)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the RTL subcommands on the top-level subparsers."""
    rtl = sub.add_parser("rtl", help="the RTL SIMT core: generate Verilog")
    rtl_sub = rtl.add_subparsers(dest="rtl_command", required=True, metavar="ACTION")
    p = rtl_sub.add_parser("generate", help="write the core's Verilog")
    _add_param_options(p)
    p.add_argument("-o", "--output", required=True, help="Verilog file to write (atomically)")
    p.add_argument("--name", help="top-level module name (default dualflow_core_<mode>)")
    p.set_defaults(func=cmd_generate)
    p = rtl_sub.add_parser("lint", help="generate the core's Verilog and run verilator --lint-only -Wall on it")
    _add_param_options(p)
    from dualflow.testbench.verilator import LINT_BUILD, WAIVERS

    p.add_argument("--verilog", help="lint this Verilog file instead of generating the core")
    p.add_argument("--out-dir", default=str(LINT_BUILD),
                   help=f"folder for the generated Verilog (default {LINT_BUILD})")
    p.add_argument("--no-waivers", action="store_true", help=f"lint without the waivers of {WAIVERS.name}")
    p.add_argument("--max-print", type=int, default=20, help="messages printed (default 20)")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("cosim", help="run a program or a workload on the RTL core and compare with the golden model")
    p.add_argument("program", nargs="?", help="program file (.s, or CUDA .cu / .ptx through the front end); a "
                   "REG-form kernel is converted for a dflow core")
    p.add_argument("--workload", metavar="NAME",
                   help="instead of a program: every launch of a workload's host driver, on a core grown to "
                        "hold its largest block (--warps) and, in BASE, its registers (--regs) unless given")
    p.add_argument("--size", default="tiny", help="workload size (default tiny)")
    add_variants(p)
    from .rtl_random import add_random_options

    add_random_options(p)
    _add_param_options(p, mode_choices=(*MODES, "both"))
    p.add_argument("--seed", type=seed, default=1, help="seed of the inputs and of the memory latencies")
    p.add_argument("--simulator", default="icarus", choices=SIMULATORS,
                   help="HDL simulator (default icarus: the core flattened by Yosys; icarus-hier: as generated)")
    p.add_argument("--max-cycles", type=positive, default=100000, help="give up on a block after this many "
                   "cycles (default 100000); the golden model stops after as many instructions per block")
    add_max_instructions(p)
    p.add_argument("--max-print", type=int, default=10, help="mismatches printed (default 10)")
    p.add_argument("--report", help="folder for the JSON comparison report")
    p.add_argument("--waves", action="store_true", help="also dump a VCD waveform of the run")
    p.add_argument("--netlist", metavar="DIR", help="with --workload: run this mapped netlist of the core (an OSU "
                   "0.18 um netlist kept by map_design(out_dir=DIR)) at gate level instead of the RTL, its nets "
                   "dumped to a VCD")
    add_launch_options(p, block_default="warp_size x warps", title="with an assembly file (--value also with "
                       "--workload: a workload parameter, e.g. nodes=16 for bfs)")
    p.set_defaults(func=cmd_cosim)

    p = sub.add_parser("synth", help="synthesize the core with Yosys: cells per block, BASE and DFLOW side by side")
    _add_param_options(p)
    p.add_argument("--json", help="also write the statistics as JSON")
    p.add_argument("--liberty", metavar="LIB", help="map to a standard-cell library and report area in um^2: "
                   "osu018 (OSU 0.18 um, installed by `make tech`) or a Liberty file")
    from dualflow.synth.boundary import DELAY_TARGET_PS

    p.add_argument("--timing", action="store_true", help="with --liberty: also the critical path and achievable "
                   "clock (a second, timing-driven mapping and OpenSTA; several minutes more per mode)")
    p.add_argument("--delay-target", type=positive, default=DELAY_TARGET_PS, metavar="PS",
                   help=f"ABC's delay target of the timing-driven mapping, ps (default {DELAY_TARGET_PS})")
    add_scale_option(p)
    p.set_defaults(func=cmd_synth)


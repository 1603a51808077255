"""Command-line actions of the performance model: ``dualflow sim`` and ``dualflow reproduce``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from dualflow.common.atomic_write import atomic_write, check_output
from dualflow.common.errors import ConfigError
from dualflow.machine.mode import MODES

from .launch import add_launch_options, given_launch_options
from .options import add_max_instructions, add_variants, int_list, positive, seed, variants_of


def parse_settings(items: list[str]) -> dict[str, Any]:
    """``key=value`` pairs (dotted keys into the configuration tree); values parsed as JSON when
    they can be (numbers, true/false), else kept as text."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set expects key=value (for example sm.max_threads=1024), not {item!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        out[key.strip()] = value
    return out


def _config(args):
    """The GPU of a run: ``--config FILE`` or ``--preset``, in ``--mode`` (default: the file's mode,
    or base), with the ``--set`` changes."""
    from dualflow.machine import load_config
    from dualflow.machine.presets import preset

    if args.config is not None:
        if args.preset is not None:
            raise ConfigError(f"--config {args.config} and --preset {args.preset}: give one machine, not both")
        config = load_config(args.config)
    else:
        config = preset(args.preset or "paper-rtx3080")
    if args.mode is not None:
        config = config.replace(mode=args.mode)
    settings = parse_settings(args.set or [])
    return config.replace(**settings) if settings else config


def _timing_lines(t) -> list[str]:
    """The summary of a timing result: cycles, IPC, where the scheduler cycles went, the register file."""
    stalls = t.stalls
    total = sum(stalls.values()) or 1
    d = t.to_dict()
    return [
        f"  cycles {t.cycles:,}  IPC {t.ipc:.3f}  warp-instructions {t.total_warp_instructions:,}  "
        f"launches {t.launches}",
        "  scheduler cycles: " + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in
                                           sorted(stalls.items(), key=lambda kv: -kv[1]) if v),
        f"  register-file reads {sum(t.rf_reads):,}, bank conflicts {t.rf_bank_conflicts:,}; "
        f"collector occupancy {d['collector_occupancy']['value']:.3f}; "
        f"achieved occupancy {d['achieved_occupancy']['value']:.3f}",
    ]


def cmd_sim(args) -> int:
    if args.json is not None:
        check_output(args.json, "--json", inputs=[args.target])
    from dualflow.frontend.program import is_program

    if is_program(args.target):
        return _sim_program(args)
    given = given_launch_options(args)
    if given:
        raise ConfigError(f"{', '.join(given)}: options of an assembly file (FILE.s), not of workload {args.target}")
    from dualflow.experiments.simulate import simulate
    from dualflow.isa.convert.options import ConversionOptions

    result = simulate(args.target, _config(args), size=args.size or "small", seed=args.seed,
                      max_instructions=args.max_instructions, progress=True, engine=args.engine,
                      conversion=ConversionOptions(variants_of(args)))
    print(f"{result.workload} ({result.size}) on {result.config.name}, {result.config.mode}: {result.run.verdict}")
    print("\n".join(_timing_lines(result.total)))
    for name, k in result.by_kernel.items():
        print(f"  {name}: {k.launches} launches, {k.cycles:,} cycles, IPC {k.ipc:.3f}")
    print(f"  simulated in {result.wall_seconds:.2f} s")
    if args.json is not None:
        atomic_write(args.json, json.dumps(result.to_dict(), indent=1) + "\n")
    return 0


def _sim_program(args) -> int:
    """``dualflow sim FILE.s``: one launch of a kernel of the file on a ``TimingDevice``."""
    from dualflow.machine.functional import FunctionalConfig
    from dualflow.models.timing.device import TimingDevice

    from .launch import format_shape, npy_bytes, output_paths, program_launch

    if args.size is not None:
        raise ConfigError(f"--size: an option of a workload, not of an assembly file ({args.target})")
    config = _config(args)
    launch = program_launch(args.target, args, mode=config.mode, machine="GPU",
                            default_block=(config.sm.warp_size,))
    outputs = output_paths(args.output, launch)
    for name, path in outputs.items():
        inputs = [args.target, *(item.partition("=")[2] for item in args.input)]
        check_output(path, f"--output {name}", inputs=inputs)
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size,
                                                   max_warp_instructions=args.max_instructions),
                            engine=args.engine)
    result = device.launch(launch.kernel, launch.grid, launch.block, launch.params(device))
    (t,) = device.timing
    print(f"{launch.kernel.name} ({args.target}, grid {format_shape(launch.grid)}, block "
          f"{format_shape(launch.block)}) on {config.name}, {config.mode}")
    print("\n".join(_timing_lines(t)))
    print(f"  simulated in {device.sim_seconds:.2f} s")
    for name, path in outputs.items():
        atomic_write(path, npy_bytes(launch.read(device, name)))
        print(f"wrote {path} ({name})")
    if args.json is not None:
        out = {"program": args.target, "kernel": launch.kernel.name, "grid": list(launch.grid),
               "block": list(launch.block), "seed": args.seed, "mode": config.mode,
               "values": launch.values, "inputs": {name: len(a) for name, a in launch.inputs.items()},
               "functional": result.stats.to_dict(), "timing": t.to_dict(),
               "wall_seconds": round(device.sim_seconds, 3), "config": config.to_dict()}
        atomic_write(args.json, json.dumps(out, indent=1) + "\n")
    return 0


def cmd_reproduce(args) -> int:
    from pathlib import Path

    from dualflow.common.atomic_write import check_folder
    from dualflow.experiments.reproduce import MARKER, PRESETS, SUITES, WARPS, reproduce

    if args.workloads and args.suite is not None:
        raise ConfigError("reproduce: name workloads or give --suite, not both")
    check_folder(args.output, MARKER, "-o")
    warps = args.warps or WARPS
    text = reproduce(Path(args.output), size=args.size, seed=args.seed, presets=args.preset or PRESETS,
                     workloads=args.workloads or SUITES[args.suite or "all"], warps=warps, study_sms=args.study_sms,
                     workers=args.jobs)
    print(text, end="")
    print(f"tables, plots and every run's statistics: {args.output}/")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the timing-model subcommands on the top-level subparsers."""
    from dualflow.experiments.reproduce import FIGURE_WORKLOADS, SUITES, WARPS
    from dualflow.experiments.reproduce import PRESETS as REPRODUCE_PRESETS
    from dualflow.machine.presets import PRESETS
    from dualflow.models.timing.device import ENGINES

    p = sub.add_parser("sim", help="run one workload, or a kernel of an assembly file, on the cycle-level GPU "
                       "model and print a summary")
    p.add_argument("target", metavar="WORKLOAD|FILE.s|FILE.cu|FILE.ptx",
                   help="workload name (see `dualflow bench list`), or an assembly file: one launch of its kernel")
    p.add_argument("--size", default=None, help="workload size: tiny, small (default), paper, or another size "
                   "the workload defines")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="base or dflow (default: the configuration file's mode, else base)")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None, help="named GPU (default paper-rtx3080)")
    p.add_argument("--config", metavar="FILE",
                   help="the GPU configuration in a JSON file instead of a preset: a configuration or a "
                        "result with its \"config\" (as --json writes; `dualflow rtl generate --config` "
                        "builds the RTL core of one of its SMs)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a configuration field, e.g. --set sm.max_threads=1024 (repeatable)")
    p.add_argument("--seed", type=seed, default=1, help="seed of the inputs (default 1)")
    add_max_instructions(p)
    p.add_argument("--engine", choices=ENGINES, default="compiled",
                   help="timing engine: compiled (default) or reference (the Python engine it is checked "
                        "against; same results, slower)")
    add_variants(p)
    p.add_argument("--json", help="write the full result (statistics with units and the configuration) here")
    launch = add_launch_options(p, block_default="the warp size", title="with an assembly file")
    launch.add_argument("--output", action="append", default=[], metavar="NAME=FILE.npy",
                   help="write the final contents of a buffer parameter to a NumPy file (the type of its "
                        "--input array, else uint32 words; repeatable)")
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("reproduce", help="the paper's figures 9 and 10 and the warps-per-SM / register-file study")
    p.add_argument("workloads", nargs="*", help=f"workloads (default: {' '.join(FIGURE_WORKLOADS)}; the "
                   "warps study runs those of the paper's four among them)")
    p.add_argument("--suite", choices=list(SUITES), default=None,
                   help="the figures' workloads of one suite: hand-written (the ten written in our ISA; "
                        "minutes), compiled (CUDA C through the front end, on the first preset; about an hour), "
                        "training (the hand-written ten and their CUDA twins, which heuristics may be chosen on), "
                        "held-back (the independently written compiled kernels they are judged on) or all "
                        "(the default)")
    p.add_argument("--size", default="paper",
                   help="input size of every run (default paper: the Rodinia sizes, minutes, docs/timing-model.md; "
                        "default: smaller inputs per workload, see docs/timing-model.md)")
    p.add_argument("--preset", choices=sorted(PRESETS), action="append",
                   help="a GPU figures 9 and 10 run on (repeatable; default: "
                        f"{' and '.join(REPRODUCE_PRESETS)}); the first also runs the warps study and the energy "
                        "tables")
    p.add_argument("--warps", type=int_list(1, 64), help="warps-per-SM points of the study, comma separated "
                   f"(default {','.join(map(str, WARPS))})")
    p.add_argument("--study-sms", type=positive, default=None,
                   help="SMs of the GPU in the warps study (default: the preset's)")
    p.add_argument("--seed", type=seed, default=1)
    p.add_argument("-j", "--jobs", type=positive, default=None, help="parallel simulations (default: local cores)")
    p.add_argument("-o", "--output", default="results", help="results folder (default results/)")
    p.set_defaults(func=cmd_reproduce)

"""``dualflow cosim --random N`` (a campaign of generated programs) and ``--random-program SEED``
(one of them alone, as a campaign's mismatch report names it)."""

from __future__ import annotations

import argparse
import dataclasses

from dualflow.common.errors import ConfigError

from .options import positive

__all__ = ["add_random_options", "cmd_random"]


def add_random_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("random programs (dualflow/testbench/campaign.py; the core options below override "
                             "each parameter set's fields)")
    g.add_argument("--random", type=positive, metavar="N", help="a campaign: generated programs until N warp "
                   "instructions have been compared per mode; --seed S makes it (default mode: both)")
    g.add_argument("--random-program", type=int, metavar="SEED", help="co-simulate one generated program, "
                   "by its program seed (a campaign's mismatch names it)")
    g.add_argument("--fault", metavar="KIND", help="with --random-program: the program faults on purpose "
                   "(a TrapCause name, e.g. MISALIGNED)")
    g.add_argument("--params", metavar="SET[,SET...]", help="core parameter sets by name (default all: "
                   "default, narrow, wide, units; one with --random-program)")
    g.add_argument("--fp", choices=("auto", "on", "off"), default="auto", help="FP32/SFU values in the "
                   "programs (default auto: on when the core's decoder does not trap FP opcodes)")
    g.add_argument("--batch", type=positive, default=16, help="programs per simulator run (default 16)")


def _overrides(args) -> dict:
    from dualflow.rtl.params import CoreParams

    if getattr(args, "config", None) is not None:
        raise ConfigError("--config: not with --random or --random-program (use --params and the core options)")
    return {f.name: getattr(args, f.name) for f in dataclasses.fields(CoreParams)
            if f.name != "mode" and getattr(args, f.name, None) is not None}


def _fp(args, cores) -> bool:
    from dualflow.testbench.randprog.core_programs import core_runs_fp

    if args.fp != "auto":
        return args.fp == "on"
    return all(core_runs_fp(p) for p in cores)


def cmd_random(args) -> int:
    from dualflow.machine import MODES
    from dualflow.testbench.campaign import PARAM_SETS, core_params, program_for, run_campaign
    from dualflow.testbench.cosim import run_cosim

    modes = MODES if args.mode in (None, "both") else (args.mode,)
    sets = tuple(args.params.split(",")) if args.params else tuple(PARAM_SETS)
    overrides = _overrides(args)
    cores = [core_params(name, mode, overrides) for mode in modes for name in sets]  # checks every set first
    fp = _fp(args, cores)
    if args.random_program is not None:
        from dualflow.rtl.interfaces import TrapCause

        if len(modes) != 1 or len(sets) != 1:
            raise ConfigError("--random-program: give one --mode (base or dflow) and one --params set")
        fault = None
        if args.fault is not None:
            try:
                fault = TrapCause[args.fault.upper()]
            except KeyError:
                raise ConfigError(f"--fault {args.fault}: not a trap cause (have: "
                                  f"{', '.join(c.name for c in TrapCause if c is not TrapCause.NONE)})") from None
        (params,) = cores
        case = program_for(params, args.random_program, fault, fp=fp).case()
        (result,) = run_cosim(params, [case], report_dir=args.report, max_print=args.max_print,
                              simulator=args.simulator)
        print(result.summary())
        return 0 if result.ok else 1
    if args.fault is not None:
        raise ConfigError("--fault: an option of --random-program")
    from tqdm import tqdm

    bars: dict = {}

    def progress(mode: str, compared: int, target: int) -> None:
        bar = bars.get(mode)
        if bar is None:
            for old in bars.values():
                old.close()
            bar = bars[mode] = tqdm(total=target, desc=f"{mode} compared", unit=" instr", unit_scale=True)
        bar.update(min(compared, target) - bar.n)

    camp = run_campaign(args.random, args.seed, modes=modes, param_sets=sets, simulator=args.simulator,
                        overrides=overrides, fp=fp, batch=args.batch, progress=progress)
    for bar in bars.values():
        bar.close()
    print(f"FP32/SFU programs: {'on' if fp else 'off'}")
    print(camp.report())
    camp.coverage.close()
    return 0 if camp.ok else 1

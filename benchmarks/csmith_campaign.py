"""Csmith differential testing of the CUDA front end: a campaign of random programs.

Each seed: Csmith writes a program (options in dualflow/frontend/csmith/generate.py); g++ builds
it for the host and runs it once per thread seed; the front end compiles it as a kernel in which
every thread runs the program on its own globals; the checksums of every thread are compared on
the functional model (REG and DFLOW forms) and the timing model (BASE and D-FLOW modes).

    python benchmarks/csmith_campaign.py --count 100 --start-seed 1 -j 2
    python benchmarks/csmith_campaign.py --count 1 --start-seed 42 --targets reg -v   # one program

Prints the counts: programs generated, compiled, run, mismatches, skipped with reasons, the
constructs the front end refused; exits with status 1 at the first mismatch or GPU-side failure
(``--keep-going``: after the whole campaign), the failing program kept under
build/csmith/failures/SEED/ (kernel.cu, host.cpp, csmith.cpp, result.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # workers share the machine's cores

from dualflow.frontend.csmith.campaign import default_root, run_campaign  # noqa: E402
from dualflow.frontend.csmith.device import Target  # noqa: E402
from dualflow.frontend.csmith.differential import FAILING, Settings  # noqa: E402
from dualflow.frontend.csmith.explain import explain_mismatch  # noqa: E402
from dualflow.frontend.csmith.generate import CsmithOptions  # noqa: E402
from dualflow.isa import Form  # noqa: E402
from dualflow.kernels.mode_form import kernel_form  # noqa: E402
from dualflow.machine.functional import FunctionalConfig  # noqa: E402
from dualflow.machine.mode import Mode  # noqa: E402
from dualflow.machine.presets import preset  # noqa: E402
from dualflow.models import Device  # noqa: E402
from dualflow.models.timing.device import TimingDevice  # noqa: E402

#: Every machine, in the order a program runs on them.
TARGETS = ("reg", "dflow", "timing-base", "timing-dflow")
#: The timing model's machine: the paper's GPU cut to one SM (a launch of a few warps uses one).
TIMING_PRESET = "paper-rtx3080"
#: Warp instructions a launch may retire before it counts as runaway: generous, since a Csmith
#: program's loops and software division run long, but finite, so a miscompiled endless loop ends.
BUDGET = 20_000_000
#: Local memory per thread: the private globals and Csmith's local arrays (the functional model's
#: default of 16 KiB is a CUDA-like limit, not a property of the programs).
LOCAL_BYTES = 1 << 16


def targets(names=TARGETS, *, budget: int = BUDGET, engine: str = "compiled",
            timing_preset: str = TIMING_PRESET) -> tuple[Target, ...]:
    """The machines ``names`` as targets of the differential test: the functional model on the REG
    form ("reg") and on the converter's DFLOW form ("dflow"), the timing model (one SM of
    ``timing_preset``, ``engine``) in BASE mode ("timing-base") and D-FLOW mode ("timing-dflow"),
    each in the form its mode runs."""
    functional = FunctionalConfig(max_warp_instructions=budget, max_local_bytes=LOCAL_BYTES)

    def timing(mode: Mode) -> Target:
        config = preset(timing_preset).replace(num_sms=1, mode=mode.value)
        return Target(f"timing-{mode.value}", kernel_form(mode),
                      lambda: TimingDevice(config, functional, engine=engine))

    table = {"reg": Target("reg", Form.REG, lambda: Device(functional)),
             "dflow": Target("dflow", Form.DFLOW, lambda: Device(functional)),
             "timing-base": timing(Mode.BASE), "timing-dflow": timing(Mode.DFLOW)}
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"unknown target(s) {', '.join(unknown)} (have: {', '.join(table)})")
    return tuple(table[n] for n in names)


def rtl_cosim(seed: int, settings: Settings, mode: str, folder: Path, *, simulator: str = "icarus",
              warp_size: int = 8, warps: int = 4, max_cycles: int = 2_000_000) -> tuple[bool, str]:
    """Co-simulate program ``seed``'s kernel on the RTL core in ``mode`` (one block of
    ``settings.threads`` threads) against the golden functional model, record by record, and check
    the core's out[] against the host's checksums. Returns (passed, summary)."""

    from dualflow.frontend.csmith import compile_kernel, kernel_source, run_csmith, thread_seeds, transform
    from dualflow.frontend.csmith.host import build_host, run_host
    from dualflow.frontend.csmith.transform import KERNEL_NAME
    from dualflow.rtl.params import CoreParams
    from dualflow.testbench.cosim import CosimCase, run_cosim

    program = transform(run_csmith(seed, settings.csmith), seed, settings.csmith.argv(), settings.inject)
    folder.mkdir(parents=True, exist_ok=True)
    seeds = thread_seeds(seed, settings.threads)
    host = run_host(build_host(program, folder), [int(s) for s in seeds]).checksums
    (folder / "kernel.cu").write_text(kernel_source(program))
    device = compile_kernel(folder / "kernel.cu", opt_level=settings.opt_level)
    kernel = device.module(kernel_form(Mode(mode)))[KERNEL_NAME]
    imem = 1 << max(10, (len(kernel.code) - 1).bit_length())
    params = CoreParams(mode=mode, warp_size=warp_size, warps=warps, regs=max(device.registers, 1), imem_words=imem)
    out = []

    def setup(dev):
        out.append(dev.alloc(4 * len(seeds)))
        return [dev.upload(seeds), out[-1]]

    case = CosimCase(f"csmith-{seed}-{mode}", kernel, settings.threads, setup, max_cycles=max_cycles)
    (result,) = run_cosim(params, [case], simulator=simulator, report_dir=folder / f"cosim-{mode}")
    words = result.memory[out[-1] // 4: out[-1] // 4 + len(seeds)] if result.memory is not None else None
    host_ok = words is not None and [int(w) for w in words] == list(host)
    return result.ok and host_ok, (result.summary() + ("" if host_ok else "\nRTL out[] differs from the host"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="programs (default 100)")
    parser.add_argument("--start-seed", type=int, default=1, help="first Csmith seed (default 1)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="programs at a time (default 1)")
    parser.add_argument("--targets", default=",".join(TARGETS),
                        help=f"comma-separated subset of {','.join(TARGETS)} (default: all)")
    parser.add_argument("--threads", type=int, default=32, help="threads, one seed each (default 32)")
    parser.add_argument("--block", type=int, default=32, help="threads per block (default 32)")
    parser.add_argument("--opt-level", default="-O2", help="clang's level for the kernel (default -O2)")
    parser.add_argument("--inject", choices=("scalars", "first"), default="scalars",
                        help="globals the thread seed is XORed into (default: every non-const scalar)")
    parser.add_argument("--max-funcs", type=int, default=CsmithOptions.max_funcs)
    parser.add_argument("--max-block-depth", type=int, default=CsmithOptions.max_block_depth)
    parser.add_argument("--max-expr-complexity", type=int, default=CsmithOptions.max_expr_complexity)
    parser.add_argument("--budget", type=int, default=BUDGET,
                        help=f"warp instructions a launch may retire (default {BUDGET:,})")
    parser.add_argument("--engine", choices=("compiled", "reference"), default="compiled",
                        help="the timing model's engine (default compiled)")
    parser.add_argument("--float", action="store_true",
                        help="Csmith programs with float (host flushes denormals; no FMA contraction)")
    parser.add_argument("--ptx-census", action="store_true", help="count the PTX opcodes each program uses")
    parser.add_argument("--no-explain", action="store_true",
                        help="do not rerun a mismatching program to name the globals that differ")
    parser.add_argument("--keep-going", action="store_true", help="do not stop at the first failure")
    parser.add_argument("--program-timeout", type=float, default=600.0,
                        help="wall seconds one program may take over all its stages (default 600)")
    parser.add_argument("--rtl", type=int, default=0,
                        help="then co-simulate the first N matching programs on the RTL core, BASE and DFLOW")
    parser.add_argument("--rtl-simulator", default="icarus", choices=("icarus", "verilator"))
    parser.add_argument("--root", default=None, help="scratch and failure folder (default build/csmith)")
    parser.add_argument("--json", default=None, help="also write the counts to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per program")
    args = parser.parse_args()

    names = tuple(t for t in args.targets.split(",") if t)
    try:
        machines = targets(names, budget=args.budget, engine=args.engine)
    except ValueError as e:
        parser.error(str(e))
    csmith = CsmithOptions(max_funcs=args.max_funcs, max_block_depth=args.max_block_depth,
                           max_expr_complexity=args.max_expr_complexity, floats=args.float)
    settings = Settings(csmith=csmith, threads=args.threads, block=args.block, targets=machines,
                        opt_level=args.opt_level, inject=args.inject, ptx_census=args.ptx_census)
    root = default_root() if args.root is None else Path(args.root).resolve()
    done = [0]

    def log(r) -> None:
        done[0] += 1
        if args.verbose or r.status in FAILING:
            print(f"[{done[0]}/{args.count}] {r.summary()}" + (f" {r.seconds}" if args.verbose else ""), flush=True)
            if r.status in FAILING:
                print(f"    {r.message.strip()}\n    kept in {r.folder}", flush=True)
            if r.status == "mismatch" and not args.no_explain:
                first = next(t for t in machines if t.name in r.mismatches)
                text = explain_mismatch(r.seed, r.folder, first, threads=args.threads, block=args.block,
                                        opt_level=args.opt_level, inject=args.inject)
                print("    " + text.replace("\n", "\n    "), flush=True)
        elif done[0] % 25 == 0:
            print(f"[{done[0]}/{args.count}]", flush=True)

    print(f"Csmith campaign: seeds {args.start_seed}..{args.start_seed + args.count - 1}, targets "
          f"{','.join(names)}, {args.threads} threads, {args.jobs} job(s), csmith {' '.join(csmith.argv())}",
          flush=True)
    tally = run_campaign(range(args.start_seed, args.start_seed + args.count), settings, jobs=args.jobs, root=root,
                         keep_going=args.keep_going, program_timeout=args.program_timeout, on_result=log)
    print(tally.report())
    rtl_failed = 0
    for seed in tally.matched[:args.rtl]:
        for mode in ("base", "dflow"):
            passed, summary = rtl_cosim(seed, settings, mode, root / "rtl" / str(seed), simulator=args.rtl_simulator)
            rtl_failed += not passed
            print(f"RTL {mode} seed {seed}: {'PASS' if passed else 'FAIL'}\n    " + summary.replace("\n", "\n    "),
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(tally.to_dict(), f, indent=1)
    if tally.failures or rtl_failed:
        print(f"FAILED: {len(tally.failures)} program(s) (kept under {root / 'failures'}), "
              f"{rtl_failed} RTL co-simulation(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

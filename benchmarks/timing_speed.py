"""Speed of the performance model's engines side by side, on the ``paper-rtx3080`` preset (68 SMs).

For each workload, size and mode, every engine simulates the same launches in a fresh process
(so each run's peak resident memory is its own, and after a tiny warm-up run that loads the
compiled code from numba's cache), ``--repeat`` times, one run of each engine after the other in
every round (so that a change of the machine's load falls on all of them); the table gives the median
wall seconds spent simulating launches (input generation and checks excluded), simulated cycles
and thread-instructions per second, peak RSS, and the compiled engine's speed-up over the
reference. Cycles and every timing statistic must be identical between the engines: a
difference is printed as MISMATCH and the exit status is 1.

The reference engine needs hours at paper sizes, so ``--launches N`` stops both engines after the
first N launches of a workload (the ratio is then measured on those launches, side by side);
``--compiled-only`` measures the compiled engine alone on whole runs. ``--golden`` adds a column:
the golden functional model alone on the same launches (its ``BatchExecutor``s, built and run,
no timing), the floor of any engine that gets its results from the golden model. ``--split``
adds, per workload and mode, where the compiled engine's CPU time goes (median run): the
functional pre-run (``build_streams``; of it, ``next_step`` and the grouping of its records
separately), the timing core (``run_launch``), the SM state's reset (``SmStates.fresh``), the
memory counters' copies (the memory statistics tree is built when the statistics are read,
outside the launches: ``DeferredTree``) and the rest of the per-launch glue (thread CPU time:
wall time on a shared machine counts other jobs' time).

    python benchmarks/timing_speed.py [--size paper] [--launches 1] [--repeat 3] [workload ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import subprocess
import sys

PAPER_FOUR = ("gaussian", "lud", "pathfinder", "nn")
ENGINES = ("reference", "compiled")


class _Enough(Exception):
    """Raised after the requested number of launches to stop the host driver."""


#: ``--split``'s parts of the compiled engine: (module, attribute) wrapped to add up their CPU time.
SPLIT = {"pre-run": ("dualflow.models.timing.compiled.engine", "build_streams"),
         "  next_step": ("dualflow.models.executor", "BatchExecutor.next_step"),
         "  streams": ("dualflow.models.timing.compiled.streams", "_PreRun.streams"),
         "timing core": ("dualflow.models.timing.compiled.engine", "run_launch"),
         "SM state": ("dualflow.models.timing.compiled.sm_state", "SmStates.fresh"),
         "counters": ("dualflow.models.timing.compiled.memory", "CompiledMemory.counters"),
         "whole launch": ("dualflow.models.timing.compiled.engine", "CompiledGpu.run")}


def _split_timers() -> dict[str, float]:
    """Wrap ``SPLIT``'s functions so that each adds its thread CPU seconds to the returned dict."""
    import functools
    import importlib
    import time

    spent = dict.fromkeys(SPLIT, 0.0)
    for part, (module, attribute) in SPLIT.items():
        owner = importlib.import_module(module)
        *path, name = attribute.split(".")
        for step in path:
            owner = getattr(owner, step)
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args, _original=original, _part=part, **kwargs):
            start = time.thread_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_part] += time.thread_time() - start
        setattr(owner, name, timed)
    return spent


def measure(workload: str, size: str, mode: str, engine: str, launches: int | None,
            settings: dict | None = None) -> dict:
    """One run in this process: its launches' merged timing, wall seconds and peak RSS
    (engine "split": the compiled engine with ``SPLIT``'s CPU seconds); ``settings``: changes to
    the preset by dotted field name (``GpuConfig.replace``)."""
    if engine == "golden":
        return measure_golden(workload, size, mode, launches)
    spent = None
    if engine == "split":
        spent, engine = _split_timers(), "compiled"
    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload
    from dualflow.machine.functional import FunctionalConfig
    from dualflow.machine.presets import preset
    from dualflow.models.statistic import merge_launches
    from dualflow.models.timing.device import TimingDevice

    config = preset("paper-rtx3080").replace(mode=mode, **(settings or {}))
    # load the compiled code (numba's cache: about 0.7 s once per process) before timing anything
    warm = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size), engine=engine)
    run_workload(get_workload("nn"), size="tiny", form=config.mode.form, device=warm)
    if spent is not None:
        for part in spent:
            spent[part] = 0.0
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size), engine=engine)
    if launches is not None:
        def stop(_stats, _seconds) -> None:
            if len(device.timing) >= launches:
                raise _Enough
        device.on_launch = stop
    try:
        run_workload(get_workload(workload), size=size, form=config.mode.form, device=device)
    except _Enough:
        pass
    total, _ = merge_launches(device.timing)
    timing = total.to_dict()
    return {"cycles": total.cycles, "warp_instructions": total.total_warp_instructions,
            "thread_instructions": sum(total.thread_instructions.values()), "launches": len(device.timing),
            "seconds": device.sim_seconds,
            "digest": hashlib.sha256(json.dumps(timing, sort_keys=True).encode()).hexdigest()[:16],
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "split": spent}


def measure_golden(workload: str, size: str, mode: str, launches: int | None) -> dict:
    """The golden functional model alone: seconds in its batch executors (built and run)."""
    import time

    from dualflow.kernels.registry import get_workload
    from dualflow.kernels.workload import run_workload
    from dualflow.machine.functional import FunctionalConfig
    from dualflow.machine.presets import preset
    from dualflow.models import device as functional

    seconds = [0.0]

    class TimedExecutor(functional.BatchExecutor):
        def __init__(self, *args, **kwargs):
            start = time.perf_counter()
            super().__init__(*args, **kwargs)
            seconds[0] += time.perf_counter() - start

        def run(self) -> None:
            start = time.perf_counter()
            try:
                super().run()
            finally:
                seconds[0] += time.perf_counter() - start

    functional.BatchExecutor = TimedExecutor
    config = preset("paper-rtx3080").replace(mode=mode)
    device = functional.Device(FunctionalConfig(warp_size=config.sm.warp_size))
    if launches is not None:
        launch = device.launch

        def stop_after(*args, **kwargs):
            if len(device.history) >= launches:
                raise _Enough
            return launch(*args, **kwargs)
        device.launch = stop_after
    try:
        run_workload(get_workload(workload), size=size, form=config.mode.form, device=device)
    except _Enough:
        pass
    return {"seconds": seconds[0], "launches": len(device.history),
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def in_fresh_process(*args) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(args)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def print_split(args) -> None:
    """``--split``: the compiled engine's CPU milliseconds per part, median over ``--repeat`` runs."""
    print(f"compiled engine, thread CPU ms, median of {args.repeat} runs ('rest': the launch's other glue)")
    print(f"{'workload':<11}{'mode':<6}" + "".join(f"{part.strip():>13}" for part in SPLIT) + f"{'rest':>8}")
    for name in args.workloads:
        for mode in args.modes.split(","):
            runs = [in_fresh_process(name, args.size, mode, "split", args.launches)["split"]
                    for _ in range(args.repeat)]
            parts = {part: statistics.median(r[part] for r in runs) * 1000 for part in SPLIT}
            rest = parts["whole launch"] - sum(parts[p] for p in SPLIT if not p.startswith(" ") and p != "whole launch")
            print(f"{name:<11}{mode:<6}" + "".join(f"{v:>13.1f}" for v in parts.values()) + f"{rest:>8.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=PAPER_FOUR)
    parser.add_argument("--size", default="small")
    parser.add_argument("--modes", default="base,dflow")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--launches", type=int, default=None, help="stop after this many launches")
    parser.add_argument("--compiled-only", action="store_true", help="measure only the compiled engine")
    parser.add_argument("--golden", action="store_true",
                        help="also time the golden functional model alone on the same launches")
    parser.add_argument("--split", action="store_true",
                        help="also print where the compiled engine's CPU time goes (median of --repeat runs)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(*json.loads(args.worker))))
        return 0
    engines = ("compiled",) if args.compiled_only else ENGINES
    print(f"paper-rtx3080, size {args.size}, {'first ' + str(args.launches) + ' launches, ' if args.launches else ''}"
          f"median of {args.repeat} runs, each in a fresh process, the engines' runs interleaved")
    head = f"{'workload':<11}{'mode':<6}{'launch':>7}{'cycles':>12}{'thread-instr':>15}"
    for engine in engines:
        head += f" | {engine + ' s':>12}{'cycles/s':>11}{'thr-instr/s':>13}{'RSS MiB':>8}"
    if args.golden:
        head += f" | {'golden s':>9}{'floor x':>8}"
    print(head + ("" if len(engines) == 1 else f" | {'speed-up':>8}"))
    status = 0
    ratios, rates = [], []
    for name in args.workloads:
        for mode in args.modes.split(","):
            kinds = engines + (("golden",) if args.golden else ())
            samples: dict[str, list[dict]] = {k: [] for k in kinds}
            for _ in range(args.repeat):  # interleaved: a change of the machine's load hits every engine alike
                for k in kinds:
                    samples[k].append(in_fresh_process(name, args.size, mode, k, args.launches))
            runs = {e: samples[e] for e in engines}
            first = runs[engines[0]][0]
            line = (f"{name:<11}{mode:<6}{first['launches']:>7}{first['cycles']:>12,}"
                    f"{first['thread_instructions']:>15,}")
            wall = {}
            for e in engines:
                wall[e] = statistics.median(r["seconds"] for r in runs[e])
                rss = max(r["rss_mib"] for r in runs[e])
                line += (f" | {wall[e]:>12.2f}{first['cycles'] / wall[e]:>11,.0f}"
                         f"{first['thread_instructions'] / wall[e]:>13,.0f}{rss:>8,.0f}")
            if args.golden:  # reference / golden model alone: the best speed-up an engine fed by it can have
                golden = statistics.median(r["seconds"] for r in samples["golden"])
                floor = f"{wall['reference'] / golden:>7.1f}x" if "reference" in wall else f"{'-':>8}"
                line += f" | {golden:>9.3f}{floor}"
            rates.append(first["thread_instructions"] / wall[engines[-1]])
            if len(engines) > 1:
                ratios.append(wall["reference"] / wall["compiled"])
                line += f" | {ratios[-1]:>7.1f}x"
            digests = {r["digest"] for e in engines for r in runs[e]}
            if len(digests) != 1:
                line += "  MISMATCH: timing statistics differ"
                status = 1
            print(line, flush=True)
    if args.split:
        print_split(args)
    summary = f"median thread-instructions/s ({engines[-1]}): {statistics.median(rates):,.0f}"
    if ratios:
        summary += f"; speed-up median {statistics.median(ratios):.1f}x, minimum {min(ratios):.1f}x"
    print(summary)
    return status


if __name__ == "__main__":
    sys.exit(main())

"""What a queued FR-FCFS DRAM controller changes in whole runs (closed loop): the reservation
model's ``frfcfs`` against ``queued-frfcfs`` (docs/memory-system.md, "Queued controllers").

Each workload runs whole on ``paper-rtx3080`` in both modes twice: with the reservation model's
``frfcfs`` and with the presets'  ``memory.dram.scheduler=queued-frfcfs`` (``--engine``: compiled by default,
which gives the reference engine's results). The table gives
per run the cycles, the mean latency of a DRAM read from its controller (core cycles, from the
recorded requests), the row-hit rate and the requests served ahead of an older one of their bank;
then D-FLOW's speedup over BASE under each scheduler.

    python benchmarks/dram_closed_loop.py [--size paper] [--jobs 2] [--engine compiled] [workload ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed

from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.presets import preset
from dualflow.models.timing.device import TimingDevice

WORKLOADS = ("gaussian", "lud", "pathfinder", "nn", "bfs", "hotspot", "nw", "divloop", "reduce", "vadd")
SCHEDULERS = ("frfcfs", "queued-frfcfs")


def run(workload: str, size: str, mode: str, scheduler: str, engine: str = "compiled") -> dict:
    """One whole run: cycles, DRAM read latency from the controller, row-hit rate, reorders."""
    config = preset("paper-rtx3080").replace(mode=mode, **{"memory.dram.scheduler": scheduler})
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size), record_dram=True,
                          engine=engine)
    run_workload(get_workload(workload), size=size, form=config.mode.form, device=device)
    latency = config.memory.dram.latency
    waits = [done - cycle - latency for cycle, _, _, write, _, done in device.gpu.memory.dram_requests() if not write]
    hits = sum(t.memory["dram"]["row_hits"]["value"] for t in device.timing)
    misses = sum(t.memory["dram"]["row_misses"]["value"] for t in device.timing)
    return {"cycles": sum(t.cycles for t in device.timing), "reads": len(waits),
            "latency": statistics.fmean(waits) if waits else 0.0,
            "row_hits": hits / (hits + misses) if hits + misses else 0.0,
            "reordered": sum(t.memory["dram"]["reordered_hits"]["value"] for t in device.timing)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=WORKLOADS)
    parser.add_argument("--size", default="paper")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--engine", default="compiled", choices=("compiled", "reference"))
    args = parser.parse_args(argv)
    keys = [(w, m, s) for w in args.workloads for m in ("base", "dflow") for s in SCHEDULERS]
    results = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run, w, args.size, m, s, args.engine): (w, m, s) for w, m, s in keys}
        for future in as_completed(futures):  # progress, as runs finish
            results[futures[future]] = future.result()
            print("done:", *futures[future], results[futures[future]]["cycles"], file=sys.stderr, flush=True)
    print(f"paper-rtx3080, size {args.size}; DRAM read latency from the controller (core cycles)")
    print(f"{'workload':<11}{'mode':<6}{'scheduler':<15}{'cycles':>11}{'reads':>9}{'latency':>9}{'row hits':>9}"
          f"{'reordered':>10}")
    for w, m, s in keys:
        r = results[w, m, s]
        print(f"{w:<11}{m:<6}{s:<15}{r['cycles']:>11,}{r['reads']:>9,}{r['latency']:>9.1f}{r['row_hits']:>9.2f}"
              f"{r['reordered']:>10,}")
    print(f"\n{'workload':<11}" + "".join(f"{'speedup ' + s:>24}" for s in SCHEDULERS))
    for w in args.workloads:
        print(f"{w:<11}" + "".join(f"{results[w, 'base', s]['cycles'] / results[w, 'dflow', s]['cycles']:>24.3f}"
                                   for s in SCHEDULERS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

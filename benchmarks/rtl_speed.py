"""RTL core speed per simulator (simulated core cycles per second) and its synthesis table.

Runs the directed co-simulation programs (dualflow/kernels/directed.py) on the generated core in
both modes, and reports per program the core cycles, warp instructions retired, IPC, and each
simulator's rate (cycles per wall-clock second of the simulated run, cocotb bench included;
build and golden model excluded), side by side, with the ratio to the first simulator named.
Simulators: ``icarus`` (the run_bench default for the core), ``icarus-hier`` (Amaranth's Verilog
as it is), ``icarus-flat`` (flattened and optimized by Yosys first), ``verilator``; ``both`` is
icarus and verilator, ``all`` every one. ``--repeat N`` runs each simulator N times and reports
the median rate; the first run's wall time includes any build (``--fresh``: rebuild from scratch,
so that it shows the one-time cost). With ``--synth``, also synthesizes both modes with Yosys and
prints cells per block side by side. Usage:

    python benchmarks/rtl_speed.py [--warp-size 4 --warps 4] [--programs alu,loop] [--simulator both]
                                   [--repeat 3] [--fresh] [--synth] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time

from dualflow.common.atomic_write import atomic_write
from dualflow.kernels.directed import PROGRAMS
from dualflow.machine import MODES
from dualflow.rtl.params import CoreParams
from dualflow.testbench.core.directed import directed_case
from dualflow.testbench.cosim import run_cosim
from dualflow.testbench.sim import SIMULATORS, build_dir_for

SHORTHANDS = {"both": ["icarus", "verilator"], "all": ["icarus-hier", "icarus-flat", "verilator"]}


def measure(params: CoreParams, names: list[str], seed: int, simulator: str) -> tuple[list[dict], float]:
    """One run of every program in one simulator process; the rows and the run's wall time."""
    cases = [directed_case(n, params, seed=seed) for n in names]
    started = time.perf_counter()
    results = run_cosim(params, cases, simulator=simulator)
    wall = time.perf_counter() - started
    rows = []
    for r in results:
        instructions = r.compare.rtl_records
        rows.append({"program": r.name, "mode": params.mode, "simulator": simulator, "ok": r.ok, "cycles": r.cycles,
                     "warp_instructions": instructions, "ipc": instructions / max(r.cycles, 1),
                     "sim_seconds": r.sim_seconds, "cycles_per_second": r.cycles / max(r.sim_seconds, 1e-9)})
    return rows, wall


def _fresh(simulator: str, params: CoreParams) -> None:
    """Remove the build directory of this core and simulator variant (so the next run rebuilds it);
    other cores' builds, which other runs may be using, stay."""
    variant = {"verilator": "verilator", "icarus-hier": ""}.get(simulator, "flat")  # icarus: flattened
    shutil.rmtree(build_dir_for(f"simt_core_{params.mode}", params.to_dict(), variant), ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warp-size", type=int, default=4)
    parser.add_argument("--warps", type=int, default=4)
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated program names")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--simulator", default="icarus",
                        help=f"comma-separated, of {', '.join(SIMULATORS)}; or both, all (default icarus)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per simulator; the median rate is reported")
    parser.add_argument("--fresh", action="store_true", help="rebuild every simulator's model first")
    parser.add_argument("--synth", action="store_true", help="also synthesize both modes (minutes)")
    parser.add_argument("--json", help="write every figure as JSON")
    args = parser.parse_args()
    names = [n for n in args.programs.split(",") if n]
    sims: list[str] = []
    for s in args.simulator.split(","):
        for name in SHORTHANDS.get(s, [s]):
            if name not in SIMULATORS:
                parser.error(f"unknown simulator {name!r}")
            if name not in sims:
                sims.append(name)

    runs: list[dict] = []  # one per (simulator, mode, repeat): totals and the wall time
    rows: dict[tuple[str, str, str], list[dict]] = {}
    for sim in sims:
        for mode in MODES:
            params = CoreParams(mode=mode, warp_size=args.warp_size, warps=args.warps)
            if args.fresh:
                _fresh(sim, params)
            for rep in range(args.repeat):
                got, wall = measure(params, names, args.seed, sim)
                cycles = sum(r["cycles"] for r in got)
                seconds = sum(r["sim_seconds"] for r in got)
                runs.append({"simulator": sim, "mode": mode, "repeat": rep, "cycles": cycles, "sim_seconds": seconds,
                             "cycles_per_second": cycles / max(seconds, 1e-9), "wall_seconds": wall,
                             "ok": all(r["ok"] for r in got)})
                for r in got:
                    rows.setdefault((r["program"], mode, sim), []).append(r)
                print(f"  {sim} {mode} run {rep + 1}: {cycles} cycles in {seconds:.1f} s of simulation "
                      f"({cycles / max(seconds, 1e-9):.1f} cycles/s), {wall:.1f} s wall", flush=True)

    print(f"\nRTL core: {args.warp_size} lanes, {args.warps} warps, seed {args.seed}, median of {args.repeat} run(s)")
    head = f"{'program':<16} {'mode':<6} {'ok':<5} {'cycles':>7} {'warp-instr':>10} {'IPC':>6}"
    print(head + "".join(f" {s + ' c/s':>16}" for s in sims))
    for (program, mode) in dict.fromkeys((p, m) for p, m, _ in rows):
        first = rows[(program, mode, sims[0])][0]
        ok = all(r["ok"] for s in sims for r in rows.get((program, mode, s), []))
        rates = [statistics.median(r["cycles_per_second"] for r in rows[(program, mode, s)])
                 if (program, mode, s) in rows else 0.0 for s in sims]
        print(f"{program:<16} {mode:<6} {str(ok):<5} {first['cycles']:>7} {first['warp_instructions']:>10} "
              f"{first['ipc']:>6.3f}" + "".join(f" {r:>16.1f}" for r in rates))

    print(f"\n{'simulator':<12} {'mode':<6} {'cycles':>7} {'cycles/s':>10} {'ratio':>7} {'first wall s':>13} "
          f"{'later wall s':>13} {'ok':<5}")
    summary = {}
    for mode in MODES:
        base_rate = None
        for sim in sims:
            mine = [r for r in runs if r["simulator"] == sim and r["mode"] == mode]
            rate = statistics.median(r["cycles_per_second"] for r in mine)
            base_rate = base_rate or rate
            later = statistics.median(r["wall_seconds"] for r in mine[1:]) if len(mine) > 1 else float("nan")
            summary[f"{sim}/{mode}"] = {"cycles_per_second": rate, "ratio": rate / base_rate,
                                        "first_wall_seconds": mine[0]["wall_seconds"], "later_wall_seconds": later}
            print(f"{sim:<12} {mode:<6} {mine[0]['cycles']:>7} {rate:>10.1f} {rate / base_rate:>7.2f} "
                  f"{mine[0]['wall_seconds']:>13.1f} {later:>13.1f} {str(all(r['ok'] for r in mine)):<5}")
    out = {"params": {"warp_size": args.warp_size, "warps": args.warps, "seed": args.seed}, "simulators": sims,
           "runs": runs, "summary": summary, "programs": [r for v in rows.values() for r in v]}
    if args.synth:
        from dualflow.synth.yosys import compare_table, synthesize

        reports = {m: synthesize(CoreParams(mode=m, warp_size=args.warp_size, warps=args.warps)) for m in MODES}
        print(compare_table(reports["base"], reports["dflow"]))
        out["synth"] = {m: r.to_dict() for m, r in reports.items()}
    if args.json:
        atomic_write(args.json, json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""The RTL power runs the GPU energy model uses: write ``dualflow/energy/data/rtl_power.json`` from
``dualflow power --json`` files, and print the per-event model's check (each block of one run
predicted from the others' per-event energies).

Each ``--run WORKLOAD=FILE`` is one power JSON (every mode in it is taken). Its workload is the one
the file records (``dualflow power`` writes it); files written before it did are taken as
WORKLOAD at ``--size``/``--seed`` with no overrides, and a file that records another workload is an
error. The counts of each run come from the golden model of the same launches on the same core
(``dualflow/testbench/gate_power.golden_event_counts``); the file's runs must have matched it. Usage:

    python benchmarks/rtl_energy_data.py --run vadd=power-base.json --run vadd=power-dflow.json \\
        --run nn=power-nn-dflow.json [-o dualflow/energy/data/rtl_power.json]
    python benchmarks/rtl_energy_data.py --check [--data dualflow/energy/data/rtl_power.json]   # the check alone
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from dualflow.common.atomic_write import atomic_write
from dualflow.common.errors import DualflowError
from dualflow.common.provenance import source_commit
from dualflow.energy.rtl_events import DATA_FILE, load_rtl_runs, predict_blocks, run_from_power
from dualflow.rtl.params import CoreParams
from dualflow.testbench.gate_power import golden_event_counts


def _runs_of(spec: str, size: str, seed: int) -> list[dict]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise DualflowError(f"--run {spec!r}: expected WORKLOAD=FILE")
    try:
        raw = Path(path).read_bytes()
        saved = json.loads(raw)
    except OSError as e:
        raise DualflowError(f"--run {path}: {e.strerror}") from None
    except ValueError as e:
        raise DualflowError(f"--run {path}: not JSON ({e})") from None
    out = []
    for mode, entry in saved.items():
        where = f"--run {path} ({mode})"
        workload = entry.get("workload") if isinstance(entry, dict) else None
        if workload is None:  # written before `dualflow power` recorded its workload
            workload = {"name": name, "size": size, "seed": seed, "values": {}, "max_block_threads": None,
                        "commit": None}
        elif workload.get("name") != name:
            raise DualflowError(f"{where}: the file records workload {workload.get('name')!r}, not {name!r}")
        try:
            params = CoreParams(**entry["params"])
        except (KeyError, TypeError) as e:
            raise DualflowError(f"{where}: no core parameters ({e})") from None
        counts = golden_event_counts(name, params, size=workload["size"], seed=workload["seed"],
                                     values=workload["values"] or None,
                                     max_block_threads=workload["max_block_threads"])
        run = run_from_power(entry, counts, workload, where=where)
        run["file"] = {"name": Path(path).name, "sha256": hashlib.sha256(raw).hexdigest()}
        if not run["matched"]:
            raise DualflowError(f"{where}: its trace did not match the golden model")
        out.append(run)
    return out


def _check(path: Path) -> str:
    """Each run's blocks predicted from the other runs of its mode (leave one out)."""
    runs = load_rtl_runs(path)
    lines = []
    for check in runs:
        fit = [r for r in runs if r.mode == check.mode and r is not check]
        if not fit:
            continue
        pred = predict_blocks(fit, check)
        lines.append(f"{check.label}: predicted from {', '.join(r.label for r in fit)} "
                     "(data = internal + switching, nJ; error = predicted / measured - 1)")
        lines.append(f"  {'block':<11} {'event':<12} {'data':>9} {'predicted':>10} {'error':>8} {'clock':>9} "
                     f"{'predicted':>10} {'error':>8}")
        tot = {"data": 0.0, "data_pred": 0.0, "clock": 0.0, "clock_pred": 0.0}
        seen = 0.0  # data energy of the blocks with a prediction
        for block, p in pred.items():
            def err(a, b):
                return f"{a / b - 1:+8.1%}" if a is not None and b else f"{'-':>8}"
            dp = p["data_pred"]
            lines.append(f"  {block:<11} {p['event']:<12} {p['data'] * 1e9:9.3f} "
                         f"{'-' if dp is None else format(dp * 1e9, '.3f'):>10} {err(dp, p['data'])} "
                         f"{p['clock'] * 1e9:9.3f} {p['clock_pred'] * 1e9:10.3f} {err(p['clock_pred'], p['clock'])}")
            for k in tot:
                tot[k] += p[k] or 0.0
            seen += p["data"] if dp is not None else 0.0
        lines.append(f"  {'total':<11} {'':<12} {tot['data'] * 1e9:9.3f} {tot['data_pred'] * 1e9:10.3f} "
                     f"{tot['data_pred'] / tot['data'] - 1:+8.1%} {tot['clock'] * 1e9:9.3f} "
                     f"{tot['clock_pred'] * 1e9:10.3f} {tot['clock_pred'] / tot['clock'] - 1:+8.1%}")
        if seen < tot["data"]:
            lines.append(f"  {'predicted':<11} {'blocks':<12} {seen * 1e9:9.3f} {tot['data_pred'] * 1e9:10.3f} "
                         f"{tot['data_pred'] / seen - 1:+8.1%}   (blocks whose event the fit has)")
    return "\n".join(lines) if lines else "no mode has two runs: nothing to check"


def _figures(path: Path, preset_name: str) -> str:
    """Per mode: every event's energy at the preset's node (the GPU table's five, the cross-check
    units beside the table's published figures), the clock per active SM cycle, the leakage per SM."""
    from dualflow.energy import energy_table
    from dualflow.energy.rtl_events import CROSS_CHECK, RTL_EVENTS, rtl_figures
    from dualflow.machine import preset

    have = {r.mode for r in load_rtl_runs(path)}
    modes = [m for m in ("base", "dflow") if m in have]
    lines = [f"per-event energies at {preset_name}'s node (pJ; scaled from the runs of each mode)",
             f"  {'event':<12} " + " ".join(f"{m.upper():>9}" for m in modes) + f"  {'table':>9}"]
    figures = {m: rtl_figures(preset(preset_name).replace(mode=m), path=path) for m in modes}
    table = energy_table(preset(preset_name))
    for event in (*RTL_EVENTS, *CROSS_CHECK):
        values = [figures[m].events[event].value for m in modes]
        published = f"{table.events[event].pj:9.4g}" if event in CROSS_CHECK else f"{'(this)':>9}"
        lines.append(f"  {event:<12} " + " ".join(f"{v:9.4g}" if v is not None else f"{'-':>9}" for v in values)
                     + f"  {published}")
    lines.append(f"  {'clock/SM cyc':<12} " + " ".join(f"{figures[m].clock_pj_per_sm_cycle.value:9.4g}"
                                                      for m in modes) + "  (ungated)")
    lines.append(f"  {'leakage/SM W':<12} " + " ".join(f"{figures[m].leakage_w_per_sm.value:9.3g}"
                                                      for m in modes))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="append", metavar="WORKLOAD=FILE", help="a `dualflow power --json` file")
    ap.add_argument("--size", default="tiny", help="size of runs whose file records no workload (default tiny)")
    ap.add_argument("--seed", type=int, default=1, help="seed of runs whose file records no workload (default 1)")
    ap.add_argument("-o", "--output", default=str(DATA_FILE), help=f"data file to write (default {DATA_FILE})")
    ap.add_argument("--check", action="store_true", help="only print the check of the data file (--data)")
    ap.add_argument("--data", default=str(DATA_FILE), help="data file of --check")
    ap.add_argument("--preset", default="paper-rtx3080", help="GPU whose node the figures are scaled to")
    args = ap.parse_args(argv)
    if not args.check:
        if not args.run:
            raise DualflowError("give --run WORKLOAD=FILE (one or more), or --check")
        runs = [r for spec in args.run for r in _runs_of(spec, args.size, args.seed)]
        data = {"description": "RTL power runs (dualflow power --json) with their golden event counts, for "
                               "the GPU energy model's core-logic events (dualflow/energy/rtl_events.py)",
                "generated_by": "python benchmarks/rtl_energy_data.py " + " ".join(
                    f"--run {s.split('=')[0]}={Path(s.split('=', 1)[1]).name}" for s in args.run),
                "commit": source_commit(), "runs": runs}
        atomic_write(args.output, json.dumps(data, indent=1) + "\n")
        print(f"wrote {args.output}: {len(runs)} runs")
        args.data = args.output
    print(_check(Path(args.data)))
    print(_figures(Path(args.data), args.preset))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except DualflowError as e:  # bad input: the message, no traceback
        sys.exit(f"error: {e}")

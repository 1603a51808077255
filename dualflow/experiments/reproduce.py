"""``dualflow reproduce``: the seed paper's evaluation, and the study it left for future work.

1. Figure 9: speedup of D-FLOW over BASE on gaussian, lud, pathfinder and nn, and on the other
   workloads, on ``paper-rtx3080`` and ``ampere-rtx3070``, with the achieved occupancy and the
   fraction of SM-cycles with work of every run beside it; beside the paper's original DFLOW
   form, D-FLOW running the default variant form (``DEFAULT_VARIANTS``, converted at BASE's
   register-file capacity, or larger where that spills: ``design_points.variant_ring``). The
   design points and the baseline they are compared against are the table of ``design_points.py``.
2. Figure 10: executed warp-instructions of D-FLOW relative to BASE, by unit class.
3. Warps-per-SM study: both modes with at most 8 ... 64 warps per SM, performance against warps and
   against the register-file capacity those warps need (BASE: registers per thread; D-FLOW: ring
   entries per warp), and the capacity at which D-FLOW matches BASE with a full register file.

Every run is an independent simulation; they run in parallel across local cores. Each run's full
result (statistics with units, effective configuration) is kept under ``runs/``; tables are CSV
and JSON, plots PNG. The output folder is written aside and swapped in whole when the run is complete
(``atomic_folder``): an interrupted run leaves the previous results as they were.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dualflow.common.atomic_write import atomic_folder, atomic_write
from dualflow.common.errors import ConfigError, DualflowError, TimingDeadlock
from dualflow.experiments import energy_study
from dualflow.experiments.design_points import BASELINE, COMPARED, DESIGN_POINTS, FURTHER, STUDY_POINTS, DesignPoint
from dualflow.experiments.progress import RunProgress
from dualflow.kernels.mode_form import kernel_form
from dualflow.kernels.registry import COMPILED, HAND_WRITTEN, HELD_BACK, TRAINING, get_workload
from dualflow.kernels.rodinia import PAPER_FOUR
from dualflow.machine.config import SmConfig
from dualflow.machine.footprint import entries_per_warp
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset as preset_config

WARPS = (8, 16, 32, 48, 64)
#: The presets figures 9 and 10 run on (the first also runs the warps study and the energy tables).
PRESETS = ("paper-rtx3080", "ampere-rtx3070")
#: The figures' workloads: the paper's four, the other hand-written ones, then the compiled suite
#: (CUDA C through the front end), which runs on the first preset only.
FIGURE_WORKLOADS = (*PAPER_FOUR, *sorted(set(HAND_WRITTEN) - set(PAPER_FOUR)), *COMPILED)
#: ``--suite``: the figures' workloads of each suite, in their order.
SUITES = {"all": FIGURE_WORKLOADS, "hand-written": tuple(n for n in FIGURE_WORKLOADS if n in HAND_WRITTEN),
          "compiled": tuple(n for n in FIGURE_WORKLOADS if n in COMPILED),
          "training": tuple(n for n in FIGURE_WORKLOADS if n in TRAINING),
          "held-back": tuple(n for n in FIGURE_WORKLOADS if n in HELD_BACK)}
#: Input size of each workload at the default ``--size default``: the paper's kind of input (every
#: thread fits on the GPU at once) at a cost that keeps the whole run in minutes.
DEFAULT_SIZES = {"gaussian": "small", "lud": "small", "pathfinder": "medium", "nn": "small"}
#: The study needs warps-per-SM limits that bind, so each workload runs on a slice of the GPU that
#: its largest launch fills with 64 warps per SM: (size at ``--size default``, SMs). On all 68 SMs
#: these inputs would never reach the limit.
STUDY_SLICES = {"gaussian": ("medium", 1), "lud": ("small", 1), "pathfinder": ("medium", 2), "nn": ("small", 2)}
#: The file every results folder holds: an existing folder is replaced only if it has one.
MARKER = "meta.json"


@dataclass(frozen=True)
class Job:
    """One simulation: a workload on one design point on a (possibly modified) preset."""

    experiment: str  # figure 9's runs: the point's experiment ("paper", "variant"); the study's: "warps"
    workload: str
    point: DesignPoint
    size: str
    seed: int
    preset: str
    warps: int  # warps per SM allowed (max_threads / warp size)
    num_sms: int | None  # None: the preset's

    @property
    def mode(self) -> Mode:
        return self.point.mode

    def columns(self) -> dict[str, Any]:
        """The job's columns in ``runs.csv`` (the point as its mode: with the experiment, it names the point)."""
        return {"experiment": self.experiment, "workload": self.workload, "mode": self.mode, "size": self.size,
                "seed": self.seed, "preset": self.preset, "warps": self.warps, "num_sms": self.num_sms}

    def settings(self, warp_size: int) -> dict[str, Any]:
        """The changes to the preset, whose SMs have ``warp_size`` lanes."""
        out: dict[str, Any] = {"mode": self.mode, "sm.max_threads": self.warps * warp_size}
        if self.num_sms is not None:
            out["num_sms"] = self.num_sms
        return out

    @property
    def tag(self) -> str:
        """The run's name, unique in a reproduce run: its file is ``runs/TAG.json``."""
        return run_tag(self.columns())


def run_tag(row: dict[str, Any]) -> str:
    """The name of the run a ``runs.csv`` row (or ``Job.columns``) describes."""
    return f"{row['preset']}/{row['experiment']}-{row['workload']}-{row['mode']}-w{row['warps']}"


def run_job(job: Job) -> dict[str, Any]:
    """Simulate one job; returns its summary row plus the full result (for ``runs/``)."""
    from dualflow.experiments.simulate import simulate
    from dualflow.models.timing.gpu import BlockDoesNotFit

    base = preset_config(job.preset)
    config = base.replace(**job.settings(base.sm.warp_size))
    try:
        result = simulate(job.workload, config, size=job.size, seed=job.seed,
                          conversion=job.point.conversion_for(job.workload, config.sm))
    except (BlockDoesNotFit, TimingDeadlock) as exc:
        # no result: fewer warps per SM than one block has (no such design point), or the timing
        # model deadlocked (a model defect, issue 35): the row says which, and the study goes on
        what = "infeasible" if isinstance(exc, BlockDoesNotFit) else "deadlock"
        row = {**job.columns(), "cycles": None, "ipc": None, "achieved_occupancy": None, "active_sm_fraction": None,
               "warp_instructions": None,
               "rf_entries_per_thread": rf_entries_per_thread(job.workload, job.point, config.sm),
               "sm_registers": config.sm.registers, "check": f"{what}: {exc}",
               **dict.fromkeys(energy_study.COLUMNS), "wall_seconds": 0.0}
        return {"row": row, "full": {"job": job.columns(), what: str(exc), "config": config.to_dict()}}
    t = result.total
    row = {**job.columns(), "cycles": t.cycles, "ipc": round(t.ipc, 4),
           "achieved_occupancy": round(t.achieved_occupancy, 4),
           # SM-cycles with a resident warp, of all SM-cycles of the run
           "active_sm_fraction": round(t.sm_active_cycles / (t.cycles * t.num_sms), 4) if t.cycles else 0.0,
           "warp_instructions": t.total_warp_instructions,
           **{f"wi_{k}": v for k, v in sorted(t.warp_instructions.items())},
           "rf_entries_per_thread": rf_entries_per_thread(job.workload, job.point, config.sm),
           "sm_registers": config.sm.registers, "check": result.run.verdict,
           "wall_seconds": round(result.wall_seconds, 2)}
    # the paper's runs have the machine's register file; the study's the one their warps need
    rf = config.sm.registers if job.experiment != "warps" else rf_registers_needed(
        job.warps, config.sm.registers, config.sm.warp_size * row["rf_entries_per_thread"])
    columns, energy = energy_study.energy_columns(result, config, rf)
    wall = row.pop("wall_seconds")
    row.update(columns, wall_seconds=wall)  # wall_seconds stays the last column (test_byte_identical.py)
    return {"row": row, "full": {**result.to_dict(), "energy": energy}}


def run_and_keep(job: Job, runs: Path) -> dict[str, Any]:
    """``run_job``, its full result written to ``runs`` here (in the worker): what goes back to
    the parent is the summary row and the progress figures, under a kilobyte. A worker killed
    while it sends a longer message through the result pipe leaves the parent reading the rest
    forever (the other workers keep the pipe open), so no long message crosses it."""
    res = run_job(job)
    path = runs / f"{job.tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(res["full"], indent=1) + "\n")
    timing = res["full"].get("timing")
    return {"row": res["row"], "cycles": timing["cycles"]["value"] if timing else 0,
            "thread_instructions": sum(timing["thread_instructions"]["value"].values()) if timing else 0}


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived while the jobs ran: stop like Ctrl-C (the command exits 128 +
    ``signum``)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stop_on_terminate():
    """While the jobs run, SIGTERM and SIGHUP raise ``Terminated`` in the main thread, so the
    worker processes are stopped (``run_pool``) instead of left running without their parent."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise Terminated(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _worker_init() -> None:
    """Workers leave SIGINT (Ctrl-C reaches the whole process group) to the parent, which stops
    them, and die at once on SIGTERM and SIGHUP (not through the parent's handler they inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def run_pool(jobs: list[Job], workers: int, finish, runs: Path) -> None:
    """Run ``jobs`` on ``workers`` processes (``run_and_keep`` into ``runs``), calling
    ``finish(job, result)`` as each completes. On any exit before the end (Ctrl-C,
    ``Terminated``, an error) the jobs not yet started are cancelled and the workers terminated
    at once; a worker that died (killed by a signal, as the out-of-memory killer does) is a
    DualflowError naming a job it was running."""
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init)
    try:
        futures = {pool.submit(run_and_keep, job, runs): job for job in jobs}
        for fut in as_completed(futures):
            try:
                res = fut.result()
            except BrokenProcessPool:
                raise DualflowError(f"reproduce: a simulation worker process died while running "
                                    f"{futures[fut].tag} (killed by a signal, perhaps for lack of "
                                    "memory); the results are incomplete") from None
            finish(futures[fut], res)
    finally:
        processes = list((pool._processes or {}).values())  # the standard library has no public handle
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            if proc.is_alive():
                proc.terminate()
        for proc in processes:
            proc.join(timeout=5)


def rf_entries_per_thread(workload: str, point: DesignPoint, sm: SmConfig) -> int:
    """Register-file entries each thread holds on ``point``: BASE the most registers any kernel of
    the workload uses, D-FLOW the ring size of its kernels as the point converts them for SMs ``sm``
    (``entries_per_warp``; in a variant form with hands, the sum of its hands' rings)."""
    module = get_workload(workload)().module(kernel_form(point.mode), point.conversion_for(workload, sm))
    return max(entries_per_warp(k, point.mode) for k in module)


#: The energy columns the warps study compares at BASE's full size and at D-FLOW's match.
STUDY_ENERGY = ("rf_area_mm2", "energy_j", "chip_energy_j", "edp_js", "chip_edp_js")


def rf_registers_needed(warps: int, sm_registers: int, per_warp: int) -> int:
    """32-bit registers per SM the resident warps occupy: ``warps`` of ``per_warp`` registers
    each, or fewer warps if ``sm_registers`` runs out first."""
    return min(warps, sm_registers // per_warp) * per_warp


def study_slice(name: str, size: str, study_sms: int | None) -> tuple[str, int]:
    """Input size and SM count of a workload in the warps study (``STUDY_SLICES`` at the default
    size; an explicit size applies to every run; ``study_sms`` overrides the SM count)."""
    default_size, sms = STUDY_SLICES.get(name, ("small", 1))
    return (default_size if size == "default" else size), study_sms or sms


def figure_size(name: str, size: str) -> str:
    return DEFAULT_SIZES.get(name, "small") if size == "default" else size


def study_workloads(workloads: Iterable[str]) -> list[str]:
    """The warps study's workloads: those of ``workloads`` whose GPU slice it defines (the paper's)."""
    return [name for name in workloads if name in STUDY_SLICES]


def plan(size: str, seed: int, presets: tuple[str, ...], workloads: Iterable[str], warps: Iterable[int],
         study_sms: int | None) -> list[Job]:
    jobs = []
    for preset in presets:
        for name in workloads:
            if name in COMPILED and preset != presets[0]:
                continue  # the compiled suite: on the first preset (its cost doubles per preset)
            for point in DESIGN_POINTS:
                jobs.append(Job(point.experiment, name, point, figure_size(name, size), seed, preset, 64, None))
    preset = presets[0]
    for name in study_workloads(workloads):
        wsize, sms = study_slice(name, size, study_sms)
        for w in warps:
            for point in STUDY_POINTS:
                jobs.append(Job("warps", name, point, wsize, seed, preset, w, sms))
    # longest first, so that parallel workers finish together
    cost = {"paper": 4, "medium": 2, "small": 1}
    return sorted(jobs, key=lambda j: (-cost.get(j.size, 0), j.workload != "pathfinder"))


def run_all(jobs: list[Job], workers: int, out: Path, progress=None) -> list[dict]:
    """Run every job (in parallel when ``workers`` > 1), keeping each full result under ``out/runs``;
    ``progress``: where the progress bar goes (standard error; shown only on a terminal)."""
    rows: list[dict] = []
    bar = RunProgress(len(jobs), progress)

    def finish(job: Job, res: dict) -> None:
        rows.append(res["row"])
        bar.finished(job.tag, res["cycles"], res["thread_instructions"], res["row"]["wall_seconds"])

    runs = out / "runs"
    try:
        with stop_on_terminate():
            if workers <= 1:
                for job in jobs:
                    finish(job, run_and_keep(job, runs))
            else:
                run_pool(jobs, workers, finish, runs)
    finally:
        bar.close()
    order = {job.tag: i for i, job in enumerate(jobs)}
    rows.sort(key=lambda r: order[run_tag(r)])
    return rows


def runs_of(point: DesignPoint, rows: list[dict], experiment: str | None = None) -> list[dict]:
    """The rows of ``point``'s runs: its figure-9 runs, or those of ``experiment`` (``"warps"``)."""
    experiment = point.experiment if experiment is None else experiment
    return [r for r in rows if r["experiment"] == experiment and r["mode"] == point.mode]


def figure9_10(rows: list[dict]) -> list[dict]:
    """Per preset and workload: the baseline's and the compared point's cycles, speedup, occupancy
    and active SMs, and the instruction ratio by class (BASE and D-FLOW); and each further point
    (``variant_*``: cycles, speedup over the baseline, occupancy, instruction ratio, register-file
    entries per thread)."""
    def by_workload(point: DesignPoint) -> dict[tuple[str, str], dict]:
        return {(r["preset"], r["workload"]): r for r in runs_of(point, rows)}

    base, compared = by_workload(BASELINE), by_workload(COMPARED)
    further = [(point.name, by_workload(point)) for point in FURTHER]
    bn, cn = BASELINE.name, COMPARED.name
    out = []
    for key in dict.fromkeys((r["preset"], r["workload"]) for r in runs_of(BASELINE, rows)):
        b, d = base[key], compared[key]
        if b["cycles"] is None or d["cycles"] is None:
            continue  # a run that deadlocked: listed by ``unfinished``, not compared
        entry = {"preset": key[0], "workload": key[1], f"{bn}_cycles": b["cycles"], f"{cn}_cycles": d["cycles"],
                 "speedup": round(b["cycles"] / d["cycles"], 4),
                 f"{bn}_occupancy": b["achieved_occupancy"], f"{cn}_occupancy": d["achieved_occupancy"],
                 f"{bn}_active_sms": b["active_sm_fraction"], f"{cn}_active_sms": d["active_sm_fraction"],
                 f"{bn}_warp_instructions": b["warp_instructions"], f"{cn}_warp_instructions": d["warp_instructions"],
                 "instruction_ratio": round(d["warp_instructions"] / b["warp_instructions"], 4)}
        for k in sorted(k for k in b if k.startswith("wi_")):
            entry[f"{k[3:]}_ratio"] = round(d[k] / b["warp_instructions"], 4)
            entry[f"{k[3:]}_{bn}"] = round(b[k] / b["warp_instructions"], 4)
        for name, runs in further:
            v = runs.get(key)
            if v is not None and v["cycles"]:
                entry.update({f"{name}_cycles": v["cycles"], f"{name}_speedup": round(b["cycles"] / v["cycles"], 4),
                              f"{name}_occupancy": v["achieved_occupancy"],
                              f"{name}_instruction_ratio": round(v["warp_instructions"] / b["warp_instructions"], 4),
                              f"{bn}_rf_entries": b["rf_entries_per_thread"],
                              f"{name}_rf_entries": v["rf_entries_per_thread"]})
        out.append(entry)
    return out


def warps_study(rows: list[dict], warp_size: int) -> tuple[list[dict], list[dict]]:
    """The study's points (performance against warps and register-file bytes per SM) and, per
    workload, the register-file size at which the compared point (D-FLOW) first matches the
    baseline's (BASE's) full-size performance.
    ``warp_size``: lanes per warp of the SMs that ran them."""
    points = []
    for r in rows:
        if r["experiment"] != "warps" or r["cycles"] is None:  # skip points where a block cannot fit
            continue
        # the register file the resident warps occupy: the warp limit, or fewer if registers run out first
        rf_bytes = 4 * rf_registers_needed(r["warps"], r["sm_registers"], warp_size * r["rf_entries_per_thread"])
        points.append({"workload": r["workload"], "size": r["size"], "sms": r["num_sms"], "mode": r["mode"],
                       "warps": r["warps"], "cycles": r["cycles"],
                       "ipc": r["ipc"], "rf_entries_per_thread": r["rf_entries_per_thread"],
                       "rf_kib": round(rf_bytes / 1024, 1),
                       **{k: r.get(k) for k in ("rf_area_mm2", "energy_j", "chip_energy_j", "edp_js", "chip_edp_js",
                                                "rf_chip_share")}})
    matches = []
    bn, cn = BASELINE.name, COMPARED.name
    for name in dict.fromkeys(p["workload"] for p in points):
        base = sorted((p for p in points if p["workload"] == name and p["mode"] == BASELINE.mode),
                      key=lambda p: p["warps"])
        compared = sorted((p for p in points if p["workload"] == name and p["mode"] == COMPARED.mode),
                          key=lambda p: p["warps"])
        target = base[-1]  # the baseline with the most warps: the full register file
        first = next((p for p in compared if p["cycles"] <= target["cycles"]), None)
        matches.append({
            "workload": name, f"{bn}_warps": target["warps"], f"{bn}_cycles": target["cycles"],
            f"{bn}_rf_kib": target["rf_kib"],
            f"{cn}_match_warps": first["warps"] if first else None,
            f"{cn}_match_rf_kib": first["rf_kib"] if first else None,
            f"{cn}_best_speedup": round(target["cycles"] / min(p["cycles"] for p in compared), 4),
            **{f"{bn}_{k}": target[k] for k in STUDY_ENERGY},
            **{f"{cn}_match_{k}": first[k] if first else None for k in STUDY_ENERGY},
        })
    return points, matches


def _csv(rows: list[dict]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    fields = list(dict.fromkeys(k for r in rows for k in r))  # rows of infeasible runs have fewer
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def write_table(out: Path, name: str, rows: list[dict]) -> None:
    atomic_write(out / f"{name}.csv", _csv(rows))
    atomic_write(out / f"{name}.json", json.dumps(rows, indent=1) + "\n")


def unfinished(rows: list[dict]) -> list[dict]:
    """The runs the timing model could not finish (deadlocked), which the figures leave out."""
    return [r for r in rows if str(r.get("check", "")).startswith("deadlock")]


def summary_text(fig: list[dict], matches: list[dict], meta: dict, rows: list[dict] = ()) -> str:
    b, c = BASELINE, COMPARED  # names key the columns, labels head them
    lines = [f"dualflow reproduce: size {meta['size']}, presets {', '.join(meta['presets'])}, seed {meta['seed']}, "
             f"{meta['runs']} simulations in {meta['wall_seconds']:.0f} s"]
    for preset in dict.fromkeys(r["preset"] for r in fig):
        lines += ["", f"Figures 9 and 10 on {preset}: {c.label} against {b.label}, same machine and thread count "
                  "(occupancy: resident warps / most warps per SM, over SM-cycles with work; active SMs: "
                  f"SM-cycles with work / all SM-cycles; {b.label} | {c.label})",
                  f"{'workload':<12}{b.label + ' cycles':>13}{c.label + ' cycles':>15}{'speedup':>9}{'instr ratio':>13}"
                  f"{'occupancy':>13}{'active SMs':>13}"]
        for r in (r for r in fig if r["preset"] == preset):
            lines.append(f"{r['workload']:<12}{r[b.name + '_cycles']:>13,}{r[c.name + '_cycles']:>15,}"
                         f"{r['speedup']:>9.3f}{r['instruction_ratio']:>13.3f}"
                         f"{r[b.name + '_occupancy']:>7.2f} |{r[c.name + '_occupancy']:>4.2f}"
                         f"{r[b.name + '_active_sms']:>7.2f} |{r[c.name + '_active_sms']:>4.2f}")
        for v in FURTHER:  # the paper's form of the compared point against this point's form
            mine = [r for r in fig if r["preset"] == preset and f"{v.name}_cycles" in r]
            if not mine:
                continue
            lines += ["", f"{c.label} on {preset}: the paper's original form against the default {v.name} form "
                      f"({', '.join(sorted(x.value for x in v.conversion.variants))}; rings summing to the "
                      f"SM's register file per thread at full occupancy, or {b.label}'s registers per thread where "
                      f"more, or larger where that spills), each against {b.label} (RF entries: per thread, "
                      f"{b.label} | {v.name})",
                      f"{'workload':<12}{'original':>10}{'instr ratio':>13}{v.name:>10}{'instr ratio':>13}"
                      f"{'occupancy':>11}{'RF entries':>12}"]
            for r in mine:
                lines.append(f"{r['workload']:<12}{r['speedup']:>10.3f}{r['instruction_ratio']:>13.3f}"
                             f"{r[v.name + '_speedup']:>10.3f}{r[v.name + '_instruction_ratio']:>13.3f}"
                             f"{r[v.name + '_occupancy']:>11.2f}{r[b.name + '_rf_entries']:>7} |"
                             f"{r[v.name + '_rf_entries']:>3}")
    if matches:  # the warps study ran (a workload it defines a GPU slice for was asked for)
        lines += ["", f"Warps-per-SM study on {meta['presets'][0]}: register file {c.label} needs to match {b.label} "
                  "with its full register file",
                  f"{'workload':<12}{b.label + ' warps':>11}{b.label + ' RF KiB':>12}{c.label + ' warps':>13}"
                  f"{c.label + ' RF KiB':>14}{'best speedup':>13}"]
    for m in matches:
        w = "-" if m[c.name + "_match_warps"] is None else str(m[c.name + "_match_warps"])
        k = "never" if m[c.name + "_match_rf_kib"] is None else f"{m[c.name + '_match_rf_kib']:.0f}"
        lines.append(f"{m['workload']:<12}{m[b.name + '_warps']:>11}{m[b.name + '_rf_kib']:>12.0f}{w:>13}{k:>14}"
                     f"{m[c.name + '_best_speedup']:>13.3f}")
    stuck = unfinished(rows)
    if stuck:
        lines += ["", f"Runs left out of the figures: the timing model deadlocked ({len(stuck)}; a model defect, "
                  "issue 35)"]
        lines += [f"  {run_tag(r)}: {r['check'].removeprefix('deadlock: ').split('; state:')[0]}" for r in stuck]
    return "\n".join(lines) + "\n"


def reproduce(out: Path, size: str = "paper", seed: int = 1, presets: Iterable[str] = PRESETS,
              workloads: Iterable[str] = FIGURE_WORKLOADS, warps: Iterable[int] = WARPS, study_sms: int | None = None,
              workers: int | None = None, progress=None) -> str:
    """Run everything, write the tables and plots under ``out``, return the printed summary.
    Figures 9 and 10 run on every preset of ``presets``; the warps study and the energy tables on
    the first."""
    from .plots import plot_energy, plot_figure9_10, plot_warps_study

    workloads, warps, presets = tuple(workloads), tuple(warps), tuple(dict.fromkeys(presets))
    if not presets:
        raise ConfigError("reproduce needs at least one preset")
    for name in workloads:
        wl = get_workload(name)  # a bad name or size fails before any simulation starts
        for s in {figure_size(name, size), study_slice(name, size, study_sms)[0]}:
            if s not in wl.sizes:
                raise ConfigError(f"workload {name} has no size {s!r} (have: {', '.join(wl.sizes)})")
    preset = presets[0]
    for name in presets:
        energy_study.check_priced(preset_config(name))  # e.g. CACTI not built: say so before minutes of runs
    jobs = plan(size, seed, presets, workloads, warps, study_sms)
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    start = time.perf_counter()
    with atomic_folder(out, MARKER) as tmp:  # the whole folder is replaced at once, when complete
        rows = run_all(jobs, workers, tmp, progress)
        meta = {"size": size, "seed": seed, "presets": list(presets), "runs": len(jobs), "study_sms": study_sms,
                "workers": workers, "wall_seconds": time.perf_counter() - start}
        write_table(tmp, "runs", rows)
        fig = sorted(figure9_10(rows), key=lambda r: (presets.index(r["preset"]), workloads.index(r["workload"])))
        write_table(tmp, "figure9_10", fig)
        points, matches = warps_study(rows, preset_config(preset).sm.warp_size)
        write_table(tmp, "warps_study", points)
        write_table(tmp, "warps_study_match", matches)
        energy = energy_study.energy_figure([r for r in rows if r["preset"] == preset])
        write_table(tmp, "energy", energy)
        equal = energy_study.equal_rf(points)
        write_table(tmp, "warps_study_equal_rf", equal)
        for name in presets:  # figure9_10.png: the first preset's; figure9_10-PRESET.png: each other's
            plot_figure9_10([r for r in fig if r["preset"] == name],
                            tmp / ("figure9_10.png" if name == preset else f"figure9_10-{name}.png"))
        if points:  # no workload of the study among those asked for: no study to plot
            plot_warps_study(points, tmp / "warps_study.png")
        if energy and energy[0]["base_energy_j"] is not None:
            plot_energy(energy, tmp / "energy.png")
        text = (summary_text(fig, matches, meta, rows)
                + "\n".join(energy_study.summary_lines(energy, matches, equal)) + "\n")
        atomic_write(tmp / "summary.txt", text)
        atomic_write(tmp / MARKER, json.dumps(meta, indent=1) + "\n")
    return text

"""The D-FLOW out-of-order window, studied (docs/timing-model.md, "The D-FLOW window").

Runs every workload in both modes under each named window policy (below: combinations of
``sm.collector_partition``, ``sm.register_bank_map``, ``sm.dflow_window`` and its limits,
``sm.dflow_send_ahead`` and ``sm.dflow_issue_order``) on a preset, and prints BASE and D-FLOW
cycles and the speedup; BASE changes only with the partition and the bank map (it never sends an
instruction ahead). ``--warps`` also runs the validation's load-use
and chain microbenchmarks (dualflow/experiments/validation.py) on one SM at those warp counts.
``--form variant`` runs D-FLOW in the default variant form at BASE's register capacity (the
``variant`` design point) instead of the original form. Each row ends with the geomean over the
workloads run and over each kernel set run (training: where the window was chosen; held-back:
where it is judged). ``-j N`` runs the simulations on N processes (the output does not depend on N).

    python benchmarks/window_policies.py [--size small] [--preset paper-rtx3080] [--warps 1 8 32]
                                         [--form original|variant] [-j N] [--policies P ...] [workload ...]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from statistics import geometric_mean

from dualflow.experiments.design_points import DFLOW, VARIANT
from dualflow.experiments.simulate import simulate
from dualflow.kernels.registry import WORKLOADS, kernel_set
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset

#: Named policies, each stated in full (whatever the defaults): the partition of the collector
#: units, the register-bank map, the window and its limits, what a warp may send ahead for, and
#: the issue order.
_FIRST = {"sm.collector_partition": "shared", "sm.register_bank_map": "scheduler", "sm.dflow_window": "pool-limited",
          "sm.dflow_waiting_per_warp": 2, "sm.dflow_waiting_per_sm": 4, "sm.dflow_send_ahead": "any",
          "sm.dflow_issue_order": "ready-first"}
_RESERVE = {**_FIRST, "sm.dflow_window": "reserve", "sm.dflow_waiting_per_warp": 4}
POLICIES: dict[str, dict] = {
    # the SM's 8 collector units shared by its 4 schedulers; at most 2 waiting units per warp and
    # 4 per SM; ready-first issue (the project's first window), with entry e of warp w in bank
    # (e + w) mod 8 (the first bank map), and in its scheduler's 2 banks
    "shared-2/4 warp-banks": {**_FIRST, "sm.register_bank_map": "warp"},
    "shared-2/4": _FIRST,
    # ... at most one waiting unit per SM
    "shared-2/1": {**_FIRST, "sm.dflow_waiting_per_sm": 1},
    # sub-cores: each scheduler its own 2 collector units, 2 register banks and share of the
    # pipelines (SM86); at most 2 waiting units per warp (so a warp may fill its sub-core's), or 1
    "sub-cores": {**_FIRST, "sm.collector_partition": "scheduler"},
    "sub-cores-1": {**_FIRST, "sm.collector_partition": "scheduler", "sm.dflow_waiting_per_sm": 1},
    # a per-warp window of k waiting units, no SM-wide limit (TURBULENCE-style)
    "per-warp-1": {**_FIRST, "sm.dflow_window": "per-warp", "sm.dflow_waiting_per_warp": 1},
    "per-warp-2": {**_FIRST, "sm.dflow_window": "per-warp", "sm.dflow_waiting_per_warp": 2},
    "per-warp-4": {**_FIRST, "sm.dflow_window": "per-warp", "sm.dflow_waiting_per_warp": 4},
    # up to 4 waiting units per warp, each only while more than r units of the pool stay free
    "reserve-4": {**_RESERVE, "sm.dflow_reserve": 4},
    "reserve-5": {**_RESERVE, "sm.dflow_reserve": 5},
    "reserve-6": {**_RESERVE, "sm.dflow_reserve": 6},
    # ... and only ahead of a load
    "reserve-5-loads": {**_RESERVE, "sm.dflow_reserve": 5, "sm.dflow_send_ahead": "loads"},
    # sub-cores whose waiting instruction leaves one of the sub-core's 2 units free
    "sub-cores-reserve-1": {**_RESERVE, "sm.collector_partition": "scheduler", "sm.dflow_reserve": 1},
    # oldest-first instead of ready-first issue, with the first window's limits
    "oldest-first": {**_FIRST, "sm.dflow_issue_order": "oldest-first"},
}


def _cycles(name: str, preset_name: str, settings: dict, mode: Mode, size: str, form: str) -> int:
    """One run's cycles: ``name`` on ``preset_name`` with ``settings``, in ``mode``; D-FLOW's kernels
    in the original form or the variant form (``form``)."""
    cfg = preset(preset_name).replace(**settings).replace(mode=mode)
    point = VARIANT if form == "variant" else DFLOW
    conversion = point.conversion_for(name, cfg.sm) if mode is Mode.DFLOW else point.conversion
    return simulate(name, cfg, size=size, conversion=conversion).cycles


def workload_table(size: str, preset_name: str, names: list[str], form: str = "original", jobs: int = 1) -> None:
    base_runs: dict[tuple, tuple] = {}  # BASE depends only on the partition and the bank map
    runs: dict[tuple[str, str], tuple] = {}
    for policy, settings in POLICIES.items():
        for name in names:
            cfg = preset(preset_name).replace(**settings)
            key = (name, cfg.sm.collector_partition, cfg.sm.bank_groups)
            base_runs.setdefault(key, (name, preset_name, settings, Mode.BASE, size, form))
            runs[policy, name] = key, (name, preset_name, settings, Mode.DFLOW, size, form)
    with ProcessPoolExecutor(jobs) as pool:
        base_futures = {key: pool.submit(_cycles, *args) for key, args in base_runs.items()}
        futures = {pk: (key, pool.submit(_cycles, *args)) for pk, (key, args) in runs.items()}
        sets = sorted({kernel_set(n) for n in names}, reverse=True)  # training first
        print(f"Workloads at size {size} on {preset_name}, D-FLOW in the {form} form: D-FLOW speedup over BASE "
              f"(cycles BASE / D-FLOW)")
        print(f"{'policy':<24}" + "".join(f"{n:>20}" for n in names) + f"{'geomean':>9}"
              + "".join(f"{s:>10}" for s in sets))
        for policy in POLICIES:
            row, speedups = f"{policy:<24}", {}
            for name in names:
                key, future = futures[policy, name]
                base, dflow = base_futures[key].result(), future.result()
                speedups[name] = base / dflow
                row += f"{base / dflow:>7.3f} {base:>6}/{dflow:<6}"
            per_set = [geometric_mean([v for n, v in speedups.items() if kernel_set(n) == s]) for s in sets]
            print(row + f"{geometric_mean(speedups.values()):>9.3f}" + "".join(f"{g:>10.3f}" for g in per_set),
                  flush=True)


def micro_table(preset_name: str, warps: list[int]) -> None:
    from dualflow.experiments import validation

    cases = [c for c in validation.CASES if c.name in ("load-use", "fp-ilp1", "int-ilp1", "chase-l1", "shared-s1")]
    print(f"\nMicrobenchmarks on one SM of {preset_name}: IPC BASE / D-FLOW at {warps} warps")
    print(f"{'policy':<24}{'case':<11}" + "".join(f"{w:>14}" for w in warps))
    for policy, settings in POLICIES.items():
        for case in cases:
            row = f"{policy:<24}{case.name:<11}"
            for w in warps:
                ipc = [validation.measure(case, preset_name, mode, w, changes=settings).ipc for mode in Mode]
                row += f"{ipc[0]:>7.2f}/{ipc[1]:<6.2f}"
            print(row, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--preset", default="paper-rtx3080")
    parser.add_argument("--warps", type=int, nargs="*", default=[])
    parser.add_argument("--policies", nargs="*", default=list(POLICIES), choices=list(POLICIES), metavar="POLICY")
    parser.add_argument("--form", choices=("original", "variant"), default="original")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("workloads", nargs="*", default=sorted(WORKLOADS))
    args = parser.parse_args(argv)
    for name in list(POLICIES):
        if name not in args.policies:
            del POLICIES[name]
    workload_table(args.size, args.preset, args.workloads, args.form, args.jobs)
    if args.warps:
        micro_table(args.preset, args.warps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

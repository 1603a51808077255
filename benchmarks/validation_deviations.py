"""Measure the causes of the deviations docs/validation.md explains ("Deviations, and what binds").

Each table runs one case at the warp counts around its deviation, on one SM as
``benchmarks/timing_validation.py`` does (``measure``: the difference of two trip counts), with the
preset's configuration and with one or two fields changed, and prints the steady-state rate next
to what the longer launch (24 iterations) shows: scheduler-cycles lost to a stall reason
(``lost_to``, as a fraction of the non-idle scheduler-cycles: ``collector_full``, the next
instruction ready and no collector unit free; ``scoreboard``, every warp waiting for a register
write; ``ring_guard``, D-FLOW's ring slots), and from its issue log
(``TimingDevice(record_issue=True)``) when the first warp and each warp scheduler's last warp
issued their last instruction (``last_issues``), the issue rate before and after the first warp's
end (``head_tail``), or how often an ``isub`` issued the cycle after the previous one of its
scheduler.

Tables: ``shared`` (the shared strides past their knee), ``fp`` (FP chains on ampere-rtx3070),
``fp-paper`` (FP chains on paper-rtx3080, GTO against LRR), ``load-use`` (D-FLOW's window),
``stream`` and ``banks`` (stream-dram, one warp, on ampere-rtx3070).

    python benchmarks/validation_deviations.py [--table shared|fp|fp-paper|load-use|stream|banks ...]
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from dualflow.experiments.validation import CASE, MAX_WARPS, Case, _buffer, _data, kernel, machine, measure, predict
from dualflow.isa import Opcode
from dualflow.machine.config import UnitConfig
from dualflow.machine.mode import Mode
from dualflow.models.timing.device import TimingDevice

LONG = 24  # the longer trip count of ``measure``


def logged_launch(case: Case, preset_name: str, mode: Mode, warps: int, changes: Mapping[str, Any] | None):
    """The longer launch of ``run``, with the issue log: (timing statistics, issue log, warps per block)."""
    config = machine(preset_name, mode, changes)
    ws, line = config.sm.warp_size, config.memory.l1.line_bytes
    k = kernel(case, LONG, mode.form, line)
    dev = TimingDevice(config, record_issue=True)
    base = _buffer(dev, case, LONG, config)
    dev.copy_in(base, _data(case, LONG, config, base))
    out = dev.alloc(4 * MAX_WARPS * ws)
    blocks = 1 if warps <= 32 else 2
    for _ in range(2 if case.level == "l2" else 1):
        dev.launch(k, grid=blocks, block=ws * warps // blocks, params=[base, out])
    return dev.timing[-1], dev.gpu.issue_log, warps // blocks, k, config.sm.schedulers


def lost_to(stats, reason: str) -> float:
    """Scheduler-cycles whose stall reason (dualflow/models/timing/stats.py ``STALL_REASONS``) was ``reason``,
    as a fraction of the non-idle scheduler-cycles."""
    st = stats.stalls
    busy = sum(st.values()) - st["idle"]
    return st[reason] / busy if busy else 0.0


def scheduler_of(block: int, warp: int, per: int, schedulers: int) -> int:
    """The warp scheduler of a block's warp: slot = block * per + warp; scheduler = slot % n."""
    return (block * per + warp) % schedulers


def last_issues(log, per: int, schedulers: int) -> tuple[dict[tuple[int, int], int], list[int]]:
    """From an issue log: the cycle at which each (block, warp) issued its last instruction, and
    at which each scheduler's last warp did."""
    ends: dict[tuple[int, int], int] = {}
    for cycle, block, warp, _pc in log:
        ends[block, warp] = cycle
    sched_end = [0] * schedulers
    for (block, warp), cycle in ends.items():
        s = scheduler_of(block, warp, per, schedulers)
        sched_end[s] = max(sched_end[s], cycle)
    return ends, sched_end


def head_tail(log, ends: Mapping[tuple[int, int], int]) -> tuple[float, float]:
    """Issue rates (warp-instructions a cycle) of a launch from its first issue to the first warp's
    last (every warp resident), and from then to the last warp's (``ends``: ``last_issues``)."""
    start, first, end = min(cycle for cycle, *_ in log), min(ends.values()), max(ends.values())
    head = sum(1 for cycle, *_ in log if cycle <= first)
    return head / (first - start + 1), (len(log) - head) / (end - first) if end > first else 0.0


def label(changes: Mapping[str, Any] | None) -> str:
    if not changes:
        return "preset"
    out = []
    for k, val in changes.items():
        if isinstance(val, UnitConfig):
            val = f"lat {val.latency} interval {val.interval} x{val.count}"
        out.append(f"{k.removeprefix('sm.')}={val}")
    return ", ".join(out)


def shared_table() -> str:
    """Dips past the knee of the shared strides: which scheduler finishes when."""
    swaps = {"paper-rtx3080": ({}, {"sm.scheduler": "lrr"}, {"sm.collector_partition": "scheduler"},
                               {"sm.scheduler": "lrr", "sm.collector_partition": "scheduler"}),
             "ampere-rtx3070": ({}, {"sm.scheduler": "gto"}, {"sm.collector_partition": "shared"},
                                {"sm.scheduler": "gto", "sm.collector_partition": "shared"})}
    lines = ["Shared strides, BASE: IPC; in the 24-trip launch: cycles lost to full collector units, and the cycle",
             "at which the first warp and each scheduler's last warp issued their last instruction",
             f"{'case':<10}{'preset':<15}{'changes':<45}{'W':>3}{'IPC':>6}{'full':>6}{'first end':>10}"
             "  last issue per scheduler"]
    for preset_name, changes_list in swaps.items():
        for name, counts in (("shared-s1", (32, 48)), ("shared-s2", (16, 32)), ("shared-s4", (12, 24))):
            for changes in changes_list:
                for w in counts:
                    p = measure(CASE[name], preset_name, Mode.BASE, w, changes=changes)
                    stats, log, per, _, schedulers = logged_launch(CASE[name], preset_name, Mode.BASE, w, changes)
                    ends, sched_end = last_issues(log, per, schedulers)
                    lines.append(f"{name:<10}{preset_name:<15}{label(changes):<45}{w:>3}{p.ipc:>6.2f}"
                                 f"{lost_to(stats, 'collector_full'):>6.2f}{min(ends.values()):>10}  "
                                 + " ".join(f"{c:>6}" for c in sched_end))
    return "\n".join(lines)


def fp_table() -> str:
    """FP chains on the Ampere preset: the sub-core's INT pipeline (interval 2) and the loop's isub;
    GTO, with either INT pipeline, against LRR."""
    int1 = UnitConfig(4, 1, 4)
    dflow_changes = ({}, {"sm.int_unit": int1}, {"sm.scheduler": "gto"}, {"sm.scheduler": "gto", "sm.int_unit": int1})
    changes_list = (*dflow_changes[:2], {"sm.collector_partition": "shared"}, {"sm.collector_units": 16},
                    {"sm.register_bank_ports": 4}, *dflow_changes[2:])
    lines = ["FP chains on ampere-rtx3070: IPC; in the 24-trip launch: scheduler-cycles lost to full collector",
             "units, to D-FLOW's ring guard and to the scoreboard, the issue rate until the first warp's last issue",
             "(head), the cycles from then to the last warp's last issue (tail) and the issue rate in them, and the",
             "isubs issued the cycle after the previous isub of their scheduler (its one INT pipeline takes one",
             "every 2 cycles)",
             f"{'case':<9}{'mode':<6}{'changes':<50}{'W':>3}{'IPC':>6}{'full':>6}{'ring':>6}{'sb':>6}{'head':>6}"
             f"{'tail':>6}{'rate':>6}  isub back to back"]
    for name in ("fp-ilp1", "fp-ilp2", "fp-ilp4"):
        for mode in (Mode.BASE, Mode.DFLOW):
            for changes in changes_list if mode is Mode.BASE else dflow_changes:
                for w in (24, 32):
                    p = measure(CASE[name], "ampere-rtx3070", mode, w, changes=changes)
                    stats, log, per, k, schedulers = logged_launch(CASE[name], "ampere-rtx3070", mode, w, changes)
                    ends, _ = last_issues(log, per, schedulers)
                    isub = {pc for pc, ins in enumerate(k.code) if ins.op is Opcode.ISUB}
                    last: dict[int, int] = {}
                    close = total = 0
                    for cycle, block, warp, pc in log:
                        if pc in isub:
                            s = scheduler_of(block, warp, per, schedulers)
                            total += 1
                            close += s in last and cycle - last[s] == 1
                            last[s] = cycle
                    ring = f"{lost_to(stats, 'ring_guard'):.2f}" if mode is Mode.DFLOW else "-"
                    head, tail = head_tail(log, ends)
                    lines.append(f"{name:<9}{mode.value:<6}{label(changes):<50}{w:>3}{p.ipc:>6.2f}"
                                 f"{lost_to(stats, 'collector_full'):>6.2f}{ring:>6}"
                                 f"{lost_to(stats, 'scoreboard'):>6.2f}{head:>6.2f}"
                                 f"{max(ends.values()) - min(ends.values()):>6}{tail:>6.2f}  {close / total:.2f}")
    return "\n".join(lines)


def fp_paper_table() -> str:
    """FP chains on the paper preset (GTO) against LRR: when the warps and the schedulers finish."""
    lines = ["FP chains on paper-rtx3080: IPC; in the 24-trip launch: scheduler-cycles lost to full collector units",
             "and to the scoreboard, the issue rate until the first warp's last issue (head) and after it (tail),",
             "and the cycle at which the first warp and each scheduler's last warp issued their last instruction",
             f"{'case':<9}{'mode':<6}{'changes':<15}{'W':>3}{'IPC':>6}{'full':>6}{'sb':>6}{'head':>6}{'tail':>6}"
             f"{'first end':>10}  last issue per scheduler"]
    for name in ("fp-ilp1", "fp-ilp2"):
        for mode in (Mode.BASE, Mode.DFLOW):
            for changes in ({}, {"sm.scheduler": "lrr"}):
                for w in (32, 64):
                    p = measure(CASE[name], "paper-rtx3080", mode, w, changes=changes)
                    stats, log, per, _, schedulers = logged_launch(CASE[name], "paper-rtx3080", mode, w, changes)
                    ends, sched_end = last_issues(log, per, schedulers)
                    head, tail = head_tail(log, ends)
                    lines.append(f"{name:<9}{mode.value:<6}{label(changes):<15}{w:>3}{p.ipc:>6.2f}"
                                 f"{lost_to(stats, 'collector_full'):>6.2f}{lost_to(stats, 'scoreboard'):>6.2f}"
                                 f"{head:>6.2f}{tail:>6.2f}{min(ends.values()):>10}  "
                                 + " ".join(f"{c:>6}" for c in sched_end))
    return "\n".join(lines)


def load_use_table() -> str:
    """load-use in D-FLOW: the reserve window against the pool-limited one."""
    lines = ["load-use, D-FLOW: IPC (cycles lost to full collector units in the 24-trip launch) per window",
             f"{'preset':<15}{'window':<14}" + "".join(f"{w:>14}" for w in (1, 4, 16, 32, 64))]
    for preset_name in ("paper-rtx3080", "ampere-rtx3070"):
        for window in ("reserve", "pool-limited"):
            changes = {"sm.dflow_window": window}
            cells = []
            for w in (1, 4, 16, 32, 64):
                p = measure(CASE["load-use"], preset_name, Mode.DFLOW, w, changes=changes)
                stats = logged_launch(CASE["load-use"], preset_name, Mode.DFLOW, w, changes)[0]
                cells.append(f"{p.ipc:.2f} ({lost_to(stats, 'collector_full'):.2f})")
            lines.append(f"{preset_name:<15}{window:<14}" + "".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)


def stream_table() -> str:
    """stream-dram, one warp on the Ampere preset: cycles per iteration, walked and measured."""
    lines = ["stream-dram, one warp, ampere-rtx3070: cycles per iteration",
             f"{'mode':<6}{'changes':<50}{'walk':>8}{'measured':>10}"]
    for mode in (Mode.BASE, Mode.DFLOW):
        for changes in ({}, {"sm.collector_partition": "shared"}, {"sm.dflow_reserve": 0},
                        {"sm.collector_units": 16}):
            if mode is Mode.BASE and changes.get("sm.dflow_reserve") is not None:
                continue
            walk = predict(CASE["stream-dram"], "ampere-rtx3070", mode, changes).latency
            meas = measure(CASE["stream-dram"], "ampere-rtx3070", mode, 1, changes=changes).latency()
            lines.append(f"{mode.value:<6}{label(changes):<50}{walk:>8.1f}{meas:>10.1f}")
    return "\n".join(lines)


def banks_table() -> str:
    """The one DRAM case a cycle off the walk (stream-dram, D-FLOW, Ampere with 4 DRAM banks and
    256 B rows), with more register-file banks or ports: the walk models no bank conflicts."""
    dram = {"memory.dram.banks": 4, "memory.dram.row_bytes": 256}
    lines = ["stream-dram, one warp, D-FLOW, ampere-rtx3070 with 4 DRAM banks and 256 B rows: cycles per iteration",
             f"{'changes':<60}{'walk':>8}{'measured':>10}"]
    for extra in ({}, {"sm.register_banks": 16}, {"sm.register_bank_ports": 4}):
        changes = {**dram, **extra}
        walk = predict(CASE["stream-dram"], "ampere-rtx3070", Mode.DFLOW, changes).latency
        meas = measure(CASE["stream-dram"], "ampere-rtx3070", Mode.DFLOW, 1, changes=changes).latency()
        lines.append(f"{label(changes):<60}{walk:>8.1f}{meas:>10.1f}")
    return "\n".join(lines)


TABLES = {"shared": shared_table, "fp": fp_table, "fp-paper": fp_paper_table, "load-use": load_use_table,
          "stream": stream_table, "banks": banks_table}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", action="append", choices=sorted(TABLES), help="tables to print (default: all)")
    args = ap.parse_args()
    for name in args.table or TABLES:
        print(TABLES[name](), end="\n\n", flush=True)


if __name__ == "__main__":
    main()

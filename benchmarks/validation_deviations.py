"""Measure the causes of the deviations docs/validation.md explains ("Deviations, and what binds").

Each table runs one case at the warp counts around its deviation, on one SM as
``benchmarks/timing_validation.py`` does (``measure``: the difference of two trip counts), with the
preset's configuration and with one or two fields changed, and prints the steady-state rate next
to what the longer launch (24 iterations) shows: scheduler-cycles lost to ``collector_full`` (the
next instruction ready, no collector unit free; as a fraction of the non-idle scheduler-cycles),
and from its issue log (``TimingDevice(record_issue=True)``) when each warp scheduler's last
warp issued its last instruction, or how often an ``isub`` issued the cycle after the previous one
of its scheduler.

    python benchmarks/validation_deviations.py [--table shared|fp|load-use|stream|banks ...]
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


def lost_to_full_units(stats) -> float:
    st = stats.stalls
    busy = sum(st.values()) - st["idle"]
    return st["collector_full"] / busy if busy else 0.0


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
                    ends: dict[tuple[int, int], int] = {}
                    for cycle, block, warp, _pc in log:
                        ends[block, warp] = cycle
                    sched_end = [0] * schedulers
                    for (block, warp), cycle in ends.items():  # slot = block * per + warp; scheduler = slot % n
                        s = (block * per + warp) % schedulers
                        sched_end[s] = max(sched_end[s], cycle)
                    lines.append(f"{name:<10}{preset_name:<15}{label(changes):<45}{w:>3}{p.ipc:>6.2f}"
                                 f"{lost_to_full_units(stats):>6.2f}{min(ends.values()):>10}  "
                                 + " ".join(f"{c:>6}" for c in sched_end))
    return "\n".join(lines)


def fp_table() -> str:
    """FP chains on the Ampere preset: the sub-core's INT pipeline (interval 2) and the loop's isub."""
    changes_list = ({}, {"sm.int_unit": UnitConfig(4, 1, 4)}, {"sm.collector_partition": "shared"},
                    {"sm.collector_units": 16}, {"sm.register_bank_ports": 4}, {"sm.scheduler": "gto"})
    lines = ["FP chains on ampere-rtx3070: IPC; in the 24-trip launch: cycles lost to full collector units, and the",
             "isubs issued the cycle after the previous isub of their scheduler (its one INT pipeline takes one",
             "every 2 cycles)",
             f"{'case':<9}{'mode':<6}{'changes':<45}{'W':>3}{'IPC':>6}{'full':>6}  isub back to back"]
    for name in ("fp-ilp1", "fp-ilp2", "fp-ilp4"):
        for mode in (Mode.BASE, Mode.DFLOW):
            for changes in changes_list if mode is Mode.BASE else changes_list[:2]:
                for w in (24, 32):
                    p = measure(CASE[name], "ampere-rtx3070", mode, w, changes=changes)
                    stats, log, per, k, schedulers = logged_launch(CASE[name], "ampere-rtx3070", mode, w, changes)
                    isub = {pc for pc, ins in enumerate(k.code) if ins.op is Opcode.ISUB}
                    last: dict[int, int] = {}
                    close = total = 0
                    for cycle, block, warp, pc in log:
                        if pc in isub:
                            s = (block * per + warp) % schedulers
                            total += 1
                            close += s in last and cycle - last[s] == 1
                            last[s] = cycle
                    lines.append(f"{name:<9}{mode.value:<6}{label(changes):<45}{w:>3}{p.ipc:>6.2f}"
                                 f"{lost_to_full_units(stats):>6.2f}  {close / total:.2f}")
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
                cells.append(f"{p.ipc:.2f} ({lost_to_full_units(stats):.2f})")
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


TABLES = {"shared": shared_table, "fp": fp_table, "load-use": load_use_table, "stream": stream_table,
          "banks": banks_table}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", action="append", choices=sorted(TABLES), help="tables to print (default: all)")
    args = ap.parse_args()
    for name in args.table or TABLES:
        print(TABLES[name](), end="\n\n", flush=True)


if __name__ == "__main__":
    main()

"""Microbenchmarks of the DRAM model (dualflow/models/timing/memory/dram.py), in core cycles, per preset.

Latency: of one read on an idle channel, from the L2 miss leaving its slice to the data back:
a row hit, a read of a closed bank (activate), a row conflict (precharge + activate); and of a
whole load from an SM (empty caches, so an L2 miss) for each. Bandwidth of one channel with a
deep queue (every request made at once): a stream of consecutive lines (row hits), random
lines and random 32 B sectors over 1 GiB (nearly all row conflicts), and two streams that
alternate between two rows of the same banks, under the reservation schedulers (fcfs, frfcfs)
and the queued controllers (queued-fcfs, queued-frfcfs, with the preset's queue entries).

    .venv/bin/python benchmarks/dram_microbench.py [--preset NAME ...] [--requests N]

docs/memory-system.md ("DRAM") records its output.
"""

from __future__ import annotations

import argparse
import random

from dualflow.machine.presets import PRESETS, preset
from dualflow.models.timing.memory.coalescer import Transaction
from dualflow.models.timing.memory.dram import Dram
from dualflow.models.timing.memory.dram_queue import replay
from dualflow.models.timing.memory.system import MemorySystem

LINE = 128


def _dram(config, scheduler: str | None = None) -> Dram:
    dram = config.memory.dram if scheduler is None else config.memory.dram.__class__(
        **{**config.memory.dram.to_dict(), "scheduler": scheduler})
    return Dram(dram, config.core_clock_mhz, LINE)


def latencies(config) -> dict[str, int]:
    """Idle-channel read latencies from the L2, core cycles: closed bank, row hit, row conflict."""
    d = _dram(config)
    channels, banks = d.channels, d.banks
    same_row = channels * banks  # the next line of bank 0's row 0
    other_row = channels * banks * d.lines_per_row  # bank 0, row 1
    far = 100_000  # well after everything before has finished
    closed = d.read(0, 0, LINE, 0)
    hit = d.read(far, same_row, LINE, far) - far
    conflict = d.read(2 * far, other_row, LINE, 2 * far) - 2 * far
    return {"closed bank": closed, "row hit": hit, "row conflict": conflict}


def load_latencies(config) -> dict[str, int]:
    """Whole load latency of one warp from SM 0 (a coalesced line, empty L1 and L2)."""
    ms = MemorySystem(config.memory, config.num_sms, config.core_clock_mhz)
    d = ms._dram
    far = 100_000
    lines = {"closed bank": 0, "row hit": d.channels * d.banks, "row conflict": d.channels * d.banks * d.lines_per_row}
    out = {}
    for i, (name, line) in enumerate(lines.items()):
        cycle = i * far
        out[name] = ms.global_access(cycle, 0, [Transaction(line * LINE, 0b1111, LINE)], write=False).done - cycle
    return out


def bandwidth(config, lines: list[int], nbytes: int, scheduler: str | None = None) -> tuple[float, float]:
    """Bytes per core cycle of channel 0 for reads of ``lines`` (all made at cycle 0), and the
    row-hit rate."""
    queued = scheduler is not None and scheduler.startswith("queued-")
    d = _dram(config, "fcfs" if queued else scheduler)
    start = 0
    if queued:  # the queue holds queue_entries of them; the rest wait upstream
        ends, _ = replay(d, config.memory.dram.queue_entries, scheduler == "queued-frfcfs",
                         [(start, line, nbytes, False, start) for line in lines])
        end = max(ends)
    else:
        end = max(d.read(start, line, nbytes, start) for line in lines)
    return len(lines) * nbytes / (end - start - d.latency), d.row_hits / (d.row_hits + d.row_misses)


def report(name: str, requests: int, seed: int) -> list[str]:
    config = preset(name)
    d = _dram(config)
    clock = config.core_clock_mhz
    peak = 1 / d.cycles_per_byte  # bytes per core cycle of one channel
    out = [f"## {name}: core {clock:g} MHz, DRAM {config.memory.dram.clock_mhz:g} MHz, {d.channels} channels x "
           f"{d.banks} banks, {config.memory.dram.row_bytes} B rows, fixed latency {d.latency}, "
           f"scheduler {config.memory.dram.scheduler}",
           "",
           "| latency (core cycles) | from the L2 | load from an SM |",
           "|---|---|---|"]
    from_l2, from_sm = latencies(config), load_latencies(config)
    for key in from_l2:
        out.append(f"| {key} | {from_l2[key]} | {from_sm[key]} |")
    out += ["", f"Peak per channel: {peak:.2f} B/core cycle = {peak * clock / 1000:.1f} GB/s "
            f"({d.channels} channels: {d.channels * peak * clock / 1000:.0f} GB/s).", "",
            "| one channel, deep queue | scheduler | B/core cycle | GB/s | of peak | row-hit rate |",
            "|---|---|---|---|---|---|"]
    rng = random.Random(seed)
    region = (1 << 30) // LINE // d.channels  # lines of channel 0 in 1 GiB
    stream = [k * d.channels for k in range(requests)]
    scattered = [rng.randrange(region) * d.channels for _ in range(requests)]
    # two streams in the same banks, one row apart, request by request: every other request changes rows
    row_apart = d.channels * d.banks * d.lines_per_row
    two_rows = [line + row_apart * (k % 2) for k, line in enumerate(x for x in stream[:requests // 2] for _ in (0, 1))]
    every = ("fcfs", "frfcfs", "queued-fcfs", "queued-frfcfs")
    cases = [("stream, 128 B lines", stream, LINE, (None, "queued-frfcfs")),
             ("two streams a row apart, alternating", two_rows, LINE, every),
             ("random 128 B lines", scattered, LINE, every),
             ("random 32 B sectors", scattered, 32, every)]
    for label, lines, nbytes, schedulers in cases:
        for scheduler in schedulers:
            rate, hits = bandwidth(config, lines, nbytes, scheduler)
            shown = scheduler or config.memory.dram.scheduler
            out.append(f"| {label} | {shown} | {rate:.2f} | {rate * clock / 1000:.1f} | {rate / peak:.0%} | "
                       f"{hits:.2f} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", nargs="*", default=["paper-rtx3080", "ampere-rtx3070"], choices=list(PRESETS))
    parser.add_argument("--requests", type=int, default=4096, help="requests per bandwidth case")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name in args.preset:
        print("\n".join(report(name, args.requests, args.seed)))
        print()


if __name__ == "__main__":
    main()

"""Speed of the compiled memory system against the reference, on requests of real runs.

Records every memory-system call of each workload's run on the ``paper-rtx3080`` preset (68 SMs),
then replays the calls into fresh systems: the reference ``MemorySystem`` from a Python loop
(transactions built beforehand), the compiled one from an njit loop (as the compiled engine
calls it). Prints the median cost per warp access (global, local and shared; flushes are timed
but not counted) over ``--repeat`` replays, in CPU time of the process (the machine may be
shared), and checks that both give the recorded results.

    python benchmarks/memory_speed.py [--size small] [--mode dflow] [--repeat 5] [workload ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from dualflow.experiments.simulate import simulate
from dualflow.machine.presets import preset
from dualflow.models.timing.compiled.memory import CompiledMemory
from dualflow.models.timing.compiled.memory_log import FLUSH, GLOBAL, MemoryLog, record_memory, replay
from dualflow.models.timing.memory.system import MemorySystem

DEFAULT = ("gaussian", "bfs", "nw", "pathfinder")


def _time_reference(log: MemoryLog) -> float:
    calls = [(int(k), int(c), int(s), bool(a) if k == GLOBAL else int(a), log.transactions_of(i))
             for i, (k, c, s, a) in enumerate(zip(log.kind, log.cycle, log.sm, log.arg))]
    ms = MemorySystem(log.config, log.num_sms, log.core_clock_mhz)
    results = []
    start = time.process_time()
    for kind, cycle, sm, arg, txs in calls:
        if kind == GLOBAL:
            results.append(ms.global_access(cycle, sm, txs, write=arg))
        elif kind == FLUSH:
            ms.flush_l1(cycle)
            results.append(None)
        else:
            results.append(ms.shared_access(cycle, sm, arg))
    seconds = time.process_time() - start
    assert all(r is None or (r.port_free, r.done) == (p, d) for r, p, d in zip(results, log.port_free, log.done))
    return seconds


def _time_compiled(log: MemoryLog) -> float:
    cm = CompiledMemory(log.config, log.num_sms, log.core_clock_mhz)
    start = time.process_time()
    port_free, done = replay(log, cm.state)
    seconds = time.process_time() - start
    assert np.array_equal(port_free, log.port_free) and np.array_equal(done, log.done)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=DEFAULT)
    parser.add_argument("--size", default="small")
    parser.add_argument("--mode", default="dflow")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    config = preset("paper-rtx3080").replace(mode=args.mode)
    print(f"paper-rtx3080, {args.mode}, size {args.size}, median of {args.repeat} replays")
    print(f"{'workload':<11}{'accesses':>10}{'transactions':>14}{'reference ns':>14}{'compiled ns':>13}{'speedup':>9}")
    warmup = CompiledMemory(config.memory, 1, config.core_clock_mhz)  # load (or compile) the njit code once
    empty = MemoryLog(config.memory, 1, config.core_clock_mhz)
    empty.freeze()
    replay(empty, warmup.state)
    for name in args.workloads:
        with record_memory() as logs:
            simulate(name, config, size=args.size, engine="reference")
        log = logs[0]
        accesses = int(np.count_nonzero(log.kind != FLUSH))
        reference = statistics.median(_time_reference(log) for _ in range(args.repeat)) / accesses * 1e9
        compiled = statistics.median(_time_compiled(log) for _ in range(args.repeat)) / accesses * 1e9
        print(f"{name:<11}{accesses:>10,}{len(log.tx_line):>14,}{reference:>14,.0f}{compiled:>13,.0f}"
              f"{reference / compiled:>9,.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

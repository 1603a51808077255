"""Functional-model speed: simulated thread-instructions per second on one core.

Runs each sample kernel in both forms at a size that keeps the model busy for about a second,
several times, and prints the median rate (these machines are shared and noisy: medians, and
ratios measured within one run). Usage: python benchmarks/functional_speed.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: numpy's elementwise work is single-threaded

from dualflow.isa import Form  # noqa: E402
from dualflow.kernels.samples import SAMPLES, run_sample  # noqa: E402
from dualflow.models import FunctionalConfig  # noqa: E402


def measure(name: str, form: Form, n: int, repeat: int, config: FunctionalConfig | None = None):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run = run_sample(name, form, n=n, config=config)
        times.append(time.perf_counter() - start)
    t = statistics.median(times)
    s = run.total
    return s.thread_instructions / t, s.warp_instructions / t, s.thread_instructions, s.warp_instructions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=1 << 18, help="elements per sample (default 262144)")
    args = parser.parse_args()
    print(f"functional model speed, n = {args.n}, median of {args.repeat} runs (host set-up and checks included)")
    print(f"{'kernel':<9} {'form':<6} {'thread-instr':>13} {'warp-instr':>11} "
          f"{'Mthread-instr/s':>16} {'kwarp-instr/s':>14}")
    rates = []
    for name in SAMPLES:
        for form in Form:
            trate, wrate, tcount, wcount = measure(name, form, args.n, args.repeat)
            rates.append(trate)
            print(f"{name:<9} {form.value:<6} {tcount:>13} {wcount:>11} {trate / 1e6:>16.2f} {wrate / 1e3:>14.1f}")
    print(f"median over kernels and forms: {statistics.median(rates) / 1e6:.2f} M thread-instructions/s")
    print("\none block at a time (batch_warps=1, n = 4096), close to RTL co-simulation sizes:")
    single = FunctionalConfig(batch_warps=1)
    for name in SAMPLES:
        for form in Form:
            trate, wrate, _, _ = measure(name, form, 4096, args.repeat, single)
            print(f"{name:<9} {form.value:<6} {trate / 1e6:>8.2f} Mthread-instr/s {wrate / 1e3:>8.1f} kwarp-instr/s")


if __name__ == "__main__":
    main()

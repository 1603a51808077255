"""The converter's work, in the steps it counts (dualflow/isa/convert/work.py), on every workload
and on random programs: what ``WORK_LIMIT`` is chosen against, and how steps relate to CPU time.

For every workload's kernels (each variant set, at the paper's ring and at the smallest hand
budgets the property tests use) and for ``--programs`` random programs of the property tests'
generator (each configuration those tests convert at), the steps one conversion takes and its CPU
time. Prints the largest, the median and the steps per CPU second, and the limit's headroom over
the largest. Usage:

    python benchmarks/converter_work.py [--programs 200] [--seed 1] [NAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

from dualflow.isa import Form, assemble
from dualflow.isa.convert import DEFAULT_VARIANTS, WORK_LIMIT, ConvertError, convert_kernel
from dualflow.isa.opcodes import Variant
from dualflow.kernels.registry import WORKLOADS
from dualflow.testbench.randprog.generator import GenConfig, RandomSource, generate

HANDS = frozenset({Variant.HANDS})
#: (variants, dmax, ring, rings): the configurations the property tests convert at
#: (tests/isa/convert/test_convert_property.py), and the paper's ring with the default variants
#: (all three).
CONFIGS = [(frozenset(), 12, 13, None), (frozenset(), 31, 32, None), (frozenset(), 100, 128, None),
           (HANDS, 12, 15, (13, 2)), (HANDS, 14, 15, None), (HANDS, 16, 24, None), (HANDS, 31, 32, None),
           (HANDS, 100, 128, None), (DEFAULT_VARIANTS, 31, 32, None)]


def measure(kernel) -> list[tuple[str, int, float]]:
    """(configuration, steps, CPU seconds) of each conversion of ``kernel`` that succeeds."""
    rows = []
    for variants, dmax, ring, rings in CONFIGS:
        start = time.process_time()
        try:
            _, report = convert_kernel(kernel, dmax=dmax, ring=ring, variants=variants, rings=rings, work_limit=None)
        except ConvertError:
            continue  # a kernel the converter refuses at this configuration takes no figure
        name = f"{'+'.join(sorted(v.value for v in variants)) or 'none'} dmax {dmax} ring {ring}"
        rows.append((name, report.work, time.process_time() - start))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="workloads (default: all)")
    ap.add_argument("--programs", type=int, default=200, help="random programs of the property tests' generator")
    ap.add_argument("--seed", type=int, default=1, help="first random program's seed")
    args = ap.parse_args()
    samples: list[tuple[str, str, int, float]] = []
    for name in args.names or sorted(WORKLOADS):
        for kernel in WORKLOADS[name]().module(Form.REG):
            samples += [(f"{name}:{kernel.name}", *row) for row in measure(kernel)]
    shapes = [GenConfig(), GenConfig(exit_percent=25, shared_exit_percent=80),
              GenConfig(min_pool=14, max_pool=30, max_instructions=200)]
    for seed in range(args.seed, args.seed + args.programs):
        prog = generate(RandomSource(seed), shapes[seed % len(shapes)])
        samples += [(f"program {seed}", *row) for row in measure(assemble(prog.text).only)]
    steps = [s for _, _, s, _ in samples]
    rates = [s / t for _, _, s, t in samples if t > 0.01]
    top = sorted(samples, key=lambda r: -r[2])[:5]
    print(f"conversions: {len(samples)} ({len(args.names) or len(WORKLOADS)} workloads, {args.programs} programs)")
    print(f"steps: median {statistics.median(steps):,.0f}, largest {max(steps):,}")
    print(f"steps per CPU second (conversions over 10 ms): median {statistics.median(rates):,.0f}")
    print(f"WORK_LIMIT {WORK_LIMIT:,}: {WORK_LIMIT / max(steps):.1f}x the largest")
    for what, config, s, t in top:
        print(f"  {s:>12,} steps  {t:7.2f} s  {what}  ({config})")


if __name__ == "__main__":
    main()

"""The hands coverage campaign: one batch on the ``hands`` parameter set (4 lanes x 4 warps) of
``CLEAN`` clean programs (the main hands s and u in turn) and one illegal read per hand (s, t, u,
v in turn), which hits every bin of the hands cover point (dualflow/testbench/hands_coverage.py) in the
default suite's time (tests/testbench/test_rtl_random.py). The default schedule (every 8th program faults,
the six kinds in turn) meets a DFLOW_READ once in 48 programs, so this one is its own.

``python -m dualflow.testbench.hands_campaign [--seed S] [--simulator icarus|verilator]`` prints the
campaign's report (compared instructions, programs, wall time, every bin with its count).
"""

from __future__ import annotations

import argparse

from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams

from .campaign import Campaign, core_params, run_campaign

__all__ = ["CLEAN", "CORE", "TARGET", "clean_then_illegal_reads", "hands_coverage_campaign"]

#: The core of the campaign (the 4 x 4 core of the co-simulation tests) on the ``hands`` set.
CORE = {"warp_size": 4, "warps": 4}
#: Compared warp instructions asked for (the first batch gives more).
TARGET = 1500
#: Clean programs before the illegal reads.
CLEAN = 2


def clean_then_illegal_reads(index: int, params: CoreParams) -> TrapCause | None:
    """Programs below ``CLEAN`` clean, the others illegal reads (the campaign takes the hands in turn)."""
    return None if index < CLEAN else TrapCause.DFLOW_READ


def hands_coverage_campaign(seed: int, simulator: str = "icarus") -> Campaign:
    """One batch: ``CLEAN`` clean programs and one illegal read per hand."""
    hands = core_params("hands", "dflow", CORE).hands
    return run_campaign(TARGET, seed, modes=("dflow",), param_sets=("hands",), overrides=CORE,
                        batch=CLEAN + hands, simulator=simulator, faults=clean_then_illegal_reads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--simulator", default="icarus", choices=("icarus", "verilator"))
    args = parser.parse_args(argv)
    camp = hands_coverage_campaign(args.seed, args.simulator)
    try:
        print(camp.report())
        return 0 if camp.ok and not camp.coverage.never_hit("dflow")["hands"] else 1
    finally:
        camp.coverage.close()


if __name__ == "__main__":
    raise SystemExit(main())

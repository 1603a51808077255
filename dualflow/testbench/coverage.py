"""Functional coverage of co-simulation: the micro-architectural events that hide bugs, binned
with ``cocotb-coverage`` (``CoverPoint`` in its ``coverage_db``), one cover group per core mode.

What is observed, per co-simulated case (``CaseResult``), and where it comes from:

| bin | source |
|---|---|
| register-bank conflict | the core's ``events`` port, ``bank_conflict`` (dualflow/rtl/events.py) |
| collector units full | ``events.cu_full`` |
| ring-guard stall (DFLOW only) | ``events.ring_guard`` |
| barrier with warps waiting | ``events.barrier_wait`` |
| out-of-order load return | the bench's memory model (``mem_stats['reordered']``) |
| younger retires before older | the RTL trace: a record of a warp retires after one with a higher ``seq`` |
| SIMT-stack depth d (one bin per depth 0..stack_depth) | ``events.stack_depth`` |
| trap kind (one bin per ``TrapCause`` but NONE; DFLOW_READ on DFLOW cores only) | the core's trap |
| hands (DFLOW cores with hands only; ``hands_coverage.py``) | the kernel and the RTL trace |

A bin counts the cases that hit it (``at_least`` 1). The ``events`` port is a port of the core,
so Icarus (flattened) and Verilator see it alike. Each ``Coverage`` object owns its own names in
``coverage_db`` (a fresh top name), so campaigns do not add up; ``close`` removes them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from cocotb_coverage.coverage import CoverPoint, coverage_db

from dualflow.isa import Kernel

from .cosim import CaseResult
from .hands_coverage import hand_bins, hands_hit
from .randprog.fault_programs import DFLOW_ONLY, fault_kinds

__all__ = ["Coverage", "EVENT_BINS", "HANDS", "POINTS", "case_events"]

#: Event bins, in report order: (label, ``events`` port field or None when derived otherwise).
EVENT_BINS = (
    ("register-bank conflict", "bank_conflict"),
    ("collector units full", "cu_full"),
    ("ring-guard stall", "ring_guard"),
    ("barrier with warps waiting", "barrier_wait"),
    ("out-of-order load return", None),
    ("younger retires before older", None),
)
_DFLOW_ONLY = {"ring-guard stall"}
#: The cover points of a mode, in report order (and ``HANDS`` last on a DFLOW core with hands).
POINTS = ("events", "SIMT-stack depth", "trap kind")
HANDS = "hands"
_ids = itertools.count()


def _younger_first(result: CaseResult) -> bool:
    """Did a warp retire an instruction after a younger one of its own?"""
    newest: dict[tuple[int, int], int] = {}
    for rec in result.rtl.records if result.rtl is not None else ():
        key = (rec.block, rec.warp)
        if rec.seq < newest.get(key, -1):
            return True
        newest[key] = max(rec.seq, newest.get(key, -1))
    return False


def case_events(result: CaseResult) -> set[str]:
    """The event bins one case hit."""
    hit = {label for label, name in EVENT_BINS if name is not None and result.events.get(name, 0) > 0}
    if result.mem_stats.get("reordered", 0) > 0:
        hit.add("out-of-order load return")
    if _younger_first(result):
        hit.add("younger retires before older")
    return hit


class Coverage:
    """The cover points of one campaign: per mode, events, SIMT-stack depth and trap kind (and
    the hands bins on a DFLOW core with hands).

    Parameters
    ----------
    modes: the core modes sampled (``"base"``, ``"dflow"``). stack_depth: the deepest stack of
    the cores (bins 0..stack_depth). hands: ``(rings, dmax)`` of the DFLOW core with hands whose
    runs are sampled (``hands_coverage.hand_bins``), or None: the DFLOW mode then has a ``hands``
    cover point, sampled from the runs of hands kernels.
    """

    def __init__(self, modes: Iterable[str], stack_depth: int, hands: tuple[tuple[int, ...], int] | None = None):
        self.top = f"cosim_coverage{next(_ids)}"
        self.samplers = {}
        self.points = {}
        for mode in modes:
            traps = [c.name for c in fault_kinds() if mode == "dflow" or c not in DFLOW_ONLY]
            events = [label for label, _ in EVENT_BINS if mode == "dflow" or label not in _DFLOW_ONLY]
            bins = [events, list(range(stack_depth + 1)), traps]
            self.points[mode] = list(POINTS)
            if mode == "dflow" and hands is not None:
                bins.append(hand_bins(*hands))
                self.points[mode].append(HANDS)
            self.samplers[mode] = [self._point(f"{self.top}.{mode}.{name.replace(' ', '_')}", b)
                                   for name, b in zip(self.points[mode], bins)]

    @staticmethod
    def _point(name: str, bins: list):
        """A cover point sampled with the set of bins one case hit."""

        @CoverPoint(name, bins=bins, rel=lambda hit, b: b in hit, inj=False)
        def sample(hit: frozenset) -> None:
            pass

        return name, sample

    def sample(self, mode: str, result: CaseResult, kernel: Kernel | None = None) -> None:
        """Add one co-simulated case of a ``mode`` core (running ``kernel``: needed for the
        ``hands`` cover point, which only the runs of hands kernels hit)."""
        depths = frozenset(int(d) for d, cycles in result.events.get("stack_depth", {}).items() if cycles)
        trap = frozenset([result.trap.split()[0]]) if result.trap else frozenset()
        hits = [frozenset(case_events(result)), depths, trap]
        if HANDS in self.points[mode]:
            hits.append(frozenset(hands_hit(kernel, result)) if kernel is not None else frozenset())
        for (_name, sampler), hit in zip(self.samplers[mode], hits):
            sampler(hit)

    def bins(self, mode: str) -> dict[str, dict]:
        """Per cover point of ``mode``: cases per bin."""
        return {label: dict(coverage_db[name].detailed_coverage)
                for label, (name, _) in zip(self.points[mode], self.samplers[mode])}

    def never_hit(self, mode: str) -> dict[str, list]:
        """Per cover point of ``mode``: the bins no case hit."""
        return {label: [b for b, n in hits.items() if not n] for label, hits in self.bins(mode).items()}

    def report(self) -> str:
        """Every bin with its case count, and the bins never hit, per mode."""
        lines = []
        for mode in self.samplers:
            lines.append(f"coverage ({mode}):")
            for label, hits in self.bins(mode).items():
                done = sum(1 for n in hits.values() if n)
                counts = ", ".join(f"{b}: {n}" for b, n in hits.items())
                lines.append(f"  {label}: {done} of {len(hits)} bins hit ({counts})")
            missed = [f"{label} {b}" for label, bins in self.never_hit(mode).items() for b in bins]
            lines.append(f"  never hit: {', '.join(missed) if missed else 'none'}")
        return "\n".join(lines)

    def close(self) -> None:
        """Remove this campaign's cover points from ``coverage_db``."""
        for name in [n for n in coverage_db if n == self.top or n.startswith(self.top + ".")]:
            del coverage_db[name]

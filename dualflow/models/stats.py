"""Launch statistics: dynamic instruction counts by unit class and by opcode, each declared once
with its unit and merge rule (``dualflow.models.statistic``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dualflow.isa import SPECS, Form, Kernel, UnitClass, format_instruction

from .statistic import Statistics, counter, derived, label, setting


@dataclass
class LaunchStats(Statistics):
    """Dynamic counts of one launch (or, merged, of several), written in this order.

    ``warp_instructions`` counts warp instructions issued (one per warp per instruction);
    ``thread_instructions`` counts active lanes of those. Per-class and per-opcode tables
    hold ``{"warp": n, "thread": n}``.
    """

    kernel: str = label("*")
    form: str = label("*")
    warp_size: int = setting(default=32)
    launches: int = counter(None, default=1)
    blocks: int = counter(None, default=0)
    threads: int = counter(None, default=0)
    warps: int = counter(None, default=0)
    warp_instructions: int = counter("warp-instructions", default=0)
    thread_instructions: int = counter("thread-instructions", default=0)
    ring_writes: int = counter("warp-instructions", "DFLOW instructions that wrote a ring slot and advanced RP",
                               default=0)
    simd_efficiency = derived("fraction", "active lanes per warp instruction / warp size",
                              lambda s: s.thread_instructions / max(1, s.warp_instructions * s.warp_size))
    by_class: dict[str, dict[str, int]] = counter(None, default_factory=dict)
    by_opcode: dict[str, dict[str, int]] = counter(None, sort=True, default_factory=dict)
    #: Warp-instructions retired per pc (one kernel only; None in an aggregate of several kernels).
    per_pc: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_counts(cls, kernel: Kernel, warp_counts: np.ndarray, thread_counts: np.ndarray, *,
                    blocks: int, threads: int, warps: int, warp_size: int) -> LaunchStats:
        """Fold per-pc counters into per-class and per-opcode tables."""
        by_class = {u.value: {"warp": 0, "thread": 0} for u in UnitClass}
        by_opcode: dict[str, dict[str, int]] = {}
        warp_instructions = thread_instructions = ring_writes = 0
        for pc, ins in enumerate(kernel.code):
            w, t = int(warp_counts[pc]), int(thread_counts[pc])
            if not w:
                continue
            spec = SPECS[ins.op]
            name = format_instruction(ins, kernel.form).split(" ")[0]
            warp_instructions += w
            thread_instructions += t
            by_class[spec.unit.value]["warp"] += w
            by_class[spec.unit.value]["thread"] += t
            entry = by_opcode.setdefault(name, {"warp": 0, "thread": 0})
            entry["warp"] += w
            entry["thread"] += t
            if spec.produces and kernel.form is Form.DFLOW:
                ring_writes += w
        return cls(kernel.name, kernel.form.value, warp_size=warp_size, blocks=blocks, threads=threads, warps=warps,
                   warp_instructions=warp_instructions, thread_instructions=thread_instructions,
                   ring_writes=ring_writes, by_class=by_class, by_opcode=by_opcode, per_pc=warp_counts.copy())

    def merge(self, other: LaunchStats) -> LaunchStats:
        """Sum of two statistics (same kernel, or an aggregate when names differ); ``per_pc`` adds
        only within one kernel."""
        out = super().merge(other)
        if self.kernel == other.kernel and self.per_pc is not None and other.per_pc is not None \
                and len(self.per_pc) == len(other.per_pc):
            out.per_pc = self.per_pc + other.per_pc
        return out

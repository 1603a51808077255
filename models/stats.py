"""Launch statistics: dynamic instruction counts by unit class and by opcode."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dualflow.isa import SPECS, Kernel, UnitClass, format_instruction


@dataclass
class LaunchStats:
    """Dynamic counts of one launch (or, merged, of several).

    ``warp_instructions`` counts warp instructions issued (one per warp per instruction);
    ``thread_instructions`` counts active lanes of those. Per-class and per-opcode tables
    hold ``{"warp": n, "thread": n}``.
    """

    kernel: str
    form: str
    warp_size: int = 32
    launches: int = 1
    blocks: int = 0
    threads: int = 0
    warps: int = 0
    warp_instructions: int = 0
    thread_instructions: int = 0
    ring_writes: int = 0
    by_class: dict[str, dict[str, int]] = field(default_factory=dict)
    by_opcode: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Warp-instructions retired per pc (one kernel only; None in an aggregate of several kernels).
    per_pc: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_counts(cls, kernel: Kernel, warp_counts: np.ndarray, thread_counts: np.ndarray, *,
                    blocks: int, threads: int, warps: int, warp_size: int) -> LaunchStats:
        """Fold per-pc counters into per-class and per-opcode tables."""
        stats = cls(kernel.name, kernel.form.value, warp_size=warp_size, blocks=blocks, threads=threads,
                    warps=warps)
        stats.by_class = {u.value: {"warp": 0, "thread": 0} for u in UnitClass}
        stats.per_pc = warp_counts.copy()
        for pc, ins in enumerate(kernel.code):
            w, t = int(warp_counts[pc]), int(thread_counts[pc])
            if not w:
                continue
            spec = SPECS[ins.op]
            name = format_instruction(ins, kernel.form).split(" ")[0]
            stats.warp_instructions += w
            stats.thread_instructions += t
            stats.by_class[spec.unit.value]["warp"] += w
            stats.by_class[spec.unit.value]["thread"] += t
            entry = stats.by_opcode.setdefault(name, {"warp": 0, "thread": 0})
            entry["warp"] += w
            entry["thread"] += t
            if spec.produces and kernel.form.value == "dflow":
                stats.ring_writes += w
        return stats

    def merge(self, other: LaunchStats) -> LaunchStats:
        """Sum of two statistics (same kernel, or an aggregate when names differ)."""
        out = LaunchStats(self.kernel if self.kernel == other.kernel else "*",
                          self.form if self.form == other.form else "*", warp_size=self.warp_size)
        for name in ("launches", "blocks", "threads", "warps", "warp_instructions",
                     "thread_instructions", "ring_writes"):
            setattr(out, name, getattr(self, name) + getattr(other, name))
        for table in ("by_class", "by_opcode"):
            merged: dict[str, dict[str, int]] = {}
            for src in (getattr(self, table), getattr(other, table)):
                for key, counts in src.items():
                    dst = merged.setdefault(key, {"warp": 0, "thread": 0})
                    dst["warp"] += counts["warp"]
                    dst["thread"] += counts["thread"]
            setattr(out, table, merged)
        if self.kernel == other.kernel and self.per_pc is not None and other.per_pc is not None \
                and len(self.per_pc) == len(other.per_pc):
            out.per_pc = self.per_pc + other.per_pc
        return out

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel, "form": self.form, "launches": self.launches, "blocks": self.blocks,
            "threads": self.threads, "warps": self.warps,
            "warp_instructions": {"value": self.warp_instructions, "unit": "warp-instructions"},
            "thread_instructions": {"value": self.thread_instructions, "unit": "thread-instructions"},
            "ring_writes": {"value": self.ring_writes, "unit": "warp-instructions",
                            "description": "DFLOW instructions that wrote a ring slot and advanced RP"},
            "simd_efficiency": {
                "value": self.thread_instructions / max(1, self.warp_instructions * self.warp_size),
                "unit": "fraction", "description": "active lanes per warp instruction / warp size"},
            "by_class": self.by_class, "by_opcode": dict(sorted(self.by_opcode.items())),
        }

"""Where a converted kernel's added instructions run: per loop, by cause.

The converter tags every output instruction with the innermost loop it belongs to
(``ConversionReport.loops`` and ``loop_of``); given the executed count of each output pc (the
functional model's per-pc statistics), ``loop_breakdown`` sums, per loop, the translated REG
instructions it ran and the instructions the conversion added, by cause. Each instruction counts
for its innermost loop only; code outside every loop is the row ``(outside loops)``. Copies of a
loop (an unrolled loop's inner loops appear once per copy) share one row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OUTSIDE = "(outside loops)"


@dataclass(frozen=True)
class LoopInfo:
    """One loop of the converted kernel."""

    name: str  #: label of its first instruction in the kernel as given, else "pc N"
    depth: int  #: 1 for an outermost loop
    copies: int = 1  #: times its body is written (unrolling)


@dataclass
class LoopCost:
    name: str
    depth: int
    copies: int
    orig: int = 0  #: translated REG instructions executed
    added: dict[str, int] = field(default_factory=dict)  #: cause -> added instructions executed

    @property
    def overhead(self) -> float:
        return sum(self.added.values()) / max(1, self.orig)


def loop_breakdown(report, per_pc) -> list[LoopCost]:
    """Per loop of ``report`` (a ``ConversionReport``), what ran, from executed counts per output pc."""
    rows: dict[str, LoopCost] = {}
    for pc, cause in enumerate(report.causes):
        count = int(per_pc[pc])
        index = report.loop_of[pc]
        info = report.loops[index] if index is not None else LoopInfo(OUTSIDE, 0)
        row = rows.setdefault(info.name, LoopCost(info.name, info.depth, info.copies))
        if cause == "orig":
            row.orig += count
        elif count:
            row.added[cause] = row.added.get(cause, 0) + count
    return sorted(rows.values(), key=lambda r: -sum(r.added.values()))


def format_breakdown(rows: list[LoopCost], causes: tuple[str, ...]) -> list[str]:
    """Text lines: one per loop with added instructions, biggest first."""
    lines = [f"  {'loop':<22} {'depth':>5} {'copies':>6} {'REG run':>10} {'added':>9} {'ratio':>6}  "
             + " ".join(f"{c:>10}" for c in causes)]
    for r in rows:
        total = sum(r.added.values())
        if not total:
            continue
        lines.append(f"  {r.name:<22} {r.depth:>5} {r.copies:>6} {r.orig:>10} {total:>9} {1 + r.overhead:>6.3f}  "
                     + " ".join(f"{r.added.get(c, 0):>10}" for c in causes))
    return lines

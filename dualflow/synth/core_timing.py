"""The core's critical path and clock: a timing-driven mapping, then static timing, BASE vs DFLOW.

Two netlists per mode, each figure from one of them: the area table (``dualflow/synth/asic.py``) comes from
the area mapping (ABC's default script, no delay target); timing comes from a second mapping of
the same design with ABC's delay target and buffering (``abc -D DELAY_TARGET_PS -constr``,
``map_design(delay_target_ps=...)``), because the area mapping leaves unbuffered high-fanout nets
whose delay says nothing about the design (the issue's proof of concept found one net of 13.7 pF).
The timing netlist's own logic area is reported beside its timing: what the buffering and sizing
cost.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from dualflow.common.errors import DualflowError

from .asic import AreaReport, map_design
from .boundary import DELAY_TARGET_PS
from .liberty import Library
from .sta import TimingReport, run_sta
from .yosys import design_rtlil

__all__ = ["CoreTiming", "time_core", "compare_timing_table"]

@dataclass
class CoreTiming:
    """Static timing of one core and the timing-driven netlist it was measured on."""

    timing: TimingReport
    netlist: AreaReport
    delay_target_ps: int

    def to_dict(self) -> dict:
        return {**self.timing.to_dict(), "netlist": f"timing-driven mapping (abc -D {self.delay_target_ps} -constr)",
                "delay_target_ps": self.delay_target_ps, "netlist_logic_area_um2": self.netlist.total()["area"],
                "mapping_seconds": self.netlist.seconds}


def time_core(params, library: Library, node_nm: int | None, *, delay_target_ps: int = DELAY_TARGET_PS,
              out_dir: Path | None = None) -> CoreTiming:
    """Map ``SimtCore(params)`` for ``delay_target_ps`` and time it (memories modelled at ``node_nm``);
    the netlist is kept in ``out_dir`` if given."""
    if node_nm is None:
        raise DualflowError(f"static timing needs the memories' timing at the library's node, and the node of "
                            f"{library.path} is unknown: use a known library (osu018)")
    with tempfile.TemporaryDirectory(prefix="dualflow-timing-") as tmp:
        where = Path(out_dir) if out_dir is not None else Path(tmp)
        top, text = design_rtlil(params)
        netlist = map_design(top, text, library, params.to_dict(), node_nm=node_nm, out_dir=where,
                             delay_target_ps=delay_target_ps)
        timing = run_sta(where, top, netlist.memories, library, node_nm)
    return CoreTiming(timing, netlist, delay_target_ps)


def _percent(a: float, b: float) -> str:
    return f"{100 * (b - a) / a:+.1f}%" if a else "-"


def compare_timing_table(base: CoreTiming, dflow: CoreTiming) -> str:
    """Text: each mode's critical path, then the achievable clock, slacks and the timing netlist, side by side."""
    lines = [f"static timing, {base.netlist.library} (OpenSTA on a timing-driven mapping, abc -D "
             f"{base.delay_target_ps} ps; ideal clock, no wires, inputs and outputs at flip-flops)"]
    for mode, t in (("BASE", base), ("DFLOW", dflow)):
        worst = t.timing.worst
        lines.append(f"critical path {mode:<5}: " + (worst.summary() if worst else "none"))
        if worst:
            lines.append(f"  through {', '.join(worst.instances)}")
    a, b = base.timing, dflow.timing
    lines.append(f"{'':<30} {'BASE':>12} {'DFLOW':>12} {'change':>8}")
    rows = [("achievable period (ns)", a.achievable_period_ns, b.achievable_period_ns, ".2f"),
            ("clock (MHz)", a.frequency_mhz, b.frequency_mhz, ".1f"),
            ("macro cycle time (ns)", a.min_period_ns, b.min_period_ns, ".2f"),
            (f"WNS at {a.period_ns:g} ns (ns)", a.wns_ns, b.wns_ns, ".2f"),
            (f"TNS at {a.period_ns:g} ns (ns)", a.tns_ns, b.tns_ns, ".2f"),
            ("endpoints checked", a.endpoints, b.endpoints, ",d"),
            ("timing netlist logic um^2", base.netlist.total()["area"], dflow.netlist.total()["area"], ",.0f")]
    for name, x, y, fmt in rows:
        change = _percent(x, y) if name.startswith(("achievable", "clock", "timing")) else ""
        lines.append(f"{name:<30} {x:>12{fmt}} {y:>12{fmt}} {change:>8}")
    lines.append("period each block's endpoints need (ns: the worst path into the block, its arrival + setup)")
    pa, pb = a.block_periods, b.block_periods
    for block in sorted(set(pa) | set(pb)):
        x, y = pa.get(block, 0.0), pb.get(block, 0.0)
        lines.append(f"  {block:<28} {x:>12.2f} {y:>12.2f} {_percent(x, y):>8}")
        for mode, t in (("BASE", a), ("DFLOW", b)):
            if block in t.block_paths:
                lines.append(f"    {mode:<5} {t.block_paths[block].summary()}")
    return "\n".join(lines)

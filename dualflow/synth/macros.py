"""Memories as black-box macro instances: a pass over a Yosys JSON netlist.

After ``memory -nomap`` every memory of the design is one ``$mem_v2`` cell holding all its ports
(``RD_ADDR`` is the read ports' addresses side by side, ``WR_EN`` one enable bit per data bit of
each write port). :func:`memories_to_macros` replaces each by an instance of a black-box module
named by its geometry, ``sram_<words>x<bits>_<r>r<w>w`` (plus ``_m<g>`` when the write enable has
one bit per ``g`` data bits), with one set of pins per port (``R0_CLK R0_EN R0_ADDR R0_DATA``,
``W0_CLK W0_EN W0_ADDR W0_DATA``), and adds that module to the netlist as a black box: the logic
synthesis never sees the storage, and a later step can give each geometry a Liberty model.

Why our own pass rather than Yosys's ``memory_libmap``: ``memory_libmap`` fits each memory to the
RAM kinds a library file offers and may split it, replicate it per read port or fold it into logic,
so the instance would no longer be the array the RTL describes; here every ``$mem_v2`` becomes
exactly one macro of its own geometry, which is what an SRAM model (``dualflow/synth/sram.py``) needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dualflow.common.errors import DualflowError

__all__ = ["MemoryInstance", "memories_to_macros"]


@dataclass(frozen=True)
class MemoryInstance:
    """One memory of the design as a macro: where it is and its geometry.

    Members
    -------
    block: the Yosys module holding it, without the top's name (``rf.bank0``, ``lsu``).
    name: the memory's name in that module (``storage``, ``shared_bank0``).
    words, bits: rows and bits per row.
    read_ports, write_ports: ports of each kind; every read port is synchronous (registered).
    write_mask: data bits per write-enable bit (``bits`` when a port writes whole rows).
    copies: how many times its module is instantiated in the design.
    """

    block: str
    name: str
    words: int
    bits: int
    read_ports: int
    write_ports: int
    write_mask: int
    copies: int = 1

    @property
    def macro(self) -> str:
        """The macro's cell name: its geometry."""
        mask = f"_m{self.write_mask}" if self.write_mask != self.bits else ""
        return f"sram_{self.words}x{self.bits}_{self.read_ports}r{self.write_ports}w{mask}"

    @property
    def capacity_bits(self) -> int:
        return self.words * self.bits


def _int(value) -> int:
    # Yosys JSON writes parameters as binary strings (or integers for small values)
    return int(value, 2) if isinstance(value, str) else int(value)


def _mask_width(enable_bits: list, width: int) -> int:
    """Data bits per distinct enable signal: the largest g dividing ``width`` with equal runs of g."""
    for g in sorted((d for d in range(1, width + 1) if width % d == 0), reverse=True):
        if all(len({*map(str, enable_bits[i:i + g])}) == 1 for i in range(0, len(enable_bits), g)):
            return g
    return 1


def _geometry(module: str, cell_name: str, cell: dict) -> tuple[dict, dict]:
    """(pins, parameters) of the macro for one ``$mem_v2`` cell; unsupported features are errors."""
    prm = {k: v for k, v in cell["parameters"].items() if k != "MEMID"}
    words, width, abits = _int(prm["SIZE"]), _int(prm["WIDTH"]), _int(prm["ABITS"])
    nrd, nwr = _int(prm["RD_PORTS"]), _int(prm["WR_PORTS"])
    con = cell["connections"]
    where = f"memory {cell_name} in {module}"
    if nrd and _int(prm["RD_CLK_ENABLE"]) != (1 << nrd) - 1:
        raise DualflowError(f"{where}: an asynchronous read port has no SRAM macro (read through a register)")
    if any(b not in ("0", 0) for b in con.get("RD_ARST", []) + con.get("RD_SRST", [])):
        raise DualflowError(f"{where}: a read port with a reset has no SRAM macro")
    if _int(prm.get("OFFSET", 0)) != 0:
        raise DualflowError(f"{where}: an address offset has no SRAM macro")
    masks = [_mask_width(con["WR_EN"][p * width:(p + 1) * width], width) for p in range(nwr)]
    mask = math.gcd(*masks) if masks else width
    pins: dict[str, tuple[str, list]] = {}
    for p in range(nrd):
        pins[f"R{p}_CLK"] = ("input", con["RD_CLK"][p:p + 1])
        pins[f"R{p}_EN"] = ("input", con["RD_EN"][p:p + 1])
        pins[f"R{p}_ADDR"] = ("input", con["RD_ADDR"][p * abits:(p + 1) * abits])
        pins[f"R{p}_DATA"] = ("output", con["RD_DATA"][p * width:(p + 1) * width])
    for p in range(nwr):
        en = con["WR_EN"][p * width:(p + 1) * width]
        pins[f"W{p}_CLK"] = ("input", con["WR_CLK"][p:p + 1])
        pins[f"W{p}_EN"] = ("input", en[::mask])
        pins[f"W{p}_ADDR"] = ("input", con["WR_ADDR"][p * abits:(p + 1) * abits])
        pins[f"W{p}_DATA"] = ("input", con["WR_DATA"][p * width:(p + 1) * width])
    geometry = {"words": words, "bits": width, "read_ports": nrd, "write_ports": nwr, "write_mask": mask}
    return pins, geometry


def memories_to_macros(netlist: dict, top: str) -> tuple[dict, list[MemoryInstance]]:
    """Replace every ``$mem_v2`` cell of a Yosys JSON netlist by a black-box macro instance.

    Returns the new netlist (``netlist`` is not changed) and the memories, sorted by block and name.
    """
    modules = {name: dict(mod) for name, mod in netlist["modules"].items()}
    uses: dict[str, int] = {}
    for mod in modules.values():
        for cell in mod.get("cells", {}).values():
            uses[cell["type"]] = uses.get(cell["type"], 0) + 1
    macros: dict[str, dict] = {}
    found = []
    prefix = top + "."
    for name, mod in modules.items():
        cells = dict(mod.get("cells", {}))
        for cell_name, cell in mod.get("cells", {}).items():
            if cell["type"] != "$mem_v2":
                continue
            pins, geometry = _geometry(name, cell_name, cell)
            mem = MemoryInstance(name.removeprefix(prefix) if name != top else "(top)", cell_name, **geometry,
                                 copies=uses.get(name, 1))
            found.append(mem)
            cells[cell_name] = {"hide_name": cell.get("hide_name", 0), "type": mem.macro, "parameters": {},
                                "attributes": {}, "port_directions": {p: d for p, (d, _) in pins.items()},
                                "connections": {p: bits for p, (_, bits) in pins.items()}}
            macros[mem.macro] = {"pins": {p: (d, len(bits)) for p, (d, bits) in pins.items()}}
        mod["cells"] = cells
    for macro, info in macros.items():
        if macro in modules:
            raise DualflowError(f"the design already has a module named {macro}, the name of a memory macro")
        ports, next_bit = {}, 2
        for pin, (direction, n) in info["pins"].items():
            ports[pin] = {"direction": direction, "bits": list(range(next_bit, next_bit + n))}
            next_bit += n
        modules[macro] = {"attributes": {"blackbox": "00000000000000000000000000000001"}, "ports": ports,
                          "cells": {}, "netnames": {}}
    found.sort(key=lambda m: (m.block, m.name))
    return {**netlist, "modules": modules}, found

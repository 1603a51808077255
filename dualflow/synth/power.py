"""Power of a mapped netlist from its switching activity: our own calculation from the Liberty.

Inputs: the flattened netlist (``dualflow/synth/gate_netlist.py``), the library (``dualflow/synth/liberty.py``), the
activity of a gate-level run (``dualflow/synth/activity.py``) and the node the memories are modelled at.
Per library-cell instance, over the activity's window:

- **internal** energy: each rise (fall) of an output costs the ``rise_power`` (``fall_power``)
  table of that output, looked up at the output's load and at an assumed input transition
  (:data:`TRANSITION_NS`; slews are not propagated), averaged over the related input pins (the
  dump does not say which input caused the change); each rise (fall) of an input pin with its own
  (passive) table costs that table's value at the same transition: flip-flop ``D`` pins here;
- **clock** energy: the same passive tables on clock pins (``clock : true``: flip-flop ``CLK``),
  plus the switching energy of the nets that feed clock pins;
- **switching** energy: 1/2 C V^2 per toggle of each net, C the sum of the Liberty ``capacitance``
  of the library-cell input pins it drives; the library has no wire-load model, so no wires, and
  macro pins and the design's outputs are no load. A net driven by a cell is charged to that
  cell's block; a net no cell drives (the core's input ports, the clock among them, and the
  macros' read data) to the blocks of the pins it drives, each by its pin's share of the
  capacitance;
- **leakage**: ``cell_leakage_power`` of every cell (the library's leakage unit), all the time.

Memory macros (``dualflow/synth/sram.py``, one source for every SRAM figure): the read (write) energy of one
access per cycle in which a read (write) port's ``EN`` was high at the clock edge (a port whose
enable is tied to 1 reads every cycle), and the macro's leakage.

A net that the dump does not have gets :data:`DEFAULT_ACTIVITY` toggles per cycle, half of them
rises, and the report says how much of the energy such nets carry. V is the library's nominal
voltage. Energies are per window (the run); average power divides by the window's cycles at the
given clock.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError

from .activity import CORE_WINDOW, Activity, SignalWindow, read_activity
from .gate_netlist import FlatNetlist, macro_geometry
from .liberty import Library
from .sram import macro

__all__ = ["TRANSITION_NS", "DEFAULT_ACTIVITY", "CATEGORIES", "BlockPower", "PowerReport", "compute_power",
           "macro_enables", "power_of_vcd"]

#: Input transition time (ns) at which the internal-energy tables are read: a typical output slew
#: of the OSU 0.18 um cells at a fan-out of a few gates (their ``rise_transition`` tables give
#: 0.05 to 0.1 ns at 0.005 to 0.025 pF and a 0.06 ns input).
TRANSITION_NS = 0.1
#: Toggles per clock cycle assumed for a net the activity dump does not have.
DEFAULT_ACTIVITY = 0.1
#: Energy categories of a block (joules over the window), leakage as power apart.
CATEGORIES = ("internal", "switching", "clock", "macro_read", "macro_write")


@dataclass
class BlockPower:
    """One block's energy over the window (J) by category, its leakage (W) and its macros' accesses."""

    energy: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0.0))
    leakage_w: float = 0.0
    macro_leakage_w: float = 0.0
    cells: int = 0
    macros: int = 0
    reads: int = 0
    writes: int = 0

    @property
    def dynamic(self) -> float:
        return sum(self.energy.values())


@dataclass
class PowerReport:
    """Power of one run: per block, the window's cycles, and the share carried by default activity."""

    library: str
    cycles: int
    clock_mhz: float
    blocks: dict[str, BlockPower]
    #: energy (J) of the nets that got DEFAULT_ACTIVITY, and how many nets that was
    default_energy: float
    default_nets: int
    nets: int
    #: per macro type: instances, accesses and the SRAM model's figures
    macros: dict[str, dict]
    transition_ns: float = TRANSITION_NS
    voltage: float = 0.0
    #: with ``compute_power(per_cell=True)``: each cell's energy by category (J)
    cells: dict[str, dict[str, float]] | None = None

    @property
    def seconds(self) -> float:
        return self.cycles / (self.clock_mhz * 1e6)

    def total(self) -> BlockPower:
        out = BlockPower()
        for b in self.blocks.values():
            for k, v in b.energy.items():
                out.energy[k] += v
            out.leakage_w += b.leakage_w
            out.macro_leakage_w += b.macro_leakage_w
            out.cells += b.cells
            out.macros += b.macros
            out.reads += b.reads
            out.writes += b.writes
        return out

    def energy_j(self, b: BlockPower) -> float:
        """Dynamic plus leakage energy of a block over the window."""
        return b.dynamic + (b.leakage_w + b.macro_leakage_w) * self.seconds

    @classmethod
    def from_dict(cls, d: dict) -> PowerReport:
        """The report :meth:`to_dict` wrote (per-cell energies are not kept)."""
        blocks = {name: BlockPower(dict(b["energy_j"]), b["leakage_w"], b["macro_leakage_w"], b["cells"], b["macros"],
                                   b["macro_reads"], b["macro_writes"]) for name, b in d["blocks"].items()}
        return cls(d["library"], d["cycles"], d["clock_mhz"], blocks, d["default_activity_energy_j"],
                   d["default_activity_nets"], d["nets"], d["macros"], d["transition_ns"], d["voltage_v"])

    def to_dict(self) -> dict:
        def block(b: BlockPower) -> dict:
            per_cycle = {k: v / self.cycles if self.cycles else 0.0 for k, v in b.energy.items()}
            return {"energy_j": dict(b.energy), "energy_per_cycle_j": per_cycle, "leakage_w": b.leakage_w,
                    "macro_leakage_w": b.macro_leakage_w, "total_energy_j": self.energy_j(b),
                    "average_power_w": self.energy_j(b) / self.seconds if self.cycles else 0.0,
                    "cells": b.cells, "macros": b.macros, "macro_reads": b.reads, "macro_writes": b.writes}

        total = self.total()
        return {"library": self.library, "cycles": self.cycles, "clock_mhz": self.clock_mhz,
                "voltage_v": self.voltage, "transition_ns": self.transition_ns,
                "default_activity": DEFAULT_ACTIVITY, "default_activity_nets": self.default_nets,
                "nets": self.nets, "default_activity_energy_j": self.default_energy,
                "default_activity_share": self.default_energy / self.energy_j(total) if self.cycles else 0.0,
                "blocks": {name: block(b) for name, b in sorted(self.blocks.items())}, "total": block(total),
                "macros": self.macros}


def macro_enables(flat: FlatNetlist) -> list[tuple[int, str, str]]:
    """Every macro port's enable: (cell index, ``R0``/``W0``..., pin name), in netlist order."""
    out = []
    for i, cell in enumerate(flat.cells):
        if macro_geometry(cell.type) is None:
            continue
        for pin in sorted(cell.pins):
            if pin.endswith("_EN"):
                out.append((i, pin[:-3], pin))
    return out


def compute_power(flat: FlatNetlist, library: Library, activity: Activity, enabled: dict[tuple[int, str], int],
                  *, node_nm: int, clock_mhz: float, transition_ns: float = TRANSITION_NS,
                  per_cell: bool = False) -> PowerReport:
    """Energy per block over the window of ``activity``. ``enabled[(cell index, port)]``: cycles in
    which that macro port's enable was high (from :func:`macro_enables` and the activity).
    ``per_cell``: also keep each library cell's energy (the switching of a net driven from outside
    the design is no cell's)."""
    if clock_mhz <= 0:
        raise DualflowError(f"the clock must be a positive frequency, not {clock_mhz} MHz")
    units = library.units
    vdd = units.nominal_voltage
    e_table = units.energy_j  # the tables are characterised at the nominal supply
    cycles = activity.cycles
    load = [0.0] * flat.nets
    loads_of: dict[int, list[tuple[str, float]]] = defaultdict(list)
    driven = [False] * flat.nets
    clock_nets: set[int] = set()
    for cell in flat.cells:
        lib = library.cells.get(cell.type)
        if lib is None:
            continue
        for pin, nets in cell.pins.items():
            info = lib.pins.get(pin)
            if info is None:
                raise DualflowError(f"{cell.path}: {cell.type} has no pin {pin} in {library.name}")
            for n in nets:
                if info.direction == "output":
                    driven[n] = True
                else:
                    load[n] += info.capacitance
                    loads_of[n].append((cell.block, info.capacitance))
                    if info.clock:
                        clock_nets.add(n)

    default_nets: set[int] = set()
    toggles: dict[int, tuple[float, float]] = {}

    def rise_fall(n: int) -> tuple[float, float]:
        if n in toggles:
            return toggles[n]
        if n in flat.constant:
            out = (0.0, 0.0)
        else:
            name = next((x for x in flat.names[n] if x in activity.names), None)
            if name is None:
                default_nets.add(n)
                out = (DEFAULT_ACTIVITY * cycles / 2, DEFAULT_ACTIVITY * cycles / 2)
            else:
                out = (float(activity.rises.get(name, 0)), float(activity.falls.get(name, 0)))
        toggles[n] = out
        return out

    blocks: dict[str, BlockPower] = defaultdict(BlockPower)
    default_energy = 0.0
    half_cv2 = 0.5 * units.capacitance_f * vdd ** 2  # per unit of library capacitance

    cell_energy: dict[str, dict[str, float]] = {}

    def charge(block: str, kind: str, joules: float, net: int, path: str | None = None) -> None:
        nonlocal default_energy
        blocks[block].energy[kind] += joules
        if net in default_nets:
            default_energy += joules
        if per_cell and path is not None:
            mine = cell_energy.setdefault(path, {})
            mine[kind] = mine.get(kind, 0.0) + joules

    # switching of every net with a load
    for n in range(flat.nets):
        if load[n] == 0.0:
            continue
        r, f = rise_fall(n)
        if r + f == 0:
            continue
        kind = "clock" if n in clock_nets else "switching"
        if driven[n]:
            continue  # charged to its driver below
        for block, cap in loads_of[n]:
            charge(block, kind, (r + f) * half_cv2 * cap, n)

    macros: dict[str, dict] = {}
    for i, cell in enumerate(flat.cells):
        b = blocks[cell.block]
        lib = library.cells.get(cell.type)
        if lib is None:
            geometry = macro_geometry(cell.type)
            if geometry is None:
                raise DualflowError(f"{cell.path}: {cell.type} is neither a {library.name} cell nor a memory macro")
            fig = macro(geometry.words, geometry.bits, geometry.read_ports, geometry.write_ports, node_nm=node_nm)
            reads = sum(_accesses(flat, cell, f"R{p}", enabled.get((i, f"R{p}")), cycles)
                        for p in range(geometry.read_ports))
            writes = sum(_accesses(flat, cell, f"W{p}", enabled.get((i, f"W{p}")), cycles)
                         for p in range(geometry.write_ports))
            b.energy["macro_read"] += reads * fig.read_energy_pj * 1e-12
            b.energy["macro_write"] += writes * fig.write_energy_pj * 1e-12
            b.macro_leakage_w += fig.leakage_uw * 1e-6
            b.macros += 1
            b.reads += reads
            b.writes += writes
            m = macros.setdefault(cell.type, {"instances": 0, "reads": 0, "writes": 0, "read_energy_pj":
                                              fig.read_energy_pj, "write_energy_pj": fig.write_energy_pj,
                                              "leakage_uw": fig.leakage_uw, "source": fig.source})
            m["instances"] += 1
            m["reads"] += reads
            m["writes"] += writes
            continue
        b.cells += 1
        b.leakage_w += lib.leakage * units.leakage_w
        for pin, nets in cell.pins.items():
            info = lib.pins[pin]
            for n in nets:
                r, f = rise_fall(n)
                if info.direction == "output":
                    cap = load[n]
                    tables = list(info.power.values())
                    if tables and r + f:
                        rise = _mean([t[0].lookup(transition_ns, cap) for t in tables if t[0] is not None])
                        fall = _mean([t[1].lookup(transition_ns, cap) for t in tables if t[1] is not None])
                        charge(cell.block, "internal", (r * rise + f * fall) * e_table, n, cell.path)
                    if r + f and cap:
                        charge(cell.block, "clock" if n in clock_nets else "switching", (r + f) * half_cv2 * cap, n,
                               cell.path)
                elif "" in info.power and r + f:
                    rise_t, fall_t = info.power[""]
                    joules = (r * (rise_t.lookup(transition_ns) if rise_t else 0.0)
                              + f * (fall_t.lookup(transition_ns) if fall_t else 0.0)) * e_table
                    charge(cell.block, "clock" if info.clock else "internal", joules, n, cell.path)
    measured = sum(1 for n in range(flat.nets) if n not in flat.constant and flat.names[n])
    return PowerReport(library.name, cycles, clock_mhz, dict(blocks), default_energy, len(default_nets), measured,
                       macros, transition_ns, vdd, cell_energy if per_cell else None)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _accesses(flat: FlatNetlist, cell, port: str, counted: int | None, cycles: int) -> int:
    """Accesses of one macro port: the cycles its enable was high; a tied enable: every cycle or none."""
    nets = cell.pins.get(f"{port}_EN", [])
    if nets and all(n in flat.constant for n in nets):
        return cycles if any(flat.constant[n] == "1" for n in nets) else 0
    if counted is None:
        raise DualflowError(f"{cell.path}: no activity for the enable of port {port}")
    return counted


def power_of_vcd(vcd: Path, flat: FlatNetlist, library: Library, *, root: str, node_nm: int,
                 clock_mhz: float, window: SignalWindow | tuple[int, int] = CORE_WINDOW,
                 clock: str = "clk", per_cell: bool = False) -> PowerReport:
    """Power of a run dumped in ``vcd`` (the design's top at scope ``root``; ``per_cell``: keep
    each cell's energy)."""
    ports = macro_enables(flat)
    groups = [[flat.names[n][0] for n in flat.cells[i].pins[pin] if n not in flat.constant]
              for i, _port, pin in ports]
    activity = read_activity(vcd, root, clock=clock, window=window, enables=[g for g in groups if g])
    counts = iter(activity.enabled)
    enabled = {(i, port): next(counts) for (i, port, _pin), g in zip(ports, groups) if g}
    return compute_power(flat, library, activity, enabled, node_nm=node_nm, clock_mhz=clock_mhz, per_cell=per_cell)

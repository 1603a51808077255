"""What drives a design's inputs and what its outputs drive: one assumption for mapping and for timing.

The timing-driven mapping (``abc -D -constr``, ``dualflow/synth/asic.py``) maps each Yosys module alone, so
every module input is a primary input and every module output a primary output to ABC; static
timing (``dualflow/synth/sta.py``) sees the same at the core's own ports. Both take these from here:

- every input is driven by the library's ``DRIVING_CELL`` (the weakest inverter: a module input
  is most often one gate's output in the neighbouring module, so ABC buffers a high-fanout input
  instead of assuming a strong driver);
- every output drives ``LOAD_FANOUT`` inputs of that cell (the fanout-of-4 load of the usual FO4
  delay measure).

There is no wire load model: the OSU library has none, and nets carry only their pin capacitances.
ABC's delay target of that mapping, ``DELAY_TARGET_PS``, is the default of ``dualflow synth
--delay-target``; docs/asic.md ("Static timing") says how it was chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.common.errors import DualflowError

from .liberty import Library

__all__ = ["DRIVING_CELL", "LOAD_FANOUT", "DELAY_TARGET_PS", "Boundary"]

#: ABC's delay target of the timing-driven mapping (ps, per module: ABC maps each module alone).
DELAY_TARGET_PS = 4000
DRIVING_CELL = "INVX1"
LOAD_FANOUT = 4
_CAP_UNITS_PF = {"pf": 1.0, "ff": 1e-3, "nf": 1e3}


@dataclass(frozen=True)
class Boundary:
    """The driving cell of every input and its input pin; the load on every output in pF."""

    driving_cell: str
    driving_pin: str
    input_pin: str
    load_pf: float

    @classmethod
    def of(cls, library: Library) -> Boundary:
        """``LOAD_FANOUT`` inputs of ``DRIVING_CELL`` as ``library`` gives their capacitance."""
        cell = next((g for g in library.root.children("cell") if g.args == [DRIVING_CELL]), None)
        if cell is None:
            raise DualflowError(f"{library.path}: no cell {DRIVING_CELL} (the assumed driver of every input)")
        pins = {p.attribute("direction"): p for p in cell.children("pin")}
        if set(pins) != {"input", "output"}:
            raise DualflowError(f"{library.path}: cell {DRIVING_CELL} is not a one-input, one-output cell")
        unit = library.root.attributes.get("capacitive_load_unit", ["1", "pf"])
        try:
            scale = float(unit[0]) * _CAP_UNITS_PF[unit[1].lower()]
        except (KeyError, IndexError, ValueError):
            raise DualflowError(f"{library.path}: capacitive_load_unit {unit} is not understood") from None
        load = LOAD_FANOUT * float(pins["input"].attribute("capacitance", "0")) * scale
        return cls(DRIVING_CELL, pins["output"].args[0], pins["input"].args[0], load)

    def abc_constraints(self) -> str:
        """The constraint file of Yosys's ``abc -constr`` (the load in fF)."""
        return f"set_driving_cell {self.driving_cell}\nset_load {self.load_pf * 1000:.3f}\n"

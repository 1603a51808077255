"""The core's execution units: one table row per unit.

``ExecUnit`` names a unit everywhere the core refers to one: the collector's dispatch streams
(``DISPATCHED``, in that order), the writeback arbiter's sources (``UNITS``, in priority order)
and the ``source`` of a completion. Adding a unit is adding a member and a row here, and its
component and its connections in ``SimtCore.elaborate``.

Writeback priority (``UNITS`` order) and why:

1. ALU, 2. FPU: fixed-latency pipelines whose results cannot wait. They come first, and the core
   reserves each one's writeback cycle when an instruction enters it (``WritebackSlots``), so at
   most one of them completes in any cycle (the ALU wins a tie at entry).
3. SFU: its result waits in the unit's output register and holds the divider's tail behind it;
   taking it early frees the unit that the slowest instructions need.
4. LSU: loads wait in the unit (global responses in any order).
5. CTRL: branches and the like produce no value; they only retire.

A waiting result still gets a slot within the fixed pipelines' latency: while one waits, the core
lets no new instruction enter the ALU or the FPU (``WritebackArbiter.others_waiting``).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.lib import enum

from dualflow.isa.opcodes import UnitClass

__all__ = ["DISPATCHED", "FIXED_LATENCY", "UNITS", "UNIT_OF_CLASS", "ExecUnit", "UnitRow", "dispatch_index"]


class ExecUnit(enum.Enum, shape=3):
    """An execution unit (the value is its writeback priority, 0 first)."""

    ALU = 0  #: IntegerAlu: integer, compare, move, s2r and ldc (the core supplies the value)
    FPU = 1  #: FpPipeline: FP32 arithmetic, compares, min/max, conversions
    SFU = 2  #: SpecialFunctionUnit: fdiv, fsqrt
    LSU = 3  #: LoadStoreUnit: loads and stores of every space
    CTRL = 4  #: the ControlUnit: branches, ssy/sync, exit, bar, membar, rpinc


@dataclass(frozen=True)
class UnitRow:
    """How the core feeds one unit and takes its results.

    Attributes
    ----------
    unit: the unit.
    dispatched: fed by a collector dispatch stream (its operands come from the register file);
        False: fed by the issue stage directly (the control unit).
    waits: its completion stream can wait for writeback; False for a fixed-latency pipeline,
        whose result must be taken the cycle it appears (such units come first in the arbiter,
        and the core reserves their writeback cycles).
    """

    unit: ExecUnit
    dispatched: bool
    waits: bool


#: Every unit, in writeback priority order.
UNITS: tuple[UnitRow, ...] = (
    UnitRow(ExecUnit.ALU, dispatched=True, waits=False),
    UnitRow(ExecUnit.FPU, dispatched=True, waits=False),
    UnitRow(ExecUnit.SFU, dispatched=True, waits=True),
    UnitRow(ExecUnit.LSU, dispatched=True, waits=True),
    UnitRow(ExecUnit.CTRL, dispatched=False, waits=True),
)
#: Units behind a collector dispatch stream; stream ``i`` feeds ``DISPATCHED[i]``.
DISPATCHED: tuple[ExecUnit, ...] = tuple(row.unit for row in UNITS if row.dispatched)
#: Units whose results cannot wait (they share reserved writeback cycles), in priority order.
FIXED_LATENCY: tuple[ExecUnit, ...] = tuple(row.unit for row in UNITS if not row.waits)


#: The unit that executes each unit class of the instruction-set table (``ldc``, of class MEM,
#: is the exception: no memory access, so the ALU moves the parameter value the issue stage reads).
UNIT_OF_CLASS: dict[UnitClass, ExecUnit] = {
    UnitClass.INT: ExecUnit.ALU, UnitClass.FP: ExecUnit.FPU, UnitClass.SFU: ExecUnit.SFU,
    UnitClass.MEM: ExecUnit.LSU, UnitClass.CTRL: ExecUnit.CTRL,
}


def dispatch_index(unit: ExecUnit) -> int:
    """The collector dispatch stream of ``unit``."""
    return DISPATCHED.index(unit)

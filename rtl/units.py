"""The core's execution units: one table row per unit.

``ExecUnit`` names a unit everywhere the core refers to one: the collector's dispatch streams
(``DISPATCHED``, in that order), the writeback arbiter's sources (``UNITS``, in priority order)
and the ``source`` of a completion. Adding a unit (an FP32 pipeline, say) is adding a member and
a row here, and its component and its connections in ``SimtCore.elaborate``.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.lib import enum

__all__ = ["DISPATCHED", "UNITS", "ExecUnit", "UnitRow", "dispatch_index"]


class ExecUnit(enum.Enum, shape=2):
    """An execution unit (the value is its writeback priority, 0 first)."""

    ALU = 0  #: IntegerAlu: integer, compare, move, s2r and ldc (the core supplies the value)
    LSU = 1  #: LoadStoreUnit: loads and stores of every space
    CTRL = 2  #: the ControlUnit: branches, ssy/sync, exit, bar, membar, rpinc


@dataclass(frozen=True)
class UnitRow:
    """How the core feeds one unit and takes its results.

    Attributes
    ----------
    unit: the unit.
    dispatched: fed by a collector dispatch stream (its operands come from the register file);
        False: fed by the issue stage directly (the control unit).
    waits: its completion stream can wait for writeback; False for a fixed-latency pipeline,
        whose result must be taken the cycle it appears (the arbiter gives it the first place,
        and the core holds its dispatch while another completion waits).
    """

    unit: ExecUnit
    dispatched: bool
    waits: bool


#: Every unit, in writeback priority order.
UNITS: tuple[UnitRow, ...] = (
    UnitRow(ExecUnit.ALU, dispatched=True, waits=False),
    UnitRow(ExecUnit.LSU, dispatched=True, waits=True),
    UnitRow(ExecUnit.CTRL, dispatched=False, waits=True),
)
#: Units behind a collector dispatch stream; stream ``i`` feeds ``DISPATCHED[i]``.
DISPATCHED: tuple[ExecUnit, ...] = tuple(row.unit for row in UNITS if row.dispatched)


def dispatch_index(unit: ExecUnit) -> int:
    """The collector dispatch stream of ``unit``."""
    return DISPATCHED.index(unit)


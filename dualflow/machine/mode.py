"""The two machines the project compares: BASE (register operands) and D-FLOW (distance operands)."""

from __future__ import annotations

from dualflow.isa.opcodes import Form

from .fields import Choice


class Mode(Choice):
    """How a core names operands and issues (``Mode.parse`` reads its name)."""

    BASE = "base"   # REG form, in-order dispatch, scoreboard with false dependencies
    DFLOW = "dflow"  # DFLOW form, ring register file, out-of-order dispatch, true dependencies only

    @property
    def form(self) -> Form:
        """The instruction form this mode runs."""
        return Form.DFLOW if self is Mode.DFLOW else Form.REG

    @property
    def label(self) -> str:
        """The machine's name in text and plots: BASE or D-FLOW."""
        return "D-FLOW" if self is Mode.DFLOW else "BASE"

    @property
    def dflow(self) -> bool:
        return self is Mode.DFLOW

    @classmethod
    def of_form(cls, form: Form) -> Mode:
        return cls.DFLOW if form is Form.DFLOW else cls.BASE



MODES: tuple[str, ...] = tuple(m.value for m in Mode)

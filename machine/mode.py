"""The two machines the project compares: BASE (register operands) and D-FLOW (distance operands)."""

from __future__ import annotations

import enum

from dualflow.errors import ConfigError
from dualflow.isa.opcodes import Form


class Mode(enum.StrEnum):
    """How a core names operands and issues: a string enum, so ``Mode.DFLOW == "dflow"`` and JSON
    output reads the same as the plain strings it replaces."""

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

    @classmethod
    def parse(cls, value: str | Mode, what: str = "mode") -> Mode:
        """``value`` as a Mode; a ConfigError naming ``what`` and the choices otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise ConfigError(f"{what} must be one of {', '.join(MODES)}, not {value!r}") from None


MODES: tuple[str, ...] = tuple(m.value for m in Mode)

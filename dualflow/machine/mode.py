"""The machines the project compares, each described by what it does, not by its name.

A ``Mode`` is BASE (register operands, in-order dispatch) or D-FLOW (distance operands, a ring
register file, out-of-order dispatch within the collector's window). Code asks the capability it
depends on (``mode.register_file is RegisterFile.RING``, ``mode.dispatch``, ``mode.form``), never
which mode it is, so a new design point (GPU-CC: no register file, no fetch per instruction) is a
new row of ``CAPABILITIES``. A layer that implements only some modes says which
(``check_implemented``) and refuses any other with a clear error instead of running it as BASE.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from dualflow.common.errors import ConfigError
from dualflow.isa.opcodes import Form

from .fields import Choice


class RegisterFile(Choice):
    """How a warp's values are held between instructions."""

    NAMED = "named"  # registers named by number (REG form)
    RING = "ring"    # one ring per warp (or per hand), written in order, read by distance (DFLOW form)
    NONE = "none"    # no register file: values travel between units (a spatial design)


class Dispatch(Choice):
    """The order in which a warp's fetched instructions leave for the execution units."""

    IN_ORDER = "in-order"          # program order per warp
    OUT_OF_ORDER = "out-of-order"  # any instruction whose operands are ready, within the window


class ScoreboardKind(Choice):
    """What a warp's scoreboard tracks before an instruction may read its operands."""

    REGISTERS = "registers"  # pending writes per named register: reads and writes (false dependencies) wait
    SLOTS = "slots"          # a ready time per ring slot: only true dependencies wait


@dataclass(frozen=True)
class Capabilities:
    """What a mode does, as each layer of the toolkit needs to know it."""

    label: str                    # the machine's name in text and plots
    form: Form                    # the instruction form its kernels are in
    register_file: RegisterFile
    dispatch: Dispatch
    fetch_per_instruction: bool   # fetch and decode run for every instruction issued
    scoreboard: ScoreboardKind


class Mode(Choice):
    """How a core names operands and issues (``Mode.parse`` reads its name); its capabilities
    are the properties below, from ``CAPABILITIES``."""

    BASE = "base"
    DFLOW = "dflow"

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES[self]

    @property
    def label(self) -> str:
        """The machine's name in text and plots: BASE or D-FLOW."""
        return self.capabilities.label

    @property
    def form(self) -> Form:
        """The instruction form this mode runs."""
        return self.capabilities.form

    @property
    def register_file(self) -> RegisterFile:
        return self.capabilities.register_file

    @property
    def ring(self) -> bool:
        """Values live in a ring read by distance (register pointers, slot numbers modulo the ring)."""
        return self.capabilities.register_file is RegisterFile.RING

    @property
    def dispatch(self) -> Dispatch:
        return self.capabilities.dispatch

    @property
    def out_of_order(self) -> bool:
        """A warp's instructions may dispatch out of program order (within the window)."""
        return self.capabilities.dispatch is Dispatch.OUT_OF_ORDER

    @property
    def fetch_per_instruction(self) -> bool:
        return self.capabilities.fetch_per_instruction

    @property
    def scoreboard(self) -> ScoreboardKind:
        return self.capabilities.scoreboard

    @classmethod
    def of_form(cls, form: Form) -> Mode:
        """The mode whose kernels are in ``form`` and which runs them on a register file with
        per-instruction fetch (the one machine each form was designed for)."""
        found = [m for m in cls
                 if m.form is form and m.fetch_per_instruction and m.register_file is not RegisterFile.NONE]
        if len(found) != 1:
            names = ", ".join(m.value for m in found) or "none"
            raise ConfigError(f"no single mode runs {form.value} kernels: {names}")
        return found[0]


#: Each mode's capabilities: the one table a new design point is added to.
CAPABILITIES: dict[Mode, Capabilities] = {
    Mode.BASE: Capabilities(label="BASE", form=Form.REG, register_file=RegisterFile.NAMED,
                            dispatch=Dispatch.IN_ORDER, fetch_per_instruction=True,
                            scoreboard=ScoreboardKind.REGISTERS),
    Mode.DFLOW: Capabilities(label="D-FLOW", form=Form.DFLOW, register_file=RegisterFile.RING,
                             dispatch=Dispatch.OUT_OF_ORDER, fetch_per_instruction=True,
                             scoreboard=ScoreboardKind.SLOTS),
}


def check_implemented(mode: object, implemented: Collection[Mode], layer: str) -> Mode:
    """``mode`` as a member of ``implemented``, the modes ``layer`` builds; a ConfigError naming the
    layer and the modes it has otherwise (never a silent fallback to another mode's behaviour)."""
    if type(mode) is str:  # a name read from a file or the command line
        mode = Mode.parse(mode, f"{layer}'s mode")
    if isinstance(mode, Mode) and mode in implemented:
        return mode
    name = getattr(mode, "value", mode)
    have = ", ".join(sorted(m.value for m in implemented))
    raise ConfigError(f"{layer} does not implement mode {name!r} (it implements {have})")


MODES: tuple[str, ...] = tuple(m.value for m in Mode)

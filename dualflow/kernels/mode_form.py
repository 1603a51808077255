"""The form of the kernels a mode runs, as the toolkit makes them: REG form as written, DFLOW form
(a ring register file read by distance) by the REG-to-DFLOW converter or by hand. The converter
itself sits below the machine description and knows only forms; a mode whose kernels neither
makes is refused here, before any conversion, instead of being handed another mode's kernels."""

from __future__ import annotations

from dualflow.isa import Form
from dualflow.machine.mode import Mode, check_implemented

#: The modes whose kernels the toolkit makes.
KERNEL_MODES = (Mode.BASE, Mode.DFLOW)


def kernel_form(mode: Mode | str) -> Form:
    """The form of ``mode``'s kernels; a ConfigError for a mode outside ``KERNEL_MODES``."""
    return check_implemented(mode, KERNEL_MODES, "the REG-to-DFLOW converter").form

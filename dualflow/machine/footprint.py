"""What one block of a kernel occupies in an SM's register file: the rule block dispatch and the
register-file study share. BASE allocates registers per thread, D-FLOW a ring per warp."""

from __future__ import annotations

from dualflow.common.errors import ConfigError
from dualflow.isa.kernel import Kernel

from .config import SmConfig
from .mode import Mode, RegisterFile


def entries_per_warp(kernel: Kernel, mode: Mode | str) -> int:
    """Register-file entries (per lane) one warp of ``kernel`` holds: its ring in D-FLOW, its
    registers in BASE (at least one, so a kernel without registers still takes a slot). With
    ``Variant.HANDS``, every hand's ring (``Kernel.capacity``). A mode without a register file
    has no such footprint: refused, not sized as either."""
    held = Mode.parse(mode, "mode").register_file
    if held is RegisterFile.RING:
        return kernel.capacity
    if held is RegisterFile.NAMED:
        return max(kernel.regs, 1)
    raise ConfigError(f"mode {mode}: no register file ({held.value}), so no register-file footprint per warp")


def block_registers(kernel: Kernel, mode: Mode | str, warp_size: int, warps: int) -> int:
    """32-bit register-file entries one block of ``warps`` warps holds."""
    return entries_per_warp(kernel, mode) * warp_size * warps


def entries_at_full_occupancy(sm: SmConfig) -> int:
    """Register-file entries per thread when an SM holds the most threads it can: its register file
    shared evenly among them (65,536 / 2,048 = 32 on paper-rtx3080, 65,536 / 1,536 = 42 on
    ampere-rtx3070). A footprint up to this never limits the warps an SM holds."""
    return sm.registers // sm.max_threads

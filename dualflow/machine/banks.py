"""Register-file bank mapping: the one rule the timing model, the RTL register file and its
block-bench model share.

Entry ``e`` of warp ``w`` lives in bank ``(e + w) mod banks`` (GPGPU-Sim's ``register_bank``:
consecutive entries of a warp, and the same entry of consecutive warps, fall in different banks),
at row ``w * rows_per_warp + e // banks`` of that bank. ``w`` is the warp's slot in the core or SM.
With the banks split among ``groups`` sub-cores (a warp's sub-core is ``w mod groups``, its
scheduler), the rule applies within the sub-core's ``banks / groups`` banks.

The functions take plain integers or, in the RTL, Amaranth values at elaboration time; with
``banks`` a power of two the modulo and the division are bit slices there (see dualflow/rtl/regfile.py).
"""

from __future__ import annotations


def register_bank(entry: int, warp: int, banks: int, groups: int = 1) -> int:
    """Bank of register-file entry ``entry`` (register number or ring slot) of warp slot ``warp``."""
    if groups == 1:
        return (entry + warp) % banks
    per = banks // groups
    return warp % groups * per + (entry + warp) % per


def rows_per_warp(entries_per_warp: int, banks: int) -> int:
    """Rows one warp occupies in every bank: ceil(entries_per_warp / banks)."""
    return -(-entries_per_warp // banks)


def bank_row(entry: int, warp: int, entries_per_warp: int, banks: int) -> int:
    """Row of entry ``entry`` of warp slot ``warp`` inside its bank."""
    return warp * rows_per_warp(entries_per_warp, banks) + entry // banks

"""The ISA's memory-ordering rule under out-of-order dispatch (docs/isa.md, "Memory ordering").

Two memory instructions of one warp keep program order when they carry the same color and at
least one of them is a store; ``membar`` and ``bar`` order everything (the issue stage enforces
those by waiting for the warp's memory instructions to complete). Anything else may be
reordered by D-FLOW's collector.

The rule is only sound if the converter colored every pair that can really conflict. The timing
model checks that, loudly: whenever it dispatches a memory instruction ahead of an older one of
the same warp, it compares the lanes' actual addresses, and a real conflict (same space,
overlapping words, a store involved) raises ``MemoryOrderViolation``.
"""

from __future__ import annotations

import numpy as np

from dualflow.common.errors import DualflowError

from .program import StaticInstruction


class MemoryOrderViolation(DualflowError):
    """D-FLOW dispatched two conflicting memory instructions of a warp out of program order."""


def must_keep_order(older: StaticInstruction, younger: StaticInstruction) -> bool:
    """Does the ISA rule forbid ``younger`` from dispatching before ``older``?"""
    return older.color == younger.color and (older.is_store or younger.is_store)


def conflicts(space: str, older_addrs: np.ndarray, older_mask: np.ndarray, younger_addrs: np.ndarray,
              younger_mask: np.ndarray) -> bool:
    """Do two accesses of one warp touch a common 4-byte word? Global and shared memory are
    shared by the lanes (any pair of lanes counts); local memory is private to each lane."""
    if space == "local":
        return bool(((older_addrs >> 2 == younger_addrs >> 2) & older_mask & younger_mask).any())
    a = np.unique(older_addrs[older_mask] >> 2)
    b = younger_addrs[younger_mask] >> 2
    return bool(np.isin(b, a, assume_unique=False).any())


def check_reorder(kernel: str, warp_name: str, older: StaticInstruction, older_addrs: np.ndarray,
                  older_mask: np.ndarray, younger: StaticInstruction, younger_addrs: np.ndarray,
                  younger_mask: np.ndarray) -> None:
    """Raise if dispatching ``younger`` ahead of ``older`` breaks a real dependency."""
    if older.space != younger.space or not (older.is_store or younger.is_store):
        return
    if conflicts(older.space, older_addrs, older_mask, younger_addrs, younger_mask):
        raise MemoryOrderViolation(
            f"kernel {kernel!r}, {warp_name}: pc {younger.pc} ({younger.op.name.lower()}.c{younger.color}) "
            f"would pass pc {older.pc} ({older.op.name.lower()}.c{older.color}) in {older.space} memory, "
            "and they touch the same word: the two need one color (or a membar between them)")

"""Shared-memory bank conflicts (Volkov's thesis, section 2.6).

Word ``w`` (of ``bank_bytes`` bytes) lives in bank ``w mod banks``. Each bank serves one
distinct word per cycle; lanes asking for the same word share one read (broadcast), so a warp
access takes as many cycles as the most distinct words any one bank must supply.
"""

from __future__ import annotations

import numpy as np


def conflict_degree(addresses: np.ndarray, mask: np.ndarray, banks: int, bank_bytes: int) -> int:
    """Cycles the banks need for one warp access to shared memory.

    Parameters
    ----------
    addresses : np.ndarray
        Byte address of each lane (any integer dtype); each lane accesses the word holding it.
    mask : np.ndarray of bool
        Active lanes.
    banks, bank_bytes : int
        Number of banks and bank width.

    Returns
    -------
    int
        max over banks of the number of distinct words requested from that bank: 1 for a
        conflict-free or broadcast access, up to the number of active lanes. 0 when no lane is
        active (the access moves no data; ``MemorySystem.shared_access`` then takes no port time).
    """
    # Plain Python on at most 32 lanes: several times faster than numpy's per-call overhead.
    mask = np.asarray(mask, dtype=bool)
    addresses = np.asarray(addresses)
    active = np.count_nonzero(mask)
    if not active:
        return 0
    words = {a // bank_bytes for a in (addresses if active == mask.size else addresses[mask]).tolist()}
    if max(words) - min(words) < banks:  # distinct words in a window of one word per bank
        return 1
    per_bank: dict[int, int] = {}
    for word in words:
        bank = word % banks
        per_bank[bank] = per_bank.get(bank, 0) + 1
    return max(per_bank.values())

"""Shared-memory bank conflicts (Volkov's thesis, section 2.6).

Word ``w`` (of ``bank_bytes`` bytes) lives in bank ``w mod banks``. Each bank serves one
distinct word per round; lanes asking for the same word share one read (broadcast), so a warp
access takes as many rounds as the most distinct words any one bank must supply. GPUs before
Fermi (16 banks) served a warp one half-warp at a time: with ``warp_parts=2`` the halves are
counted separately and their rounds add up.
"""

from __future__ import annotations

from collections import Counter

import numpy as np


def conflict_degree(addresses: np.ndarray, mask: np.ndarray, banks: int, bank_bytes: int,
                    warp_parts: int = 1) -> int:
    """Bank rounds one warp access to shared memory needs.

    Parameters
    ----------
    addresses : np.ndarray
        Byte address of each lane (any integer dtype); each lane accesses the word holding it.
    mask : np.ndarray of bool
        Active lanes.
    banks, bank_bytes : int
        Number of banks and bank width.
    warp_parts : int
        Consecutive groups of lanes served one after another (``SharedMemoryConfig.warp_parts``:
        1 since Fermi, 2 half-warps on G80/GT200).

    Returns
    -------
    int
        Sum over the parts of (max over banks of the number of distinct words requested from
        that bank): 1 per part for a conflict-free or broadcast access, up to the number of
        active lanes. A part with no active lane needs no round; 0 when no lane is active (the
        access moves no data, and ``MemorySystem.shared_access`` then takes no port time).
    """
    mask = np.asarray(mask, dtype=bool)
    addresses = np.asarray(addresses)
    if warp_parts > 1:
        size = -(-mask.size // warp_parts)
        return sum(conflict_degree(addresses[i:i + size], mask[i:i + size], banks, bank_bytes)
                   for i in range(0, mask.size, size))
    words = {a // bank_bytes for a in addresses[mask].tolist()}  # lanes reading one word share it
    if not words:
        return 0
    return max(Counter(word % banks for word in words).values())

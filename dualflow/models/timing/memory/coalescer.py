"""Coalescing a warp's per-lane addresses into cache-line transactions, and the address layout
of local memory.

Coalescing follows Volkov's thesis, section 2.5, for the L1-cached path of Fermi and later GPUs:
the lanes' accesses are merged into one transaction per distinct aligned line they touch,
whatever the order of the lanes, with repeated addresses served once; each transaction records
which sectors of its line are needed, so a sectored cache fetches only those.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: First device byte address of local memory. Global addresses are 32-bit in the functional
#: model, so every local address lies above every global one and the two never share a line.
LOCAL_BASE = 1 << 32

#: Bytes of one interleaved local-memory word (the ISA's loads and stores move 32-bit words).
LOCAL_WORD_BYTES = 4


class Transaction(NamedTuple):
    """One request of a warp access to one cache line.

    line: byte address of the line (aligned to the line size).
    sectors: bit k set = sector k of the line is needed.
    bytes: distinct bytes the warp's active lanes access in this line (its useful data; the
        traffic it causes is counted in whole sectors by the memory system).
    """

    line: int
    sectors: int
    bytes: int


def coalesce(addresses: np.ndarray, mask: np.ndarray, line_bytes: int, sector_bytes: int,
             access_bytes: int = 4) -> list[Transaction]:
    """The transactions of one warp memory access, in ascending line order.

    Parameters
    ----------
    addresses : np.ndarray
        Byte address of each lane (any integer dtype; one per lane).
    mask : np.ndarray of bool
        Active lanes; inactive lanes' addresses are ignored.
    line_bytes, sector_bytes : int
        Line and sector sizes (powers of two, sector <= line).
    access_bytes : int
        Bytes each lane accesses (the ISA's loads and stores: 4, naturally aligned). Accesses
        that are wider than a sector or unaligned are split at sector and line boundaries.

    Returns
    -------
    list[Transaction]
        One per distinct line touched; empty when no lane is active.
    """
    starts = set(np.asarray(addresses)[np.asarray(mask, dtype=bool)].tolist())  # repeated addresses once
    lines: dict[int, list[int]] = {}  # line address -> [sector mask, bytes]
    # Walk the bytes of each access, a line and a sector at a time (an access may cross both).
    for start in starts:
        end = start + access_bytes
        pos = start
        while pos < end:
            line = pos - pos % line_bytes
            stop = min(end, line + line_bytes)
            first, last = (pos - line) // sector_bytes, (stop - 1 - line) // sector_bytes
            entry = lines.setdefault(line, [0, 0])
            entry[0] |= ((1 << (last - first + 1)) - 1) << first
            entry[1] = min(line_bytes, entry[1] + stop - pos)  # at most the line
            pos = stop
    return [Transaction(line, entry[0], entry[1]) for line, entry in sorted(lines.items())]


def local_addresses(warp_global_index: int, lanes: int, byte_offsets: np.ndarray, local_bytes: int) -> np.ndarray:
    """Device addresses of per-lane local-memory offsets, interleaved as CUDA lays local memory out.

    Word ``i`` of lane ``t`` of a warp sits at ``base + (i * lanes + t) * 4``, so when all lanes
    access the same offset (the usual case: a spill slot) the warp touches consecutive words and
    coalesces fully. Each warp owns a private range of ``ceil(local_bytes / 4) * 4 * lanes``
    bytes starting at ``LOCAL_BASE + warp_global_index * that``, above all of global memory.

    Parameters
    ----------
    warp_global_index : int or np.ndarray
        Index of the warp among all warps of the launch (distinct warps get distinct ranges); an
        array of shape ``[k, 1]`` maps ``k`` warps' offsets ``[k, lanes]`` at once.
    lanes : int
        Warp size.
    byte_offsets : np.ndarray
        Per-lane byte offset into that lane's local memory (one per lane, lane order).
    local_bytes : int
        Local memory per thread.

    Returns
    -------
    np.ndarray of int64
        One device byte address per lane.
    """
    if lanes <= 0 or np.min(warp_global_index) < 0 or local_bytes < 0:
        raise ValueError(f"local_addresses: need lanes > 0, warp index >= 0, local_bytes >= 0 "
                         f"(got {lanes}, {warp_global_index}, {local_bytes})")
    offsets = np.asarray(byte_offsets).astype(np.int64)
    words_per_thread = -(-local_bytes // LOCAL_WORD_BYTES)
    warp_base = LOCAL_BASE + warp_global_index * words_per_thread * LOCAL_WORD_BYTES * lanes
    lane = np.arange(offsets.shape[-1], dtype=np.int64)
    word, byte = np.divmod(offsets, LOCAL_WORD_BYTES)
    return warp_base + (word * lanes + lane) * LOCAL_WORD_BYTES + byte

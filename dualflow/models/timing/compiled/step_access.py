"""The timing inputs of one batch step's warp accesses, compiled: transactions (``coalesce``) and
bank-conflict degrees (``conflict_degree``) of k warps at once, for the pre-run (``.streams``).

A step of a small launch holds a few warps; vectorised numpy spent about 60 us per step on
per-call overhead there, as much as the instruction itself. These loops take a few us per step
and stay linear in the warps of large steps. The rules are those of ``memory/coalescer.py`` and
``memory/shared_banks.py`` (``tests/models/timing/test_timing_streams.py`` holds them equal on random accesses).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Compiled when imported (from the cache): the one signature the pre-run calls them with.
_ROWS = "(int64[:, ::1], boolean[:, ::1], int64, int64, int64)"


@njit(_ROWS, cache=True)
def coalesce_rows(addresses, mask, line_bytes, sector_bytes, access_bytes):
    """``coalesce`` of each row of ``addresses``/``mask`` (int64 and bool ``[k, lanes]``):
    ``(counts[k], lines[T], sectors[T])``, each row's transactions in ascending line order.

    Each active lane's bytes ``[a, a + access_bytes)`` are split at line boundaries; a piece
    sets the sectors it covers in its line (an aligned access inside one sector sets one bit,
    as ``coalesce``'s common case does)."""
    k, lanes = mask.shape
    per_lane = access_bytes // line_bytes + 2  # lines one lane's access can touch
    row_lines = np.empty(lanes * per_lane, np.int64)
    row_sectors = np.empty(lanes * per_lane, np.int64)
    counts = np.zeros(k, np.int64)
    lines = np.empty(k * lanes * per_lane, np.int64)
    sectors = np.empty(k * lanes * per_lane, np.int64)
    total = 0
    for r in range(k):
        n = 0
        for lane in range(lanes):
            if not mask[r, lane]:
                continue
            pos = addresses[r, lane]
            end = pos + access_bytes
            while pos < end:
                line = pos - pos % line_bytes
                stop = min(end, line + line_bytes)
                first, last = (pos - line) // sector_bytes, (stop - 1 - line) // sector_bytes
                bits = ((np.int64(1) << (last - first + 1)) - 1) << first
                i = 0
                while i < n and row_lines[i] != line:
                    i += 1
                if i == n:  # a new line: insert it in order
                    while i > 0 and row_lines[i - 1] > line:
                        row_lines[i], row_sectors[i] = row_lines[i - 1], row_sectors[i - 1]
                        i -= 1
                    row_lines[i], row_sectors[i] = line, 0
                    n += 1
                row_sectors[i] |= bits
                pos = stop
        counts[r] = n
        lines[total:total + n] = row_lines[:n]
        sectors[total:total + n] = row_sectors[:n]
        total += n
    return counts, lines[:total].copy(), sectors[:total].copy()  # not views: the pre-run keeps them


@njit(_ROWS, cache=True)
def conflict_degree_rows(addresses, mask, banks, bank_bytes, warp_parts):
    """``conflict_degree`` of each row of ``addresses``/``mask`` (int64 and bool ``[k, lanes]``): int64[k].

    Per part of ``ceil(lanes / warp_parts)`` lanes: 0 without an active lane, 1 when its
    distinct words fit in a window of one word per bank, else the most distinct words of one
    bank; the parts' rounds add up."""
    k, lanes = mask.shape
    size = -(-lanes // warp_parts)
    words = np.empty(size, np.int64)
    per_bank = np.zeros(banks, np.int64)
    degree = np.zeros(k, np.int64)
    for r in range(k):
        for start in range(0, lanes, size):
            n = 0
            for lane in range(start, min(start + size, lanes)):
                if not mask[r, lane]:
                    continue
                word = addresses[r, lane] // bank_bytes
                i = 0
                while i < n and words[i] != word:
                    i += 1
                if i == n:
                    words[n] = word
                    n += 1
            if not n:
                continue
            low, high = words[0], words[0]
            for i in range(1, n):
                low, high = min(low, words[i]), max(high, words[i])
            if high - low < banks:
                degree[r] += 1
                continue
            most = 0
            for i in range(n):
                bank = words[i] % banks
                per_bank[bank] += 1
                most = max(most, per_bank[bank])
            for i in range(n):
                per_bank[words[i] % banks] = 0
            degree[r] += most
    return degree

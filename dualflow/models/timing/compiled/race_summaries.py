"""The pre-run's race check of one batch step, compiled: ``.streams._RaceMonitor.watch``'s rule
on the per-word summaries, entry by entry instead of as numpy vectors.

A step's entries are its active lanes, warp-major (a word may repeat). Everything is decided
on the summaries as they were before the step, and where several entries write one word's
summary the last entry's value stands, as numpy's scatter leaves it. Per word of the step:
``alone`` when every entry is one warp's, else the entries' code is "several warps of the
block", or ``SEVERAL_BLOCKS`` (and no block) when they come from several blocks; a store's
``value`` is the last entry's data (what the word holds after the step). The ordering rule and
the codes are documented in ``.streams``; a step of a few warps took numpy about 60 us.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NOBODY = -1
SEVERAL_BLOCKS = -2
NO_BLOCK = -3  # the block of entries of several blocks: equal to no summary's block


@njit(cache=True)
def _merge(a, b, span):
    """The summary of two unordered sets of warps (neither nobody)."""
    if a == b:
        return a
    block = a // span
    return block * span + 1 if block == b // span else SEVERAL_BLOCKS


@njit(cache=True)
def _ordered_after(summary, summary_episode, block, episode, alone, who, span):
    """Is an entry ordered after every access the summary stands for?"""
    return summary == NOBODY or (summary // span == block and (
        summary_episode < episode or (alone and summary == who)))


@njit("UniTuple(int64, 3)(int32[::1], int32[::1], int32[::1], int32[::1], int32[::1], uint32[::1], "
      "int32[::1], int64[::1], boolean[:, ::1], int64[:, ::1], uint32[:, ::1], boolean, int64, int64)", cache=True)
def watch_step(writer, writer_episode, reader, reader_episode, last, values, episodes, g, mask, words, data,
               is_store, base, span):
    """Check one step's accesses against the summaries and update them.

    Parameters
    ----------
    writer, writer_episode, reader, reader_episode : int32[words]
        The summaries (``_Summaries``), updated unless there is a race.
    last : int32[words]
        Scratch: the last entry of each word of the step.
    values : uint32[words]
        The words as they are before a store (read for stores only).
    episodes : int32[launch warps]
        ``bar`` instructions each warp executed.
    g, mask, words, data
        The step's batch-local warps, active lanes, word indices and store data (``[k, lanes]``;
        data is not read for loads).
    is_store : bool
    base, span : int
        The batch's first warp in the launch; codes per block.

    Returns
    -------
    (entry, other, code) : int
        On a race, the first racing entry (in warp-major order of the active lanes), the summary
        it is unordered with and its own code; entry -1 otherwise.
    """
    k, lanes = mask.shape
    n = 0
    for r in range(k):
        for lane in range(lanes):
            n += mask[r, lane]
    word = np.empty(n, np.int64)
    who = np.empty(n, np.int64)
    stored = np.empty(n, np.uint32)
    e = 0
    for r in range(k):
        for lane in range(lanes):
            if mask[r, lane]:
                word[e], who[e] = words[r, lane], (g[r] + base) * 2
                if is_store:
                    stored[e] = data[r, lane]
                e += 1
    for e in range(n):
        last[word[e]] = e
    mixed_warps = np.zeros(n, np.bool_)  # per word's last entry: entries of several warps, blocks
    mixed_blocks = np.zeros(n, np.bool_)
    for e in range(n):
        j = last[word[e]]
        if who[e] != who[j]:
            mixed_warps[j] = True
            if who[e] // span != who[j] // span:
                mixed_blocks[j] = True
    code = np.empty(n, np.int64)
    block = np.empty(n, np.int64)
    alone = np.empty(n, np.bool_)
    episode = np.empty(n, np.int64)
    after_writes = np.empty(n, np.bool_)
    for e in range(n):
        j = last[word[e]]
        b = who[e] // span
        alone[e] = not mixed_warps[j]
        code[e] = who[e] if alone[e] else (SEVERAL_BLOCKS if mixed_blocks[j] else b * span + 1)
        block[e] = NO_BLOCK if mixed_blocks[j] else b
        episode[e] = episodes[who[e] >> 1]
        w = word[e]
        after_writes[e] = _ordered_after(writer[w], writer_episode[w], block[e], episode[e], alone[e], who[e], span)
    if not is_store:
        for e in range(n):
            if not after_writes[e]:
                return e, np.int64(writer[word[e]]), code[e]
        for e in range(n):
            w = word[e]
            if last[w] != e:  # only the last entry's update stands
                continue
            summary, summary_episode = reader[w], reader_episode[w]
            same = summary != NOBODY and summary // span == block[e]
            if summary == NOBODY or (same and episode[e] > summary_episode):
                reader[w], reader_episode[w] = code[e], episode[e]
            else:
                reader[w] = _merge(summary, code[e], span) if same else SEVERAL_BLOCKS
        return -1, 0, 0
    for e in range(n):
        w = word[e]
        value = stored[last[w]]  # what the word holds after the step
        bad = not _ordered_after(reader[w], reader_episode[w], block[e], episode[e], alone[e], who[e], span)
        bad |= not after_writes[e] and value != values[w]
        bad |= not alone[e] and stored[e] != value
        if bad:
            return e, np.int64(reader[w] if after_writes[e] else writer[w]), code[e]
    for e in range(n):
        w = word[e]
        if last[w] != e:
            continue
        writer[w] = code[e] if after_writes[e] else _merge(writer[w], code[e], span)
        writer_episode[w] = episode[e]
    return -1, 0, 0

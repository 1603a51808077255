"""The pre-run's records grouped by warp, compiled (``.streams._PreRun.streams``).

The pre-run records a launch step by step (a step: one pc, the warps at it, in execution order);
a timing engine reads each warp's records in issue order. Grouping them is a stable counting
sort by warp. In numpy it took about 25 calls, most of a small launch's grouping time (gaussian:
about 60 steps a launch); here it is one call, linear in the records.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def group_records(num_warps, warps, step_len, step_pc, threads, rp, exit_start, exit_len, exit_done,
                  access_start, access_len):
    """Records in execution order -> records grouped by warp, each warp's in execution order.

    Parameters
    ----------
    num_warps : int
        Warps of the launch.
    warps, threads, rp : int64[N]
        Per record in execution order: its warp, active lanes, RP at issue (``rp`` empty: all 0).
    step_len, step_pc : int64[S]
        Per step: its records (consecutive), its pc.
    exit_start, exit_len : int64[E]; exit_done : bool[sum(exit_len)]
        Per ``exit`` step: its first record, its records, and per record whether the warp is done.
    access_start, access_len : int64[A]
        Per memory step: its first record and its records; access rows number them in order.

    Returns
    -------
    first, count : int64[num_warps]
        Each warp's first record and records, grouped.
    pc, threads, rp, exits, access : int64[N]
        Per grouped record: pc, active lanes, RP, 1 if its ``exit`` made the warp done, its
        access row or -1.
    """
    n = warps.shape[0]
    count = np.zeros(num_warps, np.int64)
    for i in range(n):
        count[warps[i]] += 1
    first = np.empty(num_warps, np.int64)
    at = 0
    for w in range(num_warps):
        first[w] = at
        at += count[w]
    where = np.empty(n, np.int64)  # grouped position of each record
    fill = first.copy()
    for i in range(n):
        w = warps[i]
        where[i] = fill[w]
        fill[w] += 1
    pc = np.empty(n, np.int64)
    i = 0
    for s in range(step_len.shape[0]):
        for _ in range(step_len[s]):
            pc[where[i]] = step_pc[s]
            i += 1
    grouped_threads = np.empty(n, np.int64)
    grouped_rp = np.zeros(n, np.int64)
    for i in range(n):
        grouped_threads[where[i]] = threads[i]
    if rp.shape[0]:
        for i in range(n):
            grouped_rp[where[i]] = rp[i]
    exits = np.zeros(n, np.int64)
    k = 0
    for e in range(exit_start.shape[0]):
        for j in range(exit_len[e]):
            exits[where[exit_start[e] + j]] = exit_done[k]
            k += 1
    access = np.full(n, -1, np.int64)
    row = 0
    for a in range(access_start.shape[0]):
        for j in range(access_len[a]):
            access[where[access_start[a] + j]] = row
            row += 1
    return first, count, pc, grouped_threads, grouped_rp, exits, access

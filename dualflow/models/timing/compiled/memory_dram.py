"""DRAM channels, banks and data buses of the compiled memory system: the port of ``memory/dram.py``.

``dram_serve`` is ``Dram.serve`` (the device rules: open rows, tRCD/tRP/tRAS/tRC/tRRD/tCCD, the
channel's data bus and activate window, ``frfcfs``'s hits before a committed precharge),
``dram_account`` is ``Dram.account`` and ``dram_read`` / ``dram_write`` are ``Dram.read`` /
``Dram.write``: the reservation schedulers answer a request when it is made. The queued
controllers (``memory_dram_queue.py``) call ``dram_serve`` when a bank picks a request. Every
float operation is the reference's, in its order, so the cycles are bit for bit the same.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dualflow.machine import memory

from .memory_parts import timeline_first_fit, timeline_reserve
from .memory_state import (
    BANK_ACTIVATED,
    BANK_COL_READY,
    BANK_OPEN,
    BANK_PRE_READY,
    BANK_PREV,
    BANK_PREV_CLOSE,
    BANK_PREV_COL_READY,
    DRAM_BUSY,
    DRAM_READ_BYTES,
    DRAM_READS,
    DRAM_REORDERED_HITS,
    DRAM_ROW_CONFLICTS,
    DRAM_ROW_HITS,
    DRAM_ROW_MISSES,
    DRAM_WAIT,
    DRAM_WRITE_BYTES,
    DRAM_WRITES,
)

_place = numba.njit(cache=True, inline="always")(memory.dram_place)


@numba.njit(cache=True, inline="always")
def dram_place(st, line_index):
    """``Dram.place``: line ``line_index``'s channel, bank (``channel * banks + bank``) and row."""
    return _place(line_index, st.channels, st.banks, st.lines_per_row, st.row_interleaved)


@numba.njit(cache=True)
def _earlier_hit(st, b, channel, arrive, occupancy, lat, write, floor):
    """``Dram._earlier_hit``: serve a request to bank ``b``'s previous row before that row's
    committed precharge if all of it fits there; the end of its burst, or -1.0."""
    bt = st.bank_times
    cas = bt[b, BANK_PREV_COL_READY]
    if cas < arrive:
        cas = arrive
    want = cas + lat
    start = timeline_first_fit(st.buses, channel, want, occupancy)
    issued = start - lat
    end = start + occupancy
    done = end + st.twr if write else issued + st.trtp
    if done > bt[b, BANK_PREV_CLOSE]:
        return -1.0
    timeline_reserve(st.buses, channel, start, occupancy, floor)  # the gap just found: books exactly there
    st.counts[DRAM_ROW_HITS] += 1
    st.counts[DRAM_REORDERED_HITS] += 1
    st.dram_cycles[DRAM_WAIT] += start - want
    st.dram_cycles[DRAM_BUSY] += occupancy
    bt[b, BANK_PREV_COL_READY] = issued + st.tccd
    return end


@numba.njit(cache=True)
def dram_serve(st, arrive, line_index, nbytes, write, floor):
    """``Dram.serve``: schedule a request reaching its controller at ``arrive`` (no timeline
    interval ending by ``floor`` is needed again); the (fractional) end of its burst."""
    channel, b, row = dram_place(st, line_index)
    occupancy = nbytes * st.cycles_per_byte
    lat = st.twl if write else st.tcl
    rows, bt, counts = st.bank_rows, st.bank_times, st.counts
    if row == rows[b, BANK_OPEN]:
        counts[DRAM_ROW_HITS] += 1
        cas = bt[b, BANK_COL_READY]
        if cas < arrive:
            cas = arrive
    else:
        if st.frfcfs and row == rows[b, BANK_PREV] and arrive < bt[b, BANK_PREV_CLOSE]:
            end = _earlier_hit(st, b, channel, arrive, occupancy, lat, write, floor)
            if end >= 0:
                return end
        counts[DRAM_ROW_MISSES] += 1
        if rows[b, BANK_OPEN] < 0:
            act = bt[b, BANK_ACTIVATED] + st.trc
            if act < arrive:
                act = arrive
            rows[b, BANK_PREV] = -1
            bt[b, BANK_PREV_CLOSE] = -np.inf
        else:
            counts[DRAM_ROW_CONFLICTS] += 1
            pre = bt[b, BANK_PRE_READY]
            if pre < arrive:
                pre = arrive
            act = pre + st.trp
            if act < bt[b, BANK_ACTIVATED] + st.trc:
                act = bt[b, BANK_ACTIVATED] + st.trc
            rows[b, BANK_PREV] = rows[b, BANK_OPEN]
            bt[b, BANK_PREV_COL_READY] = bt[b, BANK_COL_READY]
            bt[b, BANK_PREV_CLOSE] = pre
        act = timeline_reserve(st.activates, channel, act, st.trrd, floor)
        rows[b, BANK_OPEN] = row
        bt[b, BANK_ACTIVATED] = act
        bt[b, BANK_PRE_READY] = act + st.tras
        cas = act + st.trcd
    want = cas + lat
    start = timeline_reserve(st.buses, channel, want, occupancy, floor)
    st.dram_cycles[DRAM_WAIT] += start - want
    st.dram_cycles[DRAM_BUSY] += occupancy
    issued = start - lat  # a busy bus delays the column command with it
    end = start + occupancy
    bt[b, BANK_COL_READY] = issued + st.tccd
    done = end + st.twr if write else issued + st.trtp
    if done > bt[b, BANK_PRE_READY]:
        bt[b, BANK_PRE_READY] = done
    return end


@numba.njit(cache=True)
def dram_account(st, nbytes, write, end):
    """``Dram.account``: count a request served, its burst ending at ``end``; the cycle its data is back."""
    if write:
        st.counts[DRAM_WRITES] += 1
        st.counts[DRAM_WRITE_BYTES] += nbytes
    else:
        st.counts[DRAM_READS] += 1
        st.counts[DRAM_READ_BYTES] += nbytes
    return math.ceil(end - 1e-9)


@numba.njit(cache=True)
def dram_log(st, cycle, line_index, nbytes, write, done):
    """Append a request to ``st.dram_log`` if it records (``Dram.log``), growing it when full;
    its row (-1: not recording)."""
    log = st.dram_log
    if not log.shape[0]:
        return -1
    n = st.dram_logged
    if n == log.shape[0]:
        grown = np.empty((2 * n, log.shape[1]), np.int64)
        grown[:n] = log
        st.dram_log = grown
        log = grown
    log[n, 0], log[n, 1], log[n, 2], log[n, 3], log[n, 4], log[n, 5] = cycle, line_index, nbytes, write, st.now, done
    st.dram_logged = n + 1
    return n


@numba.njit(cache=True)
def dram_read(st, cycle, line_index, nbytes):
    """``Dram.read`` (reservation schedulers): the cycle all ``nbytes`` are back."""
    # (float cycles, as the queued controllers' decisions pass: one compiled ``dram_serve``)
    end = dram_serve(st, float(cycle + st.dram_latency), line_index, nbytes, False, float(st.now))
    done = dram_account(st, nbytes, False, end)
    dram_log(st, cycle, line_index, nbytes, 0, done)
    return done


@numba.njit(cache=True)
def dram_write(st, cycle, line_index, nbytes):
    """``Dram.write`` (reservation schedulers): occupy the bank and the channel (nobody waits for a write)."""
    dram_account(st, nbytes, True, dram_serve(st, float(cycle + st.dram_latency), line_index, nbytes, True,
                                              float(st.now)))
    dram_log(st, cycle, line_index, nbytes, 1, -1)

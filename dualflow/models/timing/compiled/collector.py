"""The operand collector of the compiled SM: the numba port of dualflow/models/timing/collector.py
(bank-arbitrated operand reads; collector units are ``SmState.cu_*``, age-ordered in
``cu_order``)."""

from __future__ import annotations

from numba import njit

from .codes import DISPATCH_OUT_OF_ORDER, REGISTER_FILE_RING
from .core import (
    SV_NCU,
    SV_WAITING_CUS,
    W_WAITING_CUS,
)
from .layout import M_CONFLICTS
from .scoreboard import read_done
from .warps import dirty, list_remove


@njit(cache=True)
def register_bank(entry, warp, banks, groups):
    """machine.banks.register_bank (a test checks the two agree)."""
    if groups == 1:
        return (entry + warp) % banks
    per = banks // groups
    return warp % groups * per + (entry + warp) % per


@njit(cache=True)
def claim_bank(state, s, sm, bank, t):
    """OperandCollector._claim: take one of the ports of ``bank`` in cycle ``t``, if one is
    left. ``bank_busy`` holds ``t * bank_ports + k`` once ``k + 1`` accesses were granted in
    cycle ``t`` (one number per bank: the reference's cycle and count)."""
    busy = state.bank_busy[sm, bank]
    base = t * s.bank_ports
    if busy < base:
        state.bank_busy[sm, bank] = base
        return True
    if busy - base + 1 == s.bank_ports:
        return False
    state.bank_busy[sm, bank] = busy + 1
    return True


@njit(cache=True)
def collector_remove(state, sm, u):
    """OperandCollector.remove."""
    n = state.sv[sm, SV_NCU]
    list_remove(state.cu_order[sm], n, u)
    state.sv[sm, SV_NCU] = n - 1
    state.cu_used[sm, u] = 0


@njit(cache=True)
def read_operands(state, s, sm, t):
    """OperandCollector.read_operands with Sm._readable and Warp.operand_read."""
    sv, wv = state.sv, state.wv
    granted = False
    for k in range(sv[sm, SV_NCU]):
        u = state.cu_order[sm, k]
        if not state.cu_unread[sm, u]:
            continue
        slot = state.cu_slot[sm, u]
        for j in range(state.cu_nops[sm, u]):
            if state.cu_read[sm, u, j]:
                continue
            key = state.cu_key[sm, u, j]
            # in-order dispatch issued only with final operands; out-of-order waits for the writeback
            if s.dispatch == DISPATCH_OUT_OF_ORDER and state.board[sm, slot, key % s.ring] > t:
                continue
            bank = state.cu_bank[sm, u, j]
            if not claim_bank(state, s, sm, bank, t):
                state.misc[sm, M_CONFLICTS] += 1
                continue
            state.rf_reads[sm, bank] += 1
            state.cu_read[sm, u, j] = 1
            state.cu_unread[sm, u] -= 1
            granted = True
            if s.register_file == REGISTER_FILE_RING:  # Warp.operand_read
                read_done(state, sm, slot, key)
                dirty(state, sm, slot)
            if not state.cu_unread[sm, u]:
                state.cu_ready_at[sm, u] = t + 1
                if state.cu_waiting[sm, u]:
                    state.cu_waiting[sm, u] = 0
                    wv[sm, slot, W_WAITING_CUS] -= 1
                    sv[sm, SV_WAITING_CUS] -= 1  # Sm._wait_ended
    return granted

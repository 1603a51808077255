"""Resident blocks and warps of the compiled SM: placement, retirement, and the per-warp
bookkeeping shared by the pipeline stages (the numba port of ``Sm.fits``, ``Sm.add_cta``,
``Sm._retire_warp`` and ``Sm._dirty`` in dualflow/models/timing/sm.py; see sm.py here)."""

from __future__ import annotations

from numba import njit

from .codes import NO_STALL
from .core import (
    SV_CTA_WARPS,
    SV_FINISHED_CTAS,
    SV_NCTAS,
    SV_NWARPS,
    SV_REGS,
    SV_SHARED,
    SV_WARP_AGE,
    W_AGE,
    W_BLOCK,
    W_CTA,
    W_EXITED,
    W_FETCH_PC,
    W_FINISHED,
    W_G,
    W_REC,
    W_REC_END,
    W_RESIDENT,
    W_SCHED,
    W_STALL,
    W_START,
    W_WID,
    wake_push,
)


@njit(cache=True)
def fits(state, s, sm):
    """Sm.fits(warps_per_block, block_shared, block_registers) (with Sm.used)."""
    sv = state.sv
    threads = sv[sm, SV_CTA_WARPS] * s.warp_size
    return (threads + s.warps_per_block * s.warp_size <= s.max_threads and sv[sm, SV_NCTAS] < s.max_ctas
            and sv[sm, SV_SHARED] + s.block_shared <= s.shared_bytes
            and sv[sm, SV_REGS] + s.block_registers <= s.registers)


@njit(cache=True)
def add_cta(state, s, streams, sm, block, start):
    """Sm.add_cta: make block ``block`` resident; its warps may fetch from cycle ``start`` on."""
    sv, wv = state.sv, state.wv
    cta = 0
    while state.cta_block[sm, cta] >= 0:
        cta += 1
    state.cta_block[sm, cta] = block
    wpb = s.warps_per_block
    state.cta_left[sm, cta] = wpb
    for i in range(wpb):
        slot = 0  # free_slots.pop(0): the list stays sorted, so the lowest free slot
        while wv[sm, slot, W_RESIDENT]:
            slot += 1
        g = block * wpb + i
        row = wv[sm, slot]
        row[:] = 0
        row[W_RESIDENT] = 1
        row[W_G], row[W_BLOCK], row[W_WID], row[W_CTA] = g, block, i, cta
        row[W_AGE] = sv[sm, SV_WARP_AGE]
        sv[sm, SV_WARP_AGE] += 1
        sched = slot % s.schedulers
        row[W_SCHED] = sched
        row[W_STALL] = NO_STALL
        row[W_REC] = streams.first[g]
        row[W_REC_END] = streams.first[g] + streams.count[g]
        row[W_FETCH_PC] = 0  # warp.pc: the executor starts every warp at pc 0
        state.sched_clean[sm, sched] = 0
        row[W_EXITED] = streams.count[g] == 0  # executor.done: no live lane
        state.board[sm, slot, :s.entries] = 0  # the state's board may be wider (SmStates)
        state.cta_slots[sm, cta, i] = slot
        state.warps[sm, sv[sm, SV_NWARPS]] = slot
        sv[sm, SV_NWARPS] += 1
        n = state.sched_n[sm, sched]
        state.sched_warps[sm, sched, n] = slot
        state.sched_n[sm, sched] = n + 1
    sv[sm, SV_NCTAS] += 1
    sv[sm, SV_CTA_WARPS] += wpb
    sv[sm, SV_SHARED] += s.block_shared
    sv[sm, SV_REGS] += s.block_registers
    for i in range(wpb):
        slot = state.cta_slots[sm, cta, i]
        if wv[sm, slot, W_EXITED]:
            retire_warp(state, s, sm, slot)
    for i in range(wpb):
        wv[sm, state.cta_slots[sm, cta, i], W_START] = start
    wake_push(state, sm, start)


@njit(cache=True)
def list_remove(arr, n, value):
    """list.remove on ``arr[:n]`` (order kept)."""
    j = 0
    while arr[j] != value:
        j += 1
    for k in range(j, n - 1):
        arr[k] = arr[k + 1]


@njit(cache=True)
def retire_warp(state, s, sm, slot):
    """Sm._retire_warp."""
    sv, wv = state.sv, state.wv
    wv[sm, slot, W_FINISHED] = 1
    sched = wv[sm, slot, W_SCHED]
    state.sched_clean[sm, sched] = 0
    list_remove(state.warps[sm], sv[sm, SV_NWARPS], slot)
    sv[sm, SV_NWARPS] -= 1
    list_remove(state.sched_warps[sm, sched], state.sched_n[sm, sched], slot)
    state.sched_n[sm, sched] -= 1
    wv[sm, slot, W_RESIDENT] = 0  # free_slots.append(slot)
    cta = wv[sm, slot, W_CTA]
    state.cta_left[sm, cta] -= 1
    if state.cta_left[sm, cta] == 0:  # every warp of the block finished
        state.cta_block[sm, cta] = -1
        sv[sm, SV_NCTAS] -= 1
        sv[sm, SV_CTA_WARPS] -= s.warps_per_block
        sv[sm, SV_SHARED] -= s.block_shared
        sv[sm, SV_REGS] -= s.block_registers
        sv[sm, SV_FINISHED_CTAS] += 1


@njit(cache=True)
def is_member(state, sm, cta, slot):
    """Is ``slot`` still held by a warp of block ``cta`` (``Cta.warps`` keeps finished ones)?"""
    return state.wv[sm, slot, W_RESIDENT] == 1 and state.wv[sm, slot, W_CTA] == cta


@njit(cache=True)
def next_pc(state, streams, sm, slot):
    """warp.pc: the functional pc, i.e. that of the warp's next record (-1 once it has none)."""
    rec = state.wv[sm, slot, W_REC]
    return streams.pc[rec] if rec < state.wv[sm, slot, W_REC_END] else -1


@njit(cache=True)
def dirty(state, sm, slot):
    """Sm._dirty: an event concerned the warp: re-examine it, and its scheduler, next time."""
    state.wv[sm, slot, W_STALL] = NO_STALL
    state.sched_clean[sm, state.wv[sm, slot, W_SCHED]] = 0

"""One SM, cycle by cycle: the numba port of dualflow/models/timing/sm.py. This module has the cycle
(``tick``), writeback, dispatch and fetch; issue.py has issue, warps.py the resident blocks and
warps, collector.py and scoreboard.py the ports of the reference's modules of those names.

Each function mirrors the reference function it names, statement by statement, on the
struct-of-arrays state of core.py and layout.py. What differs is where facts come from: the
reference executes each instruction in the functional model at issue; here the warp's next record of the launch's
``Streams`` says what it executed (active lanes, RP, whether an ``exit`` made it done, the
access's transactions or shared conflict degree). The block barrier, which the reference reads
from the functional executor (``ex.waiting``), is kept here with the executor's rule
(``BatchExecutor``'s ``bar``, ``exit_`` and ``_check_barrier``).

A warp is ``(sm, slot)``; ``warp.w``'s functional pc is the pc of its next record.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .codes import DISPATCH_IN_ORDER, DISPATCH_OUT_OF_ORDER, REGISTER_FILE_RING, STALL_IDLE, STALL_ISSUED
from .collector import claim_bank, collector_remove, read_operands, register_bank
from .core import (
    BLOCKED,
    COMPLETION_WIDTH,
    DONE,
    ERR_DEADLOCK,
    ERR_ORDER,
    ERR_ORDER_FAR,
    ERR_PAST_END,
    SPACE_PARAM,
    SPACE_SHARED,
    ST_COLOR,
    ST_IS_MEM,
    ST_IS_STORE,
    ST_ORDERED,
    ST_REDIRECT,
    ST_SPACE,
    ST_UNIT,
    SV_FETCH_RR,
    SV_LAST_CYCLE,
    SV_MEMORY_WAITS,
    SV_NCOMP,
    SV_NCU,
    SV_NWAKE,
    SV_NWARPS,
    SV_SEQ,
    SV_STAMP,
    W_EXITED,
    W_FETCH_PC,
    W_FETCH_STALLED,
    W_IB_HEAD,
    W_IB_LEN,
    W_INFLIGHT,
    W_MARK,
    W_MEM_INFLIGHT,
    W_SCHED,
    W_START,
    WB,
    completion_pop,
    completion_push,
    wake_pop,
    wake_push,
)
from .issue import issue
from .layout import M_ACTIVE, M_BUSY, M_FLUSHES, M_RESIDENT
from .memory import global_access, shared_access
from .memory_queued import queued_global_access, queued_shared_access
from .sm_waits import wait_memory
from .warps import dirty, next_pc, retire_warp


@njit(cache=True)
def skip(state, s, sm, gap):
    """SmCounters.skip: ``gap`` cycles in which nothing changed, each like the last one."""
    for sched in range(s.schedulers):
        r = state.last_reasons[sm, sched]
        state.stalls[sm, STALL_IDLE if r == STALL_ISSUED else r] += gap
    occupancy(state, sm, gap)


@njit(cache=True)
def occupancy(state, sm, n):
    """SmCounters._occupancy with the collector's and the SM's current sizes."""
    warps = state.sv[sm, SV_NWARPS]
    if warps:
        state.misc[sm, M_ACTIVE] += n
    state.misc[sm, M_BUSY] += n * state.sv[sm, SV_NCU]
    state.misc[sm, M_RESIDENT] += n * warps


@njit(cache=True)
def tick(state, s, code, streams, mem, sm, t):
    """Sm.tick: simulate cycle ``t``; the next cycle this SM needs, or -1 if it is idle (and on
    an error, which ``state.err`` describes)."""
    sv = state.sv
    last = sv[sm, SV_LAST_CYCLE]
    gap = t - last - 1
    if gap > 0 and last >= 0:
        skip(state, s, sm, gap)
    sv[sm, SV_LAST_CYCLE] = t
    progress = False
    if sv[sm, SV_NCOMP] and state.heaps.completions[sm, 0, 0] <= t:
        progress = writeback(state, s, code, streams, sm, t)
    if sv[sm, SV_NCU]:
        progress |= dispatch(state, s, code, streams, mem, sm, t)
        if state.err[0]:
            return -1
        progress |= read_operands(state, s, sm, t)
    progress |= issue(state, s, code, streams, sm, t)
    if state.err[0]:
        return -1
    progress |= fetch(state, s, code, streams, sm, t)
    if state.err[0]:
        return -1
    occupancy(state, sm, 1)
    while sv[sm, SV_NWAKE] and state.heaps.wake[sm, 0] <= t:
        wake_pop(state, sm)
    if progress:
        return t + 1
    if sv[sm, SV_NWAKE]:
        return state.heaps.wake[sm, 0]
    if sv[sm, SV_NWARPS] and not sv[sm, SV_MEMORY_WAITS]:
        slot = state.warps[sm, 0]
        state.err[0], state.err[1], state.err[2], state.err[3] = ERR_DEADLOCK, sm, slot, t
        return -1
    return -1


@njit(cache=True)
def writeback(state, s, code, streams, sm, t):
    """Sm._writeback (with OperandCollector.claim_write and the scoreboards' writeback)."""
    ports = s.writeback_ports
    progress = False
    deferred = state.heaps.completions[sm, :0]  # a view: an array is made only if a write waits
    nd = 0
    while state.sv[sm, SV_NCOMP] and state.heaps.completions[sm, 0, 0] <= t:
        done, seq, kind, slot, dest, pc = completion_pop(state, sm)
        if kind == WB:
            bank = register_bank(dest, slot, s.banks, s.bank_groups)
            if not ports or not claim_bank(state, s, sm, bank, t):  # claim_write fails
                if nd == 0:
                    deferred = np.empty((state.sv[sm, SV_NCOMP] + 1, COMPLETION_WIDTH), dtype=np.int64)
                row = deferred[nd]
                row[0], row[1], row[2], row[3], row[4], row[5] = done, seq, kind, slot, dest, pc
                nd += 1
                continue
            state.rf_writes[sm, bank] += 1
            ports -= 1
            if s.register_file == REGISTER_FILE_RING:
                state.board[sm, slot, dest] = t + 1  # RingScoreboard.writeback
            else:
                state.board[sm, slot, dest] -= 1  # RegisterScoreboard.writeback
        complete(state, s, code, streams, sm, slot, pc)
        progress = True
    for k in range(nd):
        completion_push(state, sm, deferred[k, 0], deferred[k, 1], deferred[k, 2], deferred[k, 3],
                        deferred[k, 4], deferred[k, 5])
    if nd:
        wake_push(state, sm, t + 1)
    return progress


@njit(cache=True)
def complete(state, s, code, streams, sm, slot, pc):
    """Sm._complete."""
    wv = state.wv
    dirty(state, sm, slot)
    wv[sm, slot, W_INFLIGHT] -= 1
    if code.table[pc, ST_IS_MEM]:
        wv[sm, slot, W_MEM_INFLIGHT] -= 1
    if code.table[pc, ST_REDIRECT] and not s.fetch_past:
        wv[sm, slot, W_FETCH_STALLED] = 0
        wv[sm, slot, W_FETCH_PC] = next_pc(state, streams, sm, slot)
    if wv[sm, slot, W_EXITED] and not wv[sm, slot, W_INFLIGHT]:
        retire_warp(state, s, sm, slot)


@njit(cache=True)
def must_keep_order(code, older, younger):
    """ordering.must_keep_order on two pcs (a test checks the two agree)."""
    st = code.table
    return st[older, ST_COLOR] == st[younger, ST_COLOR] and (st[older, ST_IS_STORE] or st[younger, ST_IS_STORE])


@njit(cache=True)
def dispatch(state, s, code, streams, mem, sm, t):
    """Sm._dispatch. The reference's ``check_reorder`` of the two accesses' addresses is the
    younger record's ``order_conflict`` bit for the older one; a conflict stops the launch with
    ``ERR_ORDER`` (the engine raises the reference's MemoryOrderViolation)."""
    st = code.table
    sv, wv = state.sv, state.wv
    progress = False
    cus = s.collector_units
    scratch = state.scratch[sm]
    ncu = sv[sm, SV_NCU]
    snapshot = scratch[:ncu]  # list(self.collector.units)
    snapshot[:] = state.cu_order[sm, :ncu]
    pending = scratch[cus:2 * cus]  # D-FLOW: older undispatched ordered units (any warp; filtered by slot)
    npending = 0
    sv[sm, SV_STAMP] += 1
    stamp = sv[sm, SV_STAMP]  # blocked_warps: W_MARK == stamp
    for k in range(ncu):
        u = snapshot[k]
        slot = state.cu_slot[sm, u]
        pc = state.cu_pc[sm, u]
        if s.dispatch == DISPATCH_IN_ORDER and wv[sm, slot, W_MARK] == stamp:
            continue
        ready = state.cu_unread[sm, u] == 0 and state.cu_ready_at[sm, u] <= t
        if ready and st[pc, ST_ORDERED] and s.dispatch == DISPATCH_OUT_OF_ORDER:
            for j in range(npending):
                o = pending[j]
                if state.cu_slot[sm, o] == slot and must_keep_order(code, state.cu_pc[sm, o], pc):
                    ready = False
                    break
            if ready:
                rec = state.cu_rec[sm, u]
                for j in range(npending):
                    o = pending[j]
                    if state.cu_slot[sm, o] != slot:
                        continue
                    distance = streams.ordinal[rec] - streams.ordinal[state.cu_rec[sm, o]]
                    if distance > 63:
                        found = ERR_ORDER_FAR
                    elif (streams.order_conflict[streams.access[rec]] >> (distance - 1)) & 1:
                        found = ERR_ORDER
                    else:
                        continue
                    err = state.err
                    err[0], err[1], err[2], err[3], err[4], err[5] = found, sm, slot, state.cu_pc[sm, o], pc, t
                    return progress
        cls = st[pc, ST_UNIT]
        pipe = 0
        if ready:
            count = code.units[cls, 2]
            first, last = 0, count  # Sm._pipe_range
            if s.parts > 1 and count % s.parts == 0:
                first = wv[sm, slot, W_SCHED] % s.parts * (count // s.parts)
                last = first + count // s.parts
            pipes = state.pipes[sm, cls]
            free_at, pipe = pipes[first], first
            for p in range(first + 1, last):  # min(pipes[first:last]), and pipes.index of it
                if pipes[p] < free_at:
                    free_at, pipe = pipes[p], p
            if free_at > t:
                if free_at < BLOCKED:  # else the memory system wakes the SM when it frees
                    wake_push(state, sm, free_at)
                ready = False
        if not ready:
            wv[sm, slot, W_MARK] = stamp
            if st[pc, ST_ORDERED]:
                pending[npending] = u
                npending += 1
            continue
        start(state, s, code, streams, mem, sm, u, t, cls, pipe)
        collector_remove(state, sm, u)
        progress = True
    return progress


@njit(cache=True)
def start(state, s, code, streams, mem, sm, u, t, cls, pipe):
    """Sm._start: send collected unit ``u`` into pipeline ``pipe`` of its unit class."""
    st = code.table
    pc, slot = state.cu_pc[sm, u], state.cu_slot[sm, u]
    latency, interval = code.units[cls, 0], code.units[cls, 1]
    busy_until = t + interval
    if st[pc, ST_IS_MEM]:
        space = st[pc, ST_SPACE]
        if space == SPACE_PARAM:
            done = t + latency + s.const_latency
        else:
            a = streams.access[state.cu_rec[sm, u]]
            if mem.queued:  # the answers may be pending: handles (memory_pending.py)
                if space == SPACE_SHARED:
                    port_free, ready = queued_shared_access(mem, t, sm, streams.degree[a])
                else:
                    port_free, ready = queued_global_access(mem, t, sm, streams.tx_line, streams.tx_sectors,
                                                            streams.tx_first[a], streams.tx_count[a],
                                                            st[pc, ST_IS_STORE] != 0)
                if port_free < 0 or (space != SPACE_SHARED and ready < 0):  # behind or waiting for DRAM
                    wait_memory(state, code, mem, sm, cls, pipe, busy_until, slot, state.cu_dest[sm, u], pc,
                                port_free, ready)
                    return
            elif space == SPACE_SHARED:
                port_free, ready = shared_access(mem, t, sm, streams.degree[a])
            else:  # global or local (addresses already mapped by the streams)
                port_free, ready = global_access(mem, t, sm, streams.tx_line, streams.tx_sectors, streams.tx_first[a],
                                                 streams.tx_count[a], st[pc, ST_IS_STORE] != 0)
            busy_until, done = max(busy_until, port_free), ready + latency
    else:
        done = t + latency
    state.pipes[sm, cls, pipe] = busy_until
    state.sv[sm, SV_SEQ] += 1
    dest = state.cu_dest[sm, u]
    completion_push(state, sm, done, state.sv[sm, SV_SEQ], WB if dest >= 0 else DONE, slot, dest, pc)
    wake_push(state, sm, done)


@njit(cache=True)
def fetch(state, s, code, streams, sm, t):
    """Sm._fetch: up to ``fetch_warps`` warps per cycle, round robin, each bring up to
    ``fetch_width`` instructions into their buffer."""
    sv, wv = state.sv, state.wv
    n = sv[sm, SV_NWARPS]
    if not n:
        return False
    first = sv[sm, SV_FETCH_RR]
    fetched = 0
    for k in range(n):
        slot = state.warps[sm, (first + k) % n]
        space = s.ibuffer_entries - wv[sm, slot, W_IB_LEN]
        if wv[sm, slot, W_EXITED] or wv[sm, slot, W_FETCH_STALLED] or space <= 0 or wv[sm, slot, W_START] > t:
            continue
        pc = wv[sm, slot, W_FETCH_PC]
        if pc == s.code_length:
            # (the functional pre-run would have faulted first if the warp itself ran off the end)
            if not s.fetch_past:
                state.err[0], state.err[1], state.err[2], state.err[3] = ERR_PAST_END, sm, slot, t
                return False
            if wv[sm, slot, W_IB_LEN]:
                continue  # the branch it fetched past is still to issue
            pc = next_pc(state, streams, sm, slot)  # it issued and went elsewhere: the flush, from the fetch side
            state.misc[sm, M_FLUSHES] += 1
        ready = t + s.fetch_latency
        for _ in range(min(space, s.fetch_width)):
            if pc == s.code_length:
                if not s.fetch_past:
                    state.err[0], state.err[1], state.err[2], state.err[3] = ERR_PAST_END, sm, slot, t
                    return False
                break
            tail = (wv[sm, slot, W_IB_HEAD] + wv[sm, slot, W_IB_LEN]) % s.ibuffer_entries
            state.ibuf_pc[sm, slot, tail], state.ibuf_ready[sm, slot, tail] = pc, ready
            wv[sm, slot, W_IB_LEN] += 1
            dirty(state, sm, slot)
            if code.table[pc, ST_REDIRECT] and not s.fetch_past:
                wv[sm, slot, W_FETCH_STALLED] = 1
                break
            pc += 1
        wv[sm, slot, W_FETCH_PC] = pc
        sv[sm, SV_FETCH_RR] = (first + k + 1) % n
        wake_push(state, sm, ready)
        fetched += 1
        if fetched == s.fetch_warps:
            break
    return fetched > 0

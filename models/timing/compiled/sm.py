"""One SM, cycle by cycle: the numba port of models/timing/sm.py (with collector.py,
scoreboard.py, warp.py and warp_order.py folded in).

Each function mirrors the reference function it names, statement by statement, on the
struct-of-arrays state of core.py. What differs is where facts come from: the reference executes
each instruction in the functional model at issue; here the warp's next record of the launch's
``Streams`` says what it executed (active lanes, RP, whether an ``exit`` made it done, the
access's transactions or shared conflict degree). The block barrier, which the reference reads
from the functional executor (``ex.waiting``), is kept here with the executor's rule
(``BatchExecutor``'s ``bar``, ``exit_`` and ``_check_barrier``).

A warp is ``(sm, slot)``; ``warp.w``'s functional pc is the pc of its next record.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import (
    BARRIER,
    COLLECTOR_FULL,
    COMPLETION_WIDTH,
    CTRL,
    DONE,
    DRAIN,
    ERR_DEADLOCK,
    ERR_ORDER,
    ERR_ORDER_FAR,
    ERR_PAST_END,
    ERR_PC,
    IBUFFER,
    IDLE,
    ISSUED,
    M_ACTIVE,
    M_BARRIERS,
    M_BUSY,
    M_CONFLICTS,
    M_RESIDENT,
    MEMORY_FENCE,
    NO_STALL,
    NUM_REASONS,
    OP_BAR,
    OP_EXIT,
    OP_MEMBAR,
    PENDING,
    RING_GUARD,
    SCOREBOARD,
    SPACE_PARAM,
    SPACE_SHARED,
    ST_COLOR,
    ST_DST,
    ST_IS_MEM,
    ST_IS_STORE,
    ST_ISSUE_ONLY,
    ST_NEEDS_CU,
    ST_NSRC,
    ST_NUNIQ,
    ST_OP,
    ST_ORDERED,
    ST_PRODUCES,
    ST_REDIRECT,
    ST_SPACE,
    ST_SRC,
    ST_UNIQ,
    ST_UNIT,
    SV_CTA_WARPS,
    SV_FETCH_RR,
    SV_FINISHED_CTAS,
    SV_LAST_CYCLE,
    SV_NCOMP,
    SV_NCTAS,
    SV_NCU,
    SV_NWAKE,
    SV_NWARPS,
    SV_REGS,
    SV_SEQ,
    SV_SHARED,
    SV_STAMP,
    SV_WAITING_CUS,
    SV_WARP_AGE,
    W_AGE,
    W_BAR_WAIT,
    W_BLOCK,
    W_CTA,
    W_EXITED,
    W_FETCH_PC,
    W_FETCH_STALLED,
    W_FINISHED,
    W_G,
    W_IB_HEAD,
    W_IB_LEN,
    W_INFLIGHT,
    W_MARK,
    W_MEM_INFLIGHT,
    W_NUNREAD,
    W_REC,
    W_REC_END,
    W_RESIDENT,
    W_SCHED,
    W_STALL,
    W_STALL_UNTIL,
    W_START,
    W_WAITING_CUS,
    W_WID,
    WB,
    completion_pop,
    completion_push,
    log_issue,
    wake_pop,
    wake_push,
)
from .memory import global_access, shared_access


@njit(cache=True)
def register_bank(entry, warp, banks):
    """machine.banks.register_bank (a test checks the two agree)."""
    return (entry + warp) % banks


# ------------------------------------------------------------------ resources
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
        state.board[sm, slot, :] = 0
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
def _remove(arr, n, value):
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
    _remove(state.warps[sm], sv[sm, SV_NWARPS], slot)
    sv[sm, SV_NWARPS] -= 1
    _remove(state.sched_warps[sm, sched], state.sched_n[sm, sched], slot)
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
def _member(state, sm, cta, slot):
    """Is ``slot`` still held by a warp of block ``cta`` (``Cta.warps`` keeps finished ones)?"""
    return state.wv[sm, slot, W_RESIDENT] == 1 and state.wv[sm, slot, W_CTA] == cta


# ------------------------------------------------------------------ the cycle
@njit(cache=True)
def skip(state, s, sm, gap):
    """SmCounters.skip: ``gap`` cycles in which nothing changed, each like the last one."""
    for sched in range(s.schedulers):
        r = state.last_reasons[sm, sched]
        state.stalls[sm, IDLE if r == ISSUED else r] += gap
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
    progress |= fetch(state, s, code, sm, t)
    if state.err[0]:
        return -1
    occupancy(state, sm, 1)
    while sv[sm, SV_NWAKE] and state.heaps.wake[sm, 0] <= t:
        wake_pop(state, sm)
    if progress:
        return t + 1
    if sv[sm, SV_NWAKE]:
        return state.heaps.wake[sm, 0]
    if sv[sm, SV_NWARPS]:
        slot = state.warps[sm, 0]
        state.err[0], state.err[1], state.err[2], state.err[3] = ERR_DEADLOCK, sm, slot, t
        return -1
    return -1


# ------------------------------------------------------------------ writeback
@njit(cache=True)
def writeback(state, s, code, streams, sm, t):
    """Sm._writeback (with OperandCollector.claim_write and the scoreboards' writeback)."""
    ports = s.writeback_ports
    progress = False
    item = np.empty(COMPLETION_WIDTH, dtype=np.int64)
    deferred = np.empty((0, COMPLETION_WIDTH), dtype=np.int64)
    nd = 0
    while state.sv[sm, SV_NCOMP] and state.heaps.completions[sm, 0, 0] <= t:
        completion_pop(state, sm, item)
        kind, slot, dest, pc = item[2], item[3], item[4], item[5]
        if kind == WB:
            bank = register_bank(dest, slot, s.banks)
            if not ports or state.bank_busy[sm, bank] == t:  # claim_write fails
                if nd == 0:
                    deferred = np.empty((state.sv[sm, SV_NCOMP] + 1, COMPLETION_WIDTH), dtype=np.int64)
                deferred[nd, :] = item
                nd += 1
                continue
            state.bank_busy[sm, bank] = t
            state.rf_writes[sm, bank] += 1
            ports -= 1
            if s.dflow:
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
def next_pc(state, streams, sm, slot):
    """warp.pc: the functional pc, i.e. that of the warp's next record (-1 once it has none)."""
    rec = state.wv[sm, slot, W_REC]
    return streams.pc[rec] if rec < state.wv[sm, slot, W_REC_END] else -1


@njit(cache=True)
def dirty(state, sm, slot):
    """Sm._dirty: an event concerned the warp: re-examine it, and its scheduler, next time."""
    state.wv[sm, slot, W_STALL] = NO_STALL
    state.sched_clean[sm, state.wv[sm, slot, W_SCHED]] = 0


@njit(cache=True)
def complete(state, s, code, streams, sm, slot, pc):
    """Sm._complete."""
    wv = state.wv
    dirty(state, sm, slot)
    wv[sm, slot, W_INFLIGHT] -= 1
    if code.table[pc, ST_IS_MEM]:
        wv[sm, slot, W_MEM_INFLIGHT] -= 1
    if code.table[pc, ST_REDIRECT]:
        wv[sm, slot, W_FETCH_STALLED] = 0
        wv[sm, slot, W_FETCH_PC] = next_pc(state, streams, sm, slot)
    if wv[sm, slot, W_EXITED] and not wv[sm, slot, W_INFLIGHT]:
        retire_warp(state, s, sm, slot)


# ------------------------------------------------------------------ dispatch
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
        if not s.dflow and wv[sm, slot, W_MARK] == stamp:
            continue
        ready = state.cu_unread[sm, u] == 0 and state.cu_ready_at[sm, u] <= t
        if ready and st[pc, ST_ORDERED] and s.dflow:
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
            pipes = state.pipes[sm, cls]
            free_at = pipes[0]
            for p in range(1, count):  # min(pipes), and pipes.index of it
                if pipes[p] < free_at:
                    free_at, pipe = pipes[p], p
            if free_at > t:
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
            if space == SPACE_SHARED:
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
def collector_remove(state, sm, u):
    """OperandCollector.remove."""
    n = state.sv[sm, SV_NCU]
    _remove(state.cu_order[sm], n, u)
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
            # BASE issued only with final operands; D-FLOW waits for the producer's writeback
            if s.dflow and state.board[sm, slot, key % s.ring] > t:
                continue
            bank = state.cu_bank[sm, u, j]
            if state.bank_busy[sm, bank] == t:
                state.misc[sm, M_CONFLICTS] += 1
                continue
            state.bank_busy[sm, bank] = t
            state.rf_reads[sm, bank] += 1
            state.cu_read[sm, u, j] = 1
            state.cu_unread[sm, u] -= 1
            granted = True
            if s.dflow:  # Warp.operand_read
                read_done(state, sm, slot, key)
                dirty(state, sm, slot)
            if not state.cu_unread[sm, u]:
                state.cu_ready_at[sm, u] = t + 1
                if state.cu_waiting[sm, u]:
                    state.cu_waiting[sm, u] = 0
                    wv[sm, slot, W_WAITING_CUS] -= 1
                    sv[sm, SV_WAITING_CUS] -= 1  # Sm._wait_ended
    return granted


# ------------------------------------------------------------------ D-FLOW ring scoreboard
# ``RingScoreboard.unread`` (position -> reads outstanding) as a short list of (position, count).
@njit(cache=True)
def _unread_index(state, sm, slot, position):
    for i in range(state.wv[sm, slot, W_NUNREAD]):
        if state.unread_pos[sm, slot, i] == position:
            return i
    return -1


@njit(cache=True)
def add_reader(state, sm, slot, position):
    """RingScoreboard.add_reader."""
    i = _unread_index(state, sm, slot, position)
    if i < 0:
        i = state.wv[sm, slot, W_NUNREAD]
        state.wv[sm, slot, W_NUNREAD] = i + 1
        state.unread_pos[sm, slot, i] = position
        state.unread_count[sm, slot, i] = 0
    state.unread_count[sm, slot, i] += 1


@njit(cache=True)
def read_done(state, sm, slot, position):
    """RingScoreboard.read_done."""
    i = _unread_index(state, sm, slot, position)
    state.unread_count[sm, slot, i] -= 1
    if not state.unread_count[sm, slot, i]:
        last = state.wv[sm, slot, W_NUNREAD] - 1
        state.unread_pos[sm, slot, i] = state.unread_pos[sm, slot, last]
        state.unread_count[sm, slot, i] = state.unread_count[sm, slot, last]
        state.wv[sm, slot, W_NUNREAD] = last


@njit(cache=True)
def guard_blocks(state, s, sm, slot, position):
    """RingScoreboard.guard_blocks."""
    return (state.board[sm, slot, position % s.ring] == PENDING
            or _unread_index(state, sm, slot, position - s.ring) >= 0)


@njit(cache=True)
def waits(state, s, code, sm, slot, rp, pc, cycle):
    """RingScoreboard.waits(rp, static[pc].sources, cycle)."""
    st = code.table
    for k in range(st[pc, ST_NSRC]):
        if state.board[sm, slot, (rp - st[pc, ST_SRC + k]) % s.ring] > cycle:
            return True
    return False


@njit(cache=True)
def base_blocked(state, code, sm, slot, pc):
    """RegisterScoreboard.blocked."""
    st = code.table
    dst = st[pc, ST_DST]
    if dst >= 0 and state.board[sm, slot, dst]:
        return True
    for k in range(st[pc, ST_NSRC]):
        if state.board[sm, slot, st[pc, ST_SRC + k]]:
            return True
    return False


# ------------------------------------------------------------------ issue
@njit(cache=True)
def issue(state, s, code, streams, sm, t):
    """Sm._issue (with warp_order's GreedyThenOldest / LooseRoundRobin order)."""
    wv = state.wv
    progress = False
    stalls = state.stalls[sm]
    clean = state.sched_clean[sm]
    order = state.scratch[sm, 2 * s.collector_units:]
    npasses = 2 if s.dflow else 1
    for sched in range(s.schedulers):
        n = state.sched_n[sm, sched]
        warps = state.sched_warps[sm, sched]
        if n == 0:
            state.last_reasons[sm, sched] = IDLE
            stalls[IDLE] += 1
            continue
        if clean[sched] > t:  # no event concerned any of its warps: the same answer as last cycle
            stalls[state.last_reasons[sm, sched]] += 1
            continue
        reason = -1
        best = NUM_REASONS
        until = PENDING
        last = state.last_slot[sm, sched]
        # the warp that issued last is forgotten once it retires (its slot may hold a new warp)
        if last >= 0 and (not wv[sm, last, W_RESIDENT] or wv[sm, last, W_AGE] != state.last_age[sm, sched]):
            last = -1
        # order(warps, last); warps are in age order
        at = 0
        if last < 0:
            for i in range(n):
                order[i] = warps[i]
        elif not s.lrr:  # gto: the last, then the others oldest first
            order[0] = last
            at = 1
            for i in range(n):
                if warps[i] != last:
                    order[at] = warps[i]
                    at += 1
        else:  # lrr: after the last, then from the oldest up to it
            i0 = 0
            while warps[i0] != last:
                i0 += 1
            i0 += 1
            for i in range(n):
                order[i] = warps[(i0 + i) % n]
        for p in range(npasses):
            allow_wait = p == 1 or not s.dflow
            for i in range(n):
                slot = order[i]
                # a cached stall holds until an event touching the warp clears it
                if wv[sm, slot, W_STALL] != NO_STALL and t < wv[sm, slot, W_STALL_UNTIL]:
                    why = wv[sm, slot, W_STALL]
                else:
                    why = try_issue(state, s, code, streams, sm, slot, t, allow_wait)
                    if state.err[0]:
                        return progress
                if wv[sm, slot, W_STALL] == NO_STALL:
                    until = 0  # issued, or a stall that other warps' progress can end
                elif wv[sm, slot, W_STALL_UNTIL] < until:
                    until = wv[sm, slot, W_STALL_UNTIL]
                if why == ISSUED:
                    state.last_slot[sm, sched] = slot
                    state.last_age[sm, sched] = wv[sm, slot, W_AGE]
                    reason = ISSUED
                    progress = True
                    break
                if why < best:
                    reason, best = why, why
            if reason == ISSUED or best != SCOREBOARD:
                break
        state.last_reasons[sm, sched] = reason
        clean[sched] = until
        stalls[reason] += 1
    return progress


@njit(cache=True)
def stall(state, sm, slot, reason, until):
    """Sm._stall: remember why the warp cannot issue, until ``until`` or an event."""
    state.wv[sm, slot, W_STALL] = reason
    state.wv[sm, slot, W_STALL_UNTIL] = until
    return reason


@njit(cache=True)
def try_issue(state, s, code, streams, sm, slot, t, allow_wait):
    """Sm._try_issue: issue the warp's next instruction if it can (ISSUED), else why not."""
    st = code.table
    wv = state.wv
    wv[sm, slot, W_STALL] = NO_STALL
    if wv[sm, slot, W_EXITED]:
        return stall(state, sm, slot, DRAIN, PENDING)
    if wv[sm, slot, W_BAR_WAIT]:
        return stall(state, sm, slot, BARRIER, PENDING)
    if not wv[sm, slot, W_IB_LEN]:
        return stall(state, sm, slot, IBUFFER, PENDING)
    head = wv[sm, slot, W_IB_HEAD]
    pc, ready = state.ibuf_pc[sm, slot, head], state.ibuf_ready[sm, slot, head]
    if ready > t:
        return stall(state, sm, slot, IBUFFER, ready)
    if st[pc, ST_OP] == OP_MEMBAR and wv[sm, slot, W_MEM_INFLIGHT]:
        return stall(state, sm, slot, MEMORY_FENCE, PENDING)
    needs_cu = st[pc, ST_NEEDS_CU] != 0
    if needs_cu and state.sv[sm, SV_NCU] >= s.collector_units:
        return COLLECTOR_FULL
    if s.dflow:
        rp = streams.rp[wv[sm, slot, W_REC]]
        if st[pc, ST_PRODUCES] and guard_blocks(state, s, sm, slot, rp):
            return stall(state, sm, slot, RING_GUARD, PENDING)
        if needs_cu and waits(state, s, code, sm, slot, rp, pc, t + 1) and (
                not allow_wait or wv[sm, slot, W_WAITING_CUS] >= s.waiting_per_warp
                or state.sv[sm, SV_WAITING_CUS] >= s.waiting_per_sm
                or not unblocks_next(state, s, code, sm, slot, pc, rp, t)):
            return SCOREBOARD  # not cached: other warps' collector units free the limit
    elif base_blocked(state, code, sm, slot, pc):
        return stall(state, sm, slot, SCOREBOARD, PENDING)
    execute(state, s, code, streams, sm, slot, pc, t, needs_cu)
    return ISSUED


@njit(cache=True)
def unblocks_next(state, s, code, sm, slot, pc, rp, t):
    """Sm._unblocks_next: is sending ``pc`` ahead to wait worth a collector unit?"""
    st = code.table
    if state.wv[sm, slot, W_IB_LEN] < 2 or st[pc, ST_REDIRECT]:
        return False
    second = (state.wv[sm, slot, W_IB_HEAD] + 1) % s.ibuffer_entries
    nxt = state.ibuf_pc[sm, slot, second]
    produces = st[pc, ST_PRODUCES] != 0
    rp2 = rp + 1 if produces else rp
    if produces:
        for k in range(st[nxt, ST_NSRC]):
            if rp2 - st[nxt, ST_SRC + k] == rp:
                return False
    return not waits(state, s, code, sm, slot, rp2, nxt, t + 1)


@njit(cache=True)
def check_barrier(state, s, sm, cta):
    """BatchExecutor._check_barrier: release the block once every warp not done waits.
    Finished warps are done and not waiting."""
    wv = state.wv
    any_waiting = False
    for i in range(s.warps_per_block):
        slot = state.cta_slots[sm, cta, i]
        if _member(state, sm, cta, slot):
            if wv[sm, slot, W_BAR_WAIT]:
                any_waiting = True
            elif not wv[sm, slot, W_EXITED]:
                return
    if any_waiting:
        for i in range(s.warps_per_block):
            slot = state.cta_slots[sm, cta, i]
            if _member(state, sm, cta, slot):
                wv[sm, slot, W_BAR_WAIT] = 0


@njit(cache=True)
def unstall_block(state, s, sm, cta):
    """Sm._unstall_block: ``_dirty`` every warp of the block (a finished one only resets its
    scheduler's cached answer: its own cached stall is never read again)."""
    for i in range(s.warps_per_block):
        slot = state.cta_slots[sm, cta, i]
        if _member(state, sm, cta, slot):
            dirty(state, sm, slot)
        else:
            state.sched_clean[sm, slot % s.schedulers] = 0


@njit(cache=True)
def execute(state, s, code, streams, sm, slot, pc, t, needs_cu):
    """Sm._execute, with the functional effects the stream records (and the barrier)."""
    st = code.table
    sv, wv = state.sv, state.wv
    rec = wv[sm, slot, W_REC]
    if rec >= wv[sm, slot, W_REC_END] or streams.pc[rec] != pc:
        state.err[0], state.err[1], state.err[2], state.err[3], state.err[4] = ERR_PC, sm, slot, pc, t
        return
    wv[sm, slot, W_IB_HEAD] = (wv[sm, slot, W_IB_HEAD] + 1) % s.ibuffer_entries  # ibuf.popleft()
    wv[sm, slot, W_IB_LEN] -= 1
    threads = streams.threads[rec]
    rp = streams.rp[rec] if s.dflow else 0
    wv[sm, slot, W_REC] = rec + 1
    op = st[pc, ST_OP]
    cta = wv[sm, slot, W_CTA]
    if op == OP_BAR:  # the executor's bar: wait, and maybe release the block
        wv[sm, slot, W_BAR_WAIT] = 1
        check_barrier(state, s, sm, cta)
    elif op == OP_EXIT and streams.exits[rec]:  # exit_: done, which may release the barrier
        wv[sm, slot, W_EXITED] = 1
        check_barrier(state, s, sm, cta)
    if s.record_issue:
        log_issue(state, t, wv[sm, slot, W_BLOCK], wv[sm, slot, W_WID], pc)
    unit = st[pc, ST_UNIT]
    state.warp_instructions[sm, unit] += 1  # counters.issued
    state.thread_instructions[sm, unit] += threads
    if op == OP_BAR or op == OP_EXIT:
        unstall_block(state, s, sm, cta)
    if st[pc, ST_ISSUE_ONLY]:
        if op == OP_BAR:
            state.misc[sm, M_BARRIERS] += 1
        if wv[sm, slot, W_EXITED] and not wv[sm, slot, W_INFLIGHT]:
            retire_warp(state, s, sm, slot)
        return
    wv[sm, slot, W_INFLIGHT] += 1
    if st[pc, ST_IS_MEM]:
        wv[sm, slot, W_MEM_INFLIGHT] += 1
    # (decode_kernel: an instruction without a collector unit reads and writes no operand, so
    # the scoreboard work below, which the reference does first, concerns only the others)
    if not needs_cu:  # bra, sync, exit: no operands, no result; straight to the branch unit
        sv[sm, SV_SEQ] += 1
        done = t + code.units[CTRL, 0]
        completion_push(state, sm, done, sv[sm, SV_SEQ], DONE, slot, -1, pc)
        wake_push(state, sm, done)
        return
    u = 0  # a free collector unit (which one does not matter: cu_order keeps the age order)
    while state.cu_used[sm, u]:
        u += 1
    nops = st[pc, ST_NUNIQ]
    for k in range(nops):  # an operand named twice is read once
        d = st[pc, ST_UNIQ + k]
        if s.dflow:
            key = rp - d
            state.cu_bank[sm, u, k] = register_bank(key % s.ring, slot, s.banks)
            add_reader(state, sm, slot, key)
        else:
            key = d
            state.cu_bank[sm, u, k] = register_bank(d, slot, s.banks)
        state.cu_key[sm, u, k] = key
        state.cu_read[sm, u, k] = 0
    if s.dflow:
        dest = rp % s.ring if st[pc, ST_PRODUCES] else -1
        if st[pc, ST_PRODUCES]:
            state.board[sm, slot, rp % s.ring] = PENDING  # RingScoreboard.issue
    else:
        dest = st[pc, ST_DST]
        if dest >= 0:
            state.board[sm, slot, dest] += 1  # RegisterScoreboard.issue
    sv[sm, SV_SEQ] += 1
    state.cu_used[sm, u] = 1
    state.cu_seq[sm, u] = sv[sm, SV_SEQ]
    state.cu_slot[sm, u], state.cu_pc[sm, u], state.cu_rec[sm, u] = slot, pc, rec
    state.cu_dest[sm, u], state.cu_nops[sm, u], state.cu_unread[sm, u] = dest, nops, nops
    state.cu_ready_at[sm, u] = t + 1
    state.cu_waiting[sm, u] = 0
    if s.dflow and waits(state, s, code, sm, slot, rp, pc, t + 1):
        state.cu_waiting[sm, u] = 1
        wv[sm, slot, W_WAITING_CUS] += 1
        sv[sm, SV_WAITING_CUS] += 1
    state.cu_order[sm, sv[sm, SV_NCU]] = u  # collector.add: issue order is age order
    sv[sm, SV_NCU] += 1


# ------------------------------------------------------------------ fetch
@njit(cache=True)
def fetch(state, s, code, sm, t):
    """Sm._fetch: one warp per cycle brings up to ``fetch_width`` instructions into its buffer."""
    sv, wv = state.sv, state.wv
    n = sv[sm, SV_NWARPS]
    if not n:
        return False
    for k in range(n):
        slot = state.warps[sm, (sv[sm, SV_FETCH_RR] + k) % n]
        space = s.ibuffer_entries - wv[sm, slot, W_IB_LEN]
        if wv[sm, slot, W_EXITED] or wv[sm, slot, W_FETCH_STALLED] or space <= 0 or wv[sm, slot, W_START] > t:
            continue
        ready = t + s.fetch_latency
        pc = wv[sm, slot, W_FETCH_PC]
        for _ in range(min(space, s.fetch_width)):
            if pc == s.code_length:  # the functional pre-run would have faulted first
                state.err[0], state.err[1], state.err[2], state.err[3] = ERR_PAST_END, sm, slot, t
                return False
            tail = (wv[sm, slot, W_IB_HEAD] + wv[sm, slot, W_IB_LEN]) % s.ibuffer_entries
            state.ibuf_pc[sm, slot, tail], state.ibuf_ready[sm, slot, tail] = pc, ready
            wv[sm, slot, W_IB_LEN] += 1
            dirty(state, sm, slot)
            if code.table[pc, ST_REDIRECT]:
                wv[sm, slot, W_FETCH_STALLED] = 1
                break
            pc += 1
        wv[sm, slot, W_FETCH_PC] = pc
        sv[sm, SV_FETCH_RR] = (sv[sm, SV_FETCH_RR] + k + 1) % n
        wake_push(state, sm, ready)
        return True
    return False

"""Issue in the compiled SM: the numba port of ``Sm._issue``, ``_try_issue``,
``_unblocks_next``, ``_execute`` and ``_unstall_block`` (dualflow/models/timing/sm.py) with the warp
order of dualflow/models/timing/warp_order.py, and the block barrier of the functional executor
(``BatchExecutor``'s ``bar``, ``exit_`` and ``_check_barrier``), which the reference reads from it.

The instruction issued is the warp's next record of the launch's streams: its active lanes, its
RP at issue (with ``Variant.HANDS``, every hand's: scoreboard.py), whether its ``exit`` made the
warp done. A hands kernel's D-FLOW checks and operands are functions of their own here
(``hands_blocked``, ``may_wait_hands``, ``unblocks_next_hands``, ``hands_operands``), which
the original form's path only branches around."""

from __future__ import annotations

from numba import njit

from .codes import (
    DISPATCH_OUT_OF_ORDER,
    ISSUE_ORDER_OLDEST_FIRST,
    ISSUE_ORDER_READY_FIRST,
    NO_STALL,
    NUM_REASONS,
    REGISTER_FILE_NAMED,
    REGISTER_FILE_RING,
    SCHEDULER_GTO,
    SCHEDULER_LRR,
    SEND_AHEAD_ANY,
    SEND_AHEAD_LOADS,
    STALL_BARRIER,
    STALL_COLLECTOR_FULL,
    STALL_DRAIN,
    STALL_IBUFFER,
    STALL_IDLE,
    STALL_ISSUED,
    STALL_MEMORY_FENCE,
    STALL_RING_GUARD,
    STALL_SCOREBOARD,
    WINDOW_PER_WARP,
    WINDOW_POOL_LIMITED,
    WINDOW_RESERVE,
)
from .collector import register_bank
from .core import (
    CTRL,
    DONE,
    ERR_PC,
    HT_DST,
    HT_SRC,
    HT_UNIQ,
    OP_BAR,
    OP_EXIT,
    OP_MEMBAR,
    PENDING,
    ST_DST,
    ST_IS_MEM,
    ST_IS_STORE,
    ST_ISSUE_ONLY,
    ST_NEEDS_CU,
    ST_NSRC,
    ST_NUNIQ,
    ST_OP,
    ST_PRODUCES,
    ST_REDIRECT,
    ST_SRC,
    ST_UNIQ,
    ST_UNIT,
    SV_NCU,
    SV_SEQ,
    SV_WAITING_CUS,
    W_AGE,
    W_BAR_WAIT,
    W_BLOCK,
    W_CTA,
    W_EXITED,
    W_FETCH_PC,
    W_IB_HEAD,
    W_IB_LEN,
    W_INFLIGHT,
    W_MEM_INFLIGHT,
    W_REC,
    W_REC_END,
    W_RESIDENT,
    W_SCHED,
    W_STALL,
    W_STALL_UNTIL,
    W_WAITING_CUS,
    W_WID,
    completion_push,
    log_issue,
    wake_push,
)
from .layout import M_BARRIERS, M_FLUSHES
from .scoreboard import add_reader, base_blocked, guard_blocks, hand_entry, hand_guard_blocks, hand_waits, waits
from .warps import dirty, is_member, next_pc, retire_warp


@njit(cache=True)
def issue(state, s, code, streams, sm, t):
    """Sm._issue (with warp_order's GreedyThenOldest / LooseRoundRobin order)."""
    wv = state.wv
    progress = False
    stalls = state.stalls[sm]
    clean = state.sched_clean[sm]
    order = state.scratch[sm, 2 * s.collector_units:]
    npasses = 2 if s.dispatch == DISPATCH_OUT_OF_ORDER and ready_first(s) else 1
    for sched in range(s.schedulers):
        n = state.sched_n[sm, sched]
        warps = state.sched_warps[sm, sched]
        if n == 0:
            state.last_reasons[sm, sched] = STALL_IDLE
            stalls[STALL_IDLE] += 1
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
        elif s.scheduler == SCHEDULER_GTO:  # the last, then the others oldest first
            order[0] = last
            at = 1
            for i in range(n):
                if warps[i] != last:
                    order[at] = warps[i]
                    at += 1
        elif s.scheduler == SCHEDULER_LRR:  # after the last, then from the oldest up to it
            i0 = 0
            while warps[i0] != last:
                i0 += 1
            i0 += 1
            for i in range(n):
                order[i] = warps[(i0 + i) % n]
        else:
            raise ValueError("compiled issue: a warp scheduler without a branch here (codes.SCHEDULER_*)")
        for p in range(npasses):
            allow_wait = p == 1 or npasses == 1
            for i in range(n):
                slot = order[i]
                if slot < 0:  # D-FLOW, second pass: the first found only its operands not ready
                    slot = -1 - slot
                    why = issue_waiting(state, s, code, streams, sm, slot, t)
                    if state.err[0]:
                        return progress
                # a cached stall holds until an event touching the warp clears it
                elif wv[sm, slot, W_STALL] != NO_STALL and t < wv[sm, slot, W_STALL_UNTIL]:
                    why = wv[sm, slot, W_STALL]
                else:
                    why = try_issue(state, s, code, streams, sm, slot, t, allow_wait)
                    if state.err[0]:
                        return progress
                    if why == STALL_SCOREBOARD and not allow_wait:
                        # nothing changes before the second pass (no warp issues in this one):
                        # it need only decide whether the instruction may wait (``issue_waiting``)
                        order[i] = -1 - slot
                if wv[sm, slot, W_STALL] == NO_STALL:
                    until = 0  # issued, or a stall that other warps' progress can end
                elif wv[sm, slot, W_STALL_UNTIL] < until:
                    until = wv[sm, slot, W_STALL_UNTIL]
                if why == STALL_ISSUED:
                    state.last_slot[sm, sched] = slot
                    state.last_age[sm, sched] = wv[sm, slot, W_AGE]
                    reason = STALL_ISSUED
                    progress = True
                    break
                if why < best:
                    reason, best = why, why
            if reason == STALL_ISSUED or best != STALL_SCOREBOARD:
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
    """Sm._try_issue: issue the warp's next instruction if it can (STALL_ISSUED), else why not."""
    st = code.table
    wv = state.wv
    wv[sm, slot, W_STALL] = NO_STALL
    if wv[sm, slot, W_EXITED]:
        return stall(state, sm, slot, STALL_DRAIN, PENDING)
    if wv[sm, slot, W_BAR_WAIT]:
        return stall(state, sm, slot, STALL_BARRIER, PENDING)
    if not wv[sm, slot, W_IB_LEN]:
        return stall(state, sm, slot, STALL_IBUFFER, PENDING)
    head = wv[sm, slot, W_IB_HEAD]
    pc, ready = state.ibuf_pc[sm, slot, head], state.ibuf_ready[sm, slot, head]
    if s.fetch_past:
        target = next_pc(state, streams, sm, slot)
        if pc != target:  # fetched past a branch that went elsewhere: flush, fetch from its target
            wv[sm, slot, W_IB_LEN] = 0
            wv[sm, slot, W_FETCH_PC] = target
            state.misc[sm, M_FLUSHES] += 1
            return stall(state, sm, slot, STALL_IBUFFER, PENDING)
    if ready > t:
        return stall(state, sm, slot, STALL_IBUFFER, ready)
    if st[pc, ST_OP] == OP_MEMBAR and wv[sm, slot, W_MEM_INFLIGHT]:
        return stall(state, sm, slot, STALL_MEMORY_FENCE, PENDING)
    needs_cu = st[pc, ST_NEEDS_CU] != 0
    if needs_cu and pool_count(state, s, sm, slot, False) >= s.collector_units // s.parts:
        return STALL_COLLECTOR_FULL
    if s.hands:  # D-FLOW, Variant.HANDS
        why = hands_blocked(state, s, code, streams, sm, slot, pc, t, allow_wait, needs_cu)
        if why != STALL_ISSUED:
            return why
    elif s.register_file == REGISTER_FILE_RING:
        rp = streams.rp[wv[sm, slot, W_REC]]
        if st[pc, ST_PRODUCES] and guard_blocks(state, s, sm, slot, rp):
            return stall(state, sm, slot, STALL_RING_GUARD, PENDING)
        if needs_cu and waits(state, s, code, sm, slot, rp, pc, t + 1) and (
                not allow_wait or not may_wait(state, s, code, sm, slot, pc, rp, t)):
            return STALL_SCOREBOARD  # not cached: other warps' collector units free the limit
    elif s.register_file == REGISTER_FILE_NAMED:
        if base_blocked(state, code, sm, slot, pc):
            return stall(state, sm, slot, STALL_SCOREBOARD, PENDING)
    else:
        raise ValueError("compiled issue: a register file without a branch here (codes.REGISTER_FILE_*)")
    execute(state, s, code, streams, sm, slot, pc, t, needs_cu)
    return STALL_ISSUED


@njit(cache=True)
def hands_blocked(state, s, code, streams, sm, slot, pc, t, allow_wait, needs_cu):
    """Sm._try_issue_hands's checks: the ring guard of the hand ``pc`` writes, its operands on
    every hand (STALL_RING_GUARD, STALL_SCOREBOARD, or STALL_ISSUED: nothing holds it back)."""
    rec = state.wv[sm, slot, W_REC]
    if code.table[pc, ST_PRODUCES] and hand_guard_blocks(state, s, code, streams, sm, slot, rec, pc):
        return stall(state, sm, slot, STALL_RING_GUARD, PENDING)
    if needs_cu and hand_waits(state, s, code, streams, sm, slot, rec, -1, pc, t + 1) and (
            not allow_wait or not may_wait_hands(state, s, code, streams, sm, slot, pc, t)):
        return STALL_SCOREBOARD  # not cached: other warps' collector units free the limit
    return STALL_ISSUED


@njit(cache=True)
def may_wait_hands(state, s, code, streams, sm, slot, pc, t):
    """``may_wait`` for a ``Variant.HANDS`` kernel."""
    return not (state.wv[sm, slot, W_WAITING_CUS] >= s.waiting_per_warp
                or window_full(state, s, sm, slot)
                or not unblocks_next_hands(state, s, code, streams, sm, slot, pc, t))


@njit(cache=True)
def unblocks_next_hands(state, s, code, streams, sm, slot, pc, t):
    """Sm._unblocks_next_hands: ``unblocks_next`` with the hand ``pc`` writes one further."""
    st = code.table
    if state.wv[sm, slot, W_IB_LEN] < 2 or st[pc, ST_REDIRECT]:
        return False
    second = (state.wv[sm, slot, W_IB_HEAD] + 1) % s.ibuffer_entries
    nxt = state.ibuf_pc[sm, slot, second]
    if not may_send_ahead_of(s, st, nxt):
        return False
    hand = code.hands[pc, HT_DST] if st[pc, ST_PRODUCES] else -1
    for k in range(st[nxt, ST_NSRC]):
        if code.hands[nxt, HT_SRC + k] == hand and st[nxt, ST_SRC + k] == 1:
            return False  # it reads the result of ``pc``
    return not hand_waits(state, s, code, streams, sm, slot, state.wv[sm, slot, W_REC], hand, nxt, t + 1)


@njit(cache=True)
def hands_operands(state, s, code, streams, sm, slot, u, pc, rec):
    """``execute``'s operands and destination for a ``Variant.HANDS`` kernel: each unique
    (hand, distance) source in collector unit ``u`` (its bank from its entry in the warp's slot
    space, its key position * capacity + entry), the destination's entry pending; returns
    the destination (-1: none)."""
    st = code.table
    for k in range(st[pc, ST_NUNIQ]):  # an operand named twice is read once
        hand = code.hands[pc, HT_UNIQ + k]
        position = streams.rp[rec * s.hands + hand] - st[pc, ST_UNIQ + k]
        entry = hand_entry(code, hand, position)
        key = position * s.ring + entry
        state.cu_bank[sm, u, k] = register_bank(entry, slot, s.banks, s.bank_groups)
        add_reader(state, sm, slot, key)
        state.cu_key[sm, u, k] = key
        state.cu_read[sm, u, k] = 0
    if not st[pc, ST_PRODUCES]:
        return -1
    hand = code.hands[pc, HT_DST]  # HandsScoreboard.hand_issue
    dest = hand_entry(code, hand, streams.rp[rec * s.hands + hand])
    state.board[sm, slot, dest] = PENDING
    return dest


@njit(cache=True)
def may_wait(state, s, code, sm, slot, pc, rp, t):
    """D-FLOW: may the warp send ``pc``, whose operands are not all ready, ahead into a
    collector unit to wait there (the limits, and ``unblocks_next``)?"""
    return not (state.wv[sm, slot, W_WAITING_CUS] >= s.waiting_per_warp
                or window_full(state, s, sm, slot)
                or not unblocks_next(state, s, code, sm, slot, pc, rp, t))


@njit(cache=True)
def ready_first(s):
    """D-FLOW: does a scheduler try its warps' ready instructions before any that would wait
    (``SmConfig.dflow_issue_order``)?"""
    if s.issue_order == ISSUE_ORDER_READY_FIRST:
        return True
    if s.issue_order == ISSUE_ORDER_OLDEST_FIRST:
        return False
    raise ValueError("compiled issue: an issue order without a branch here (codes.ISSUE_ORDER_*)")


@njit(cache=True)
def window_full(state, s, sm, slot):
    """D-FLOW: does the window's limit beyond the warp's own (``SmConfig.dflow_window``) keep
    the warp's pool of collector units from taking one more waiting instruction?"""
    if s.window == WINDOW_PER_WARP:
        return False
    if s.window == WINDOW_POOL_LIMITED:
        return pool_count(state, s, sm, slot, True) >= s.waiting_per_sm
    if s.window == WINDOW_RESERVE:  # it must leave more than ``reserve`` units of the pool free
        return s.collector_units // s.parts - pool_count(state, s, sm, slot, False) <= s.reserve
    raise ValueError("compiled issue: a D-FLOW window without a branch here (codes.WINDOW_*)")


@njit(cache=True)
def may_send_ahead_of(s, st, nxt):
    """D-FLOW: may an instruction go ahead to wait when ``nxt`` follows it
    (``SmConfig.dflow_send_ahead``; the other conditions are the caller's)?"""
    if s.send_ahead == SEND_AHEAD_ANY:
        return True
    if s.send_ahead == SEND_AHEAD_LOADS:
        return st[nxt, ST_IS_MEM] != 0 and st[nxt, ST_IS_STORE] == 0  # a load
    raise ValueError("compiled issue: a send-ahead policy without a branch here (codes.SEND_AHEAD_*)")


@njit(cache=True)
def pool_count(state, s, sm, slot, waiting):
    """Collector units held (``waiting``: and whose operands are in flight) in the warp's pool:
    the SM's counts, or a count over the (few) units of the warp's scheduler (the reference's
    ``pool_units`` and ``waiting_cus``)."""
    sv = state.sv
    if s.parts == 1:
        return sv[sm, SV_WAITING_CUS] if waiting else sv[sm, SV_NCU]
    pool = state.wv[sm, slot, W_SCHED] % s.parts
    n = 0
    for k in range(sv[sm, SV_NCU]):
        u = state.cu_order[sm, k]
        if state.wv[sm, state.cu_slot[sm, u], W_SCHED] % s.parts == pool and (
                not waiting or state.cu_waiting[sm, u]):
            n += 1
    return n


@njit(cache=True)
def issue_waiting(state, s, code, streams, sm, slot, t):
    """``try_issue`` with waiting allowed, for a warp whose try without it this cycle returned
    STALL_SCOREBOARD (every earlier check passed, its operands are not ready): the same answer
    without repeating those checks."""
    pc = state.ibuf_pc[sm, slot, state.wv[sm, slot, W_IB_HEAD]]
    if s.hands:
        if not may_wait_hands(state, s, code, streams, sm, slot, pc, t):
            return STALL_SCOREBOARD
    elif not may_wait(state, s, code, sm, slot, pc, streams.rp[state.wv[sm, slot, W_REC]], t):
        return STALL_SCOREBOARD
    execute(state, s, code, streams, sm, slot, pc, t, True)
    return STALL_ISSUED


@njit(cache=True)
def unblocks_next(state, s, code, sm, slot, pc, rp, t):
    """Sm._unblocks_next: is sending ``pc`` ahead to wait worth a collector unit?"""
    st = code.table
    if state.wv[sm, slot, W_IB_LEN] < 2 or st[pc, ST_REDIRECT]:
        return False
    second = (state.wv[sm, slot, W_IB_HEAD] + 1) % s.ibuffer_entries
    nxt = state.ibuf_pc[sm, slot, second]
    if not may_send_ahead_of(s, st, nxt):
        return False
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
        if is_member(state, sm, cta, slot):
            if wv[sm, slot, W_BAR_WAIT]:
                any_waiting = True
            elif not wv[sm, slot, W_EXITED]:
                return
    if any_waiting:
        for i in range(s.warps_per_block):
            slot = state.cta_slots[sm, cta, i]
            if is_member(state, sm, cta, slot):
                wv[sm, slot, W_BAR_WAIT] = 0


@njit(cache=True)
def unstall_block(state, s, sm, cta):
    """Sm._unstall_block: ``_dirty`` every warp of the block (a finished one only resets its
    scheduler's cached answer: its own cached stall is never read again)."""
    for i in range(s.warps_per_block):
        slot = state.cta_slots[sm, cta, i]
        if is_member(state, sm, cta, slot):
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
    ring = s.register_file == REGISTER_FILE_RING  # else named registers (the modes it implements: engine.py)
    rp = streams.rp[rec] if ring else 0
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
    if s.hands:  # D-FLOW, Variant.HANDS
        dest = hands_operands(state, s, code, streams, sm, slot, u, pc, rec)
    else:
        for k in range(nops):  # an operand named twice is read once
            d = st[pc, ST_UNIQ + k]
            if ring:
                key = rp - d
                state.cu_bank[sm, u, k] = register_bank(key % s.ring, slot, s.banks, s.bank_groups)
                add_reader(state, sm, slot, key)
            else:
                key = d
                state.cu_bank[sm, u, k] = register_bank(d, slot, s.banks, s.bank_groups)
            state.cu_key[sm, u, k] = key
            state.cu_read[sm, u, k] = 0
        if ring:
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
    if s.hands:
        if hand_waits(state, s, code, streams, sm, slot, rec, -1, pc, t + 1):
            state.cu_waiting[sm, u] = 1
            wv[sm, slot, W_WAITING_CUS] += 1
            sv[sm, SV_WAITING_CUS] += 1
    elif s.dispatch == DISPATCH_OUT_OF_ORDER and waits(state, s, code, sm, slot, rp, pc, t + 1):
        state.cu_waiting[sm, u] = 1
        wv[sm, slot, W_WAITING_CUS] += 1
        sv[sm, SV_WAITING_CUS] += 1
    state.cu_order[sm, sv[sm, SV_NCU]] = u  # collector.add: issue order is age order
    sv[sm, SV_NCU] += 1

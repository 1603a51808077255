"""One streaming multiprocessor, cycle by cycle.

Pipeline (stages evaluated in reverse order each cycle, so nothing passes two stages in one
cycle): fetch -> instruction buffer -> issue (one warp instruction per scheduler per cycle) ->
operand collector (bank-arbitrated register reads) -> dispatch to an execution unit ->
writeback (limited ports, each write takes its bank for the cycle).

Issue executes the instruction in the functional model (values, addresses, branch outcomes);
everything else here only decides when things happen. The SM is event-skipping: a cycle in
which nothing can change is never simulated; ``tick`` returns the next cycle that needs it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from dualflow.common.errors import TimingDeadlock
from dualflow.isa.opcodes import Opcode, UnitClass
from dualflow.machine.banks import register_bank
from dualflow.machine.config import SmConfig
from dualflow.machine.mode import Mode
from dualflow.machine.window import DflowWindow, IssueOrder, SendAhead

from .collector import CollectorUnit, Operand, OperandCollector
from .memory.coalescer import coalesce, local_addresses
from .memory.pending import when
from .memory.shared_banks import conflict_degree
from .memory.system import Access, MemorySystem
from .ordering import check_reorder, must_keep_order
from .program import StaticInstruction
from .scoreboard import PENDING
from .stats import STALL_REASONS, SmCounters
from .warp import Cta, Warp
from .warp_order import warp_order

UNIT_CLASSES = (UnitClass.INT, UnitClass.FP, UnitClass.SFU, UnitClass.MEM, UnitClass.CTRL)
_WB, _DONE = 0, 1  # completion kinds: a result to write back, or an instruction without one
#: a pipeline's busy-until while the memory system has not said when its port frees
BLOCKED = 1 << 62
# Stall precedence: when no warp of a scheduler issues, the cycle is charged to the reason of
# the warp that came closest to issuing.
_RANK = {reason: i for i, reason in enumerate(STALL_REASONS)}


class Sm:
    """Timing state of one SM; ``launch`` binds it to the current kernel."""

    def __init__(self, index: int, config: SmConfig, memory: MemorySystem, *, mode: Mode):
        self.index, self.cfg, self.memory, self.mode = index, config, memory, mode
        self.ring_file = mode.ring  # operands are ring slots at a distance from the warp's RP
        self.out_of_order = mode.out_of_order  # dispatch from the collector as operands become ready
        self.collector = OperandCollector(config.register_banks, config.register_bank_ports)
        self.collector.on_wait_end = self._wait_ended
        # collector units, pipelines and register banks come in ``parts`` equal pools, one per
        # scheduler (sub-cores) or one for the SM; a warp's pool is its scheduler's
        self.parts = config.partitions
        self.pool_capacity = config.collector_units // self.parts
        self.pool_units = [0] * self.parts  # collector units held, per pool
        # the D-FLOW window's limit beyond each warp's own: on a pool's waiting units, or the units
        # of the pool a waiting instruction must leave free (reserve; -1: none). A policy without
        # an entry in these tables is a KeyError, not another policy's behaviour.
        self.pool_limited, self.reserve = {
            DflowWindow.PER_WARP: (False, -1), DflowWindow.POOL_LIMITED: (True, -1),
            DflowWindow.RESERVE: (False, config.dflow_reserve)}[config.dflow_window]
        self.ready_first = {IssueOrder.READY_FIRST: True, IssueOrder.OLDEST_FIRST: False}[config.dflow_issue_order]
        self.ahead_of_loads_only = {SendAhead.ANY: False, SendAhead.LOADS: True}[config.dflow_send_ahead]
        self.pipes = {cls: [0] * config.unit(cls).count for cls in UNIT_CLASSES}
        self.units = {cls: config.unit(cls) for cls in UNIT_CLASSES}
        self.ctas: list[Cta] = []
        self.warps: list[Warp] = []
        self.sched_warps: list[list[Warp]] = [[] for _ in range(config.schedulers)]
        self.warp_order = warp_order(config.scheduler)
        self.last_issued: list[Warp | None] = [None] * config.schedulers  # forgotten when it retires
        # per scheduler: up to which cycle its last answer (no issue, and why) still holds
        self.sched_clean_until = [0] * config.schedulers
        self.completions: list[tuple] = []  # heap of (cycle, seq, kind, warp, dest, ins)
        self.wake: list[int] = []  # heap of future cycles at which something is due
        self.fetch_rr = 0
        self.waiting_cus = [0] * self.parts  # D-FLOW, per pool: units whose operands are in flight
        self.seq = 0
        self.warp_age = 0
        self.counters = SmCounters()
        self.last_reasons = ["idle"] * config.schedulers
        self.last_cycle = -1
        self.finished_ctas: list[Cta] = []
        self.issue_log: list[tuple[int, int, int, int]] | None = None  # (cycle, block, warp, pc) when recording
        self.free_slots = list(range(config.max_warps))
        # per-launch bindings
        self.static: list[StaticInstruction] = []
        self.kernel_name = ""
        self.ring = 0  # D-FLOW: ring entries per warp (with Variant.HANDS, every hand's: the capacity)
        self.rings: tuple[int, ...] | None = None  # Variant.HANDS: the ring of each hand (None without)
        self.local_bytes = 0
        self.warps_per_block = 1
        self.count: Callable[[int, int], None] | None = None
        #: queued DRAM: pipelines and completions waiting for the memory system, which calls
        #: ``on_wake(sm index, cycle)`` when one is known (the GPU schedules the SM then)
        self.memory_waits = 0
        self.on_wake: Callable[[int, int], None] | None = None

    # ------------------------------------------------------------------ resources
    def used(self) -> tuple[int, int, int, int]:
        """Threads (warp-granular), blocks, shared bytes and registers held by resident blocks."""
        threads = sum(len(c.warps) for c in self.ctas) * self.cfg.warp_size
        return threads, len(self.ctas), sum(c.shared_bytes for c in self.ctas), sum(c.registers for c in self.ctas)

    def fits(self, warps: int, shared_bytes: int, registers: int) -> bool:
        threads, ctas, shared, regs = self.used()
        cfg = self.cfg
        return (threads + warps * cfg.warp_size <= cfg.max_threads and ctas < cfg.max_ctas
                and shared + shared_bytes <= cfg.shared_bytes and regs + registers <= cfg.registers)

    def add_cta(self, cta: Cta, executor, first_warp: int, warps: int, start: int, entries: int) -> None:
        """Make a block resident; its warps may fetch from cycle ``start`` on."""
        for i in range(warps):
            slot = self.free_slots.pop(0)
            warp = Warp(cta, executor, first_warp + i, slot, self.warp_age, slot % self.cfg.schedulers,
                        scoreboard=self.mode.scoreboard, entries=entries, rings=self.rings)
            self.warp_age += 1
            warp.fetch_pc = warp.pc
            warp.sched_clean = self.sched_clean_until
            self.sched_clean_until[warp.sched] = 0
            warp.exited = bool(executor.done[warp.w])
            cta.warps.append(warp)
            self.warps.append(warp)
            self.sched_warps[warp.sched].append(warp)
        self.ctas.append(cta)
        for warp in cta.warps:
            if warp.exited:
                self._retire_warp(warp)
        for warp in cta.warps:
            warp.start = start
        heapq.heappush(self.wake, start)

    def _retire_warp(self, warp: Warp) -> None:
        warp.finished = True
        self.sched_clean_until[warp.sched] = 0
        self.warps.remove(warp)
        self.sched_warps[warp.sched].remove(warp)
        self.free_slots.append(warp.slot)
        self.free_slots.sort()
        cta = warp.cta
        if all(w.finished for w in cta.warps):
            self.ctas.remove(cta)
            self.finished_ctas.append(cta)

    # ------------------------------------------------------------------ the cycle
    def tick(self, t: int) -> int | None:
        """Simulate cycle ``t``; returns the next cycle this SM needs, or None if it is idle."""
        gap = t - self.last_cycle - 1
        if gap > 0 and self.last_cycle >= 0:
            self.counters.skip(gap, self.last_reasons, len(self.collector.units), len(self.warps))
        self.last_cycle = t
        progress = self._writeback(t)
        progress |= self._dispatch(t)
        progress |= self.collector.read_operands(t, self._readable)
        progress |= self._issue(t)
        progress |= self._fetch(t)
        self.counters.cycle(len(self.collector.units), len(self.warps))
        while self.wake and self.wake[0] <= t:
            heapq.heappop(self.wake)
        if progress:
            return t + 1
        if self.wake:
            return self.wake[0]
        if self.warps and not self.memory_waits:
            stuck = self.warps[0]
            raise TimingDeadlock(f"timing model deadlock on SM {self.index} at cycle {t}: {stuck.name} at pc "
                                f"{stuck.pc} can never proceed (kernel {self.kernel_name!r}); state: "
                                f"{self.line_trace()}")
        return None

    def _wait_ended(self, cu: CollectorUnit) -> None:
        self.waiting_cus[cu.warp.sched % self.parts] -= 1

    def line_trace(self) -> str:
        """One line of state for debugging: per warp pc, buffer, in-flight count; collector units."""
        warps = " ".join(
            f"w{w.slot}@{w.pc}[{','.join(str(pc) for pc, _ in w.ibuf)}]{'S' if w.fetch_stalled else ''}"
            f"{'B' if w.at_barrier else ''}{'X' if w.exited else ''}:{w.inflight}" for w in self.warps)
        cus = " ".join(f"{cu.warp.slot}:{cu.ins.pc}/{cu.unread}" for cu in self.collector.units)
        return f"SM{self.index} t={self.last_cycle} | {warps} | CU {cus} | done {len(self.completions)}"

    # ------------------------------------------------------------------ writeback
    def _writeback(self, t: int) -> bool:
        q = self.completions
        ports = self.cfg.writeback_ports
        deferred = []
        progress = False
        banks, groups = self.cfg.register_banks, self.cfg.bank_groups
        while q and q[0][0] <= t:
            item = heapq.heappop(q)
            _, _, kind, warp, dest, ins = item
            if kind == _WB:
                if not ports or not self.collector.claim_write(register_bank(dest, warp.slot, banks, groups), t):
                    deferred.append(item)
                    continue
                ports -= 1
                warp.board.writeback(dest, t)
            self._complete(warp, ins, t)
            progress = True
        for item in deferred:
            heapq.heappush(q, item)
        if deferred:
            heapq.heappush(self.wake, t + 1)
        return progress

    def _complete(self, warp: Warp, ins: StaticInstruction, t: int) -> None:
        self._dirty(warp)
        warp.inflight -= 1
        if ins.is_mem:
            warp.mem_inflight -= 1
        if ins.redirect and not self.cfg.fetch_past_branches:
            warp.fetch_stalled = False
            warp.fetch_pc = warp.pc
        if warp.exited and not warp.inflight:
            self._retire_warp(warp)

    # ------------------------------------------------------------------ dispatch
    def _dispatch(self, t: int) -> bool:
        progress = False
        blocked_warps: set[int] = set()  # BASE: warps whose older instruction has not dispatched
        pending_mem: dict[int, list[CollectorUnit]] = {}  # D-FLOW: older undispatched memory ops per warp
        for cu in list(self.collector.units):
            warp, ins = cu.warp, cu.ins
            wid = id(warp)
            if not self.out_of_order and wid in blocked_warps:
                continue
            ready = not cu.unread and cu.ready_at <= t
            if ready and ins.ordered and self.out_of_order:
                older = pending_mem.get(wid, ())
                if any(must_keep_order(o.ins, ins) for o in older):
                    ready = False
                else:
                    for o in older:
                        check_reorder(self.kernel_name, warp.name, o.ins, o.addresses[0], o.mask[0], ins,
                                      cu.addresses[0], cu.mask[0])
            if ready:
                pipes = self.pipes[ins.unit]
                first, last = self._pipe_range(len(pipes), warp)
                free_at = min(pipes[first:last])
                if free_at > t:
                    if free_at < BLOCKED:  # else the memory system wakes the SM when it frees
                        heapq.heappush(self.wake, free_at)
                    ready = False
            if not ready:
                blocked_warps.add(wid)
                if ins.ordered:
                    pending_mem.setdefault(wid, []).append(cu)
                continue
            self._start(cu, t, pipes, pipes.index(free_at, first))
            self.collector.remove(cu)
            self.pool_units[warp.sched % self.parts] -= 1
            progress = True
        return progress

    def _pipe_range(self, count: int, warp: Warp) -> tuple[int, int]:
        """The pipelines of a class of ``count`` that ``warp`` may use: its pool's share, or all
        of them when they do not divide among the pools."""
        if self.parts == 1 or count % self.parts:
            return 0, count
        per = count // self.parts
        pool = warp.sched % self.parts
        return pool * per, pool * per + per

    def _start(self, cu: CollectorUnit, t: int, pipes: list[int], pipe: int) -> None:
        """Send a collected instruction into pipeline ``pipe`` of its unit class."""
        ins = cu.ins
        unit = self.units[ins.unit]
        busy_until = t + unit.interval
        if ins.is_mem and ins.space == "param":
            done = t + unit.latency + self.cfg.const_latency
        elif ins.is_mem:
            access = self._memory_access(cu, t)
            if type(access.port_free) is not int or type(access.done) is not int:  # it waits for DRAM
                self._wait_memory(access, pipes, pipe, busy_until, unit.latency, cu, ins)
                return
            busy_until, done = max(busy_until, access.port_free), access.done + unit.latency
        else:
            done = t + unit.latency
        pipes[pipe] = busy_until
        self._post(done, cu, ins)

    def _memory_access(self, cu: CollectorUnit, t: int) -> Access:
        """The memory system's timing of the shared, global or local access of ``cu`` made at ``t``."""
        ins, warp = cu.ins, cu.warp
        config = self.memory.config
        if ins.space == "shared":
            return self.memory.shared_access(t, self.index, conflict_degree(
                cu.addresses[0], cu.mask[0], config.shared.banks, config.shared.bank_bytes, config.shared.warp_parts))
        addrs = cu.addresses[0]
        if ins.space == "local":
            addrs = local_addresses(warp.cta.block * self.warps_per_block + int(warp.ex.wid[warp.w]),
                                    self.cfg.warp_size, addrs, self.local_bytes)
        txs = coalesce(addrs, cu.mask[0], config.l1.line_bytes, config.l1.sector_bytes)
        return self.memory.global_access(t, self.index, txs, write=ins.is_store)

    def _post(self, done: int, cu: CollectorUnit, ins: StaticInstruction) -> None:
        self.seq += 1
        heapq.heappush(self.completions, (done, self.seq, _WB if cu.dest >= 0 else _DONE, cu.warp, cu.dest, ins))
        heapq.heappush(self.wake, done)

    def _wait_memory(self, access: Access, pipes: list[int], pipe: int, busy_until: int, latency: int,
                     cu: CollectorUnit, ins: StaticInstruction) -> None:
        """An access whose port release or data waits for DRAM (a queued controller): the pipeline
        and the completion wait for the memory system, which wakes the SM (``on_wake``) once each
        is known."""
        self.memory_waits += 2

        def port_free(cycle: int) -> None:
            pipes[pipe] = max(busy_until, cycle)
            self._woken(pipes[pipe])

        def done(cycle: int) -> None:
            self._post(cycle + latency, cu, ins)
            self._woken(cycle + latency)

        pipes[pipe] = BLOCKED
        when(access.port_free, port_free)
        when(access.done, done)

    def _woken(self, cycle: int) -> None:
        self.memory_waits -= 1
        heapq.heappush(self.wake, cycle)
        self.on_wake(self.index, cycle)

    def _readable(self, cu: CollectorUnit, op: Operand, t: int) -> bool:
        # BASE issued only with final operands; D-FLOW waits for the producer's writeback
        return not self.out_of_order or cu.warp.board.ready[op.key % self.ring] <= t

    # ------------------------------------------------------------------ issue
    def _issue(self, t: int) -> bool:
        progress = False
        stalls = self.counters.stalls
        for s, warps in enumerate(self.sched_warps):
            if not warps:
                self.last_reasons[s] = "idle"
                stalls["idle"] += 1
                continue
            if self.sched_clean_until[s] > t:  # no event concerned any of its warps: the same answer as last cycle
                stalls[self.last_reasons[s]] += 1
                continue
            reason = None
            best = len(_RANK)
            until = PENDING  # while every warp's stall is cached, the answer holds until the earliest expires
            last = self.last_issued[s]
            if last is not None and last.finished:
                last = None
            order = self.warp_order.order(warps, last)  # warps are in age order
            # D-FLOW prefers instructions whose operands are ready (ready-first, two levels); only if
            # none can issue does it send one ahead into a collector unit to wait there (the
            # out-of-order window). The second level is tried only when the closest stall of the
            # first was the scoreboard (see warp_order.py on how this differs from the RTL).
            passes = (False, True) if self.out_of_order and self.ready_first else (True,)
            if self.out_of_order:
                order = list(order)
            for allow_wait in passes:
                for warp in order:
                    # a cached stall holds until an event touching the warp clears it (``_unstall``)
                    if warp.stall is not None and t < warp.stall_until:
                        why = warp.stall
                    else:
                        why = self._try_issue(warp, t, allow_wait)
                    if warp.stall is None:
                        until = 0  # issued, or a stall that other warps' progress can end
                    elif warp.stall_until < until:
                        until = warp.stall_until
                    if why is None:
                        self.last_issued[s] = warp
                        reason = "issued"
                        progress = True
                        break
                    rank = _RANK[why]
                    if rank < best:
                        reason, best = why, rank
                if reason == "issued" or best != _RANK["scoreboard"]:
                    break
            self.last_reasons[s] = reason
            self.sched_clean_until[s] = until
            stalls[reason] += 1
        return progress

    def _dirty(self, warp: Warp) -> None:
        """An event concerned ``warp``: re-examine it, and its scheduler, next time."""
        warp.stall = None
        self.sched_clean_until[warp.sched] = 0

    def _try_issue(self, warp: Warp, t: int, allow_wait: bool = True) -> str | None:
        """Issue the warp's next instruction if it can; otherwise say why not (and remember it
        for as long as only an event can change the answer)."""
        warp.stall = None
        if warp.exited:
            return self._stall(warp, "drain")
        if warp.ex.waiting[warp.w]:
            return self._stall(warp, "barrier")
        ibuf = warp.ibuf
        if not ibuf:
            return self._stall(warp, "ibuffer")
        pc, ready = ibuf[0]
        if self.cfg.fetch_past_branches and pc != warp.pc:  # fetched past a branch that went elsewhere:
            # flush, and fetch from where it went
            ibuf.clear()
            warp.fetch_pc = warp.pc
            self.counters.ibuffer_flushes += 1
            return self._stall(warp, "ibuffer")
        if ready > t:
            return self._stall(warp, "ibuffer", ready)
        ins = self.static[pc]
        if ins.op is Opcode.MEMBAR and warp.mem_inflight:
            return self._stall(warp, "memory_fence")
        needs_cu = ins.needs_cu
        pool = warp.sched % self.parts
        if needs_cu and self.pool_units[pool] >= self.pool_capacity:
            return "collector_full"
        board = warp.board
        if self.rings is not None:
            return self._try_issue_hands(warp, ins, pc, t, needs_cu, allow_wait, pool)
        if self.ring_file:
            rp = int(warp.ex.rp[warp.w])
            if ins.produces and board.guard_blocks(rp):
                return self._stall(warp, "ring_guard")
            if needs_cu and board.waits(rp, ins.sources, t + 1) and (
                    not allow_wait or self._window_full(warp, pool) or not self._unblocks_next(warp, ins, rp, t)):
                return "scoreboard"  # not cached: other warps' collector units free the limit
        elif board.blocked(ins):
            return self._stall(warp, "scoreboard")
        self._execute(warp, ins, pc, t, needs_cu)
        return None

    def _try_issue_hands(self, warp: Warp, ins: StaticInstruction, pc: int, t: int, needs_cu: bool,
                         allow_wait: bool, pool: int) -> str | None:
        """``_try_issue``'s D-FLOW part for a ``Variant.HANDS`` kernel: the ring guard of the
        hand the instruction writes, its operands on the hands it reads."""
        board = warp.board
        rps = warp.ex.rps[:, warp.w].tolist()
        if ins.produces and board.hand_guard_blocks(ins.dst_hand, rps[ins.dst_hand]):
            return self._stall(warp, "ring_guard")
        if needs_cu and board.hand_waits(rps, ins.sources, ins.source_hands, t + 1) and (
                not allow_wait or self._window_full(warp, pool) or not self._unblocks_next_hands(warp, ins, rps, t)):
            return "scoreboard"  # not cached: other warps' collector units free the limit
        self._execute(warp, ins, pc, t, needs_cu)
        return None

    def _window_full(self, warp: Warp, pool: int) -> bool:
        """D-FLOW: may no further instruction wait for its operands in a collector unit of
        ``pool`` (the warp's limit, the SM's with a pool-limited window, the reserve it must leave)?"""
        return (warp.waiting_cus >= self.cfg.dflow_waiting_per_warp
                or self.pool_limited and self.waiting_cus[pool] >= self.cfg.dflow_waiting_per_sm
                or self.pool_capacity - self.pool_units[pool] <= self.reserve)

    def _unblocks_next_hands(self, warp: Warp, ins: StaticInstruction, rps: list[int], t: int) -> bool:
        """``_unblocks_next`` for a ``Variant.HANDS`` kernel: the next instruction sees the RP of
        the hand ``ins`` writes one further."""
        nxt = self._next_to_send_ahead_of(warp, ins)
        if nxt is None:
            return False
        if ins.produces:
            hand = ins.dst_hand
            if any(h == hand and d == 1 for d, h in zip(nxt.sources, nxt.source_hands)):
                return False  # it reads the result of ins
            rps = list(rps)
            rps[hand] += 1
        return not warp.board.hand_waits(rps, nxt.sources, nxt.source_hands, t + 1)

    def _unblocks_next(self, warp: Warp, ins: StaticInstruction, rp: int, t: int) -> bool:
        """D-FLOW: is sending ``ins`` ahead to wait worth a collector unit? Only if the warp's next
        buffered instruction could then issue: it neither reads ``ins``'s result nor waits itself.
        (A dependent chain gains nothing from waiting in collector units, and takes them from others.)"""
        nxt = self._next_to_send_ahead_of(warp, ins)
        if nxt is None:
            return False
        rp2 = rp + 1 if ins.produces else rp
        if ins.produces and any(rp2 - d == rp for d in nxt.sources):
            return False
        return not warp.board.waits(rp2, nxt.sources, t + 1)

    def _next_to_send_ahead_of(self, warp: Warp, ins: StaticInstruction) -> StaticInstruction | None:
        """The warp's buffered instruction after ``ins`` if sending ``ins`` ahead could let it
        issue: None when there is none, ``ins`` redirects, or (``SendAhead.LOADS``) it is no load."""
        if len(warp.ibuf) < 2 or ins.redirect:
            return None
        nxt = self.static[warp.ibuf[1][0]]
        if self.ahead_of_loads_only and not nxt.is_load:
            return None
        return nxt

    @staticmethod
    def _stall(warp: Warp, reason: str, until: int = PENDING) -> str:
        warp.stall, warp.stall_until = reason, until
        return reason

    def _unstall_block(self, cta: Cta) -> None:
        """A barrier may have been released or a warp may have left it: re-examine the block's warps."""
        for w in cta.warps:
            self._dirty(w)

    def _execute(self, warp: Warp, ins: StaticInstruction, pc: int, t: int, needs_cu: bool) -> None:
        ex, w = warp.ex, warp.w
        if ex.pc[w] != pc:
            raise AssertionError(f"timing and functional models disagree on {warp.name}'s pc: {pc} vs {ex.pc[w]}")
        warp.ibuf.popleft()
        g = warp.g
        mask = ex.active[g]  # a copy: the handlers change ex.active
        threads = int(np.count_nonzero(mask))
        hands = self.rings is not None
        rp = ex.rps[:, w].tolist() if hands else int(ex.rp[w]) if self.ring_file else 0  # hands: one RP each
        ex.handlers[pc](g, mask)
        if self.issue_log is not None:
            self.issue_log.append((t, warp.cta.block, int(ex.wid[w]), pc))
        self.count(pc, threads)
        self.counters.issued(ins.unit_name, threads)
        if ins.op is Opcode.EXIT and ex.done[w]:
            warp.exited = True
        if ins.op is Opcode.BAR or ins.op is Opcode.EXIT:
            self._unstall_block(warp.cta)
        if ins.issue_only:
            if ins.op is Opcode.BAR:
                self.counters.barriers += 1
            if warp.exited and not warp.inflight:
                self._retire_warp(warp)
            return
        warp.inflight += 1
        if ins.is_mem:
            warp.mem_inflight += 1
        board = warp.board
        banks, groups = self.cfg.register_banks, self.cfg.bank_groups
        if hands:  # (hand, distance) operands; slots in the warp's slot space (HandsScoreboard)
            operands = [Operand(register_bank(board.slot(h, rp[h] - d), warp.slot, banks, groups),
                                board.key(h, rp[h] - d)) for d, h in zip(ins.unique_sources, ins.unique_hands)]
            for op in operands:
                board.add_reader(op.key)
            dest = board.hand_issue(ins.dst_hand, rp[ins.dst_hand]) if ins.produces else -1
        elif self.ring_file:
            dest = rp % self.ring if ins.produces else -1
            # an operand named twice is read once
            operands = [Operand(register_bank((rp - d) % self.ring, warp.slot, banks, groups), rp - d)
                        for d in ins.unique_sources]
            for op in operands:
                board.add_reader(op.key)
            if ins.produces:
                board.issue(rp)
        else:
            dest = ins.dst
            operands = [Operand(register_bank(r, warp.slot, banks, groups), r) for r in ins.unique_sources]
            board.issue(ins)
        if not needs_cu:  # bra, sync, exit: straight to the branch unit
            self.seq += 1
            done = t + self.units[UnitClass.CTRL].latency
            heapq.heappush(self.completions, (done, self.seq, _DONE, warp, -1, ins))
            heapq.heappush(self.wake, done)
            return
        self.seq += 1
        cu = CollectorUnit(self.seq, warp, ins, operands, dest, len(operands), ready_at=t + 1)
        if self.out_of_order and (board.hand_waits(rp, ins.sources, ins.source_hands, t + 1) if hands
                           else board.waits(rp, ins.sources, t + 1)):
            cu.waiting = True
            warp.waiting_cus += 1
            self.waiting_cus[warp.sched % self.parts] += 1
        if ins.ordered:
            cu.addresses = ex.last_access[0]
            cu.mask = mask
        self.collector.add(cu)
        self.pool_units[warp.sched % self.parts] += 1

    # ------------------------------------------------------------------ fetch
    def _fetch(self, t: int) -> bool:
        """Up to ``fetch_warps`` warps per cycle, round robin, each bring up to ``fetch_width``
        instructions into their buffer."""
        warps = self.warps
        n = len(warps)
        if not n:
            return False
        cfg = self.cfg
        end = len(self.static)
        first = self.fetch_rr
        fetched = 0
        for k in range(n):
            warp = warps[(first + k) % n]
            space = cfg.ibuffer_entries - len(warp.ibuf)
            if warp.exited or warp.fetch_stalled or space <= 0 or warp.start > t:
                continue
            pc = warp.fetch_pc
            if pc == end:
                # fetch stops at redirects, so this path surely runs off the end; past them, only
                # if the warp itself is there
                if not cfg.fetch_past_branches or warp.pc == end:
                    raise warp.ex.ran_past_end(warp.w)
                if warp.ibuf:
                    continue  # the branch it fetched past is still to issue
                pc = warp.pc  # it issued and went elsewhere: the flush, from the fetch side
                self.counters.ibuffer_flushes += 1
            ready = t + cfg.fetch_latency
            for _ in range(min(space, cfg.fetch_width)):
                if pc == end:
                    if not cfg.fetch_past_branches:
                        raise warp.ex.ran_past_end(warp.w)
                    break
                warp.ibuf.append((pc, ready))
                self._dirty(warp)
                if self.static[pc].redirect and not cfg.fetch_past_branches:
                    warp.fetch_stalled = True
                    break
                pc += 1
            warp.fetch_pc = pc
            self.fetch_rr = (first + k + 1) % n
            heapq.heappush(self.wake, ready)
            fetched += 1
            if fetched == cfg.fetch_warps:
                break
        return fetched > 0

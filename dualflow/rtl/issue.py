"""The issue stage (``i_``): which warp's buffered instruction goes where this cycle.

Per warp, the head of the instruction buffer is checked: BASE, scoreboard RAW and WAW on
registers, in order; DFLOW, destination slot free and the ring guard, sources may be pending.
The ``WarpScheduler`` (GTO/LRR) picks one warp among those that can issue; its instruction goes
to the control unit (control instructions), to a collector unit (everything else), or stops the
core (``trap``: a word that is not a valid instruction, an FP32 opcode, a pc past the program,
an ``ldc`` past the parameters, DFLOW: a source an active lane did not write, ``WrittenBits``).

DFLOW issue policy (docs/rtl.md, "Issue"; the performance model's rule): the scheduler prefers
warps whose instruction has its operands ready; an instruction with a source in flight is sent
ahead into a collector unit only when no warp can issue without waiting, when the warp's next
buffered instruction could then issue (it does not read the waiting one's result and has its own
operands ready), and while fewer than ``waiting_limit_warp`` CUs of the warp and fewer than
``waiting_limit_sm`` CUs of the core hold instructions with operands not ready.

Hands (``CoreParams.rings``): a source names its hand and a producer the hand it writes (the
decoded dst field's selectors); the entries (of the warp's register-file space) the checks, the
collector and the written bits see are ``hand_base[h] + (RP_h - d) mod N_h`` and
``hand_base[h] + RP_h mod N_h``, and a producer advances its own hand's RP.

Uniform operands (``CoreParams.uniform_operands``): a flagged source field is no ring source (no
scoreboard check, no CU read, no written-bits check); the value it names, read from the
configuration registers at issue as ``s2r``'s and ``ldc``'s are, goes into the CU as a ready
operand, or, as a branch condition, to the control unit.

The stage also keeps what issue alone changes: each warp's trace sequence number and its count
of dispatched instructions not yet written back (``bar`` and ``membar`` wait until it is 0).
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.isa.encoding import UNIFORM_MAX
from dualflow.isa.opcodes import UNIFORM_PARAM_WORDS, UNIFORM_SREGS, SpecialReg

from ._checks import reject
from .decode import UNIT_CODES, Op, Unit, decoded_layout, hand_selector, ring_field
from .interfaces import (
    COLLECTOR_TAG_BITS,
    SEQ_BITS,
    SOURCES,
    TrapCause,
    alloc_layout,
    check_signature,
    clear_layout,
    entry_layout,
    info_layout,
    issue_control_layout,
    issue_exec_layout,
    peek_signature,
    trap_signature,
    waiting_layout,
)
from .params import CoreParams
from .register_pointer import hand_entry, pick_hand, rp_width
from .scheduler import WarpScheduler
from .units import DISPATCHED, UNIT_OF_CLASS, ExecUnit, dispatch_index
from .written_bits import WrittenBits

__all__ = ["IssueStage"]


class IssueStage(wiring.Component):
    """Issue checks, the issue policy and the warp scheduler.

    Parameters
    ----------
    params: CoreParams.
    param_bits: width of ``param_index`` (``ConfigRegisters.param_bits``).

    Members
    -------
    ib_valid: In(warps), ib_pc: In(pc).array(warps), ib_inst: In(DecodedLayout).array(warps): the
        heads of the instruction buffers; ib_next_valid, ib_next: DFLOW, the instructions behind them.
    consume: Out(warps), the issuing warp's head leaves its buffer.
    check: Out(check_signature).array(warps), peek: Out(peek_signature).array(warps) (DFLOW),
        sb_issue: Out(entry_layout): the scoreboard's issue side.
    alloc: Out(stream.Signature(alloc_layout)), an instruction for a collector unit.
    cu_waiting: In(waiting_layout).array(collector_units), DFLOW: CUs waiting for operands.
    control: Out(stream.Signature(issue_control_layout)), a control instruction.
    advance_rp_valid, advance_rp_warp: Out, DFLOW only: the issued instruction produces (RP + 1);
        advance_rp_hand: with hands, on that hand.
    ring_clear: In(clear_layout), DFLOW with ``read_check`` only: the control unit's clears of the
        ``WrittenBits``.
    active, rp, running, waiting: In, the warps' control state (``ControlUnit``; with hands, rp is
        ``.array(warps, hands)``).
    sreg_index: Out(4), sreg_value: In(32); param_index: Out(param_bits), param_value: In(32):
        the configuration registers an ``s2r`` or ``ldc`` reads at issue.
    uniform_index: Out(UNIFORM_MAX + 1).array(3), uniform_value: In(32).array(3), with
        ``uniform_operands`` only: the configuration register each source field names
        (``ConfigRegisters``), read at issue; flagged ones go to the CU (or the control unit) as
        the operand's value.
    code_loaded, code_last: In, the program's extent.
    retire_valid, retire_warp: In, a dispatched instruction of the warp was written back.
    trapped: In(1), the core has stopped: nothing issues. trap: Out(trap_signature), why issue stops it.
    start: In(1), launch (sequence numbers restart).
    drained: Out(1), no warp has a dispatched instruction in flight.
    """

    def __init__(self, params: CoreParams, *, param_bits: int):
        if not isinstance(params, CoreParams):
            raise reject(self, f"IssueStage needs CoreParams, not {params!r}")
        self.params, self.param_bits = params, param_bits
        W, L, pcs = params.warps, params.warp_size, range(params.imem_words)
        self.exec_layout = issue_exec_layout(params)
        members = {
            "ib_valid": In(W), "ib_pc": In(pcs).array(W), "ib_inst": In(decoded_layout(params)).array(W),
            "consume": Out(W),
            "check": Out(check_signature(params)).array(W), "sb_issue": Out(entry_layout(params)),
            "alloc": Out(stream.Signature(alloc_layout(params, payload_width=self.exec_layout.size,
                                                       tag_width=COLLECTOR_TAG_BITS, units=len(DISPATCHED)))),
            "control": Out(stream.Signature(issue_control_layout(params))),
            "active": In(L).array(W),
            "rp": In(rp_width(params)).array(W) if params.hands == 1 else In(rp_width(params)).array(W, params.hands),
            "running": In(W), "waiting": In(W),
            "sreg_index": Out(4), "sreg_value": In(32), "param_index": Out(param_bits), "param_value": In(32),
            "code_loaded": In(1), "code_last": In(pcs),
            "retire_valid": In(1), "retire_warp": In(range(W)),
            "trapped": In(1), "trap": Out(trap_signature(params)), "start": In(1), "drained": Out(1),
        }
        if params.mode.out_of_order:  # the next instruction peeked, the waiting CUs; RP advances at issue
            members.update({"ib_next_valid": In(W), "ib_next": In(decoded_layout(params)).array(W),
                            "peek": Out(peek_signature(params)).array(W),
                            "advance_rp_valid": Out(1), "advance_rp_warp": Out(range(W)),
                            "cu_waiting": In(waiting_layout(params)).array(params.collector_units)})
            if params.hands > 1:
                members["advance_rp_hand"] = Out(range(params.hands))
        if params.checks_reads:
            members["ring_clear"] = In(clear_layout(params))
        if params.uniform_operands:
            members.update({"uniform_index": Out(range(UNIFORM_MAX + 1)).array(SOURCES),
                            "uniform_value": In(32).array(SOURCES)})
        super().__init__(members)

    def _uniform_operands(self, m: Module, i_d, iw) -> SimpleNamespace:
        """``Variant.UNIFORM_OPERANDS``: the issuing instruction's flags (one per source), the
        values its flagged fields name (``%warpid`` is the issuing warp, as for ``s2r``) and
        whether one names a parameter word past ``param_words`` (a PARAM trap, as ``ldc``'s)."""
        p = self.params
        warpid = UNIFORM_PARAM_WORDS + UNIFORM_SREGS.index(SpecialReg.WARPID)
        flags = [i_d.uniform[k] for k in range(SOURCES)]
        fields = [getattr(i_d, name) for name in "abc"]
        values = [Signal(32, name=f"i_uniform{k}") for k in range(SOURCES)]
        for k in range(SOURCES):
            m.d.comb += [self.uniform_index[k].eq(fields[k]),
                         values[k].eq(Mux(fields[k] == warpid, iw, self.uniform_value[k]))]
        past = Const(0, 1)
        if p.param_words < UNIFORM_PARAM_WORDS:
            for k in range(SOURCES):
                past = past | (flags[k] & (fields[k] >= p.param_words) & (fields[k] < UNIFORM_PARAM_WORDS))
        return SimpleNamespace(flags=flags, values=values, past_params=past)

    def elaborate(self, platform) -> Module:  # noqa: C901 - per-warp checks, then the issuing warp
        m = Module()
        p = self.params
        W, E = p.warps, p.entries_per_warp
        ring_bits = ceil_log2(E)
        m.submodules.sched = sched = WarpScheduler(warps=W, policy=p.scheduler, two_level=p.mode.out_of_order)
        H = p.hands
        rp = Array(self.rp) if H == 1 else None
        rps = [[self.rp[w]] if H == 1 else [self.rp[w][h] for h in range(H)] for w in range(W)]  # rps[w][h]
        seq = Array(Signal(SEQ_BITS, name=f"w{w}_seq") for w in range(W))
        inflight = [Signal(8, name=f"w{w}_inflight") for w in range(W)]

        def src_index(w, field, name):
            if p.mode.ring and H > 1:  # the source's hand
                return hand_entry(p, rps[w], hand_selector(self.ib_inst[w], name), field)
            if p.mode.ring:
                return (rp[w] - field)[:ring_bits] if ring_bits else Const(0, 1)
            return (field - 1)[:max(ring_bits, 1)]

        # DFLOW issue policy: may warp w send its head ahead into a CU to wait?
        send_ahead = Signal(W)
        if p.mode.out_of_order:
            n_cu = p.collector_units
            cu_waiting = self.cu_waiting
            sm_waiting = Signal(range(n_cu + 1))
            m.d.comb += sm_waiting.eq(sum(cu_waiting[c].valid for c in range(n_cu)))
            sm_room = sm_waiting < p.waiting_limit_sm
            for w in range(W):
                mine = Signal(range(n_cu + 1), name=f"w{w}_waiting_cus")
                m.d.comb += mine.eq(sum(cu_waiting[c].valid & (cu_waiting[c].warp == w) for c in range(n_cu)))
                # the next buffered instruction could issue behind it: it does not read the head's
                # result (distance 1 from the RP after a producing head) and its own sources are
                # ready (the scoreboard's lookahead port, at the RP after the head)
                head, nxt = self.ib_inst[w], self.ib_next[w]
                fields = tuple(ring_field(nxt, name) for name in "abc")
                peek = self.peek[w]
                if H == 1:
                    rp2 = (rp[w] + head.produces)[:ring_bits] if ring_bits else Const(0, 1)
                    for k in range(SOURCES):
                        m.d.comb += [peek.src[k].valid.eq(fields[k] != 0),
                                     peek.src[k].index.eq((rp2 - fields[k])[:ring_bits] if ring_bits else 0)]
                    reads_head = head.produces & Cat(f == 1 for f in fields).any()
                else:  # each hand's RP after the head; the head's result is at distance 1 on its hand
                    head_hand = hand_selector(head, "write")
                    rps2 = [rps[w][h] + (head.produces & (head_hand == h)) for h in range(H)]
                    for k, name in enumerate("abc"):
                        m.d.comb += [peek.src[k].valid.eq(fields[k] != 0),
                                     peek.src[k].index.eq(hand_entry(p, rps2, hand_selector(nxt, name), fields[k]))]
                    reads_head = head.produces & Cat((f == 1) & (hand_selector(nxt, name) == head_hand)
                                                     for f, name in zip(fields, "abc")).any()
                unblocks = self.ib_next_valid[w] & ~reads_head & ~peek.src_pending.any()
                m.d.comb += send_ahead[w].eq(unblocks & (mine < p.waiting_limit_warp) & sm_room)

        # ---- per warp: operands, destination, the checks, may it issue?
        i_dst = [Signal(range(E), name=f"w{w}_i_dst") for w in range(W)]
        i_writes = [Signal(name=f"w{w}_i_writes") for w in range(W)]
        i_src = [[Signal(range(E), name=f"w{w}_i_src{k}") for k in range(SOURCES)] for w in range(W)]
        i_has = [[Signal(name=f"w{w}_i_has{k}") for k in range(SOURCES)] for w in range(W)]
        ready = Signal(W)
        prefer = Signal(W)  # DFLOW: ready without sending an instruction ahead to wait
        is_ctrl = Signal(W)
        is_trap = Signal(W)
        past_end = Signal(W)
        drained = Signal(W)
        for w in range(W):
            d = self.ib_inst[w]
            fields = tuple(ring_field(d, name) for name in "abc")  # a uniform operand: no ring read
            for k in range(SOURCES):
                m.d.comb += [i_has[w][k].eq(fields[k] != 0), i_src[w][k].eq(src_index(w, fields[k], "abc"[k]))]
            if p.mode.ring and H > 1:  # the written hand's slot
                m.d.comb += [i_dst[w].eq(hand_entry(p, rps[w], hand_selector(d, "write"))), i_writes[w].eq(d.produces)]
            elif p.mode.ring:
                m.d.comb += [i_dst[w].eq(rp[w][:ring_bits] if ring_bits else 0), i_writes[w].eq(d.produces)]
            else:
                m.d.comb += [i_dst[w].eq((d.dst - 1)[:max(ring_bits, 1)]), i_writes[w].eq(d.produces & (d.dst != 0))]
            chk = self.check[w]
            for k in range(SOURCES):
                m.d.comb += [chk.src[k].valid.eq(i_has[w][k]), chk.src[k].index.eq(i_src[w][k])]
            m.d.comb += [chk.dst.valid.eq(i_writes[w]), chk.dst.index.eq(i_dst[w])]
            m.d.comb += [
                drained[w].eq(inflight[w] == 0),
                is_ctrl[w].eq(d.unit == Unit.CTRL),
                past_end[w].eq(~self.code_loaded | (self.ib_pc[w] > self.code_last)),
                is_trap[w].eq(d.illegal | past_end[w]),
            ]
            live = self.running[w] & ~self.waiting[w] & self.ib_valid[w] & ~self.trapped
            ctrl_ok = self.control.ready & ~chk.src_pending[0]
            ctrl_ok = ctrl_ok & Mux((d.op == Op.BAR) | (d.op == Op.MEMBAR), drained[w], 1)
            exec_ok = self.alloc.ready & ~chk.blocked
            if p.mode.out_of_order:
                # an instruction whose sources are not all ready would wait in its CU: it goes
                # only in the second priority level, and only where the policy lets it
                waits = ~is_trap[w] & ~is_ctrl[w] & chk.src_pending.any()
                can = live & (is_trap[w] | Mux(is_ctrl[w], ctrl_ok, exec_ok))
                m.d.comb += [prefer[w].eq(can & ~waits), ready[w].eq(can & (~waits | send_ahead[w]))]
            else:
                m.d.comb += ready[w].eq(live & (is_trap[w] | Mux(is_ctrl[w], ctrl_ok, exec_ok)))
        m.d.comb += sched.ready.eq(ready)
        if p.mode.out_of_order:
            m.d.comb += sched.prefer.eq(prefer)
        m.d.comb += self.drained.eq(Cat(drained).all())

        # ---- the issuing warp
        iw = sched.warp
        i_go = sched.valid
        i_d = Signal.like(self.ib_inst[0])
        i_pc = Signal(range(p.imem_words))
        for w in range(W):
            with m.If(iw == w):
                m.d.comb += [i_d.eq(self.ib_inst[w]), i_pc.eq(self.ib_pc[w])]
        sel = lambda arr: Array(arr)[iw]  # the issuing warp's copy of a per-warp signal
        # DFLOW: an active lane reads a slot it did not write (WrittenBits)
        i_bad_read = Signal() if p.checks_reads else Const(0, 1)
        i_trap = i_go & (sel(is_trap) | i_bad_read)
        i_ctrl = i_go & ~i_trap & sel(is_ctrl)
        i_exec = i_go & ~i_trap & ~i_ctrl
        m.d.comb += [sched.issue.eq(i_go), self.consume.eq(Mux(i_go & ~i_trap, sched.grant, 0))]

        info = Signal(info_layout(p))
        i_hand = hand_selector(i_d, "write") if H > 1 else 0  # the hand it writes or advances
        if H > 1:
            m.d.comb += info.hand.eq(i_hand)

        def i_rp():  # the issuing warp's RP (of its written hand)
            return pick_hand(i_hand, [Array(rps[w][h] for w in range(W))[iw] for h in range(H)])
        # (the trace's fields in their places: the traced core's netlist stays as it was)
        m.d.comb += [
            info.warp.eq(iw), info.pc.eq(i_pc), *([info.seq.eq(seq[iw])] if p.trace else []), info.op.eq(i_d.op),
            info.mod.eq(i_d.mod),
            # (one line: Amaranth shares the warp decoder of rp and the mask only then)
            *([info.rp.eq(rp[iw] if rp else i_rp())] if p.trace else []), info.mask.eq(Array(self.active)[iw]),
            info.dst.eq(sel(i_dst)),
            info.writes.eq(sel(i_writes)), info.mem.eq(i_d.is_load | i_d.is_store), info.store.eq(i_d.is_store),
        ]
        if p.trace:  # the trace's per-warp sequence numbers
            with m.If(i_go & ~i_trap):
                m.d.sync += seq[iw].eq(seq[iw] + 1)

        # Traps found at issue, named by the issuing instruction; a pc past the program is named
        # by the last instruction, the one that fell through.
        param_index = i_d.imm[2:]
        t = self.trap.payload
        param_trap = i_exec & (i_d.op == Op.LDC) & (param_index >= p.param_words)
        if p.uniform_operands:
            uniform = self._uniform_operands(m, i_d, iw)
            param_trap = param_trap | (i_go & ~i_trap & uniform.past_params)
        m.d.comb += [self.trap.valid.eq(i_trap | param_trap), t.warp.eq(iw), t.pc.eq(i_pc)]
        with m.If(i_trap):
            with m.If(sel(past_end)):
                m.d.comb += [t.cause.eq(TrapCause.PC_RANGE), t.pc.eq(i_pc - 1)]
            with m.Elif(~sel(is_trap)):
                m.d.comb += t.cause.eq(TrapCause.DFLOW_READ)
            with m.Else():
                m.d.comb += t.cause.eq(TrapCause.ILLEGAL)
        with m.Else():
            m.d.comb += t.cause.eq(TrapCause.PARAM)

        # ---- to the control unit
        c = self.control.payload
        m.d.comb += [self.control.valid.eq(i_ctrl), c.warp.eq(iw), c.info.eq(info), c.imm.eq(i_d.imm),
                     c.src.eq(sel([i_src[w][0] for w in range(W)])), c.has_src.eq(ring_field(i_d, "a") != 0)]
        if p.mode.ring:
            m.d.comb += c.advance.eq(i_d.advance)
        if p.uniform_operands:  # a uniform branch condition: the same in every lane, no read
            m.d.comb += c.uniform_cond.eq(uniform.flags[0] & (uniform.values[0] != 0))

        # ---- to a collector unit: special-register and parameter values known at issue
        x = Signal(self.exec_layout)
        sreg_value = Signal(32)
        m.d.comb += [self.sreg_index.eq(i_d.mod), self.param_index.eq(param_index[:self.param_bits])]
        with m.Switch(i_d.mod):
            with m.Case(int(SpecialReg.WARPID)):
                m.d.comb += sreg_value.eq(iw)
            with m.Default():
                m.d.comb += sreg_value.eq(self.sreg_value)
        is_s2r = i_d.op == Op.S2R
        is_tid = is_s2r & (i_d.mod <= int(SpecialReg.TID_Z))
        m.d.comb += [
            x.info.eq(info), x.space.eq(i_d.space), x.tid.eq(is_tid),
            x.laneid.eq(is_s2r & (i_d.mod == int(SpecialReg.LANEID))), x.dim.eq(i_d.mod[:2]),
            x.bimm.eq(i_d.bimm | is_s2r | (i_d.op == Op.LDC)),
            x.imm.eq(Mux(is_s2r, sreg_value, Mux(i_d.op == Op.LDC, self.param_value, i_d.imm))),
        ]
        a = self.alloc.payload
        is_mem = i_d.is_load | i_d.is_store
        with m.Switch(i_d.unit):  # the unit of the opcode's class
            for cls, code in UNIT_CODES.items():
                if UNIT_OF_CLASS[cls] in DISPATCHED:
                    with m.Case(code):
                        m.d.comb += a.unit.eq(dispatch_index(UNIT_OF_CLASS[cls]))
        with m.If(~is_mem & (i_d.unit == Unit.MEM)):  # ldc: no memory access, the ALU moves the value
            m.d.comb += a.unit.eq(dispatch_index(ExecUnit.ALU))
        m.d.comb += [
            self.alloc.valid.eq(i_exec),
            a.warp.eq(iw),
            a.mem.valid.eq(is_mem), a.mem.store.eq(i_d.is_store), a.mem.color.eq(i_d.mod),
            a.payload.eq(x),
        ]
        for k in range(SOURCES):
            has = sel([i_has[w][k] for w in range(W)])
            idx = sel([i_src[w][k] for w in range(W)])
            pending_k = sel([self.check[w].src_pending[k] for w in range(W)])
            m.d.comb += [a.src[k].valid.eq(has), a.src[k].index.eq(idx), a.src[k].ready.eq(~pending_k)]
            if p.uniform_operands:
                m.d.comb += a.src[k].value.eq(Mux(uniform.flags[k], uniform.values[k], 0))
        m.d.comb += [self.sb_issue.valid.eq(i_exec & sel(i_writes)), self.sb_issue.warp.eq(iw),
                     self.sb_issue.index.eq(sel(i_dst))]

        # RP advances at issue of a producer (DFLOW); the control unit holds it. The written bits
        # follow at issue too: sources checked, the destination slot set for the active lanes.
        if p.mode.ring:
            m.d.comb += [self.advance_rp_valid.eq(i_exec & i_d.produces), self.advance_rp_warp.eq(iw)]
            if H > 1:
                m.d.comb += self.advance_rp_hand.eq(i_hand)
        if p.checks_reads:
            m.submodules.written = written = WrittenBits(p)
            i_mask = Array(self.active)[iw]
            wc, ws = written.check, written.set
            m.d.comb += [written.start.eq(self.start), written.clear.eq(self.ring_clear),
                         wc.warp.eq(iw), wc.mask.eq(i_mask), i_bad_read.eq(~sel(is_trap) & written.illegal),
                         ws.valid.eq(i_exec & i_d.produces), ws.warp.eq(iw), ws.slot.eq(sel(i_dst)), ws.mask.eq(i_mask)]
            for k in range(SOURCES):
                m.d.comb += [wc.src[k].valid.eq(sel([i_has[w][k] for w in range(W)])),
                             wc.src[k].slot.eq(sel([i_src[w][k] for w in range(W)]))]

        # Dispatched instructions in flight per warp.
        for w in range(W):
            inc = i_exec & (iw == w)
            dec = self.retire_valid & (self.retire_warp == w)
            m.d.sync += inflight[w].eq(inflight[w] + inc - dec)

        if p.trace:
            with m.If(self.start):
                m.d.sync += [seq[w].eq(0) for w in range(W)]
        return m

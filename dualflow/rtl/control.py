"""The control unit (``c_``): branches, reconvergence, exit, barriers, and the warps' control state.

One control instruction at a time, in order per warp (its warp stops fetching until the control
unit redirects it). A branch with a condition reads it through a register-file read port of its
own (states READ, WAIT); a uniform condition (``uniform_operands``) comes with the instruction.
The ``SimtStack`` holds the (kind, pc, mask, rp) entries of every warp (docs/isa.md "Control
flow"); ``exit`` retires lanes and pops; ``bar`` marks the warp waiting at the block barrier
(released when every running warp waits). Each control instruction completes on the writeback
stream (it retires like any other) and then redirects its warp's fetch.

The unit owns the per-warp control state: active mask, alive lanes, RP (DFLOW: also advanced by
the issue stage at every producing instruction), running and waiting-at-barrier bits; ``start``
sets them from the initial masks.

Hands (``CoreParams.rings``): one RP per hand and warp; a producer advances its hand's (the
issue stage says which), ``rpinc k -> h`` hand h's, ``ssy L, k -> h`` reserves on hand h, and the
stack's resume restores every hand's.
"""

from __future__ import annotations

from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.isa.opcodes import SPECS, BranchIf

from ._checks import reject
from .decode import Op
from .interfaces import (
    TrapCause,
    clear_layout,
    clear_valid,
    completion_layout,
    hand_clear,
    info_layout,
    issue_control_layout,
    read_request_layout,
    read_response_signature,
    request_clear,
    trap_signature,
)
from .params import CoreParams
from .regfile import bank_of
from .register_pointer import ADVANCE_BITS, rp_width
from .simt_stack import Op as StackOp
from .simt_stack import SimtStack, hand_rps
from .simt_stack import Status as StackStatus
from .simt_stack import Trap as StackTrap

__all__ = ["ControlUnit"]

#: From the instruction-set table: branches to their target in every lane (``bra``), conditional
#: branches (``OpSpec.branch_if``: ``brnz``, ``brz``), and those of them taken where the condition is zero.
JUMPS = tuple(Op[op.name] for op, spec in SPECS.items() if spec.jumps and not spec.conditional)
CONDITIONAL = tuple(Op[op.name] for op, spec in SPECS.items() if spec.conditional)
TAKEN_IF_ZERO = tuple(Op[op.name] for op, spec in SPECS.items() if spec.branch_if is BranchIf.ZERO)


def _one_of(op, ops: tuple) -> object:
    """``op`` is one of ``ops`` (an Amaranth expression)."""
    return Cat(op == o for o in ops).any()


class ControlUnit(wiring.Component):
    """The control-instruction state machine, the SIMT stack and the warps' control state.

    Parameters
    ----------
    params: CoreParams.
    requesters: read requesters of the register file; requester: this unit's number among them.

    Members
    -------
    issue: In(stream.Signature(issue_control_layout(params))), a control instruction; ready (idle
        and the stack can take a command) depends on registered state only.
    busy: Out(1), an instruction is in the unit.
    read: Out(stream.Signature(read_request_layout(params))), response: In(read_response_signature)
        .array(register_banks): the branch condition's register-file read (``requester``).
    complete: Out(stream.Signature(completion_layout(params))), the instruction retires.
    redirect_valid, redirect_warp, redirect_pc: Out, continue the warp's fetch at pc.
    trap: Out(trap_signature), BARRIER. stack_trap: Out(trap_signature), the SIMT stack's trap.
    start: In(1), init_mask: In(warp_size).array(warps), launch: masks, RP 0, warps with lanes run.
    advance_rp_valid, advance_rp_warp: In, DFLOW only: an instruction that produces a value issued
        (advance_rp_hand: with hands, the hand it writes).
    ring_clear: Out(clear_layout), DFLOW with ``read_check`` only: ring positions the warp's lanes
        skip (``rpinc``, and the SIMT stack's at ``sync``): their written bits are cleared
        (``written_bits.py``).
    active: Out(warp_size).array(warps), rp: Out(rp_width).array(warps) (with hands
        ``.array(warps, hands)``), running: Out(warps),
        waiting: Out(warps) (at the block barrier): the warps' control state.
    stack_depth: Out(range(stack_depth + 1)).array(warps), each warp's SIMT-stack entries (coverage).
    """

    def __init__(self, params: CoreParams, *, requesters: int, requester: int):
        if not isinstance(params, CoreParams):
            raise reject(self, f"ControlUnit needs CoreParams, not {params!r}")
        if not isinstance(requesters, int) or not 0 <= requester < requesters:
            raise reject(self, f"ControlUnit requester must be in 0..{requesters!r} - 1, not {requester!r}")
        self.params, self.requesters, self.requester = params, requesters, requester
        W, L = params.warps, params.warp_size
        members = {
            "issue": In(stream.Signature(issue_control_layout(params))), "busy": Out(1),
            "read": Out(stream.Signature(read_request_layout(params))),
            "response": In(read_response_signature(params, requesters)).array(params.register_banks),
            "complete": Out(stream.Signature(completion_layout(params))),
            "redirect_valid": Out(1), "redirect_warp": Out(range(W)), "redirect_pc": Out(range(params.imem_words)),
            "trap": Out(trap_signature(params)), "stack_trap": Out(trap_signature(params)),
            "start": In(1), "init_mask": In(L).array(W),
            "active": Out(L).array(W),
            "rp": Out(rp_width(params)).array(W) if params.hands == 1 else Out(rp_width(params)).array(W, params.hands),
            "running": Out(W), "waiting": Out(W),
            "stack_depth": Out(range(params.stack_depth + 1)).array(W),
        }
        if params.mode.ring:
            members.update({"advance_rp_valid": In(1), "advance_rp_warp": In(range(W))})
            if params.hands > 1:
                members["advance_rp_hand"] = In(range(params.hands))
        if params.checks_reads:
            members["ring_clear"] = Out(clear_layout(params))
        super().__init__(members)

    def elaborate(self, platform) -> Module:  # noqa: C901 - one state machine
        m = Module()
        p = self.params
        W, L = p.warps, p.warp_size
        m.submodules.stack = stack = SimtStack(p, depth=p.stack_depth)

        m.d.comb += [self.stack_depth[w].eq(stack.depth_of[w]) for w in range(W)]
        running, waiting = self.running, self.waiting
        active = Array(Signal(L, name=f"w{w}_active") for w in range(W))
        alive = Array(Signal(L, name=f"w{w}_alive") for w in range(W))
        H = p.hands
        m.d.comb += [self.active[w].eq(active[w]) for w in range(W)]
        if H == 1:
            rp = Array(Signal(rp_width(p), name=f"w{w}_rp") for w in range(W))
            m.d.comb += [self.rp[w].eq(rp[w]) for w in range(W)]
            hand_rp = [Array([rp[w]]) for w in range(W)]  # hand_rp[w][h]
        else:
            hand_rp = [Array(Signal(rp_width(p), name=f"w{w}_rp{h}") for h in range(H)) for w in range(W)]
            m.d.comb += [self.rp[w][h].eq(hand_rp[w][h]) for w in range(W) for h in range(H)]
        by_hand = [Array(hand_rp[w][h] for w in range(W)) for h in range(H)]  # by_hand[h][warp]

        busy = self.busy
        c_warp = Signal(range(W))
        c_info = Signal(info_layout(p))
        c_op = c_info.op
        c_imm = Signal(32)
        c_target = c_imm[:ceil_log2(p.imem_words)]
        c_src = Signal(range(p.entries_per_warp))
        c_advance = Signal(ADVANCE_BITS) if p.mode.ring else None  # ssy's reserved advance (reserved-ssy)
        c_cond = Signal(L)  # lanes whose condition value is non-zero
        c_next = Signal(range(p.imem_words))
        c_redirect = Signal()  # the warp goes on (not finished)
        cr = self.read
        m.d.comb += [cr.payload.warp.eq(c_warp), cr.payload.index.eq(c_src)]
        m.d.comb += [self.complete.payload.info.eq(c_info)]
        m.d.comb += [self.redirect_warp.eq(c_warp), self.redirect_pc.eq(c_next)]
        # the stack is idle whenever this unit is (it is the stack's only user)
        m.d.comb += self.issue.ready.eq(~busy & stack.cmd.ready)

        cmd = stack.cmd.payload
        if H == 1:  # (one line: Amaranth shares the warp decoder of rp and alive only then)
            m.d.comb += [cmd.warp.eq(c_warp), cmd.rp.eq(rp[c_warp]), cmd.alive.eq(alive[c_warp])]
        else:
            m.d.comb += [cmd.warp.eq(c_warp), *[cmd.rp[h].eq(by_hand[h][c_warp]) for h in range(H)],
                         cmd.alive.eq(alive[c_warp])]

        st = self.stack_trap
        m.d.comb += [st.valid.eq(stack.trap), st.payload.pc.eq(c_info.pc), st.payload.warp.eq(stack.trap_warp),
                     st.payload.cause.eq(Mux(stack.trap_cause == StackTrap.OVERFLOW, TrapCause.STACK_OVERFLOW,
                                             TrapCause.STACK_EMPTY))]
        m.d.comb += [self.trap.payload.cause.eq(TrapCause.BARRIER), self.trap.payload.pc.eq(c_info.pc),
                     self.trap.payload.warp.eq(c_warp)]

        i = self.issue.payload
        with m.FSM(name="ctrl"):
            with m.State("IDLE"):
                with m.If(self.issue.valid):
                    m.d.sync += [busy.eq(1), c_warp.eq(i.warp), c_info.eq(i.info), c_imm.eq(i.imm), c_src.eq(i.src),
                                 c_cond.eq(i.uniform_cond.replicate(L) if p.uniform_operands else 0)]
                    if p.mode.ring:
                        m.d.sync += c_advance.eq(i.advance)
                    with m.If(_one_of(i.info.op, CONDITIONAL) & i.has_src):
                        m.next = "READ"
                    with m.Else():
                        m.next = "EXEC"
            with m.State("READ"):
                m.d.comb += cr.valid.eq(1)
                with m.If(cr.ready):
                    m.next = "WAIT"
            with m.State("WAIT"):
                bank = bank_of(p, c_warp, c_src)
                for b in range(p.register_banks):
                    resp = self.response[b]
                    with m.If((bank == b) & resp.valid & (resp.requester == self.requester)):
                        m.d.sync += c_cond.eq(Cat(resp.data[n] != 0 for n in range(L)))
                        m.next = "EXEC"
            with m.State("EXEC"):
                mask = c_info.mask
                m.d.sync += c_next.eq(c_info.pc + 1)
                m.d.sync += c_redirect.eq(1)
                m.next = "DONE"
                with m.Switch(c_op):
                    with m.Case(*JUMPS):
                        m.d.sync += c_next.eq(c_target)
                    with m.Case(*CONDITIONAL):
                        cond = Mux(_one_of(c_op, TAKEN_IF_ZERO), ~c_cond, c_cond)
                        taken = cond & mask
                        not_taken = mask & ~cond
                        with m.If(taken.any()):
                            m.d.sync += c_next.eq(c_target)
                        with m.If(taken.any() & not_taken.any()):
                            # push DIV(fall-through, not-taken lanes); the stack takes it at once
                            m.d.comb += [stack.cmd.valid.eq(1), cmd.op.eq(StackOp.DIV), cmd.pc.eq(c_info.pc + 1),
                                         cmd.mask.eq(not_taken)]
                            m.d.sync += active[c_warp].eq(taken)
                    with m.Case(Op.SSY):
                        m.d.comb += [stack.cmd.valid.eq(1), cmd.op.eq(StackOp.SSY), cmd.pc.eq(c_target),
                                     cmd.mask.eq(active[c_warp])]
                        if p.mode.ring:  # the SYNC entry starts at RP + k (reserved-ssy), on its hand
                            m.d.comb += cmd.advance.eq(c_advance)
                        if H > 1:
                            m.d.comb += cmd.hand.eq(c_info.hand)
                    with m.Case(Op.SYNC):
                        m.d.comb += [stack.cmd.valid.eq(1), cmd.op.eq(StackOp.SYNC), cmd.mask.eq(mask)]
                        m.next = "RESUME"
                    with m.Case(Op.EXIT):
                        m.d.comb += [stack.cmd.valid.eq(1), cmd.op.eq(StackOp.EXIT),
                                     cmd.alive.eq(alive[c_warp] & ~mask)]
                        m.d.sync += alive[c_warp].eq(alive[c_warp] & ~mask)
                        m.next = "RESUME"
                    with m.Case(Op.BAR):
                        m.d.comb += self.trap.valid.eq((alive[c_warp] & ~mask).any())
                        m.d.sync += waiting.bit_select(c_warp, 1).eq(1)
                    with m.Case(Op.RPINC):
                        if H == 1:
                            m.d.sync += rp[c_warp].eq(rp[c_warp] + c_imm)
                            if p.checks_reads:
                                m.d.comb += request_clear(p, self.ring_clear, warp=c_warp, first_rp=rp[c_warp],
                                                          length=c_imm, mask=mask)
                        for h in range(H) if H > 1 else ():  # rpinc k -> h
                            with m.If(c_info.hand == h):
                                m.d.sync += by_hand[h][c_warp].eq(by_hand[h][c_warp] + c_imm)
                                if p.checks_reads:
                                    m.d.comb += request_clear(p, hand_clear(p, self.ring_clear, h), warp=c_warp,
                                                              first_rp=by_hand[h][c_warp], length=c_imm, mask=mask,
                                                              hand=h)
            with m.State("RESUME"):
                m.d.comb += stack.resp.ready.eq(1)
                with m.If(stack.resp.valid):
                    r = stack.resp.payload
                    m.next = "DONE"
                    with m.If(r.status == StackStatus.RESUME):
                        m.d.sync += [c_next.eq(r.pc), active[c_warp].eq(r.mask)]
                        if p.mode.ring:
                            m.d.sync += [by_hand[h][c_warp].eq(v) for h, v in enumerate(hand_rps(p, r.rp))]
                    with m.Elif(r.status == StackStatus.DONE):
                        m.d.sync += [c_redirect.eq(0), running.bit_select(c_warp, 1).eq(0), active[c_warp].eq(0)]
            with m.State("DONE"):
                m.d.comb += self.complete.valid.eq(1)
                with m.If(self.complete.ready):
                    m.d.comb += self.redirect_valid.eq(c_redirect)
                    m.d.sync += busy.eq(0)
                    m.next = "IDLE"

        # RP advances at issue of a producer (DFLOW); this unit owns it otherwise.
        if p.checks_reads:
            with m.If(clear_valid(p, stack.clear)):  # never in the cycle of an rpinc (one instruction at a time)
                m.d.comb += self.ring_clear.eq(stack.clear)
        if p.mode.ring and H == 1:
            with m.If(self.advance_rp_valid):
                m.d.sync += rp[self.advance_rp_warp].eq(rp[self.advance_rp_warp] + 1)
        elif p.mode.ring:
            for h in range(H):
                with m.If(self.advance_rp_valid & (self.advance_rp_hand == h)):
                    m.d.sync += by_hand[h][self.advance_rp_warp].eq(by_hand[h][self.advance_rp_warp] + 1)

        # Barrier release: every warp still running waits.
        with m.If(waiting.any() & ((waiting | ~running) == (1 << W) - 1)):
            m.d.sync += waiting.eq(0)

        # Launch.
        with m.If(self.start):
            m.d.sync += waiting.eq(0)
            for w in range(W):
                m.d.sync += [active[w].eq(self.init_mask[w]), alive[w].eq(self.init_mask[w]),
                             *[hand_rp[w][h].eq(0) for h in range(H)], running[w].eq(self.init_mask[w] != 0)]
        return m

"""Operand collector: collector units (CUs) that gather an instruction's operands, then dispatch it.

A CU holds one issued instruction: its warp, an opaque tag and payload (decoded fields the
execution units need), its execution unit, its memory-ordering fields and up to three source
operands, each with an entry index, a ready bit (the value is in the register file) and, once
read, its per-lane value. The CU requests its ready operands from the ``BankedRegisterFile``
(one read requester per operand slot, requester ``3 * cu + slot``), wakes not-ready operands
on a matching writeback broadcast (DFLOW: a source may be allocated before its producer has
written back), and offers the instruction for dispatch once every operand is in. In DFLOW the
collector is the reservation station of the paper: dispatch is out of order.

Dispatch policy, one dispatch stream per execution unit:

- BASE: in program order per warp. A CU may dispatch only if no older CU of its warp is still
  waiting (warps interleave freely).
- DFLOW: out of order. Among the CUs that have all their operands, the oldest is offered first.
  Memory ordering (docs/isa.md, coloring): a memory instruction does not dispatch while an
  older, undispatched memory instruction of its warp with the same color is waiting, if either
  of the two is a store. (Loads pass loads.) The LSU must then perform a warp's same-colored
  accesses in dispatch order.

Age is an age matrix over CUs set at allocation: the order in which instructions entered the
collector, which is program order within a warp since issue is in order per warp.
Once a CU is offered on a dispatch stream it stays offered (same payload) until accepted.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from dualflow.common.errors import ConfigError

from .interfaces import (
    SOURCES,
    alloc_layout,
    dispatch_layout,
    entry_layout,
    lane_data,
    mem_layout,
    read_request_layout,
    read_response_signature,
    waiting_layout,
)
from .params import CoreParams
from .regfile import bank_of

__all__ = ["OperandCollector"]


class OperandCollector(wiring.Component):
    """``params.collector_units`` collector units with allocate, read, wakeup and dispatch ports.

    Parameters
    ----------
    params : CoreParams (mode, warps, warp_size, register_banks, collector_units, entries_per_warp).
    payload_width : bits of the opaque decoded-instruction payload carried to dispatch.
    tag_width : bits of the opaque tag (e.g. a per-warp sequence number for the trace); 0 when the
        user needs none (the core carries everything in the payload).
    units : number of execution units, i.e. dispatch streams (default 1).
    wakeup_ports : number of writeback broadcasts (the register file's write ports; default 1).
    requesters : read requesters of the register file the collector shares (default and minimum
        ``3 * collector_units``; the collector uses requesters 0 .. 3 * collector_units - 1), so
        that ``response`` matches ``BankedRegisterFile.response`` when other units read too.

    Members
    -------
    alloc : In(stream.Signature(alloc_layout(...))). Ready when a CU is free (the lowest free CU
        is used); ``ready`` depends on registered state only, so the issue stage may look at it
        before it asserts ``valid``, and should: the source ready bits must be those of the
        allocation cycle (a writeback during a held allocation would otherwise be missed). The CU
        holds the instruction from the next cycle. A source with ``ready = 0`` waits for a
        wakeup; one that matches a wakeup in the allocation cycle is taken as ready. In BASE
        every source arrives ready (the scoreboard blocks RAW at issue). Allocate in the issue
        cycle: the scoreboard's ring guard sees a CU's reads from the cycle after allocation.
    dispatch : Out(stream.Signature(dispatch_layout(...))).array(units). Stream u offers the
        chosen CU of unit u; the CU is free from the cycle after the transfer.
    read : Out(stream.Signature(read_request_layout(params))).array(3 * collector_units). Connect
        to ``BankedRegisterFile.read``; requester ``3 * cu + slot`` holds its request until granted.
    response : In(read_response_signature(params, requesters)).array(banks). Connect to
        ``BankedRegisterFile.response``.
    wakeup : In(entry_layout(params)).array(wakeup_ports). A write to (warp, index) that the
        register file accepts in this cycle (``write.valid & write.ready``).
    pending : Out(entry_layout(params)).array(3 * collector_units). Entry slot ``3 * cu + k``
        still has to read (needed, not yet in the CU; includes reads in flight). The scoreboard's
        ring guard input.
    waiting : Out(waiting_layout(params)).array(collector_units), DFLOW only. CU c holds an instruction with
        an operand whose value is not in the register file yet (allocated not ready and not woken
        since), and its warp: the DFLOW issue policy counts these (``dflow_waiting_per_warp``,
        ``dflow_waiting_per_sm``). Registered state only.

    Timing: allocation to first read request 1 cycle (ready operands); grant to value 1 cycle;
    value to dispatch offer 1 cycle. So an instruction with ready operands and no bank conflict
    is offered 3 cycles after allocation. A wakeup makes the operand requestable the next cycle.
    """

    def __init__(self, params: CoreParams, *, payload_width: int = 32, tag_width: int = 8, units: int = 1,
                 wakeup_ports: int = 1, requesters: int | None = None):
        if not isinstance(params, CoreParams):
            raise ConfigError(f"operand collector needs CoreParams, not {params!r}")
        for name, value, lo, hi in (("payload_width", payload_width, 1, 4096), ("tag_width", tag_width, 0, 64),
                                    ("units", units, 1, 8), ("wakeup_ports", wakeup_ports, 1, 8)):
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise ConfigError(f"operand collector {name} must be an integer in {lo}..{hi}, not {value!r}")
        self.params = params
        self.payload_width, self.tag_width = payload_width, tag_width
        self.units, self.wakeup_ports = units, wakeup_ports
        self.alloc_layout = alloc_layout(params, payload_width=payload_width, tag_width=tag_width, units=units)
        self.dispatch_layout = dispatch_layout(params, payload_width=payload_width, tag_width=tag_width)
        n_req = SOURCES * params.collector_units
        requesters = n_req if requesters is None else requesters
        if not isinstance(requesters, int) or requesters < n_req:
            raise ConfigError(f"operand collector requesters must be an integer >= 3 * collector_units = {n_req}, "
                              f"not {requesters!r}")
        self.requesters = requesters
        members = {
            "alloc": In(stream.Signature(self.alloc_layout)),
            "dispatch": Out(stream.Signature(self.dispatch_layout)).array(units),
            "read": Out(stream.Signature(read_request_layout(params))).array(n_req),
            "response": In(read_response_signature(params, requesters)).array(params.register_banks),
            "wakeup": In(entry_layout(params)).array(wakeup_ports),
            "pending": Out(entry_layout(params)).array(n_req),
        }
        if params.mode.out_of_order:
            members["waiting"] = Out(waiting_layout(params)).array(params.collector_units)
        super().__init__(members)

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        n = p.collector_units
        a = self.alloc.payload

        # ---- CU state
        valid = [Signal(name=f"cu{c}_valid") for c in range(n)]
        warp = [Signal(range(p.warps), name=f"cu{c}_warp") for c in range(n)]
        tag = [Signal(self.tag_width, name=f"cu{c}_tag") for c in range(n)]
        unit = [Signal(range(self.units), name=f"cu{c}_unit") for c in range(n)]
        mem = [Signal(mem_layout(), name=f"cu{c}_mem") for c in range(n)]
        payload = [Signal(self.payload_width, name=f"cu{c}_payload") for c in range(n)]
        need = [[Signal(name=f"cu{c}_need{k}") for k in range(SOURCES)] for c in range(n)]
        index = [[Signal(range(p.entries_per_warp), name=f"cu{c}_index{k}") for k in range(SOURCES)]
                 for c in range(n)]
        ready = [[Signal(name=f"cu{c}_ready{k}") for k in range(SOURCES)] for c in range(n)]
        reading = [[Signal(name=f"cu{c}_reading{k}") for k in range(SOURCES)] for c in range(n)]
        have = [[Signal(name=f"cu{c}_have{k}") for k in range(SOURCES)] for c in range(n)]
        value = [[Signal(lane_data(p.warp_size), name=f"cu{c}_value{k}") for k in range(SOURCES)] for c in range(n)]
        # older[i][j]: CU i entered before CU j (meaningful while both are valid).
        older = [[Signal(name=f"older_{i}_{j}") if i != j else Const(0, 1) for j in range(n)] for i in range(n)]

        def woken(w, idx):
            hit = Const(0, 1)
            for port in self.wakeup:
                hit = hit | (port.valid & (port.warp == w) & (port.index == idx))
            return hit

        # ---- dispatch choice (from the state at the start of the cycle)
        collected = [Signal(name=f"cu{c}_collected") for c in range(n)]
        eligible = [Signal(name=f"cu{c}_eligible") for c in range(n)]
        for c in range(n):
            m.d.comb += collected[c].eq(valid[c] & Cat(have[c]).all())
            blockers = Const(0, 1)
            for j in range(n):
                if j == c:
                    continue
                older_same_warp = valid[j] & older[j][c] & (warp[j] == warp[c])
                if p.mode.out_of_order:
                    conflict = (mem[c].valid & mem[j].valid & (mem[j].color == mem[c].color)
                                & (mem[c].store | mem[j].store))
                    blockers = blockers | (older_same_warp & conflict)
                else:
                    blockers = blockers | older_same_warp
            m.d.comb += eligible[c].eq(collected[c] & ~blockers)

        leaving = [Signal(name=f"cu{c}_leaving") for c in range(n)]
        leave_terms: list[list] = [[] for _ in range(n)]
        for u, port in enumerate(self.dispatch):
            held = Signal(name=f"held{u}")  # offered last cycle, not yet taken
            held_cu = Signal(range(n), name=f"held_cu{u}")
            cand = [Signal(name=f"u{u}_cand{c}") for c in range(n)]
            pick = [Signal(name=f"u{u}_pick{c}") for c in range(n)]
            for c in range(n):
                m.d.comb += cand[c].eq(eligible[c] & (unit[c] == u))
            for c in range(n):
                younger = Const(0, 1)
                for j in range(n):
                    if j != c:
                        younger = younger | (cand[j] & older[j][c])
                m.d.comb += pick[c].eq(Mux(held, held_cu == c, cand[c] & ~younger))
            m.d.comb += port.valid.eq(held | Cat(cand).any())
            for c in range(n):
                with m.If(pick[c]):
                    m.d.comb += [
                        port.payload.warp.eq(warp[c]), port.payload.tag.eq(tag[c]),
                        port.payload.payload.eq(payload[c]),
                    ]
                    m.d.comb += [port.payload.operands[k].eq(value[c][k]) for k in range(SOURCES)]
                    m.d.sync += held_cu.eq(c)
                leave_terms[c].append(pick[c] & port.ready)
            m.d.sync += held.eq(port.valid & ~port.ready)
        for c in range(n):
            t = Const(0, 1)
            for term in leave_terms[c]:
                t = t | term
            m.d.comb += leaving[c].eq(t)

        # ---- allocation into the lowest free CU
        free = Cat(~v for v in valid)
        target = [Signal(name=f"cu{c}_alloc") for c in range(n)]
        taken = Const(0, 1)
        for c in range(n):
            m.d.comb += target[c].eq(free[c] & ~taken & self.alloc.valid)
            taken = taken | free[c]
        m.d.comb += self.alloc.ready.eq(free.any())

        for c in range(n):
            with m.If(leaving[c]):
                m.d.sync += valid[c].eq(0)
            with m.If(target[c]):
                m.d.sync += [
                    valid[c].eq(1), warp[c].eq(a.warp), tag[c].eq(a.tag), unit[c].eq(a.unit),
                    mem[c].eq(a.mem), payload[c].eq(a.payload),
                ]
                for k in range(SOURCES):
                    s = a.src[k]
                    m.d.sync += [
                        need[c][k].eq(s.valid), index[c][k].eq(s.index),
                        ready[c][k].eq(s.ready | woken(a.warp, s.index)),
                        reading[c][k].eq(0), have[c][k].eq(~s.valid),
                        value[c][k].eq(s.value.replicate(p.warp_size) if p.uniform_operands else 0),
                    ]
                for j in range(n):
                    if j != c:
                        # The newcomer is younger than every CU that stays.
                        m.d.sync += [older[c][j].eq(0), older[j][c].eq(valid[j] & ~leaving[j])]

        for c in range(n if p.mode.out_of_order else 0):
            not_ready = Cat(need[c][k] & ~ready[c][k] for k in range(SOURCES))
            m.d.comb += [self.waiting[c].valid.eq(valid[c] & not_ready.any()), self.waiting[c].warp.eq(warp[c])]

        # ---- operand reads, wakeups and responses
        for c in range(n):
            for k in range(SOURCES):
                r = SOURCES * c + k
                req = self.read[r]
                want = need[c][k] & ready[c][k] & ~reading[c][k] & ~have[c][k]
                m.d.comb += [
                    req.valid.eq(valid[c] & want),
                    req.payload.warp.eq(warp[c]), req.payload.index.eq(index[c][k]),
                    self.pending[r].valid.eq(valid[c] & need[c][k] & ~have[c][k]),
                    self.pending[r].warp.eq(warp[c]), self.pending[r].index.eq(index[c][k]),
                ]
                with m.If(~target[c]):
                    with m.If(valid[c] & need[c][k] & ~ready[c][k] & woken(warp[c], index[c][k])):
                        m.d.sync += ready[c][k].eq(1)
                    with m.If(req.valid & req.ready):
                        m.d.sync += reading[c][k].eq(1)
                    bank = bank_of(p, warp[c], index[c][k])
                    for b, resp in enumerate(self.response):
                        with m.If(reading[c][k] & (bank == b) & resp.valid & (resp.requester == r)):
                            m.d.sync += [value[c][k].eq(resp.data), have[c][k].eq(1), reading[c][k].eq(0)]
        return m

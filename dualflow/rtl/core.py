"""The SIMT core: one streaming multiprocessor running one block (CTA), BASE or DFLOW.

Pipeline (stage prefixes as signal names; one component each)::

    fetch (f_)    FetchUnit: imem read, decode into an instruction buffer per warp (ib_)
      |
    issue (i_)    IssueStage: per-warp checks against the Scoreboard, the DFLOW issue policy,
      |             the WarpScheduler; control instructions go to the ControlUnit (c_), the
      |             rest allocate a collector unit
    collect       OperandCollector (CUs, BankedRegisterFile reads, wakeups);
      |             BASE dispatches in program order per warp, DFLOW out of order;
      |             one dispatch stream per dispatched ExecUnit (units.py)
      +--> AluStage: read (r_) -> IntegerAlu (x1_..xN_)     s2r/ldc values enter here
      +--> FpuStage: read (r_) -> FpPipeline (x1_..xN_)     FP32, fixed latency
      +--> SfuStage: read (r_) -> SpecialFunctionUnit     fdiv/fsqrt, iterative, may wait
      +--> LoadStoreUnit (shared banks; tagged global/local port, any latency, any order)
    writeback (w_) WritebackArbiter over every ExecUnit (ALU > FPU > SFU > LSU > control; units.py
                   says why): register-file write, wakeup, scoreboard clear, retirement-trace
                   record; WritebackSlots reserves the cycles of the fixed-latency ALU and FPU

Beside the pipeline: ``ConfigRegisters`` (what the host writes before ``start``), the
``ControlUnit`` (branches, reconvergence on the ``SimtStack``, exit, barriers; the warps' control
state) and the ``TrapCollector`` (the first error stops the core; trap.py gives the priority).

A warp issues in order; in DFLOW its instructions wait for their operands in the collector, so
an instruction behind a load that misses keeps a CU while younger independent ones issue,
dispatch and complete around it. Each instruction carries a side-band ``info`` word (warp, pc,
per-warp sequence number, opcode, RP, mask, destination; ``stages.info_layout``) through the
units to writeback, where it becomes the retirement-trace record (``trace``), completed out of
order and put back in program order per warp by ``seq``.
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ._checks import reject
from .alu_stage import AluStage
from .collector import OperandCollector
from .configuration import ConfigRegisters
from .control import ControlUnit
from .events import EventMonitor
from .fetch import FetchUnit
from .fp.stages import FpuStage, SfuStage
from .interfaces import (
    COLLECTOR_TAG_BITS,
    SOURCES,
    TID_ROWS,
    LsuFault,
    TraceSignature,
    TrapCause,
    completion_layout,
    event_layout,
    info_layout,
    lane_data,
    mem_request_layout,
    mem_response_layout,
)
from .issue import IssueStage
from .lsu import LoadStoreUnit
from .params import CoreParams
from .regfile import BankedRegisterFile
from .scoreboard import Scoreboard
from .trap import TrapCollector
from .units import DISPATCHED, FIXED_LATENCY, ExecUnit, dispatch_index
from .writeback import WritebackArbiter, WritebackSlots

__all__ = ["SimtCore"]


class SimtCore(wiring.Component):
    """One SIMT core.

    Parameters
    ----------
    params: CoreParams.

    Members
    -------
    load_en, load_addr, load_data: In, write instruction word ``load_addr``.
    cfg_en, cfg_addr, cfg_data: In, write a configuration word (``ConfigRegisters``: special
        registers by ``SpecialReg`` number, the shared-memory size at ``CFG_SHARED_LIMIT``,
        parameters from ``CFG_PARAM_BASE``, initial warp masks from ``cfg_mask_base(params)``).
    tid_en, tid_addr, tid_data: In, write row ``warp * TID_ROWS + dim`` of the thread-index table
        (tid.x, tid.y, tid.z of each lane).
    start: In(1), launch: every warp with a non-zero mask starts at pc 0.
    running: Out(1), launched and not finished. done: Out(1), finished (all warps exited and
        nothing in flight), until the next start.
    trap: Out(1), trap_cause: Out(TrapCause), trap_pc, trap_warp: the core stopped on an error.
    mem_req: Out(stream), mem_resp: In(stream): global/local memory (see ``LoadStoreUnit``).
    trace: Out(TraceSignature(params)): one retired instruction per cycle at most, registered
        (valid for the one cycle after writeback); absent without ``params.trace``.
    bank_conflicts: Out(32), register-file read requests that lost their bank, counted per
        request and cycle since ``start`` (the timing model's ``rf_bank_conflicts``).
    events: Out(event_layout(params)), the micro-architectural events of the cycle before
        (``EventMonitor``: functional coverage of co-simulation).
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"SimtCore needs CoreParams, not {params!r}")
        self.params = params
        self.lsu_tag_width = max(1, ceil_log2(params.requests_in_flight))
        pcs = range(params.imem_words)
        super().__init__({
            "load_en": In(1), "load_addr": In(pcs), "load_data": In(64),
            "cfg_en": In(1), "cfg_addr": In(8), "cfg_data": In(32),
            "tid_en": In(1), "tid_addr": In(range(params.warps * TID_ROWS)),
            "tid_data": In(lane_data(params.warp_size)),
            "start": In(1), "running": Out(1), "done": Out(1),
            "trap": Out(1), "trap_cause": Out(TrapCause), "trap_pc": Out(pcs), "trap_warp": Out(range(params.warps)),
            "mem_req": Out(stream.Signature(mem_request_layout(params, self.lsu_tag_width))),
            "mem_resp": In(stream.Signature(mem_response_layout(params, self.lsu_tag_width))),
            **({"trace": Out(TraceSignature(params))} if params.trace else {}), "bank_conflicts": Out(32),
            "events": Out(event_layout(params)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        n_req = SOURCES * p.collector_units  # collector read requesters; the control unit's is n_req
        m.submodules.cfg = cfg = ConfigRegisters(p)
        m.submodules.fetch = fetch = FetchUnit(p)
        m.submodules.issue = issue = IssueStage(p, param_bits=cfg.param_bits)
        m.submodules.scoreboard = sb = Scoreboard(p, writeback_ports=1, read_ports=n_req, lookahead=p.mode.out_of_order)
        m.submodules.ctrl = ctrl = ControlUnit(p, requesters=n_req + 1, requester=n_req)
        m.submodules.rf = rf = BankedRegisterFile(p, read_ports=n_req + 1)
        m.submodules.collector = coll = OperandCollector(p, payload_width=issue.exec_layout.size,
                                                         tag_width=COLLECTOR_TAG_BITS, units=len(DISPATCHED))
        m.submodules.alu = alu = AluStage(p)
        m.submodules.fpu = fpu = FpuStage(p)
        m.submodules.sfu = sfu = SfuStage(p)
        # Writeback cycles of the fixed-latency units, from the entry the slot decides on: the ALU's
        # dispatch (its read stage, then alu_latency), the FP pipeline's entry (fp_latency).
        m.submodules.slots = slots = WritebackSlots({ExecUnit.ALU: 1 + p.alu_latency, ExecUnit.FPU: p.fp_latency})
        m.submodules.lsu = lsu = LoadStoreUnit(p, info_width=info_layout(p).size)
        m.submodules.wb = wb = WritebackArbiter(completion_layout(p))
        m.submodules.traps = traps = TrapCollector(p)

        # ---- host ports
        m.d.comb += [fetch.load_en.eq(self.load_en), fetch.load_addr.eq(self.load_addr),
                     fetch.load_data.eq(self.load_data), cfg.load_en.eq(self.load_en), cfg.load_addr.eq(self.load_addr)]
        for name in ("cfg_en", "cfg_addr", "cfg_data", "tid_en", "tid_addr", "tid_data"):
            m.d.comb += getattr(cfg, name).eq(getattr(self, name))
        wiring.connect(m, wiring.flipped(self.mem_req), lsu.mem_req)
        wiring.connect(m, wiring.flipped(self.mem_resp), lsu.mem_resp)
        m.d.comb += [lsu.shared_limit.eq(cfg.shared_limit), alu.tid_read_data.eq(cfg.tid_read_data),
                     cfg.tid_read_addr.eq(alu.tid_read_addr)]

        # ---- fetch <-> issue <-> scoreboard, control unit, collector
        m.d.comb += [issue.ib_valid.eq(fetch.ib_valid), fetch.consume.eq(issue.consume)]
        for w in range(p.warps):
            m.d.comb += [issue.ib_pc[w].eq(fetch.ib_pc[w]), issue.ib_inst[w].eq(fetch.ib_inst[w])]
            wiring.connect(m, issue.check[w], sb.check[w])
            if p.mode.out_of_order:
                m.d.comb += issue.ib_next[w].eq(fetch.ib_next[w])
                wiring.connect(m, issue.peek[w], sb.peek[w])
            rp_of = [issue.rp[w].eq(ctrl.rp[w])] if p.hands == 1 else [  # one RP per hand
                issue.rp[w][h].eq(ctrl.rp[w][h]) for h in range(p.hands)]
            m.d.comb += [issue.active[w].eq(ctrl.active[w]), *rp_of, ctrl.init_mask[w].eq(cfg.init_mask[w])]
        if p.mode.out_of_order:
            m.d.comb += issue.ib_next_valid.eq(fetch.ib_next_valid)
            m.d.comb += [issue.cu_waiting[c].eq(coll.waiting[c]) for c in range(p.collector_units)]
            m.d.comb += [sb.reads[r].eq(coll.pending[r]) for r in range(n_req)]
            m.d.comb += [ctrl.advance_rp_valid.eq(issue.advance_rp_valid),
                         ctrl.advance_rp_warp.eq(issue.advance_rp_warp)]
            if p.hands > 1:
                m.d.comb += ctrl.advance_rp_hand.eq(issue.advance_rp_hand)
            if p.checks_reads:
                m.d.comb += issue.ring_clear.eq(ctrl.ring_clear)
        m.d.comb += [
            sb.issue.eq(issue.sb_issue), issue.running.eq(ctrl.running), issue.waiting.eq(ctrl.waiting),
            issue.sreg_value.eq(cfg.sreg_value), cfg.sreg_index.eq(issue.sreg_index),
            issue.param_value.eq(cfg.param_value), cfg.param_index.eq(issue.param_index),
            issue.code_loaded.eq(cfg.code_loaded), issue.code_last.eq(cfg.code_last),
            fetch.redirect_valid.eq(ctrl.redirect_valid), fetch.redirect_warp.eq(ctrl.redirect_warp),
            fetch.redirect_pc.eq(ctrl.redirect_pc), fetch.enable.eq(ctrl.running & ~ctrl.waiting),
        ]
        if p.uniform_operands:
            for k in range(SOURCES):
                m.d.comb += [cfg.uniform_index[k].eq(issue.uniform_index[k]),
                             issue.uniform_value[k].eq(cfg.uniform_value[k])]
        wiring.connect(m, issue.control, ctrl.issue)
        wiring.connect(m, issue.alloc, coll.alloc)

        # ---- register-file reads: collector requesters, then the control unit's
        for r in range(n_req):
            wiring.connect(m, coll.read[r], rf.read[r])
        wiring.connect(m, ctrl.read, rf.read[n_req])
        for b in range(p.register_banks):
            resp = rf.response[b]
            m.d.comb += [coll.response[b].valid.eq(resp.valid & (resp.requester != n_req)),
                         coll.response[b].requester.eq(resp.requester[:max(1, ceil_log2(n_req))]),
                         coll.response[b].data.eq(resp.data), ctrl.response[b].valid.eq(resp.valid),
                         ctrl.response[b].requester.eq(resp.requester), ctrl.response[b].data.eq(resp.data)]
        if not p.mode.ring:
            m.d.comb += rf.clear.eq(self.start)  # a block starts with every register at 0
        with m.If(self.start):
            m.d.sync += self.bank_conflicts.eq(0)
        with m.Else():
            m.d.sync += self.bank_conflicts.eq(self.bank_conflicts + rf.conflicts)

        # ---- execution units: one collector dispatch stream each, one writeback source each
        to_alu = coll.dispatch[dispatch_index(ExecUnit.ALU)]
        wiring.connect(m, to_alu, alu.dispatch)
        slot_alu, slot_fpu = (FIXED_LATENCY.index(u) for u in (ExecUnit.ALU, ExecUnit.FPU))
        # A result that can wait gets its slot: nothing enters a fixed-latency unit meanwhile.
        m.d.comb += [alu.stall.eq(wb.others_waiting | ~slots.free[slot_alu]),
                     slots.request[slot_alu].eq(to_alu.valid), slots.hold.eq(wb.others_waiting),
                     fpu.stall.eq(wb.others_waiting), slots.request[slot_fpu].eq(fpu.slot_request),
                     fpu.slot_free.eq(slots.free[slot_fpu])]
        wiring.connect(m, coll.dispatch[dispatch_index(ExecUnit.FPU)], fpu.dispatch)
        wiring.connect(m, coll.dispatch[dispatch_index(ExecUnit.SFU)], sfu.dispatch)
        to_lsu = coll.dispatch[dispatch_index(ExecUnit.LSU)]
        lx = issue.exec_layout(to_lsu.payload.payload)
        li = lsu.i.payload
        m.d.comb += [
            lsu.i.valid.eq(to_lsu.valid), to_lsu.ready.eq(lsu.i.ready),
            li.warp.eq(to_lsu.payload.warp), li.store.eq(lx.info.store), li.space.eq(lx.space),
            li.color.eq(lx.info.mod), li.offset.eq(lx.imm), li.mask.eq(lx.info.mask),
            li.a.eq(to_lsu.payload.operands[0]), li.b.eq(to_lsu.payload.operands[1]), li.info.eq(lx.info),
        ]
        wiring.connect(m, alu.complete, wb.source_port(ExecUnit.ALU))
        wiring.connect(m, fpu.complete, wb.source_port(ExecUnit.FPU))
        wiring.connect(m, sfu.complete, wb.source_port(ExecUnit.SFU))
        m.d.comb += [wb.lsu.valid.eq(lsu.o.valid), lsu.o.ready.eq(wb.lsu.ready),
                     wb.lsu.payload.info.eq(lsu.o.payload.info), wb.lsu.payload.values.eq(lsu.o.payload.values)]
        if p.trace:
            m.d.comb += [wb.lsu.payload.addrs.eq(lsu.o.payload.addrs), wb.lsu.payload.data.eq(lsu.o.payload.data)]
        wiring.connect(m, ctrl.complete, wb.source_port(ExecUnit.CTRL))

        # ---- writeback: register file, wakeup, scoreboard, in-flight counts, trace
        w_ = wb.out.payload
        w_info = w_.info
        rfw = rf.write[0]
        written = rfw.valid & rfw.ready
        m.d.comb += [
            rfw.valid.eq(wb.out.valid & w_info.writes), rfw.payload.warp.eq(w_info.warp),
            rfw.payload.index.eq(w_info.dst), rfw.payload.mask.eq(w_info.mask), rfw.payload.data.eq(w_.values),
            coll.wakeup[0].valid.eq(written), coll.wakeup[0].warp.eq(w_info.warp), coll.wakeup[0].index.eq(w_info.dst),
            sb.writeback[0].valid.eq(written), sb.writeback[0].warp.eq(w_info.warp),
            sb.writeback[0].index.eq(w_info.dst),
            issue.retire_valid.eq(wb.out.valid & (wb.source != ExecUnit.CTRL)), issue.retire_warp.eq(w_info.warp),
        ]
        if p.trace:
            m.d.sync += [self.trace.valid.eq(wb.out.valid), self.trace.payload.eq(w_)]

        # ---- traps (priority in trap.py)
        lsu_trap = traps.lsu.payload
        f_info = Signal(info_layout(p))
        m.d.comb += f_info.eq(lsu.fault_info)
        m.d.comb += [traps.lsu.valid.eq(lsu.fault), lsu_trap.pc.eq(f_info.pc), lsu_trap.warp.eq(f_info.warp),
                     lsu_trap.cause.eq(Mux(lsu.fault_kind == LsuFault.MISALIGNED, TrapCause.MISALIGNED,
                                                TrapCause.SHARED_BOUNDS))]
        wiring.connect(m, ctrl.trap, traps.control)
        wiring.connect(m, ctrl.stack_trap, traps.stack)
        wiring.connect(m, issue.trap, traps.issue)
        m.d.comb += [traps.clear.eq(self.start), issue.trapped.eq(traps.trap), self.trap.eq(traps.trap),
                     self.trap_cause.eq(traps.cause), self.trap_pc.eq(traps.pc), self.trap_warp.eq(traps.warp)]

        # ---- coverage events (observation only)
        m.submodules.events = ev = EventMonitor(p)
        m.d.comb += [ev.bank_conflict.eq(rf.conflict), ev.cu_free.eq(coll.alloc.ready),
                     ev.head_valid.eq(fetch.ib_valid), ev.running.eq(ctrl.running), ev.waiting.eq(ctrl.waiting),
                     self.events.eq(ev.events)]
        if p.mode.ring:
            m.d.comb += [ev.head_blocked[w].eq(sb.check[w].blocked) for w in range(p.warps)]
        m.d.comb += [ev.stack_depth[w].eq(ctrl.stack_depth[w]) for w in range(p.warps)]

        # ---- launch and completion
        launched = Signal()
        finished = launched & (ctrl.running == 0) & ~ctrl.busy & issue.drained & lsu.idle
        m.d.comb += [self.running.eq(launched & ~finished & ~traps.trap), self.done.eq(finished),
                     lsu.clear.eq(self.start), ctrl.start.eq(self.start), issue.start.eq(self.start)]
        with m.If(self.start):
            m.d.sync += launched.eq(1)
        # Every warp starts at pc 0: the fetch pc resets to 0 and redirects are only for control.
        return m

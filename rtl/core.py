"""The SIMT core: one streaming multiprocessor running one block (CTA), BASE or DFLOW.

Pipeline (stage prefixes as signal names)::

    fetch (f_)    FetchUnit: imem read, decode into a 1-entry buffer per warp (ib_)
      |
    issue (i_)    WarpScheduler (GTO/LRR) over warps whose head can issue:
      |             BASE : scoreboard RAW + WAW on registers, in order
      |             DFLOW: destination slot free, ring guard; sources may be pending
      |             control instructions go to the control unit (c_), the rest allocate a CU
    collect       OperandCollector (CUs, BankedRegisterFile reads, wakeups);
      |             BASE dispatches in program order per warp, DFLOW out of order
      +--> read (r_) -> IntegerAlu (x1_..xN_)     s2r/ldc values enter here
      +--> LoadStoreUnit (shared banks; tagged global/local port, any latency, any order)
    writeback (w_) WritebackArbiter: ALU > LSU > control; register-file write, wakeup,
                   scoreboard clear, retirement-trace record

A warp issues in order; in DFLOW its instructions wait for their operands in the collector, so
an instruction behind a load that misses keeps a CU while younger independent ones issue,
dispatch and complete around it. Each instruction carries a side-band ``info`` word (warp, pc,
per-warp sequence number, opcode, RP, mask, destination) through the units to writeback, where
it becomes the retirement-trace record (``trace``), completed out of order and put back in
program order per warp by ``seq``.

Control (``c_``): one control instruction at a time, in order per warp (its warp stops fetching
until the control unit redirects it): branches read their condition through a register-file read
port of their own; the shared ``SimtStack`` holds the (kind, pc, mask, rp) entries of every warp
(docs/isa.md "Control flow") and the shared ``Scoreboard`` does the issue checks; ``bar`` and
``membar`` wait until the warp has nothing in flight (``bar`` then waits for the block),
``exit`` retires lanes and pops.

DFLOW issue policy (docs/rtl.md, "Issue"; the performance model's rule): the scheduler prefers
warps whose instruction has its operands ready; an instruction with a source in flight is sent
ahead into a collector unit only when no warp can issue without waiting, when the warp's next
buffered instruction could then issue (it does not read the waiting one's result and has its own
operands ready), and while fewer than ``waiting_limit_warp`` CUs of the warp and fewer than
``waiting_limit_sm`` CUs of the core hold instructions with operands not ready.

``SEQ_BITS`` (width of the trace sequence number) is the one parameter of this file that is not a
``CoreParams`` field (RP has ``register_pointer.rp_width`` bits). ``STACK_DEPTH``,
``PARAM_WORDS``, ``LSU_OUTSTANDING`` and ``CFG_MASK_BASE`` are the values for the default
``CoreParams`` (kept for the benches); a core uses ``params.stack_depth``,
``params.param_words``, ``params.requests_in_flight`` and ``cfg_mask_base(params)``.
"""

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.isa.opcodes import SpecialReg

from ._checks import reject
from .alu import IntegerAlu
from .collector import OperandCollector
from .decode import Op, Space, Unit
from .fetch import FetchUnit
from .layouts import lane_data
from .lsu import LoadStoreUnit, LsuFault, mem_request_layout, mem_response_layout
from .params import CoreParams
from .regfile import BankedRegisterFile, bank_of
from .register_pointer import rp_width
from .scheduler import WarpScheduler
from .scoreboard import Scoreboard
from .simt_stack import Op as StackOp
from .simt_stack import SimtStack
from .simt_stack import Status as StackStatus
from .simt_stack import Trap as StackTrap
from .writeback import WritebackArbiter

__all__ = ["SimtCore", "info_layout", "trace_layout", "TrapCause", "STACK_DEPTH", "PARAM_WORDS", "SEQ_BITS",
           "CFG_PARAM_BASE", "CFG_MASK_BASE", "CFG_SHARED_LIMIT", "cfg_mask_base"]

_DEFAULT = CoreParams()
#: Defaults of the ``CoreParams`` fields of the same meaning (a core uses its params).
STACK_DEPTH = _DEFAULT.stack_depth
PARAM_WORDS = _DEFAULT.param_words
LSU_OUTSTANDING = _DEFAULT.requests_in_flight
SEQ_BITS = 16
#: Configuration-port word addresses: special registers at their ``SpecialReg`` number, then
#: the kernel parameters (``params.param_words`` of them), then each warp's initial active mask
#: (0: the warp does not run) from ``cfg_mask_base(params)``.
CFG_PARAM_BASE = 16
#: Configuration address of the block's shared-memory size in bytes (``.shared``; accesses at or
#: past it trap). The one address below ``CFG_PARAM_BASE`` that is not a special register.
CFG_SHARED_LIMIT = 15


def cfg_mask_base(params: CoreParams) -> int:
    """Configuration address of warp 0's initial mask: after the parameters, on a multiple of 16
    (32 for up to 16 parameter words)."""
    return CFG_PARAM_BASE + 16 * -(-params.param_words // 16)


#: ``cfg_mask_base`` of the default ``CoreParams``.
CFG_MASK_BASE = cfg_mask_base(_DEFAULT)
#: Rows of the tid table per warp: tid.x, tid.y, tid.z and one unused row.
TID_ROWS = 4  # testbench/core/protocol.py says the same to the bench


class TrapCause(enum.Enum, shape=4):
    """Why the core stopped (``trap_cause``); 0 while running."""

    NONE = 0
    ILLEGAL = 1  #: not a valid instruction word for this core
    FP = 2  #: an FP32 or SFU instruction (no FP units yet)
    STACK_OVERFLOW = 3  #: more than ``params.stack_depth`` nested divergence entries
    STACK_EMPTY = 4  #: sync without ssy, or the stack ran dry with lanes alive
    BARRIER = 5  #: bar reached by a diverged warp (a deadlock in the functional model)
    PARAM = 6  #: ldc beyond ``params.param_words``
    MISALIGNED = 7  #: a load or store address not a multiple of 4 (any space)
    SHARED_BOUNDS = 8  #: a shared access at or past the block's ``.shared`` size
    PC_RANGE = 9  #: a warp ran past the last instruction loaded (a path without ``exit``)


def info_layout(params: CoreParams) -> data.StructLayout:
    """Side-band word of an instruction in flight: what writeback and the trace need."""
    return data.StructLayout({
        "warp": range(params.warps), "pc": range(params.imem_words), "seq": SEQ_BITS, "op": Op, "mod": 4,
        "rp": rp_width(params), "mask": params.warp_size, "dst": range(params.entries_per_warp), "writes": 1, "mem": 1,
        "store": 1,
    })


def completion_layout(params: CoreParams) -> data.StructLayout:
    return data.StructLayout({"info": info_layout(params), "values": lane_data(params.warp_size),
                              "addrs": lane_data(params.warp_size), "data": lane_data(params.warp_size)})


def trace_layout(params: CoreParams) -> data.StructLayout:
    """The retirement-trace port: one retired warp instruction (fields of ``TraceRecord``)."""
    return completion_layout(params)


def _exec_layout(params: CoreParams) -> data.StructLayout:
    """Collector payload (issue -> dispatch): what the ALU or LSU needs besides the operands."""
    return data.StructLayout({"imm": 32, "bimm": 1, "tid": 1, "laneid": 1, "dim": 2, "space": Space,
                              "info": info_layout(params)})


class SimtCore(wiring.Component):
    """One SIMT core.

    Parameters
    ----------
    params: CoreParams.

    Members
    -------
    load_en, load_addr, load_data: In, write instruction word ``load_addr``.
    cfg_en, cfg_addr, cfg_data: In, write a configuration word (special registers by
        ``SpecialReg`` number, parameters from ``CFG_PARAM_BASE``, initial warp masks from
        ``cfg_mask_base(params)``).
    tid_en, tid_addr, tid_data: In, write row ``warp * 4 + dim`` of the thread-index table
        (tid.x, tid.y, tid.z of each lane).
    start: In(1), launch: every warp with a non-zero mask starts at pc 0.
    running: Out(1), launched and not finished. done: Out(1), finished (all warps exited and
        nothing in flight), until the next start.
    trap: Out(1), trap_cause: Out(TrapCause), trap_pc, trap_warp: the core stopped on an error.
    mem_req: Out(stream), mem_resp: In(stream): global/local memory (see ``LoadStoreUnit``).
    trace_valid: Out(1), trace: Out(trace_layout): one retired instruction per cycle at most,
        registered (valid for the one cycle after writeback).
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
            "trace_valid": Out(1), "trace": Out(trace_layout(params)),
        })

    # ------------------------------------------------------------------------------------------
    def elaborate(self, platform) -> Module:  # noqa: C901 - one place that wires the pipeline
        m = Module()
        p = self.params
        W, L, E = p.warps, p.warp_size, p.entries_per_warp
        ring_bits = ceil_log2(E)
        ilay = info_layout(p)
        xlay = _exec_layout(p)

        m.submodules.fetch = fetch = FetchUnit(p)
        m.submodules.sched = sched = WarpScheduler(warps=W, policy=p.scheduler, two_level=p.dflow)
        n_req = 3 * p.collector_units
        m.submodules.rf = rf = BankedRegisterFile(p, read_ports=n_req + 1)
        m.submodules.collector = coll = OperandCollector(p, payload_width=xlay.size, tag_width=1, units=2)
        m.submodules.alu = alu = IntegerAlu(p, tag_width=ilay.size)
        m.submodules.lsu = lsu = LoadStoreUnit(p, info_width=ilay.size)
        m.submodules.wb = wb = WritebackArbiter(completion_layout(p))

        # The program's extent: the highest word loaded since reset. A warp whose pc goes past it
        # ran off the end (pc + 1 would otherwise wrap to 0), which traps PC_RANGE.
        code_last = Signal(range(p.imem_words))  # the highest word loaded, once code_loaded
        code_loaded = Signal()
        with m.If(self.load_en & (~code_loaded | (self.load_addr > code_last))):
            m.d.sync += [code_last.eq(self.load_addr), code_loaded.eq(1)]
        m.d.comb += [fetch.load_en.eq(self.load_en), fetch.load_addr.eq(self.load_addr),
                     fetch.load_data.eq(self.load_data)]
        wiring.connect(m, wiring.flipped(self.mem_req), lsu.mem_req)
        wiring.connect(m, wiring.flipped(self.mem_resp), lsu.mem_resp)

        # ---- configuration: special registers, parameters, initial masks, tid table
        cfg_sreg = Array(Signal(32, name=f"sreg{i}") for i in range(16))
        cfg_param = Array(Signal(32, name=f"param{i}") for i in range(p.param_words))
        param_bits = max(1, ceil_log2(p.param_words))
        cfg_mask = [Signal(L, name=f"w{w}_init_mask") for w in range(W)]
        shared_limit = Signal(range(p.shared_bytes + 1), init=p.shared_bytes)
        m.d.comb += lsu.shared_limit.eq(shared_limit)
        with m.If(self.cfg_en):
            with m.If(self.cfg_addr == CFG_SHARED_LIMIT):
                m.d.sync += shared_limit.eq(Mux(self.cfg_data > p.shared_bytes, p.shared_bytes, self.cfg_data))
            with m.Elif(self.cfg_addr < CFG_PARAM_BASE):
                m.d.sync += cfg_sreg[self.cfg_addr[:4]].eq(self.cfg_data)
            with m.Elif(self.cfg_addr < CFG_PARAM_BASE + p.param_words):
                m.d.sync += cfg_param[(self.cfg_addr - CFG_PARAM_BASE)[:param_bits]].eq(self.cfg_data)
            for w in range(W):
                with m.If(self.cfg_addr == cfg_mask_base(p) + w):
                    m.d.sync += cfg_mask[w].eq(self.cfg_data)
        m.submodules.tid = tid_mem = memory.Memory(shape=lane_data(L), depth=W * TID_ROWS, init=[])
        tid_wr = tid_mem.write_port()
        tid_rd = tid_mem.read_port(transparent_for=())
        m.d.comb += [tid_wr.en.eq(self.tid_en), tid_wr.addr.eq(self.tid_addr), tid_wr.data.eq(self.tid_data)]

        # ---- warp state
        running = Signal(W)
        launched = Signal()
        waiting = Signal(W)  # at a block barrier
        active = Array(Signal(L, name=f"w{w}_active") for w in range(W))
        alive = Array(Signal(L, name=f"w{w}_alive") for w in range(W))
        rp = Array(Signal(rp_width(p), name=f"w{w}_rp") for w in range(W))
        seq = Array(Signal(SEQ_BITS, name=f"w{w}_seq") for w in range(W))
        inflight = [Signal(8, name=f"w{w}_inflight") for w in range(W)]
        trap = Signal()
        trap_cause = Signal(TrapCause)
        m.d.comb += [self.trap.eq(trap), self.trap_cause.eq(trap_cause)]

        m.submodules.stack = stack = SimtStack(p, depth=p.stack_depth)
        m.submodules.scoreboard = sb = Scoreboard(p, writeback_ports=1, read_ports=n_req, lookahead=p.dflow)

        # ---- control unit state (declared early: issue looks at it)
        c_busy = Signal()

        # ---- issue: per-warp readiness
        def src_index(w, field):
            if p.dflow:
                return (rp[w] - field)[:ring_bits] if ring_bits else Const(0, 1)
            return (field - 1)[:max(ring_bits, 1)]

        # DFLOW issue policy: may warp w send its head ahead into a CU to wait?
        send_ahead = Signal(W)
        if p.dflow:
            n_cu = p.collector_units
            cu_waiting = coll.waiting
            sm_waiting = Signal(range(n_cu + 1))
            m.d.comb += sm_waiting.eq(sum(cu_waiting[c].valid for c in range(n_cu)))
            sm_room = sm_waiting < p.waiting_limit_sm
            for w in range(W):
                mine = Signal(range(n_cu + 1), name=f"w{w}_waiting_cus")
                m.d.comb += mine.eq(sum(cu_waiting[c].valid & (cu_waiting[c].warp == w) for c in range(n_cu)))
                # the next buffered instruction could issue behind it: it does not read the head's
                # result (distance 1 from the RP after a producing head) and its own sources are
                # ready (the scoreboard's lookahead port, at the RP after the head)
                head, nxt = fetch.ib_inst[w], fetch.ib_next[w]
                rp2 = (rp[w] + head.produces)[:ring_bits] if ring_bits else Const(0, 1)
                fields = (nxt.a, nxt.b, nxt.c)
                peek = sb.peek[w]
                for k in range(3):
                    m.d.comb += [peek.src[k].valid.eq(fields[k] != 0),
                                 peek.src[k].index.eq((rp2 - fields[k])[:ring_bits] if ring_bits else 0)]
                reads_head = head.produces & Cat(f == 1 for f in fields).any()
                unblocks = fetch.ib_next_valid[w] & ~reads_head & ~peek.src_pending.any()
                m.d.comb += send_ahead[w].eq(unblocks & (mine < p.waiting_limit_warp) & sm_room)

        i_dst = [Signal(range(E), name=f"w{w}_i_dst") for w in range(W)]
        i_writes = [Signal(name=f"w{w}_i_writes") for w in range(W)]
        i_src = [[Signal(range(E), name=f"w{w}_i_src{k}") for k in range(3)] for w in range(W)]
        i_has = [[Signal(name=f"w{w}_i_has{k}") for k in range(3)] for w in range(W)]
        ready = Signal(W)
        prefer = Signal(W)  # DFLOW: ready without sending an instruction ahead to wait
        is_ctrl = Signal(W)
        is_trap = Signal(W)
        past_end = Signal(W)
        drained = Signal(W)
        for w in range(W):
            d = fetch.ib_inst[w]
            fields = (d.a, d.b, d.c)
            for k in range(3):
                m.d.comb += [i_has[w][k].eq(fields[k] != 0), i_src[w][k].eq(src_index(w, fields[k]))]
            if p.dflow:
                m.d.comb += [i_dst[w].eq(rp[w][:ring_bits] if ring_bits else 0), i_writes[w].eq(d.produces)]
            else:
                m.d.comb += [i_dst[w].eq((d.dst - 1)[:max(ring_bits, 1)]), i_writes[w].eq(d.produces & (d.dst != 0))]
            chk = sb.check[w]
            for k in range(3):
                m.d.comb += [chk.src[k].valid.eq(i_has[w][k]), chk.src[k].index.eq(i_src[w][k])]
            m.d.comb += [chk.dst.valid.eq(i_writes[w]), chk.dst.index.eq(i_dst[w])]
            hazard = chk.blocked
            m.d.comb += [
                drained[w].eq(inflight[w] == 0),
                is_ctrl[w].eq(d.unit == Unit.CTRL),
                past_end[w].eq(~code_loaded | (fetch.ib_pc[w] > code_last)),
                is_trap[w].eq(d.illegal | d.fp_trap | past_end[w]),
            ]
            live = running[w] & ~waiting[w] & fetch.ib_valid[w] & ~trap
            # the stack is idle whenever the control unit is (it is the stack's only user)
            ctrl_ok = ~c_busy & stack.cmd.ready & ~chk.src_pending[0]
            ctrl_ok = ctrl_ok & Mux((d.op == Op.BAR) | (d.op == Op.MEMBAR), drained[w], 1)
            exec_ok = coll.alloc.ready & ~hazard
            if p.dflow:
                # an instruction whose sources are not all ready would wait in its CU: it goes
                # only in the second priority level, and only where the policy lets it
                waits = ~is_trap[w] & ~is_ctrl[w] & chk.src_pending.any()
                can = live & (is_trap[w] | Mux(is_ctrl[w], ctrl_ok, exec_ok))
                m.d.comb += [prefer[w].eq(can & ~waits), ready[w].eq(can & (~waits | send_ahead[w]))]
            else:
                m.d.comb += ready[w].eq(live & (is_trap[w] | Mux(is_ctrl[w], ctrl_ok, exec_ok)))
        m.d.comb += sched.ready.eq(ready)
        if p.dflow:
            m.d.comb += sched.prefer.eq(prefer)

        iw = sched.warp
        i_go = sched.valid
        i_d = Signal.like(fetch.ib_inst[0])
        i_pc = Signal(range(p.imem_words))
        for w in range(W):
            with m.If(iw == w):
                m.d.comb += [i_d.eq(fetch.ib_inst[w]), i_pc.eq(fetch.ib_pc[w])]
        sel = lambda arr: Array(arr)[iw]  # the issuing warp's copy of a per-warp signal
        i_trap = i_go & sel(is_trap)
        i_ctrl = i_go & ~i_trap & sel(is_ctrl)
        i_exec = i_go & ~i_trap & ~i_ctrl
        m.d.comb += [sched.issue.eq(i_go), fetch.consume.eq(Mux(i_go & ~i_trap, sched.grant, 0))]
        with m.If(i_trap):
            m.d.sync += [trap.eq(1), self.trap_warp.eq(iw)]
            with m.If(sel(past_end)):  # named by the last instruction, the one that fell through
                m.d.sync += [trap_cause.eq(TrapCause.PC_RANGE), self.trap_pc.eq(i_pc - 1)]
            with m.Else():
                m.d.sync += [trap_cause.eq(Mux(i_d.illegal, TrapCause.ILLEGAL, TrapCause.FP)), self.trap_pc.eq(i_pc)]

        info = Signal(ilay)
        m.d.comb += [
            info.warp.eq(iw), info.pc.eq(i_pc), info.seq.eq(seq[iw]), info.op.eq(i_d.op), info.mod.eq(i_d.mod),
            info.rp.eq(rp[iw]), info.mask.eq(active[iw]), info.dst.eq(sel(i_dst)), info.writes.eq(sel(i_writes)),
            info.mem.eq(i_d.is_load | i_d.is_store), info.store.eq(i_d.is_store),
        ]
        with m.If(i_go & ~i_trap):
            m.d.sync += seq[iw].eq(seq[iw] + 1)

        # special-register and parameter values known at issue
        x = Signal(xlay)
        sreg_value = Signal(32)
        with m.Switch(i_d.mod):
            with m.Case(int(SpecialReg.WARPID)):
                m.d.comb += sreg_value.eq(iw)
            with m.Default():
                m.d.comb += sreg_value.eq(cfg_sreg[i_d.mod])
        param_index = i_d.imm[2:]
        with m.If(i_exec & (i_d.op == Op.LDC) & (param_index >= p.param_words)):
            m.d.sync += [trap.eq(1), trap_cause.eq(TrapCause.PARAM), self.trap_pc.eq(i_pc), self.trap_warp.eq(iw)]
        is_s2r = i_d.op == Op.S2R
        is_tid = is_s2r & (i_d.mod <= int(SpecialReg.TID_Z))
        m.d.comb += [
            x.info.eq(info), x.space.eq(i_d.space), x.tid.eq(is_tid),
            x.laneid.eq(is_s2r & (i_d.mod == int(SpecialReg.LANEID))), x.dim.eq(i_d.mod[:2]),
            x.bimm.eq(i_d.bimm | is_s2r | (i_d.op == Op.LDC)),
            x.imm.eq(Mux(is_s2r, sreg_value, Mux(i_d.op == Op.LDC, cfg_param[param_index[:param_bits]], i_d.imm))),
        ]
        a = coll.alloc.payload
        m.d.comb += [
            coll.alloc.valid.eq(i_exec),
            a.warp.eq(iw), a.tag.eq(0), a.unit.eq(i_d.is_load | i_d.is_store),
            a.mem.valid.eq(i_d.is_load | i_d.is_store), a.mem.store.eq(i_d.is_store), a.mem.color.eq(i_d.mod),
            a.payload.eq(x),
        ]
        for k in range(3):
            has = sel([i_has[w][k] for w in range(W)])
            idx = sel([i_src[w][k] for w in range(W)])
            pending_k = sel([sb.check[w].src_pending[k] for w in range(W)])
            m.d.comb += [a.src[k].valid.eq(has), a.src[k].index.eq(idx), a.src[k].ready.eq(~pending_k)]

        # ---- writeback (w_) and the scoreboard
        w_ = wb.out
        w_info = w_.info
        w_write = wb.valid & w_info.writes
        rfw = rf.write[0]
        m.d.comb += [
            rfw.valid.eq(w_write), rfw.payload.warp.eq(w_info.warp), rfw.payload.index.eq(w_info.dst),
            rfw.payload.mask.eq(w_info.mask), rfw.payload.data.eq(w_.values),
            coll.wakeup[0].valid.eq(rfw.valid & rfw.ready), coll.wakeup[0].warp.eq(w_info.warp),
            coll.wakeup[0].index.eq(w_info.dst),
        ]
        m.d.comb += [
            sb.issue.valid.eq(i_exec & sel(i_writes)), sb.issue.warp.eq(iw), sb.issue.index.eq(sel(i_dst)),
            sb.writeback[0].valid.eq(rfw.valid & rfw.ready), sb.writeback[0].warp.eq(w_info.warp),
            sb.writeback[0].index.eq(w_info.dst),
        ]
        if p.dflow:
            for r in range(n_req):
                m.d.comb += sb.reads[r].eq(coll.pending[r])
        for w in range(W):
            inc = i_exec & (iw == w)
            dec = wb.valid & (wb.source != 2) & (w_info.warp == w)
            m.d.sync += inflight[w].eq(inflight[w] + inc - dec)
        m.d.sync += [self.trace_valid.eq(wb.valid), self.trace.eq(w_)]

        # ---- read stage (r_) in front of the ALU: tid table, lane ids, immediates
        d0 = coll.dispatch[0]
        m.d.comb += d0.ready.eq(~wb.others_waiting)
        r_valid = Signal()
        r_x = Signal(xlay)
        r_ops = Signal(data.ArrayLayout(lane_data(L), 3))
        dx = Signal(xlay)
        m.d.comb += dx.eq(d0.payload.payload)
        m.d.comb += tid_rd.addr.eq(d0.payload.warp * TID_ROWS + dx.dim)
        m.d.sync += [r_valid.eq(d0.valid & d0.ready), r_x.eq(dx), r_ops.eq(d0.payload.operands)]
        ai = alu.i
        m.d.comb += [ai.op.eq(r_x.info.op), ai.mod.eq(r_x.info.mod), ai.mask.eq(r_x.info.mask),
                     ai.tag.eq(r_x.info), ai.a.eq(r_ops[0]), ai.c.eq(r_ops[2]), alu.i_valid.eq(r_valid)]
        for n in range(L):
            m.d.comb += ai.b[n].eq(Mux(r_x.tid, tid_rd.data[n], Mux(r_x.laneid, n, Mux(r_x.bimm, r_x.imm,
                                                                                              r_ops[1][n]))))
        m.d.comb += [wb.alu_valid.eq(alu.o_valid), wb.alu.info.eq(alu.o_tag), wb.alu.values.eq(alu.o_result)]

        # ---- load/store unit
        d1 = coll.dispatch[1]
        lx = Signal(xlay)
        m.d.comb += lx.eq(d1.payload.payload)
        li = lsu.i.payload
        m.d.comb += [
            lsu.i.valid.eq(d1.valid), d1.ready.eq(lsu.i.ready),
            li.warp.eq(d1.payload.warp), li.store.eq(lx.info.store), li.space.eq(lx.space),
            li.color.eq(lx.info.mod), li.offset.eq(lx.imm), li.mask.eq(lx.info.mask),
            li.a.eq(d1.payload.operands[0]), li.b.eq(d1.payload.operands[1]), li.info.eq(lx.info),
        ]
        m.d.comb += [wb.lsu.valid.eq(lsu.o.valid), lsu.o.ready.eq(wb.lsu.ready),
                     wb.lsu.payload.info.eq(lsu.o.payload.info), wb.lsu.payload.values.eq(lsu.o.payload.values),
                     wb.lsu.payload.addrs.eq(lsu.o.payload.addrs), wb.lsu.payload.data.eq(lsu.o.payload.data)]

        # ---- register-file reads: collector requesters, plus one for the control unit
        for r in range(n_req):
            wiring.connect(m, coll.read[r], rf.read[r])
        for b in range(p.register_banks):
            resp = rf.response[b]
            m.d.comb += [coll.response[b].valid.eq(resp.valid & (resp.requester != n_req)),
                         coll.response[b].requester.eq(resp.requester[:max(1, ceil_log2(n_req))]),
                         coll.response[b].data.eq(resp.data)]

        # ---- control unit (c_)
        c_warp = Signal(range(W))
        c_info = Signal(ilay)
        c_op = c_info.op
        c_imm = Signal(32)
        c_target = c_imm[:ceil_log2(p.imem_words)]
        c_src = Signal(range(E))
        c_cond = Signal(L)  # lanes whose condition value is non-zero
        c_next = Signal(range(p.imem_words))
        c_redirect = Signal()  # the warp goes on (not finished)
        cr = rf.read[n_req]
        m.d.comb += [cr.payload.warp.eq(c_warp), cr.payload.index.eq(c_src)]
        ctrl_out = wb.ctrl
        m.d.comb += [ctrl_out.payload.info.eq(c_info)]
        m.d.comb += [fetch.redirect_warp.eq(c_warp), fetch.redirect_pc.eq(c_next)]

        cmd = stack.cmd.payload
        m.d.comb += [cmd.warp.eq(c_warp), cmd.rp.eq(rp[c_warp]), cmd.alive.eq(alive[c_warp])]

        # A stack trap (overflow, sync without ssy, empty stack with lanes alive) stops the core.
        with m.If(stack.trap & ~trap):
            m.d.sync += [trap.eq(1), self.trap_pc.eq(c_info.pc), self.trap_warp.eq(stack.trap_warp),
                         trap_cause.eq(Mux(stack.trap_cause == StackTrap.OVERFLOW, TrapCause.STACK_OVERFLOW,
                                           TrapCause.STACK_EMPTY))]

        # A refused access (misaligned, or past the block's shared memory) stops the core.
        f_info = Signal(ilay)
        m.d.comb += f_info.eq(lsu.fault_info)
        with m.If(lsu.fault & ~trap):
            m.d.sync += [trap.eq(1), self.trap_pc.eq(f_info.pc), self.trap_warp.eq(f_info.warp),
                         trap_cause.eq(Mux(lsu.fault_kind == LsuFault.MISALIGNED, TrapCause.MISALIGNED,
                                           TrapCause.SHARED_BOUNDS))]

        def stop(cause):
            m.d.sync += [trap.eq(1), trap_cause.eq(cause), self.trap_pc.eq(c_info.pc), self.trap_warp.eq(c_warp)]

        with m.FSM(name="ctrl"):
            with m.State("IDLE"):
                with m.If(i_ctrl):
                    m.d.sync += [c_busy.eq(1), c_warp.eq(iw), c_info.eq(info), c_imm.eq(i_d.imm),
                                 c_src.eq(sel([i_src[w][0] for w in range(W)])), c_cond.eq(0)]
                    with m.If(((i_d.op == Op.BRNZ) | (i_d.op == Op.BRZ)) & (i_d.a != 0)):
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
                    resp = rf.response[b]
                    with m.If((bank == b) & resp.valid & (resp.requester == n_req)):
                        m.d.sync += c_cond.eq(Cat(resp.data[n] != 0 for n in range(L)))
                        m.next = "EXEC"
            with m.State("EXEC"):
                mask = c_info.mask
                m.d.sync += c_next.eq(c_info.pc + 1)
                m.d.sync += c_redirect.eq(1)
                m.next = "DONE"
                with m.Switch(c_op):
                    with m.Case(Op.BRA):
                        m.d.sync += c_next.eq(c_target)
                    with m.Case(Op.BRNZ, Op.BRZ):
                        cond = Mux(c_op == Op.BRNZ, c_cond, ~c_cond)
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
                    with m.Case(Op.SYNC):
                        m.d.comb += [stack.cmd.valid.eq(1), cmd.op.eq(StackOp.SYNC)]
                        m.next = "RESUME"
                    with m.Case(Op.EXIT):
                        m.d.comb += [stack.cmd.valid.eq(1), cmd.op.eq(StackOp.EXIT),
                                     cmd.alive.eq(alive[c_warp] & ~mask)]
                        m.d.sync += alive[c_warp].eq(alive[c_warp] & ~mask)
                        m.next = "RESUME"
                    with m.Case(Op.BAR):
                        with m.If(alive[c_warp] & ~mask):
                            stop(TrapCause.BARRIER)
                        m.d.sync += waiting.bit_select(c_warp, 1).eq(1)
                    with m.Case(Op.RPINC):
                        m.d.sync += rp[c_warp].eq(rp[c_warp] + c_imm)
            with m.State("RESUME"):
                m.d.comb += stack.resp.ready.eq(1)
                with m.If(stack.resp.valid):
                    r = stack.resp.payload
                    m.next = "DONE"
                    with m.If(r.status == StackStatus.RESUME):
                        m.d.sync += [c_next.eq(r.pc), active[c_warp].eq(r.mask)]
                        if p.dflow:
                            m.d.sync += rp[c_warp].eq(r.rp)
                    with m.Elif(r.status == StackStatus.DONE):
                        m.d.sync += [c_redirect.eq(0), running.bit_select(c_warp, 1).eq(0), active[c_warp].eq(0)]
            with m.State("DONE"):
                m.d.comb += ctrl_out.valid.eq(1)
                with m.If(ctrl_out.ready):
                    m.d.comb += fetch.redirect_valid.eq(c_redirect)
                    m.d.sync += c_busy.eq(0)
                    m.next = "IDLE"

        # RP advances at issue of a producer (DFLOW); the control unit owns it otherwise.
        if p.dflow:
            with m.If(i_exec & i_d.produces):
                m.d.sync += rp[iw].eq(rp[iw] + 1)

        # ---- barrier release: every warp still running waits
        with m.If(waiting.any() & ((waiting | ~running) == (1 << W) - 1)):
            m.d.sync += waiting.eq(0)

        # ---- launch and completion
        m.d.comb += fetch.enable.eq(running & ~waiting)
        lsu_idle = lsu.idle
        all_drained = Cat(drained).all()
        finished = launched & (running == 0) & ~c_busy & all_drained & lsu_idle
        m.d.comb += [self.running.eq(launched & ~finished & ~trap), self.done.eq(finished), lsu.clear.eq(self.start)]
        with m.If(self.start):
            m.d.sync += [launched.eq(1), trap.eq(0), trap_cause.eq(TrapCause.NONE), waiting.eq(0)]
            for w in range(W):
                m.d.sync += [active[w].eq(cfg_mask[w]), alive[w].eq(cfg_mask[w]), rp[w].eq(0), seq[w].eq(0),
                             running[w].eq(cfg_mask[w] != 0)]
        # Every warp starts at pc 0: the fetch pc resets to 0 and redirects are only for control.
        return m

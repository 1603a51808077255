"""The ALU's execution stage: the read stage (``r_``) in front of the ``IntegerAlu``.

The read stage registers a dispatched instruction and its operands for one cycle while the
thread-index table is read (``tid``), and then chooses operand B per lane: the lane's tid
(``s2r %tid``), the lane number (``s2r %laneid``), the immediate (also the special-register
or parameter value the issue stage put there), or the register value.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .alu import IntegerAlu
from .collector import SOURCES, dispatch_layout
from .configuration import TID_ROWS
from .layouts import lane_data
from .params import CoreParams
from .stages import COLLECTOR_TAG_BITS, completion_layout, info_layout, issue_exec_layout

__all__ = ["AluStage"]


class AluStage(wiring.Component):
    """Read stage and integer ALU.

    Parameters
    ----------
    params: CoreParams.

    Members
    -------
    dispatch: In(stream.Signature(dispatch_layout)), from the collector's ALU stream: taken
        every cycle unless ``stall``.
    stall: In(1), take nothing this cycle (another unit's result waits for writeback: the ALU's
        own results cannot wait, so the core holds its dispatch).
    tid_read_addr: Out, tid_read_data: In(lane_data): the tid-table row of the dispatched
        instruction's warp and dimension (``ConfigRegisters``; data the next cycle).
    complete: Out(stream.Signature(completion_layout, always_ready=True)), the result,
        ``1 + alu_latency`` cycles after dispatch; it cannot wait.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"AluStage needs CoreParams, not {params!r}")
        self.params = params
        self.exec_layout = issue_exec_layout(params)
        super().__init__({
            "dispatch": In(stream.Signature(dispatch_layout(params, payload_width=self.exec_layout.size,
                                                            tag_width=COLLECTOR_TAG_BITS))),
            "stall": In(1), "tid_read_addr": Out(range(params.warps * TID_ROWS)),
            "tid_read_data": In(lane_data(params.warp_size)),
            "complete": Out(stream.Signature(completion_layout(params), always_ready=True)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        L = p.warp_size
        m.submodules.alu = alu = IntegerAlu(p, tag_width=info_layout(p).size)
        d0 = self.dispatch
        r_valid = Signal()
        r_x = Signal(self.exec_layout)
        r_ops = Signal(data.ArrayLayout(lane_data(L), SOURCES))
        dx = Signal(self.exec_layout)
        m.d.comb += [dx.eq(d0.payload.payload), d0.ready.eq(~self.stall)]
        m.d.comb += self.tid_read_addr.eq(d0.payload.warp * TID_ROWS + dx.dim)
        m.d.sync += [r_valid.eq(d0.valid & d0.ready), r_x.eq(dx), r_ops.eq(d0.payload.operands)]
        ai = alu.i
        m.d.comb += [ai.op.eq(r_x.info.op), ai.mod.eq(r_x.info.mod), ai.mask.eq(r_x.info.mask),
                     ai.tag.eq(r_x.info), ai.a.eq(r_ops[0]), ai.c.eq(r_ops[2]), alu.i_valid.eq(r_valid)]
        tid = self.tid_read_data
        for n in range(L):
            m.d.comb += ai.b[n].eq(Mux(r_x.tid, tid[n], Mux(r_x.laneid, n, Mux(r_x.bimm, r_x.imm, r_ops[1][n]))))
        out = self.complete
        m.d.comb += [out.valid.eq(alu.o_valid), out.payload.info.eq(alu.o_tag), out.payload.values.eq(alu.o_result)]
        return m

"""The ALU's execution stage: the ``ReadStage`` (``r_``) in front of the ``IntegerAlu``.

While the read stage holds a dispatched instruction for its one cycle, the thread-index table is
read (``tid``); operand B per lane is then the lane's tid (``s2r %tid``), the lane number
(``s2r %laneid``), or the read stage's B (the immediate, also the special-register or parameter
value the issue stage put there, or the register value). The ALU always takes the instruction
the cycle after dispatch.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .alu import IntegerAlu
from .interfaces import (
    COLLECTOR_TAG_BITS,
    TID_ROWS,
    completion_layout,
    dispatch_layout,
    info_layout,
    issue_exec_layout,
    lane_data,
)
from .params import CoreParams
from .read_stage import ReadStage

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
    stall: In(1), take nothing this cycle (another unit's result waits for writeback, or the
        ALU's writeback cycle is reserved: its results cannot wait, so the core holds its dispatch).
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
        m.submodules.alu = alu = IntegerAlu(p, tag_width=info_layout(p).size)
        m.submodules.read = r = ReadStage(p)
        wiring.connect(m, wiring.flipped(self.dispatch), r.dispatch)
        dx = Signal(self.exec_layout)
        m.d.comb += [dx.eq(self.dispatch.payload.payload), r.accept.eq(~self.stall), r.take.eq(1)]
        m.d.comb += self.tid_read_addr.eq(self.dispatch.payload.warp * TID_ROWS + dx.dim)
        ai = alu.i
        m.d.comb += [ai.op.eq(r.x.info.op), ai.mod.eq(r.x.info.mod), ai.mask.eq(r.x.info.mask),
                     ai.tag.eq(r.x.info), ai.a.eq(r.a), ai.c.eq(r.c), alu.i_valid.eq(r.valid)]
        tid = self.tid_read_data
        for n in range(p.warp_size):
            m.d.comb += ai.b[n].eq(Mux(r.x.tid, tid[n], Mux(r.x.laneid, n, r.b[n])))
        out = self.complete
        m.d.comb += [out.valid.eq(alu.o_valid), out.payload.info.eq(alu.o_tag), out.payload.values.eq(alu.o_result)]
        return m

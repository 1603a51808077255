"""The read stage (``r_``) in front of a dispatched execution unit.

It registers a dispatched instruction with its operand vectors for one cycle and offers the
unit its fields, operand B already replaced by the immediate where the instruction has one
(also the special-register or parameter value the issue stage put there). It holds the
instruction until the unit takes it, so a unit that is busy or waits for a writeback slot
simply leaves the dispatch stream not ready.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .interfaces import COLLECTOR_TAG_BITS, SOURCES, dispatch_layout, issue_exec_layout, lane_data
from .params import CoreParams

__all__ = ["ReadStage"]


class ReadStage(wiring.Component):
    """One registered instruction between the collector and a unit.

    Parameters
    ----------
    params: CoreParams.

    Members
    -------
    dispatch: In(stream.Signature(dispatch_layout)), from the collector's stream of the unit;
        ready when ``accept`` and the register is empty or being taken.
    accept: In(1), a new instruction may be taken this cycle.
    take: In(1), the unit takes the registered instruction this cycle.
    valid: Out(1), an instruction is registered. warp: Out, its warp.
    x: Out(issue_exec_layout), its issue payload (``x.info`` is the side-band word).
    a, b, c: Out(lane_data), its operands; ``b`` is the immediate when ``x.bimm``.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"ReadStage needs CoreParams, not {params!r}")
        self.params = params
        self.exec_layout = issue_exec_layout(params)
        L = params.warp_size
        super().__init__({
            "dispatch": In(stream.Signature(dispatch_layout(params, payload_width=self.exec_layout.size,
                                                            tag_width=COLLECTOR_TAG_BITS))),
            "accept": In(1), "take": In(1), "valid": Out(1), "warp": Out(range(params.warps)),
            "x": Out(self.exec_layout), "a": Out(lane_data(L)), "b": Out(lane_data(L)), "c": Out(lane_data(L)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        d = self.dispatch
        ops = Signal(data.ArrayLayout(lane_data(self.params.warp_size), SOURCES), name="r_ops")
        m.d.comb += d.ready.eq(self.accept & (~self.valid | self.take))
        with m.If(d.valid & d.ready):
            m.d.sync += [self.valid.eq(1), self.x.eq(d.payload.payload), self.warp.eq(d.payload.warp),
                         ops.eq(d.payload.operands)]
        with m.Elif(self.take):
            m.d.sync += self.valid.eq(0)
        m.d.comb += [self.a.eq(ops[0]), self.c.eq(ops[2])]
        for n in range(self.params.warp_size):
            m.d.comb += self.b[n].eq(Mux(self.x.bimm, self.x.imm, ops[1][n]))
        return m

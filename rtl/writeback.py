"""Writeback arbitration: one completed instruction per cycle reaches the register file and the trace.

Three sources complete instructions: the integer ALU (fixed latency, cannot wait), the load/store
unit and the control unit (both streams that can wait). Priority is ALU, then LSU, then control;
the core keeps the ALU from starving the others by not dispatching into the ALU while another
source is waiting (``others_waiting``), so a waiting result gets a slot within ``alu_latency``
cycles.
"""

from amaranth import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject

__all__ = ["WritebackArbiter", "SOURCES"]

#: Completion sources in priority order.
SOURCES = ("alu", "lsu", "ctrl")


class WritebackArbiter(wiring.Component):
    """Fixed-priority choice of one completion per cycle.

    Parameters
    ----------
    layout: payload of a completion (the same for every source; unused fields are zero).

    Members
    -------
    alu_valid: In(1), alu: In(layout), the ALU's result this cycle (always taken).
    lsu: In(stream.Signature(layout)), the load/store unit's completion.
    ctrl: In(stream.Signature(layout)), the control unit's completion.
    valid: Out(1), out: Out(layout), the chosen completion.
    source: Out(range(3)), which source it came from (index in ``SOURCES``).
    others_waiting: Out(1), the LSU or control unit has a completion waiting.
    """

    def __init__(self, layout: data.Layout):
        if not isinstance(layout, data.Layout):
            raise reject(self, f"writeback layout must be an Amaranth data layout, not {layout!r}")
        self.layout = layout
        super().__init__({
            "alu_valid": In(1), "alu": In(layout),
            "lsu": In(stream.Signature(layout)), "ctrl": In(stream.Signature(layout)),
            "valid": Out(1), "out": Out(layout), "source": Out(range(len(SOURCES))), "others_waiting": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.d.comb += self.others_waiting.eq(self.lsu.valid | self.ctrl.valid)
        with m.If(self.alu_valid):
            m.d.comb += [self.valid.eq(1), self.out.eq(self.alu), self.source.eq(0)]
        with m.Elif(self.lsu.valid):
            m.d.comb += [self.valid.eq(1), self.out.eq(self.lsu.payload), self.source.eq(1), self.lsu.ready.eq(1)]
        with m.Elif(self.ctrl.valid):
            m.d.comb += [self.valid.eq(1), self.out.eq(self.ctrl.payload), self.source.eq(2), self.ctrl.ready.eq(1)]
        return m

"""Writeback arbitration: one completed instruction per cycle reaches the register file and the trace.

Every execution unit of ``units.UNITS`` completes instructions on a stream of its own, named after
the unit (``alu``, ``lsu``, ``ctrl``). Priority is the table's order (ALU, then LSU, then control).
A unit that cannot wait (the fixed-latency ALU) has an always-ready stream and must come first;
the core keeps it from starving the others by not dispatching into it while another source is
waiting (``others_waiting``), so a waiting result gets a slot within ``alu_latency`` cycles.
"""

from amaranth import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .units import UNITS, ExecUnit

__all__ = ["WritebackArbiter"]


class WritebackArbiter(wiring.Component):
    """Fixed-priority choice of one completion per cycle.

    Parameters
    ----------
    layout: payload of a completion (the same for every source; unused fields are zero).

    Members
    -------
    alu, lsu, ctrl (one per ``ExecUnit``, lower-case): In(stream.Signature(layout)), the unit's
        completion; always ready for a unit that cannot wait (``UnitRow.waits`` False).
    out: Out(stream.Signature(layout, always_ready=True)), the chosen completion.
    source: Out(ExecUnit), the unit it came from.
    others_waiting: Out(1), a source other than the first has a completion waiting.
    """

    def __init__(self, layout: data.Layout):
        if not isinstance(layout, data.Layout):
            raise reject(self, f"writeback layout must be an Amaranth data layout, not {layout!r}")
        if any(not row.waits for row in UNITS[1:]):
            raise reject(self, "only the first unit of units.UNITS may be unable to wait for writeback")
        self.layout = layout
        super().__init__({
            **{row.unit.name.lower(): In(stream.Signature(layout, always_ready=not row.waits)) for row in UNITS},
            "out": Out(stream.Signature(layout, always_ready=True)), "source": Out(ExecUnit),
            "others_waiting": Out(1),
        })

    def source_port(self, unit: ExecUnit) -> stream.Interface:
        """The completion stream of ``unit``."""
        return getattr(self, unit.name.lower())

    def elaborate(self, platform) -> Module:
        m = Module()
        ports = [(row, self.source_port(row.unit)) for row in UNITS]
        others = 0
        for _row, port in ports[1:]:
            others = others | port.valid
        m.d.comb += self.others_waiting.eq(others)
        for i, (row, port) in enumerate(ports):
            with (m.If if i == 0 else m.Elif)(port.valid):
                m.d.comb += [self.out.valid.eq(1), self.out.payload.eq(port.payload), self.source.eq(row.unit)]
                if row.waits:
                    m.d.comb += port.ready.eq(1)
        return m

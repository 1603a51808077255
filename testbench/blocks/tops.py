"""Bench top levels that wire blocks together the way the core does, for block-level benches."""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from dualflow.rtl.collector import OperandCollector
from dualflow.rtl.params import CoreParams
from dualflow.rtl.regfile import BankedRegisterFile, entry_layout, write_request_layout


class CollectorTop(wiring.Component):
    """``OperandCollector`` reading a ``BankedRegisterFile``; the register file's accepted writes
    are the collector's wakeup broadcasts, as in the core's writeback stage.

    Members
    -------
    alloc : In(stream), the collector's allocate stream.
    dispatch : Out(stream).array(units), the collector's dispatch streams.
    write : In(stream).array(write_ports), the register file's write ports.
    pending : Out(entry_layout).array(3 * collector_units), the collector's pending reads.
    conflict : Out(1), the register file's bank-conflict flag.
    """

    def __init__(self, params: CoreParams, *, payload_width: int, tag_width: int, units: int, write_ports: int):
        self.collector = OperandCollector(params, payload_width=payload_width, tag_width=tag_width, units=units,
                                          wakeup_ports=write_ports)
        self.regfile = BankedRegisterFile(params, write_ports=write_ports)
        super().__init__({
            "alloc": In(stream.Signature(self.collector.alloc_layout)),
            "dispatch": Out(stream.Signature(self.collector.dispatch_layout)).array(units),
            "write": In(stream.Signature(write_request_layout(params))).array(write_ports),
            "pending": Out(entry_layout(params)).array(3 * params.collector_units),
            "conflict": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.collector = col = self.collector
        m.submodules.regfile = rf = self.regfile
        wiring.connect(m, wiring.flipped(self.alloc), col.alloc)
        for u, port in enumerate(self.dispatch):
            wiring.connect(m, col.dispatch[u], wiring.flipped(port))
        for r in range(len(col.read)):
            wiring.connect(m, col.read[r], rf.read[r])
        for b in range(len(rf.response)):
            wiring.connect(m, rf.response[b], col.response[b])
        for j, port in enumerate(self.write):
            wiring.connect(m, wiring.flipped(port), rf.write[j])
            m.d.comb += [
                col.wakeup[j].valid.eq(port.valid & port.ready),
                col.wakeup[j].warp.eq(port.payload.warp),
                col.wakeup[j].index.eq(port.payload.index),
            ]
        for r, out in enumerate(self.pending):
            m.d.comb += out.eq(col.pending[r])
        m.d.comb += self.conflict.eq(rf.conflict)
        return m

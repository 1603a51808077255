"""Bench top levels that wire blocks together the way the core does, for block-level benches."""

from __future__ import annotations

from amaranth import Array, Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from dualflow.rtl.collector import OperandCollector
from dualflow.rtl.interfaces import entry_layout, write_request_layout
from dualflow.rtl.params import CoreParams
from dualflow.rtl.regfile import BankedRegisterFile
from dualflow.rtl.register_pointer import ADVANCE_BITS, RegisterPointers, hand_entry, rp_width


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


class HandPointersTop(wiring.Component):
    """The register pointers of a core with hands (``CoreParams.rings``): one ``RegisterPointers``
    block per hand (every warp's RP of that hand), an issue advancing the hand it names (a
    producer's written hand by 1, ``rpinc k -> h`` by k), a SIMT-stack resume replacing every
    hand's RP of a warp at once (set wins over an advance of that warp); and the entries the issue
    stage's ``hand_entry`` gives for a probed warp, hand and distance.

    Members
    -------
    advance : In(StructLayout{valid, warp, hand, count: 8}).
    set : In(StructLayout{valid, warp, rp: ArrayLayout(rp_width, hands)}).
    rp : Out(rp_width).array(warps, hands), every warp's RP per hand (registered).
    probe : In(StructLayout{warp, hand, distance: 8}).
    source : Out(range(capacity)), entry ``hand_base[hand] + (RP_hand - distance) mod ring_hand``
        of the probed warp; dest : Out(range(capacity)), the entry a producer of that hand writes.
    """

    def __init__(self, params: CoreParams):
        self.params = params
        hands, rpw = params.hands, rp_width(params)
        self.blocks = [RegisterPointers(params) for _ in range(hands)]
        entries = range(sum(params.ring_sizes))
        super().__init__({
            "advance": In(data.StructLayout({"valid": 1, "warp": range(params.warps), "hand": range(hands),
                                             "count": ADVANCE_BITS})),
            "set": In(data.StructLayout({"valid": 1, "warp": range(params.warps),
                                         "rp": data.ArrayLayout(rpw, hands)})),
            "rp": Out(rpw).array(params.warps, hands),
            "probe": In(data.StructLayout({"warp": range(params.warps), "hand": range(hands), "distance": 8})),
            "source": Out(entries),
            "dest": Out(entries),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        for h, block in enumerate(self.blocks):
            m.submodules[f"hand{h}"] = block
            m.d.comb += [
                block.advance.valid.eq(self.advance.valid & (self.advance.hand == h)),
                block.advance.warp.eq(self.advance.warp),
                block.advance.count.eq(self.advance.count),
                block.set.valid.eq(self.set.valid),
                block.set.warp.eq(self.set.warp),
                block.set.rp.eq(self.set.rp[h]),
            ]
            m.d.comb += [self.rp[w][h].eq(block.rp[w]) for w in range(p.warps)]
        probed = [Array(block.rp[w] for w in range(p.warps))[self.probe.warp] for block in self.blocks]
        m.d.comb += [self.source.eq(hand_entry(p, probed, self.probe.hand, self.probe.distance)),
                     self.dest.eq(hand_entry(p, probed, self.probe.hand))]
        return m

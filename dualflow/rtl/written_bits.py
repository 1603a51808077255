"""Written bits (DFLOW): which ring slots hold, for each lane, the value its own path wrote.

The functional model tags every ring slot and lane with the position (logical RP) written and
calls a read of ``|d|`` at RP p illegal unless the lane's slot holds exactly position p - d
(docs/isa.md, "which DFLOW reads are legal"). The core keeps one bit per (warp, slot, lane)
instead of the position, and the check is exact:

A lane's own RP (the warp's RP while the lane is active, the RP it parked with otherwise) never
decreases, and the lane writes only at it, so every tag is below it. A read at distance
d <= Dmax < ring from RP p names the one position of the *window* [p - ring, p - 1] that falls in
its slot; a tag of that slot is either exactly that position (legal) or at least a ring length
older (the lane skipped the position: never written, or an older lap). So the bit need only say
"the lane wrote the window position of this slot", and it is kept so as the lane's window moves:

- a producer issued at RP r with active lanes M: slot r mod ring of lanes M is written (set);
- ``rpinc k`` at RP r: positions r .. r+k-1 enter the active lanes' window unwritten (clear);
- a path of lanes M reaching ``sync`` with RP r, whose SYNC entry holds RP R (the largest of the
  paths there so far): every lane parked there resumes at the final max, so positions it skips
  are cleared as soon as they are known: r < R clears r .. R-1 for M; r > R clears R .. r-1 for
  the lanes already parked at that entry (``SimtStack``'s parked lanes). The positions the
  deferred path of a divergent branch skips need nothing: it resumes at its own RP.

Producers set at issue (issue is in order per warp) and ``rpinc``/``sync`` clear in the control
unit, which holds the warp's fetch until it is done, so the bits are in program order whenever
the warp's next instruction is checked at issue; launch clears every bit (nothing written yet,
which also makes reads of negative positions illegal). Distances above the ring cannot be
encoded by a valid kernel (Dmax < ring); the check does not cover them.

Hands (``CoreParams.rings``): every hand's ring is a window of its own, moved by its own RP, so
the rule above holds hand by hand; the bits are kept per entry of the warp's register-file space
(hand h's slot s at ``hand_base[h] + s``), and the clear port is one clear per hand (``rpinc``
clears on its hand, ``sync`` on every hand whose RPs differ).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ._checks import reject
from .interfaces import SOURCES, clear_layout, hand_clear
from .params import CoreParams

__all__ = ["WrittenBits"]


def _slot_bits(params: CoreParams) -> int:
    """Bits of an entry of a warp's space (a ring slot, with one hand)."""
    return ceil_log2(params.entries_per_warp)


def check_layout(params: CoreParams) -> data.StructLayout:
    """One instruction's sources: its warp, its active lanes and each source's entry (ring slot)."""
    operand = data.StructLayout({"valid": 1, "slot": _slot_bits(params)})
    return data.StructLayout({"warp": range(params.warps), "mask": params.warp_size,
                              "src": data.ArrayLayout(operand, SOURCES)})


def set_layout(params: CoreParams) -> data.StructLayout:
    """A producer issued: its warp, destination entry (ring slot) and active lanes."""
    return data.StructLayout({"valid": 1, "warp": range(params.warps), "slot": _slot_bits(params),
                              "mask": params.warp_size})


class WrittenBits(wiring.Component):
    """One bit per (warp, ring slot, lane): the lane wrote the position its window gives the slot.

    Parameters
    ----------
    params : CoreParams in DFLOW mode (warps, ring, warp_size).

    Members
    -------
    check : In(check_layout), the issuing instruction's sources.
    illegal : Out(1), combinational: an active lane reads a source slot whose bit is clear
        (the bits before this cycle's updates: a source is read before the destination is written).
    set : In(set_layout), a producer issued: set its slot's bit for its active lanes.
    clear : In(clear_layout), clear a range of slots for some lanes (``rpinc``, ``sync``; with
        hands, one range per hand); a set
        of the same warp, slot and lane in the same cycle wins (it cannot happen: the control
        unit clears only for a warp that cannot issue).
    start : In(1), launch: clear every bit.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"WrittenBits needs CoreParams, not {params!r}")
        if not params.mode.ring:
            raise reject(self, f"written bits exist only with a ring register file, not in mode {params.mode.value!r}")
        self.params = params
        super().__init__({"check": In(check_layout(params)), "illegal": Out(1), "set": In(set_layout(params)),
                          "clear": In(clear_layout(params)), "start": In(1)})

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        E, bits = p.entries_per_warp, _slot_bits(p)
        written = [[Signal(p.warp_size, name=f"w{w}_slot{s}") for s in range(E)] for w in range(p.warps)]

        # ---- check: every active lane of every source slot wrote it
        # per lane, bit warp * 2**bits + entry: one multiplexer tree per source and lane (entries
        # past E, with hands whose rings do not add up to a power of two, read as never written)
        pad = [Const(0, 1)] * ((1 << bits) - E)
        lanes = [Cat(*(bit for w in range(p.warps) for bit in [written[w][s][lane] for s in range(E)] + pad))
                 for lane in range(p.warp_size)]
        chk = self.check
        bad = [src.valid & (chk.mask & ~Cat(bits.bit_select(Cat(src.slot, chk.warp), 1) for bits in lanes)).any()
               for src in chk.src]
        m.d.comb += self.illegal.eq(Cat(bad).any())

        # ---- updates: the lanes to clear and to set in each slot, then per warp
        put = self.set
        for hand, (base, n) in enumerate(zip(p.hand_base, p.ring_sizes)):
            clr = hand_clear(p, self.clear, hand)
            hbits = ceil_log2(n)
            for s in range(n):
                e = base + s
                if p.hands == 1:  # count is 0..ring: its top bit alone means every slot
                    offset = (Const(s, bits) - clr.first)[:bits]
                    in_range = clr.valid & (clr.count[bits] | (offset < clr.count[:bits]))
                else:
                    offset = (Const(s, max(hbits, 1)) - clr.first[:hbits])[:hbits]
                    in_range = clr.valid & ((clr.count >= n) | (offset < clr.count))
                clear_lanes = Mux(in_range, clr.mask, 0)
                set_lanes = Mux(put.valid & (put.slot == e), put.mask, 0)
                for w in range(p.warps):
                    bit = written[w][e]
                    keep = Mux(clr.warp == w, ~clear_lanes, -1)
                    new = Mux(put.warp == w, set_lanes, 0)
                    m.d.sync += bit.eq(Mux(self.start, 0, (bit & keep) | new))
        return m

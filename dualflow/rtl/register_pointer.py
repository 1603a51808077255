"""Register pointers (RP) of the warps, DFLOW mode: the ring position each warp's next producer writes.

RP is read and advanced at issue (issue is in order per warp, so every instruction sees the RP
its position in the program gives it): a producer advances it by 1, ``rpinc k`` by k, other
instructions leave it. On reconvergence the SIMT stack's resume sets it (``SimtStack`` output),
and a warp launch sets it to 0. A source at distance d reads ring slot ``(rp - d) mod ring``;
the destination is slot ``rp mod ring`` (``source_slot`` and ``dest_slot`` build these).

RP is kept in ``rp_width(params)`` bits, more than the slot index: comparisons of RP values of
one warp (the SIMT stack's max at ``sync``) are made modulo that width (docs/isa.md), which is
exact while the live RP values of a warp lie within half the range: ``RP_EXTRA_BITS`` = 16 extra
bits allow a divergent loop to run 2**15 ring lengths of producers past a parked path.

Hands (``CoreParams.rings``, ``Variant.HANDS``): every hand has its own RP per warp, all of
``rp_width`` bits (the largest ring's slot index plus the extra bits); hand h's slot s is entry
``hand_base[h] + s`` of the warp's register-file space, so ``dest_slot`` and ``source_slot`` name
entries of that space (with one hand, entry = slot). The ``RegisterPointers`` block models the
original form's one RP per warp; the core keeps its RPs in the control unit.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.common.errors import ConfigError

from .params import CoreParams

__all__ = ["ADVANCE_BITS", "RP_EXTRA_BITS", "RegisterPointers", "advance_layout", "dest_slot", "hand_entry",
           "pick_hand", "rp_width", "set_layout", "source_slot"]

#: RP bits beyond the ring-slot index (derived here; not a CoreParams field).
RP_EXTRA_BITS = 16
#: Width of an RP advance (``rpinc`` counts are 1..255, ``ssy``'s reserved advance 0..255).
ADVANCE_BITS = 8


def advance_layout(params: CoreParams) -> data.StructLayout:
    """An RP advance at issue: warp and count."""
    return data.StructLayout({"valid": 1, "warp": range(params.warps), "count": ADVANCE_BITS})


def set_layout(params: CoreParams) -> data.StructLayout:
    """An RP replacement: warp and new RP."""
    return data.StructLayout({"valid": 1, "warp": range(params.warps), "rp": rp_width(params)})


def rp_width(params: CoreParams) -> int:
    """Bits of a warp's RP (of each hand's): the slot index of the largest ring plus
    ``RP_EXTRA_BITS`` (DFLOW); 1 in BASE (unused)."""
    return ceil_log2(max(params.ring_sizes)) + RP_EXTRA_BITS if params.mode.ring else 1


def _in_hand(params: CoreParams, hand: int, position):
    """Entry of the warp's space holding ring position ``position`` of hand ``hand`` (a constant)."""
    slot = position[:ceil_log2(params.ring_sizes[hand])]
    base = params.hand_base[hand]
    return slot if base == 0 else base + slot


def dest_slot(params: CoreParams, rp, hand: int = 0):
    """Entry (ring slot, with one hand) a producer of hand ``hand`` issued at ``rp`` writes."""
    return _in_hand(params, hand, rp)


def source_slot(params: CoreParams, rp, distance, hand: int = 0):
    """Entry (ring slot, with one hand) of a source of hand ``hand`` at ``distance`` from ``rp``."""
    return _in_hand(params, hand, rp - distance)


def pick_hand(hand, values):
    """``values[hand]`` for a hand chosen by a signal (a constant indexes directly); a hand past
    the list (an illegal selector) gives the last."""
    if isinstance(hand, int):
        return values[hand]
    out = values[-1]
    for h in range(len(values) - 2, -1, -1):
        out = Mux(hand == h, values[h], out)
    return out


def hand_entry(params: CoreParams, rps, hand, distance=None):
    """Entry of the position ``RP_hand - distance`` (``RP_hand`` without ``distance``) for a hand
    chosen by a signal (one subtraction, then each hand's slot bits and base): ``rps`` one RP per
    hand."""
    if isinstance(hand, int):
        rp = rps[hand]
        return dest_slot(params, rp, hand) if distance is None else source_slot(params, rp, distance, hand)
    position = pick_hand(hand, list(rps))
    if distance is not None:
        position = position - distance
    return pick_hand(hand, [_in_hand(params, h, position) for h in range(params.hands)])


class RegisterPointers(wiring.Component):
    """Per-warp RP counters.

    Parameters
    ----------
    params : CoreParams in DFLOW mode (warps, ring).

    Members
    -------
    rp : Out(unsigned(rp_width)).array(warps), every warp's current RP (registered).
    advance : In(StructLayout{valid, warp, count: 8}). The instruction issued this cycle advances
        its warp's RP by count (1 for a producer, k for ``rpinc k``).
    set : In(StructLayout{valid, warp, rp}). Replace a warp's RP (SIMT-stack resume, launch);
        it wins over an advance of the same warp in the same cycle.

    Latency: the new RP shows on ``rp`` the cycle after ``advance`` or ``set``.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise ConfigError(f"register pointers need CoreParams, not {params!r}")
        if not params.mode.ring:
            raise ConfigError(f"register pointers exist only with a ring register file, not in mode "
                              f"{params.mode.value!r}")
        self.params = params
        self.width = rp_width(params)
        super().__init__({
            "rp": Out(self.width).array(params.warps),
            "advance": In(advance_layout(params)),
            "set": In(set_layout(params)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        for w in range(self.params.warps):
            rp = Signal(self.width, name=f"rp{w}")
            m.d.comb += self.rp[w].eq(rp)
            adv = self.advance.valid & (self.advance.warp == w)
            put = self.set.valid & (self.set.warp == w)
            with m.If(put | adv):
                m.d.sync += rp.eq(Mux(put, self.set.rp, rp + self.advance.count))
        return m

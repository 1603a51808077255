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
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.errors import ConfigError

from .params import CoreParams

__all__ = ["ADVANCE_BITS", "RP_EXTRA_BITS", "RegisterPointers", "advance_layout", "dest_slot", "rp_width", "set_layout",
           "source_slot"]

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
    """Bits of a warp's RP: the slot index plus ``RP_EXTRA_BITS`` (DFLOW); 1 in BASE (unused)."""
    return ceil_log2(params.ring) + RP_EXTRA_BITS if params.dflow else 1


def dest_slot(params: CoreParams, rp):
    """Ring slot a producer issued at ``rp`` writes."""
    return rp[:ceil_log2(params.ring)]


def source_slot(params: CoreParams, rp, distance):
    """Ring slot of a source at ``distance`` from ``rp``."""
    return (rp - distance)[:ceil_log2(params.ring)]


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
        if not params.dflow:
            raise ConfigError("register pointers exist only in DFLOW mode, not in mode 'base'")
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

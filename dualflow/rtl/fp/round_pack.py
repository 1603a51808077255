"""Normalize, round and pack an exact FP32 result: the last step of every FP32 operation.

The input is an exact value ``sig * 2**e0`` (plus, for the callers that need it, a sticky bit
folded into ``sig``'s least significant bit below at least two guard bits, see ``fma.py``), or a
special (NaN, infinity). The block

1. finds the leading one of ``sig`` (its position ``k``);
2. chooses the bit that becomes the result's last: the one 23 below the leading one for a normal
   result, the bit of weight ``2**-149`` for a subnormal one (gradual underflow);
3. rounds there, to nearest with ties to even (or, as an injected bug for the benches'
   expect-fail runs, toward zero);
4. packs exponent and significand by adding them, so a carry out of the significand steps the
   exponent (and a subnormal that rounds up to ``2**-126`` becomes that normal number);
5. gives +-inf past the largest finite value, flushes a result that is still subnormal after
   rounding to a zero of its sign, a zero ``sig`` to a signed zero, and a NaN to ``0x7fffffff``.
"""

from __future__ import annotations

import enum

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .._checks import reject
from .fields import CANONICAL_NAN, EXP_BIAS, FRAC_BITS

__all__ = ["E0_BITS", "RoundPack", "Rounding", "check_unit_arguments"]

#: Width of the signed exponent ``e0`` (weight of ``sig``'s bit 0); the FMA's range is about -305..210.
E0_BITS = 12
_INF = 0x7F800000
_MIN_NORMAL = 0x00800000
#: Exponent of the least significant bit of a subnormal float32.
_SUBNORMAL_LSB = -149


class Rounding(enum.Enum):
    """The rounding of ``RoundPack``: the ISA's, or a deliberate bug the benches must catch."""

    NEAREST_EVEN = "nearest_even"  #: the ISA's rounding
    TOWARD_ZERO = "toward_zero"  #: injected bug: truncate (overflow still gives infinity)


class RoundPack(wiring.Component):
    """Combinational normalize, round and pack.

    Parameters
    ----------
    width: bits of ``sig``.
    rounding: ``Rounding.NEAREST_EVEN`` (the ISA); ``Rounding.TOWARD_ZERO`` only to prove that a
        bench catches a rounding bug.

    Members
    -------
    sign: In(1), the result's sign (also of a zero, infinite or flushed result).
    sig: In(width), the exact significand (0: the result is a signed zero).
    e0: In(signed(E0_BITS)), the exponent of ``sig``'s bit 0: the value is ``sig * 2**e0``.
    nan: In(1), the result is NaN (overrides everything).
    inf: In(1), the result is an infinity of sign ``sign``.
    result: Out(32), the float32 bit pattern.
    """

    def __init__(self, width: int, *, rounding: Rounding = Rounding.NEAREST_EVEN):
        if not isinstance(width, int) or not 2 <= width <= 128:
            raise reject(self, f"RoundPack width must be an integer in 2..128, not {width!r}")
        if not isinstance(rounding, Rounding):
            raise reject(self, f"rounding must be a Rounding, not {rounding!r}")
        self.width, self.rounding = width, rounding
        super().__init__({"sign": In(1), "sig": In(width), "e0": In(signed(E0_BITS)), "nan": In(1), "inf": In(1),
                          "result": Out(32)})

    def elaborate(self, platform) -> Module:
        m = Module()
        W = self.width
        sig, e0 = self.sig, self.e0
        # 1. Leading one (later assignments win, so the highest set bit's index stays).
        k = Signal(range(W), name="k")
        for i in range(W):
            with m.If(sig[i]):
                m.d.comb += k.eq(i)
        # 2. Bits to drop below the result's last bit: s = max(k - 23, -149 - e0), never below -23.
        biased = Signal(signed(E0_BITS + 2), name="biased_exp")  # of the leading one
        m.d.comb += biased.eq(k + e0 + EXP_BIAS)
        normal = Signal(name="normal")
        m.d.comb += normal.eq(biased >= 1)
        drop = Signal(signed(E0_BITS + 2), name="drop")
        m.d.comb += drop.eq(Mux(normal, k - FRAC_BITS, _SUBNORMAL_LSB - e0))
        # t = s + 23 >= 0 indexes z = sig << 24: the kept bits are z >> (t + 1), the guard bit is
        # z[t] and the bits below it are the sticky part. Past W + 24 everything is sticky.
        zw = W + FRAC_BITS + 1
        t = Signal(range(zw + 1), name="t")
        m.d.comb += t.eq(Mux(drop + FRAC_BITS > zw, zw, drop + FRAC_BITS))
        z = Cat(Const(0, FRAC_BITS + 1), sig)
        kept = Signal(FRAC_BITS + 1, name="kept")
        guard = Signal(name="guard")
        sticky = Signal(name="sticky")
        ones = Const((1 << zw) - 1, zw)
        m.d.comb += [
            kept.eq(z >> (t + 1)),
            guard.eq((z >> t)[0]),
            sticky.eq((z & (ones >> (zw - t).as_unsigned())) != 0),
        ]
        round_up = Signal(name="round_up")
        if self.rounding is Rounding.NEAREST_EVEN:
            m.d.comb += round_up.eq(guard & (sticky | kept[0]))
        # 3-4. Pack by adding: a normal result's hidden one lands on the exponent field's bit 0.
        packed = Signal(E0_BITS + FRAC_BITS + 2, name="pack_sum")  # not "packed": a SystemVerilog keyword
        m.d.comb += packed.eq(Mux(normal, (biased - 1) << FRAC_BITS, 0) + kept + round_up)
        # 5. Specials, overflow and flush.
        sign = self.sign
        with m.If(self.nan):
            m.d.comb += self.result.eq(CANONICAL_NAN)
        with m.Elif(self.inf | (packed >= _INF)):
            m.d.comb += self.result.eq(Cat(Const(_INF, 31), sign))
        with m.Elif((sig == 0) | (packed < _MIN_NORMAL)):
            m.d.comb += self.result.eq(Cat(Const(0, 31), sign))
        with m.Else():
            m.d.comb += self.result.eq(Cat(packed[:31], sign))
        return m


def check_unit_arguments(component: object, params: object, tag_width: object, rounding: object) -> None:
    """The constructor checks of an FP unit (``CoreParams``, a positive tag width, a ``Rounding``)."""
    from ..params import CoreParams

    if not isinstance(params, CoreParams):
        raise reject(component, f"{type(component).__name__} needs CoreParams, not {params!r}")
    if not isinstance(tag_width, int) or tag_width < 1:
        raise reject(component, f"tag width must be a positive integer, not {tag_width!r}")
    if not isinstance(rounding, Rounding):
        raise reject(component, f"rounding must be a Rounding, not {rounding!r}")

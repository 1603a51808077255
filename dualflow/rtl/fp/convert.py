"""Conversions between float32 and 32-bit integers.

``float_to_int`` is ``f2i``/``f2u``: toward zero, saturating, NaN -> 0 (``f2u``: negative -> 0).
``int_to_float_operands`` is the front half of ``i2f``/``u2f``: sign and magnitude of the integer,
which ``RoundPack`` rounds (to nearest even) like any other exact value (``e0 = 0``).
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, Value

from .fields import EXP_BIAS, FRAC_BITS, unpack

__all__ = ["float_to_int", "int_to_float_operands"]

_INT_MAX, _INT_MIN, _UINT_MAX = 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF


def float_to_int(m: Module, bits: Value, signed_result: Value) -> Signal:
    """The 32-bit integer of float ``bits``: two's complement if ``signed_result`` (``f2i``),
    else unsigned (``f2u``)."""
    u = unpack(bits)  # a flushed denormal truncates to 0 like the denormal itself
    # |value| = sig * 2**(exp - 150): the integer part is (sig << e) >> 23 for e = exp - 127 in 0..31.
    e = Signal(range(32), name="cvt_shift")
    m.d.comb += e.eq(u.exp - EXP_BIAS)
    small = u.exp < EXP_BIAS  # |value| < 1
    big = u.exp >= EXP_BIAS + 32  # |value| >= 2**32, or inf
    magnitude = Signal(32, name="cvt_magnitude")
    m.d.comb += magnitude.eq(Mux(small, 0, (u.sig << e) >> FRAC_BITS))
    out = Signal(32, name="cvt_result")
    with m.If(u.nan):
        m.d.comb += out.eq(0)
    with m.Elif(signed_result):
        with m.If(u.sign):
            m.d.comb += out.eq(Mux(big | (magnitude > _INT_MIN), _INT_MIN, -magnitude))
        with m.Else():
            m.d.comb += out.eq(Mux(big | (magnitude > _INT_MAX), _INT_MAX, magnitude))
    with m.Elif(u.sign):
        m.d.comb += out.eq(0)
    with m.Else():
        m.d.comb += out.eq(Mux(big, _UINT_MAX, magnitude))
    return out


def int_to_float_operands(m: Module, bits: Value, signed_source: Value) -> tuple[Signal, Signal]:
    """(sign, magnitude) of the 32-bit integer ``bits``, two's complement if ``signed_source``
    (``i2f``), else unsigned (``u2f``); the magnitude of -2**31 is 2**31."""
    sign = Signal(name="i2f_sign")
    magnitude = Signal(32, name="i2f_magnitude")
    m.d.comb += [sign.eq(signed_source & bits[31]), magnitude.eq(Mux(sign, -bits, bits))]
    return sign, magnitude

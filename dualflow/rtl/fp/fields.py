"""FP32 operand fields: unpack and classify a bit pattern, flushing a denormal input to zero."""

from __future__ import annotations

from typing import NamedTuple

from amaranth import Cat, Mux, Value

from dualflow.isa.fp32 import CANONICAL_NAN

__all__ = ["CANONICAL_NAN", "EXP_BIAS", "FRAC_BITS", "SIG_BITS", "Unpacked", "unpack"]

#: Stored fraction bits, significand bits with the hidden one, and the exponent bias of binary32.
FRAC_BITS = 23
SIG_BITS = 24
EXP_BIAS = 127


class Unpacked(NamedTuple):
    """One flushed operand: ``sign``; biased exponent field ``exp`` (8 bits); significand ``sig``
    with its hidden one (24 bits, 0 for a zero); ``zero`` (a zero or a flushed denormal),
    ``inf`` and ``nan`` flags. For a finite nonzero value, value = sig * 2**(exp - 150)."""

    sign: Value
    exp: Value
    sig: Value
    zero: Value
    inf: Value
    nan: Value


def unpack(bits: Value) -> Unpacked:
    """The fields of ``bits`` (32 bits) with a denormal input flushed (DAZ: exponent field 0 means
    zero, whatever the fraction)."""
    exp, frac = bits[23:31], bits[:23]
    # Expressions, not named signals: a caller that needs only some fields (fsetp needs no
    # significand) generates no logic for the others.
    return Unpacked(bits[31], exp, Mux(exp == 0, 0, Cat(frac, 1)), exp == 0, (exp == 0xFF) & (frac == 0),
                    (exp == 0xFF) & (frac != 0))

"""FP32 compares and min/max on flushed inputs: ``fsetp`` (all fourteen ``Cmp`` conditions),
``fmin`` and ``fmax``."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value

from dualflow.isa.opcodes import Cmp

from .fields import CANONICAL_NAN, Unpacked

__all__ = ["flushed", "fsetp", "min_max"]


def flushed(u: Unpacked, bits: Value) -> Value:
    """The operand with a denormal replaced by a zero of its sign."""
    return Mux(u.zero, Cat(Const(0, 31), bits[31]), bits)


def _order_key(m: Module, bits: Value, name: str) -> Signal:
    """A key whose unsigned order is the float order of non-NaN ``bits``, -0 below +0: negative
    values bit-inverted, non-negative ones with the sign bit set."""
    key = Signal(32, name=f"{name}_key")
    m.d.comb += key.eq(Mux(bits[31], ~bits, bits | 0x80000000))
    return key


def fsetp(m: Module, cond: Value, ua: Unpacked, a: Value, ub: Unpacked, b: Value) -> Signal:
    """1 if ``a cond b`` (``Cmp`` code ``cond``): +0 == -0 (both zeros compare as +0), ordered
    conditions false and unordered ones true when an input is NaN."""
    ka = _order_key(m, Mux(ua.zero, 0, a), "cmp_a")
    kb = _order_key(m, Mux(ub.zero, 0, b), "cmp_b")
    unordered = ua.nan | ub.nan
    eq, lt, gt = ka == kb, ka < kb, ka > kb
    relation = {Cmp.EQ: eq, Cmp.NE: ~eq, Cmp.LT: lt, Cmp.LE: lt | eq, Cmp.GT: gt, Cmp.GE: gt | eq}
    out = Signal(name="fsetp")
    with m.Switch(cond):
        for c, rel in relation.items():
            with m.Case(int(c)):
                m.d.comb += out.eq(rel & ~unordered)
            with m.Case(int(Cmp[c.name + "U"])):
                m.d.comb += out.eq(rel | unordered)
        with m.Case(int(Cmp.NUM)):
            m.d.comb += out.eq(~unordered)
        with m.Case(int(Cmp.NAN)):
            m.d.comb += out.eq(unordered)
    return out


def min_max(m: Module, want_max: Value, ua: Unpacked, a: Value, ub: Unpacked, b: Value) -> Signal:
    """``fmin`` (``want_max`` 0) or ``fmax`` of the flushed inputs, -0 < +0; one NaN input is
    ignored, two give the canonical NaN."""
    fa, fb = flushed(ua, a), flushed(ub, b)
    ka, kb = _order_key(m, fa, "mm_a"), _order_key(m, fb, "mm_b")
    pick_a = Signal(name="mm_pick_a")
    m.d.comb += pick_a.eq(ub.nan | (~ua.nan & Mux(want_max, ka >= kb, ka <= kb)))
    out = Signal(32, name="min_max")
    m.d.comb += out.eq(Mux(ua.nan & ub.nan, CANONICAL_NAN, Mux(pick_a, fa, fb)))
    return out

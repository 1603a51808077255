"""The exact sum of a fused multiply-add, ``a * b + c``, before rounding.

``fadd``, ``fsub`` and ``fmul`` are this same sum (``a * 1 + b``, ``a * 1 + (-b)``,
``a * b + (-0)``: each exact before its one rounding, so one datapath serves all four opcodes,
as in FMA-only FP units).

The product ``P = ma * mb`` (48 bits) is exact; the addend's significand is placed in 48 bits too
(``mc << 24``). Each has the exponent of its bit 0, ``e0``. The one with the larger ``e0`` (X) keeps
its place; the other (Y) is shifted right by the difference ``d``, into a window with ``GUARD``
bits below X, and every bit shifted out of the window is ORed into a sticky bit. The sum is formed
on ``2 X`` and ``2 Y + sticky``, so the sticky bit is the sum's least significant bit: for an
addition the true value lies just above, for a subtraction the borrow makes it lie just above
too. Bits are lost only when ``d > GUARD``; then ``|X - Y| > 2**(GUARD + 45)`` in window units, at
least 24 + 2 bits above the sticky bit, so rounding the sum equals rounding the exact value.
"""


from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .fields import EXP_BIAS, FRAC_BITS, SIG_BITS, unpack
from .round_pack import E0_BITS

__all__ = ["FMA_SUM_BITS", "FusedSum", "GUARD"]

#: Bits of the window below the larger operand (see the module docstring: 3 is enough).
GUARD = 3
_PROD_BITS = 2 * SIG_BITS
_WINDOW = _PROD_BITS + GUARD
#: Width of the sum handed to rounding: window, sticky bit, carry.
FMA_SUM_BITS = _WINDOW + 2


class FusedSum(wiring.Component):
    """Combinational exact ``a * b + c`` on float32 bit patterns (inputs flushed).

    Members
    -------
    a, b, c: In(32), the operands.
    sign: Out(1), sig: Out(FMA_SUM_BITS), e0: Out(signed(E0_BITS)): the sum is ``sig * 2**e0``
        (its last bit a sticky bit, see the module docstring), with sign ``sign``; an exact zero
        sum has ``sig == 0`` and the IEEE sign of a round-to-nearest sum.
    nan: Out(1), the result is NaN (a NaN operand, inf * 0, inf - inf).
    inf: Out(1), the result is an infinity of sign ``sign``.
    """

    a: In(32)
    b: In(32)
    c: In(32)
    sign: Out(1)
    sig: Out(FMA_SUM_BITS)
    e0: Out(signed(E0_BITS))
    nan: Out(1)
    inf: Out(1)

    def elaborate(self, platform) -> Module:
        m = Module()
        ua, ub, uc = unpack(self.a), unpack(self.b), unpack(self.c)
        p_sign = ua.sign ^ ub.sign
        p_zero = ua.zero | ub.zero
        p_inf = ua.inf | ub.inf
        # Specials first: NaN in, inf * 0, inf + (-inf).
        bad_product = (ua.inf & ub.zero) | (ua.zero & ub.inf)
        m.d.comb += self.nan.eq(ua.nan | ub.nan | uc.nan | bad_product | (p_inf & uc.inf & (p_sign != uc.sign)))
        m.d.comb += self.inf.eq(p_inf | uc.inf)

        p_sig = Signal(_PROD_BITS, name="p_sig")
        c_sig = Signal(_PROD_BITS, name="c_sig")
        # Exponents of bit 0: P = ma*mb * 2**(ea-150 + eb-150); C = (mc << 24) * 2**(ec-150-24).
        p_e0 = Signal(signed(E0_BITS), name="p_e0")
        c_e0 = Signal(signed(E0_BITS), name="c_e0")
        bias0 = EXP_BIAS + FRAC_BITS
        m.d.comb += [p_sig.eq(ua.sig * ub.sig), c_sig.eq(uc.sig << SIG_BITS),
                     p_e0.eq(ua.exp + ub.exp - 2 * bias0), c_e0.eq(uc.exp - bias0 - SIG_BITS)]
        # X: the operand with the larger e0 (a zero operand is always Y).
        swap = Signal(name="swap")
        m.d.comb += swap.eq(p_zero | (~uc.zero & (c_e0 > p_e0)))
        x_sig, y_sig = Mux(swap, c_sig, p_sig), Mux(swap, p_sig, c_sig)
        x_sign, y_sign = Mux(swap, uc.sign, p_sign), Mux(swap, p_sign, uc.sign)
        x_e0 = Mux(swap, c_e0, p_e0)
        diff = Mux(swap, c_e0 - p_e0, p_e0 - c_e0)
        d = Signal(range(_WINDOW + 1), name="d")
        m.d.comb += d.eq(Mux(diff > _WINDOW, _WINDOW, Mux(diff[-1], 0, diff)))  # diff[-1]: diff < 0
        y_full = Cat(Const(0, GUARD), y_sig)  # Y in the window before the shift
        y_win = Signal(_WINDOW, name="y_win")
        y_sticky = Signal(name="y_sticky")
        ones = Const((1 << _WINDOW) - 1, _WINDOW)
        m.d.comb += [y_win.eq(y_full >> d), y_sticky.eq((y_full & (ones >> (_WINDOW - d).as_unsigned())) != 0)]
        x2 = Cat(Const(0, GUARD + 1), x_sig)
        y2 = Cat(y_sticky, y_win)
        total = Signal(signed(FMA_SUM_BITS + 1), name="total")
        m.d.comb += total.eq(Mux(x_sign != y_sign, x2 - y2, x2 + y2))
        negative = total[-1]
        # An exact zero sum: +0 unless both addends are -0 (round to nearest).
        zero_sign = p_sign & uc.sign
        m.d.comb += [
            self.sig.eq(Mux(negative, -total, total)),
            self.e0.eq(x_e0 - GUARD - 1),
        ]
        with m.If(self.nan | self.inf):
            m.d.comb += self.sign.eq(Mux(p_inf, p_sign, uc.sign))
        with m.Elif(total == 0):
            m.d.comb += self.sign.eq(zero_sign)
        with m.Else():
            m.d.comb += self.sign.eq(Mux(negative, y_sign, x_sign))
        return m

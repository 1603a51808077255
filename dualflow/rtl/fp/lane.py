"""One lane of the FP32 unit: every FP-class opcode on one 32-bit operand triple, combinational."""


from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from dualflow.isa.opcodes import SPECS, UnitClass

from .._checks import reject
from ..decode import Op
from .compare import fsetp, min_max
from .convert import float_to_int, int_to_float_operands
from .fields import unpack
from .fma import FMA_SUM_BITS, FusedSum
from .round_pack import Rounding, RoundPack

__all__ = ["FP_OPCODES", "FpLane"]

#: Opcodes of the FP32 unit: the FP unit class of the instruction-set table.
FP_OPCODES = frozenset(op for op, spec in SPECS.items() if spec.unit is UnitClass.FP)
_ONE, _NEG_ZERO, _SIGN = 0x3F800000, 0x80000000, 0x80000000


class FpLane(wiring.Component):
    """The FP32 datapath of one lane.

    ``fadd``, ``fsub``, ``fmul`` and ``ffma`` share one fused multiply-add (``a*1 + b``,
    ``a*1 + (-b)``, ``a*b + (-0)``, ``a*b + c``) and, with ``i2f``/``u2f``, one ``RoundPack``.

    Parameters
    ----------
    rounding: the ``RoundPack``'s rounding (``Rounding.TOWARD_ZERO`` only for expect-fail benches).

    Members
    -------
    op: In(Op), an FP-class opcode (any other gives 0).
    mod: In(4), the ``fsetp`` condition (``Cmp`` code).
    a, b, c: In(32), the operands (``b`` already the immediate when the instruction has one).
    result: Out(32), the lane's result (``fsetp``: 0 or 1).
    """

    op: In(Op)
    mod: In(4)
    a: In(32)
    b: In(32)
    c: In(32)
    result: Out(32)

    def __init__(self, *, rounding: Rounding = Rounding.NEAREST_EVEN):
        if not isinstance(rounding, Rounding):
            raise reject(self, f"rounding must be a Rounding, not {rounding!r}")
        self.rounding = rounding
        super().__init__()

    def elaborate(self, platform) -> Module:
        m = Module()
        op, a, b = self.op, self.a, self.b
        m.submodules.fma = fma = FusedSum()
        m.submodules.round = rnd = RoundPack(FMA_SUM_BITS, rounding=self.rounding)
        with m.Switch(op):
            with m.Case(Op.FADD):
                m.d.comb += [fma.a.eq(a), fma.b.eq(_ONE), fma.c.eq(b)]
            with m.Case(Op.FSUB):
                m.d.comb += [fma.a.eq(a), fma.b.eq(_ONE), fma.c.eq(b ^ _SIGN)]
            with m.Case(Op.FMUL):
                m.d.comb += [fma.a.eq(a), fma.b.eq(b), fma.c.eq(_NEG_ZERO)]
            with m.Default():
                m.d.comb += [fma.a.eq(a), fma.b.eq(b), fma.c.eq(self.c)]
        from_int = Signal(name="from_int")
        m.d.comb += from_int.eq((op == Op.I2F) | (op == Op.U2F))
        i_sign, i_mag = int_to_float_operands(m, a, op == Op.I2F)
        m.d.comb += [
            rnd.sign.eq(Mux(from_int, i_sign, fma.sign)),
            rnd.sig.eq(Mux(from_int, i_mag, fma.sig)),
            rnd.e0.eq(Mux(from_int, 0, fma.e0)),
            rnd.nan.eq(~from_int & fma.nan),
            rnd.inf.eq(~from_int & fma.inf),
        ]
        ua, ub = unpack(a), unpack(b)
        with m.Switch(op):
            with m.Case(Op.FADD, Op.FSUB, Op.FMUL, Op.FFMA, Op.I2F, Op.U2F):
                m.d.comb += self.result.eq(rnd.result)
            with m.Case(Op.F2I, Op.F2U):
                m.d.comb += self.result.eq(float_to_int(m, a, op == Op.F2I))
            with m.Case(Op.FMIN, Op.FMAX):
                m.d.comb += self.result.eq(min_max(m, op == Op.FMAX, ua, a, ub, b))
            with m.Case(Op.FSETP):
                m.d.comb += self.result.eq(fsetp(m, self.mod, ua, a, ub, b))
        return m

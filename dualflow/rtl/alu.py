"""Pipelined integer ALU over all lanes of a warp.

Every integer opcode of the ISA (``SPECS`` rows of unit INT, plus the value moves the core feeds
through it: ``s2r`` and ``ldc`` arrive with their value as operand B and execute as ``mov``).
One warp instruction enters per cycle; its result leaves ``params.alu_latency`` cycles later.
The lane logic is computed in the entry stage and the result travels through latency-1 register
stages (``x1_`` ... ), which is where a synthesis tool retimes the multiplier.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from dualflow.isa.opcodes import SPECS, Cmp, Opcode, UnitClass, VoteMode

from ._checks import reject
from .decode import Op
from .interfaces import alu_input_layout, lane_data
from .params import CoreParams
from .result_stages import result_stages

__all__ = ["IntegerAlu", "ALU_OPCODES"]

#: Opcodes the ALU executes: the INT unit class of the table, and LDC whose value the core supplies.
ALU_OPCODES = frozenset(op for op, spec in SPECS.items() if spec.unit is UnitClass.INT) | {Opcode.LDC}


def _compare(m: Module, cond, a, b, signed: bool):
    sa, sb = (a.as_signed(), b.as_signed()) if signed else (a, b)
    out = Signal(name=f"cmp_{'s' if signed else 'u'}")
    with m.Switch(cond):
        for c, expr in ((Cmp.EQ, sa == sb), (Cmp.NE, sa != sb), (Cmp.LT, sa < sb), (Cmp.LE, sa <= sb),
                        (Cmp.GT, sa > sb), (Cmp.GE, sa >= sb)):
            with m.Case(int(c)):
                m.d.comb += out.eq(expr)
    return out


class IntegerAlu(wiring.Component):
    """The integer ALU.

    Parameters
    ----------
    params: CoreParams (``lanes``, ``alu_latency``).
    tag_width: bits of the tag that travels with each instruction (the collector unit index).

    Members
    -------
    i_valid: In(1), an instruction enters this cycle.
    i: In(alu_input_layout), the instruction.
    o_valid: Out(1), a result leaves this cycle (``alu_latency`` cycles after it entered).
    o_tag: Out(tag_width), its tag.
    o_result: Out(ArrayLayout(32, lanes)), one value per lane (inactive lanes: don't care).
    """

    def __init__(self, params: CoreParams, *, tag_width: int):
        if not isinstance(params, CoreParams):
            raise reject(self, f"IntegerAlu needs CoreParams, not {params!r}")
        if not isinstance(tag_width, int) or tag_width < 1:
            raise reject(self, f"tag width must be a positive integer, not {tag_width!r}")
        self.params, self.tag_width = params, tag_width
        super().__init__({
            "i_valid": In(1), "i": In(alu_input_layout(params, tag_width)),
            "o_valid": Out(1), "o_tag": Out(tag_width), "o_result": Out(lane_data(params.warp_size)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        i = self.i
        lanes = p.warp_size
        result = Signal(lane_data(lanes))
        pred = Cat((i.a[n] != 0) & i.mask[n] for n in range(lanes))
        vote = Signal(32)
        with m.Switch(i.mod):
            with m.Case(int(VoteMode.ANY)):
                m.d.comb += vote.eq(pred.any())
            with m.Case(int(VoteMode.ALL)):
                m.d.comb += vote.eq((pred | ~i.mask) == (1 << lanes) - 1)
            with m.Default():
                m.d.comb += vote.eq(pred)
        for n in range(lanes):
            a, b, c = i.a[n], i.b[n], i.c[n]
            r = result[n]
            big = b >= 32
            sh = b[:5]
            with m.Switch(i.op):
                with m.Case(Op.MOV, Op.S2R, Op.LDC):
                    m.d.comb += r.eq(b)
                with m.Case(Op.SELP):
                    m.d.comb += r.eq(Mux(c != 0, a, b))
                with m.Case(Op.VOTE):
                    m.d.comb += r.eq(vote)
                with m.Case(Op.IADD):
                    m.d.comb += r.eq(a + b)
                with m.Case(Op.ISUB):
                    m.d.comb += r.eq(a - b)
                with m.Case(Op.IMUL):
                    m.d.comb += r.eq(a * b)
                with m.Case(Op.IMAD):
                    m.d.comb += r.eq(a * b + c)
                with m.Case(Op.IAND):
                    m.d.comb += r.eq(a & b)
                with m.Case(Op.IOR):
                    m.d.comb += r.eq(a | b)
                with m.Case(Op.IXOR):
                    m.d.comb += r.eq(a ^ b)
                with m.Case(Op.INOT):
                    m.d.comb += r.eq(~a)
                with m.Case(Op.ISHL):
                    m.d.comb += r.eq(Mux(big, 0, a << sh))
                with m.Case(Op.ISHR):
                    m.d.comb += r.eq(Mux(big, 0, a >> sh))
                with m.Case(Op.ISRA):
                    m.d.comb += r.eq(a.as_signed() >> Mux(big, 31, sh))
                with m.Case(Op.IMIN):
                    m.d.comb += r.eq(Mux(a.as_signed() < b.as_signed(), a, b))
                with m.Case(Op.IMAX):
                    m.d.comb += r.eq(Mux(a.as_signed() > b.as_signed(), a, b))
                with m.Case(Op.UMIN):
                    m.d.comb += r.eq(Mux(a < b, a, b))
                with m.Case(Op.UMAX):
                    m.d.comb += r.eq(Mux(a > b, a, b))
                with m.Case(Op.ISETP):
                    m.d.comb += r.eq(_compare(m, i.mod, a, b, signed=True))
                with m.Case(Op.USETP):
                    m.d.comb += r.eq(_compare(m, i.mod, a, b, signed=False))
                with m.Default():  # nop and anything the core never sends here
                    m.d.comb += r.eq(0)

        # Stage registers: x1 .. x<latency>; the last one is the output.
        valid, tag, value = result_stages(m, self.i_valid, i.tag, result, stages=p.alu_latency,
                                          tag_width=self.tag_width, layout=lane_data(lanes))
        m.d.comb += [self.o_valid.eq(valid), self.o_tag.eq(tag), self.o_result.eq(value)]
        return m


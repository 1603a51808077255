"""The pipelined FP32 unit over all lanes of a warp (``fadd fsub fmul ffma fmin fmax fsetp.*
i2f u2f f2i f2u``, the FP unit class of the instruction-set table).

Timing mirrors ``SmConfig.fp_unit`` through ``CoreParams``: a result leaves ``fp_latency`` cycles
after its instruction entered, and a new instruction may enter every ``fp_interval`` cycles
(``i_ready`` says when). Like the ``IntegerAlu``, the lane datapaths (``FpLane``) are computed in
the entry stage and the results travel through ``fp_latency`` register stages (``x1_`` ...), where
a synthesis tool retimes them. Every lane has its own datapath, so an interval above 1 only
spaces instructions out (it does not fold the lanes onto fewer datapaths).
"""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..interfaces import alu_input_layout, lane_data
from ..params import CoreParams
from ..result_stages import result_stages
from .lane import FpLane
from .round_pack import Rounding, check_unit_arguments

__all__ = ["FpPipeline"]


class FpPipeline(wiring.Component):
    """The FP32 unit.

    Parameters
    ----------
    params: CoreParams (``warp_size``, ``fp_latency``, ``fp_interval``).
    tag_width: bits of the tag that travels with each instruction.
    rounding: ``Rounding.NEAREST_EVEN`` (the ISA); ``Rounding.TOWARD_ZERO`` is an injected bug
        for the benches' expect-fail runs.

    Members
    -------
    i_valid: In(1), an instruction enters this cycle (only while ``i_ready``).
    i: In(alu_input_layout), the instruction: ``op`` (an FP-class opcode), ``mod`` (the ``fsetp``
        condition), ``mask`` (unused: inactive lanes compute too), ``tag``, operands ``a``, ``b``
        (the immediate already substituted), ``c``.
    i_ready: Out(1), an instruction may enter this cycle: none entered in the last
        ``fp_interval - 1`` cycles (always 1 when ``fp_interval`` is 1).
    o_valid: Out(1), a result leaves this cycle, ``fp_latency`` cycles after it entered; it
        cannot wait.
    o_tag: Out(tag_width), its tag.
    o_result: Out(ArrayLayout(32, lanes)), one value per lane (``fsetp``: 0 or 1).
    """

    def __init__(self, params: CoreParams, *, tag_width: int, rounding: Rounding = Rounding.NEAREST_EVEN):
        check_unit_arguments(self, params, tag_width, rounding)
        self.params, self.tag_width, self.rounding = params, tag_width, rounding
        super().__init__({
            "i_valid": In(1), "i": In(alu_input_layout(params, tag_width)), "i_ready": Out(1),
            "o_valid": Out(1), "o_tag": Out(tag_width), "o_result": Out(lane_data(params.warp_size)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        i = self.i
        result = Signal(lane_data(p.warp_size))
        for n in range(p.warp_size):
            lane = m.submodules[f"lane{n}"] = FpLane(rounding=self.rounding)
            m.d.comb += [lane.op.eq(i.op), lane.mod.eq(i.mod), lane.a.eq(i.a[n]), lane.b.eq(i.b[n]),
                         lane.c.eq(i.c[n]), result[n].eq(lane.result)]
        if p.fp_interval == 1:
            m.d.comb += self.i_ready.eq(1)
        else:
            wait = Signal(range(p.fp_interval), name="wait")  # cycles until the next may enter
            m.d.comb += self.i_ready.eq(wait == 0)
            with m.If(self.i_valid & self.i_ready):
                m.d.sync += wait.eq(p.fp_interval - 1)
            with m.Elif(wait != 0):
                m.d.sync += wait.eq(wait - 1)
        valid, tag, value = result_stages(m, self.i_valid & self.i_ready, i.tag, result, stages=p.fp_latency,
                                          tag_width=self.tag_width, layout=lane_data(p.warp_size))
        m.d.comb += [self.o_valid.eq(valid), self.o_tag.eq(tag), self.o_result.eq(value)]
        return m

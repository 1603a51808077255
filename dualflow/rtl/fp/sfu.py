"""The special-function unit: ``fdiv`` and ``fsqrt``, correctly rounded, by digit recurrence.

Each lane runs a restoring radix-2 recurrence: for ``fdiv`` a quotient bit per step (partial
remainder ``r < 2 y``: subtract the divisor when ``r >= y``, then double), for ``fsqrt`` a root bit
per step (bring down two radicand bits, subtract ``4 q + 1`` when it fits). ``STEPS`` steps give at
least 26 significant bits (24, a guard bit, one more for a quotient below one); the final partial
remainder is the sticky bit, and the shared ``RoundPack`` rounds (nearest even, gradual
underflow, then flush) exactly as the FP32 pipeline does.

Timing mirrors ``SmConfig.sfu_unit`` (``UnitConfig`` latency, interval) through ``CoreParams``:

- the unit takes one warp instruction (all lanes at once) per ``sfu_interval`` cycles: one cycle to
  load the operands, then ``sfu_iterations(interval)`` cycles of ``sfu_bits_per_cycle(interval)``
  recurrence steps each (the steps are unrolled so the recurrence fits in ``interval - 1``
  cycles); the recurrence is busy meanwhile and ``i_ready`` is low;
- the finished recurrence moves into a register tail that rounds, packs and delays the result so
  it leaves ``sfu_latency`` cycles after the instruction entered; the recurrence is then free for
  the next instruction, so instructions overlap in the tail as ``interval < latency`` says;
- the result is a stream that may wait (``o_ready``): while it waits, the tail and a finished
  recurrence hold, so results are never lost (only delayed).

``UnitConfig.count`` (SFUs per SM) is ``sfu_count`` such units side by side (``SfuStage``).
GT200's SFU also serves a warp over several cycles on fewer lanes, which this unit does not
model: every lane has its own recurrence.
"""

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .._checks import reject
from ..decode import Op
from ..interfaces import alu_input_layout, lane_data
from ..params import CoreParams
from .fields import EXP_BIAS, FRAC_BITS, unpack
from .round_pack import E0_BITS, Rounding, RoundPack, check_unit_arguments

__all__ = ["STEPS", "SfuLane", "SpecialFunctionUnit", "sfu_bits_per_cycle", "sfu_iterations"]

#: Recurrence steps an instruction needs (quotient or root bits before the sticky bit).
STEPS = 27


def sfu_bits_per_cycle(interval: int) -> int:
    """Recurrence steps per cycle so that loading and iterating take at most ``interval`` cycles."""
    return -(-STEPS // (interval - 1))


def sfu_iterations(interval: int) -> int:
    """Cycles of recurrence per instruction (after the one load cycle)."""
    return -(-STEPS // sfu_bits_per_cycle(interval))


class SfuLane(wiring.Component):
    """The recurrence of one lane and its rounding.

    Parameters
    ----------
    steps: recurrence steps in all (a multiple of ``per_cycle``, at least ``STEPS``).
    per_cycle: steps per ``step`` cycle.
    rounding: the ``RoundPack``'s rounding (``Rounding.TOWARD_ZERO``: the expect-fail bug).

    Members
    -------
    load: In(1), take ``a``, ``b`` and ``sqrt`` this cycle (the recurrence restarts).
    sqrt: In(1), ``fsqrt`` of ``a`` (else ``fdiv`` ``a / b``).
    a, b: In(32), the operands.
    step: In(1), advance the recurrence by ``per_cycle`` steps this cycle.
    result: Out(32), the rounded result (valid once ``steps`` steps were taken since ``load``).
    """

    load: In(1)
    sqrt: In(1)
    a: In(32)
    b: In(32)
    step: In(1)
    result: Out(32)

    def __init__(self, *, steps: int, per_cycle: int, rounding: Rounding = Rounding.NEAREST_EVEN):
        if not isinstance(per_cycle, int) or not 1 <= per_cycle <= STEPS:
            raise reject(self, f"per_cycle must be an integer in 1..{STEPS}, not {per_cycle!r}")
        if not isinstance(steps, int) or steps < STEPS or steps % per_cycle:
            raise reject(self, f"steps must be a multiple of per_cycle and at least {STEPS}, not {steps!r}")
        if not isinstance(rounding, Rounding):
            raise reject(self, f"rounding must be a Rounding, not {rounding!r}")
        self.steps, self.per_cycle, self.rounding = steps, per_cycle, rounding
        super().__init__()

    def elaborate(self, platform) -> Module:
        m = Module()
        S = self.steps
        ua, ub = unpack(self.a), unpack(self.b)
        # Registers: mode, specials, sign, e0, and the recurrence (remainder, quotient/root,
        # divisor, radicand bits still to bring down).
        sqrt = Signal(name="sqrt")
        nan, inf, zero, sign = Signal(name="nan"), Signal(name="inf"), Signal(name="zero"), Signal(name="sign")
        e0 = Signal(signed(E0_BITS), name="e0")
        q = Signal(S, name="q")
        r = Signal(S + 3, name="r")
        y = Signal(24, name="y")
        n = Signal(2 * S, name="radicand")
        with m.If(self.load):
            # Exponent of the radicand's bit 0, made even by doubling the significand if odd.
            ea0 = Signal(signed(E0_BITS), name="sqrt_e")
            m.d.comb += ea0.eq(ua.exp - (EXP_BIAS + FRAC_BITS))
            odd = ea0[0]
            m.d.sync += [sqrt.eq(self.sqrt), q.eq(0)]
            with m.If(self.sqrt):
                m.d.sync += [
                    nan.eq(ua.nan | (ua.sign & ~ua.zero)),
                    inf.eq(ua.inf),
                    zero.eq(ua.zero),
                    sign.eq(ua.sign),
                    # sqrt(M * 2**(2S - 26)) = root with S - 13 fraction bits of sqrt(M).
                    e0.eq(((ea0 - odd) >> 1) - S + 12),
                    n.eq(Mux(odd, ua.sig << 1, ua.sig) << (2 * S - 26)),
                    r.eq(0),
                ]
            with m.Else():
                m.d.sync += [
                    nan.eq(ua.nan | ub.nan | (ua.zero & ub.zero) | (ua.inf & ub.inf)),
                    inf.eq(ua.inf | ub.zero),
                    zero.eq(ua.zero | ub.inf),
                    sign.eq(ua.sign ^ ub.sign),
                    e0.eq(ua.exp - ub.exp - S),
                    r.eq(ua.sig),
                    y.eq(ub.sig),
                ]
        with m.Elif(self.step):
            cr, cq, cn = r, q, n
            for k in range(self.per_cycle):
                dr, dq = Signal(S + 3, name=f"div_r{k}"), Signal(S, name=f"div_q{k}")
                fits = cr >= y
                m.d.comb += [dr.eq(Mux(fits, cr - y, cr) << 1), dq.eq(Cat(fits, cq))]
                sr, sq = Signal(S + 3, name=f"sqrt_r{k}"), Signal(S, name=f"sqrt_q{k}")
                brought = Cat(cn[-2:], cr)
                trial = Cat(Const(1, 2), cq)
                root_fits = brought >= trial
                m.d.comb += [sr.eq(Mux(root_fits, brought - trial, brought)), sq.eq(Cat(root_fits, cq))]
                nr, nq, nn = Signal(S + 3, name=f"r{k}"), Signal(S, name=f"q{k}"), Signal(2 * S, name=f"n{k}")
                m.d.comb += [nr.eq(Mux(sqrt, sr, dr)), nq.eq(Mux(sqrt, sq, dq)), nn.eq(cn << 2)]
                cr, cq, cn = nr, nq, nn
            m.d.sync += [r.eq(cr), q.eq(cq), n.eq(cn)]
        m.submodules.round = rnd = RoundPack(S + 1, rounding=self.rounding)
        m.d.comb += [
            rnd.sign.eq(sign), rnd.e0.eq(e0), rnd.nan.eq(nan), rnd.inf.eq(~nan & inf),
            rnd.sig.eq(Mux(zero | nan | inf, 0, Cat(r != 0, q))),
            self.result.eq(rnd.result),
        ]
        return m


class SpecialFunctionUnit(wiring.Component):
    """The SFU: ``fdiv`` and ``fsqrt`` on all lanes of a warp (see the module docstring for timing).

    Parameters
    ----------
    params: CoreParams (``warp_size``, ``sfu_latency``, ``sfu_interval``).
    tag_width: bits of the tag that travels with each instruction.
    rounding: ``Rounding.NEAREST_EVEN``; ``Rounding.TOWARD_ZERO`` is the benches' injected bug.

    Members
    -------
    i_valid: In(1), an instruction is offered: ``op`` ``FDIV`` or ``FSQRT``, ``tag``, ``a``, ``b``
        (the immediate already substituted; ``mod``, ``mask`` and ``c`` are unused).
    i: In(alu_input_layout).
    i_ready: Out(1), the unit takes the offered instruction this cycle: the recurrence is free
        and ``sfu_interval`` cycles have passed since the last one entered.
    busy: Out(1), an instruction is in the unit (recurrence, tail or waiting output).
    o_valid: Out(1), a result is offered; it stays until taken.
    o_ready: In(1), the result is taken this cycle.
    o_tag: Out(tag_width), o_result: Out(ArrayLayout(32, lanes)): the offered result (from
        ``sfu_latency`` cycles after entry, if the output never waited).
    """

    def __init__(self, params: CoreParams, *, tag_width: int, rounding: Rounding = Rounding.NEAREST_EVEN):
        check_unit_arguments(self, params, tag_width, rounding)
        self.params, self.tag_width, self.rounding = params, tag_width, rounding
        super().__init__({
            "i_valid": In(1), "i": In(alu_input_layout(params, tag_width)), "i_ready": Out(1), "busy": Out(1),
            "o_valid": Out(1), "o_ready": In(1), "o_tag": Out(tag_width),
            "o_result": Out(lane_data(params.warp_size)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        per_cycle = sfu_bits_per_cycle(p.sfu_interval)
        iterations = sfu_iterations(p.sfu_interval)
        tail = p.sfu_latency - iterations - 1  # register stages after the recurrence, >= 1
        i = self.i
        # The recurrence: idle, or `left` cycles of steps to go (0: finished, waiting for the tail).
        running = Signal(name="running")
        left = Signal(range(iterations + 1), name="left")
        tag = Signal(self.tag_width, name="rec_tag")
        finished = running & (left == 0)
        # The tail: `tail` stages of (valid, tag, result) that all move together unless the output waits.
        stages = [(Signal(name=f"t{s}_valid"), Signal(self.tag_width, name=f"t{s}_tag"),
                   Signal(lane_data(p.warp_size), name=f"t{s}_result")) for s in range(1, tail + 1)]
        out_valid, out_tag, out_result = stages[-1]
        advance = Signal(name="advance")
        m.d.comb += advance.eq(~out_valid | self.o_ready)
        free = ~running | (finished & advance)
        since = Signal(range(p.sfu_interval), name="since")  # cycles until another may enter
        m.d.comb += self.i_ready.eq(free & (since == 0))
        accept = self.i_valid & self.i_ready
        with m.If(accept):
            m.d.sync += since.eq(p.sfu_interval - 1)
        with m.Elif(since != 0):
            m.d.sync += since.eq(since - 1)
        with m.If(accept):
            m.d.sync += [running.eq(1), left.eq(iterations), tag.eq(i.tag)]
        with m.Elif(finished & advance):
            m.d.sync += running.eq(0)
        with m.Elif(running & (left != 0)):
            m.d.sync += left.eq(left - 1)
        lane_results = Signal(lane_data(p.warp_size), name="rec_result")
        for n in range(p.warp_size):
            lane = m.submodules[f"lane{n}"] = SfuLane(steps=iterations * per_cycle, per_cycle=per_cycle,
                                                      rounding=self.rounding)
            m.d.comb += [lane.load.eq(accept), lane.sqrt.eq(i.op == Op.FSQRT), lane.a.eq(i.a[n]), lane.b.eq(i.b[n]),
                         lane.step.eq(running & (left != 0)), lane_results[n].eq(lane.result)]
        with m.If(advance):
            prev = (finished, tag, lane_results)
            for v, t, r in stages:
                m.d.sync += [v.eq(prev[0]), t.eq(prev[1]), r.eq(prev[2])]
                prev = (v, t, r)
        m.d.comb += [self.o_valid.eq(out_valid), self.o_tag.eq(out_tag), self.o_result.eq(out_result),
                     self.busy.eq(running | Cat(v for v, _, _ in stages).any())]
        return m

"""The FP units' execution stages: a ``ReadStage`` in front of ``fp_count`` FP32 pipelines
(``FpPipeline``) and of ``sfu_count`` special-function units, and their completion streams
towards writeback.

Several units of a class (``UnitConfig.count``) share the class's one dispatch stream and read
stage: an instruction enters the lowest-numbered unit that can take it, so one instruction per
cycle enters a class, and more units help when the interval is above one cycle (an SFU busy with
its recurrence, an FP pipeline over fewer cycles than lanes) as the timing model's pipes do.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .._checks import reject
from ..interfaces import COLLECTOR_TAG_BITS, completion_layout, dispatch_layout, info_layout, issue_exec_layout
from ..params import CoreParams
from ..read_stage import ReadStage
from .pipeline import FpPipeline
from .sfu import SpecialFunctionUnit

__all__ = ["FpuStage", "SfuStage"]


def _feed(m: Module, r: ReadStage, i) -> None:
    """The read stage's instruction onto a unit's input payload (the side-band word is the tag)."""
    info = r.x.info
    m.d.comb += [i.op.eq(info.op), i.mod.eq(info.mod), i.mask.eq(info.mask), i.tag.eq(info),
                 i.a.eq(r.a), i.b.eq(r.b), i.c.eq(r.c)]


class _UnitStage(wiring.Component):
    def __init__(self, params: CoreParams, members: dict):
        if not isinstance(params, CoreParams):
            raise reject(self, f"{type(self).__name__} needs CoreParams, not {params!r}")
        self.params = params
        layout = dispatch_layout(params, payload_width=issue_exec_layout(params).size, tag_width=COLLECTOR_TAG_BITS)
        super().__init__({"dispatch": In(stream.Signature(layout)), **members})

    def _read_stage(self, m: Module) -> ReadStage:
        m.submodules.read = r = ReadStage(self.params)
        wiring.connect(m, wiring.flipped(self.dispatch), r.dispatch)
        return r

    def _complete(self, m: Module, valid, tag, result) -> None:
        out = self.complete
        m.d.comb += [out.valid.eq(valid), out.payload.info.eq(tag), out.payload.values.eq(result)]


def _first(m: Module, ready: list, name: str) -> list:
    """One-hot choice of the lowest-numbered unit whose ``ready`` is set."""
    if len(ready) == 1:
        return ready
    chosen, before = [], 0
    for k, r in enumerate(ready):
        c = Signal(name=f"{name}{k}_chosen")
        m.d.comb += c.eq(r & ~before)
        chosen.append(c)
        before = before | r
    return chosen


class FpuStage(_UnitStage):
    """Read stage and ``fp_count`` FP32 pipelines (submodules ``fpu0``, ``fpu1``, ...).

    Members
    -------
    dispatch: In(stream.Signature(dispatch_layout)), from the collector's FPU stream.
    stall: In(1), let nothing enter a pipeline (a result that can wait is waiting).
    slot_request: Out(1), an instruction would enter a pipeline this cycle.
    slot_free: In(1), its writeback cycle (``fp_latency`` later) is free: it enters.
    complete: Out(stream.Signature(completion_layout, always_ready=True)), the result,
        ``fp_latency`` cycles after it entered; it cannot wait.
    """

    def __init__(self, params: CoreParams):
        super().__init__(params, {"stall": In(1), "slot_request": Out(1), "slot_free": In(1),
                                  "complete": Out(stream.Signature(completion_layout(params), always_ready=True))})

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        pipes = [FpPipeline(p, tag_width=info_layout(p).size) for _ in range(p.fp_count)]
        r = self._read_stage(m)
        chosen = _first(m, [pipe.i_ready for pipe in pipes], "fpu")
        request = r.valid & Cat(pipe.i_ready for pipe in pipes).any() & ~self.stall
        enter = request & self.slot_free
        for k, pipe in enumerate(pipes):
            m.submodules[f"fpu{k}"] = pipe
            _feed(m, r, pipe.i)
            m.d.comb += pipe.i_valid.eq(enter & chosen[k])
        m.d.comb += [self.slot_request.eq(request), r.accept.eq(1), r.take.eq(enter)]
        # One entry per cycle into pipelines of one latency: at most one result leaves per cycle.
        valid, tag, result = pipes[0].o_valid, pipes[0].o_tag, pipes[0].o_result
        for pipe in pipes[1:]:
            valid, tag, result = (valid | pipe.o_valid, Mux(pipe.o_valid, pipe.o_tag, tag),
                                  Mux(pipe.o_valid, pipe.o_result, result))
        self._complete(m, valid, tag, result)
        return m


class SfuStage(_UnitStage):
    """Read stage and ``sfu_count`` special-function units (submodules ``sfu0``, ``sfu1``, ...).

    Results that wait are taken round-robin (after the unit last taken), so no unit's result
    waits behind another's for ever.

    Members
    -------
    dispatch: In(stream.Signature(dispatch_layout)), from the collector's SFU stream.
    complete: Out(stream.Signature(completion_layout)), the result; it may wait (``ready``).
    """

    def __init__(self, params: CoreParams):
        super().__init__(params, {"complete": Out(stream.Signature(completion_layout(params)))})

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        units = [SpecialFunctionUnit(p, tag_width=info_layout(p).size) for _ in range(p.sfu_count)]
        r = self._read_stage(m)
        chosen = _first(m, [u.i_ready for u in units], "sfu")
        for k, u in enumerate(units):
            m.submodules[f"sfu{k}"] = u
            _feed(m, r, u.i)
            m.d.comb += u.i_valid.eq(r.valid & chosen[k])
        m.d.comb += [r.accept.eq(1), r.take.eq(r.valid & Cat(u.i_ready for u in units).any())]
        grant = self._round_robin(m, [u.o_valid for u in units])
        valid, tag, result = grant[0], units[0].o_tag, units[0].o_result.as_value()
        for k, u in enumerate(units):
            m.d.comb += u.o_ready.eq(grant[k] & self.complete.ready)
            if k:
                valid, tag, result = valid | grant[k], Mux(grant[k], u.o_tag, tag), Mux(grant[k], u.o_result, result)
        self._complete(m, valid, tag, result)
        return m

    def _round_robin(self, m: Module, valid: list) -> list:
        """Grants among ``valid``, starting after the unit whose result was taken last."""
        n = len(valid)
        if n == 1:
            return valid
        grant = [Signal(name=f"sfu{k}_granted") for k in range(n)]
        last = Signal(range(n), name="last_taken")
        with m.Switch(last):
            for first in range(n):
                with m.Case(first):
                    before = 0
                    for k in ((first + 1 + j) % n for j in range(n)):
                        m.d.comb += grant[k].eq(valid[k] & ~before)
                        before = before | valid[k]
        for k in range(n):
            with m.If(grant[k] & self.complete.ready):
                m.d.sync += last.eq(k)
        return grant

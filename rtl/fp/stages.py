"""The FP units' execution stages: a ``ReadStage`` in front of the ``FpPipeline`` and of the
``SpecialFunctionUnit``, and their completion streams towards writeback."""

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .._checks import reject
from ..collector import dispatch_layout
from ..params import CoreParams
from ..read_stage import ReadStage
from ..stages import COLLECTOR_TAG_BITS, completion_layout, info_layout, issue_exec_layout
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


class FpuStage(_UnitStage):
    """Read stage and FP32 pipeline.

    Members
    -------
    dispatch: In(stream.Signature(dispatch_layout)), from the collector's FPU stream.
    stall: In(1), let nothing enter the pipeline (a result that can wait is waiting).
    slot_request: Out(1), an instruction would enter the pipeline this cycle.
    slot_free: In(1), its writeback cycle (``fp_latency`` later) is free: it enters.
    complete: Out(stream.Signature(completion_layout, always_ready=True)), the result,
        ``fp_latency`` cycles after it entered; it cannot wait.
    """

    def __init__(self, params: CoreParams):
        super().__init__(params, {"stall": In(1), "slot_request": Out(1), "slot_free": In(1),
                                  "complete": Out(stream.Signature(completion_layout(params), always_ready=True))})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.fpu = fpu = FpPipeline(self.params, tag_width=info_layout(self.params).size)
        r = self._read_stage(m)
        _feed(m, r, fpu.i)
        request = r.valid & fpu.i_ready & ~self.stall
        m.d.comb += [self.slot_request.eq(request), fpu.i_valid.eq(request & self.slot_free), r.accept.eq(1),
                     r.take.eq(request & self.slot_free)]
        self._complete(m, fpu.o_valid, fpu.o_tag, fpu.o_result)
        return m


class SfuStage(_UnitStage):
    """Read stage and special-function unit.

    Members
    -------
    dispatch: In(stream.Signature(dispatch_layout)), from the collector's SFU stream.
    complete: Out(stream.Signature(completion_layout)), the result; it may wait (``ready``).
    """

    def __init__(self, params: CoreParams):
        super().__init__(params, {"complete": Out(stream.Signature(completion_layout(params)))})

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.sfu = sfu = SpecialFunctionUnit(self.params, tag_width=info_layout(self.params).size)
        r = self._read_stage(m)
        _feed(m, r, sfu.i)
        m.d.comb += [sfu.i_valid.eq(r.valid), r.accept.eq(1), r.take.eq(r.valid & sfu.i_ready),
                     sfu.o_ready.eq(self.complete.ready)]
        self._complete(m, sfu.o_valid, sfu.o_tag, sfu.o_result)
        return m

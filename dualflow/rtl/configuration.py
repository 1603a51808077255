"""The core's configuration registers: what the host writes before ``start``.

Through the configuration port (``cfg_en``, ``cfg_addr``, ``cfg_data``): the special registers at
their ``SpecialReg`` number, the block's shared-memory size at ``CFG_SHARED_LIMIT``, the kernel
parameters from ``CFG_PARAM_BASE`` and each warp's initial active mask from
``cfg_mask_base(params)``. Through the tid port: the thread-index table, ``TID_ROWS`` rows per
warp (tid.x, tid.y, tid.z of each lane, one unused row). From the instruction-memory load port:
the program's extent (the highest word loaded since reset), past which a warp has run off the
end of the program.
"""

from __future__ import annotations

from amaranth import Array, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.isa.encoding import UNIFORM_FLAG, UNIFORM_MAX
from dualflow.isa.opcodes import SpecialReg, uniform_operand

from ._checks import reject
from .interfaces import TID_ROWS, lane_data
from .params import CoreParams

__all__ = ["CFG_PARAM_BASE", "CFG_SHARED_LIMIT", "ConfigRegisters", "cfg_mask_base"]

#: Configuration address of the first kernel parameter word (``params.param_words`` of them).
CFG_PARAM_BASE = 16
#: Configuration address of the block's shared-memory size in bytes (``.shared``; accesses at or
#: past it trap). The one address below ``CFG_PARAM_BASE`` that is not a special register.
CFG_SHARED_LIMIT = 15
#: Uniform-operand read ports: one per source field.
UNIFORM_PORTS = len(UNIFORM_FLAG)


def cfg_mask_base(params: CoreParams) -> int:
    """Configuration address of warp 0's initial mask: after the parameters, on a multiple of 16
    (32 for up to 16 parameter words)."""
    return CFG_PARAM_BASE + 16 * -(-params.param_words // 16)


class ConfigRegisters(wiring.Component):
    """Special registers, parameters, initial warp masks, the shared-memory limit, the tid table
    and the program's extent.

    Parameters
    ----------
    params: CoreParams (``warps``, ``warp_size``, ``param_words``, ``shared_bytes``, ``imem_words``).

    Members
    -------
    cfg_en, cfg_addr, cfg_data: In, write one configuration word.
    tid_en, tid_addr, tid_data: In, write row ``warp * TID_ROWS + dim`` of the tid table.
    load_en, load_addr: In, an instruction word is written (the program's extent follows).
    sreg_index: In(4), sreg_value: Out(32), a special register (combinational).
    param_index: In(ceil_log2(param_words)), param_value: Out(32), a parameter word (combinational).
    uniform_index: In(UNIFORM_MAX + 1).array(3), uniform_value: Out(32).array(3), with
        ``uniform_operands`` only: what a uniform operand field names (``uniform_operand``): a
        parameter word (0 past ``param_words``) or a ``UNIFORM_SREGS`` special register
        (combinational; one port per source field).
    tid_read_addr: In, tid_read_data: Out(lane_data), a tid-table row, the cycle after its address.
    init_mask: Out(warp_size).array(warps), each warp's initial active mask (0: does not run).
    shared_limit: Out(range(shared_bytes + 1)), the block's shared-memory size (reset: all of it).
    code_loaded: Out(1), some word was loaded; code_last: Out(range(imem_words)), the highest one.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"ConfigRegisters needs CoreParams, not {params!r}")
        self.params = params
        self.param_bits = max(1, ceil_log2(params.param_words))
        pcs = range(params.imem_words)
        tid_rows = range(params.warps * TID_ROWS)
        super().__init__({
            "cfg_en": In(1), "cfg_addr": In(8), "cfg_data": In(32),
            "tid_en": In(1), "tid_addr": In(tid_rows), "tid_data": In(lane_data(params.warp_size)),
            "load_en": In(1), "load_addr": In(pcs),
            "sreg_index": In(4), "sreg_value": Out(32),
            "param_index": In(self.param_bits), "param_value": Out(32),
            "tid_read_addr": In(tid_rows), "tid_read_data": Out(lane_data(params.warp_size)),
            "init_mask": Out(params.warp_size).array(params.warps),
            "shared_limit": Out(range(params.shared_bytes + 1), init=params.shared_bytes),
            "code_loaded": Out(1), "code_last": Out(pcs),
            **({"uniform_index": In(range(UNIFORM_MAX + 1)).array(UNIFORM_PORTS),
                "uniform_value": Out(32).array(UNIFORM_PORTS)} if params.uniform_operands else {}),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        sreg = Array(Signal(32, name=f"sreg{i}") for i in range(16))
        param = Array(Signal(32, name=f"param{i}") for i in range(p.param_words))
        mask = [Signal(p.warp_size, name=f"w{w}_init_mask") for w in range(p.warps)]
        with m.If(self.cfg_en):
            with m.If(self.cfg_addr == CFG_SHARED_LIMIT):
                m.d.sync += self.shared_limit.eq(Mux(self.cfg_data > p.shared_bytes, p.shared_bytes, self.cfg_data))
            with m.Elif(self.cfg_addr < CFG_PARAM_BASE):
                m.d.sync += sreg[self.cfg_addr[:4]].eq(self.cfg_data)
            with m.Elif(self.cfg_addr < CFG_PARAM_BASE + p.param_words):
                m.d.sync += param[(self.cfg_addr - CFG_PARAM_BASE)[:self.param_bits]].eq(self.cfg_data)
            for w in range(p.warps):
                with m.If(self.cfg_addr == cfg_mask_base(p) + w):
                    m.d.sync += mask[w].eq(self.cfg_data)
        m.d.comb += [self.sreg_value.eq(sreg[self.sreg_index]), self.param_value.eq(param[self.param_index])]
        m.d.comb += [self.init_mask[w].eq(mask[w]) for w in range(p.warps)]
        if p.uniform_operands:  # the registers s2r and ldc read, one mux per source field
            for index, value in zip(self.uniform_index, self.uniform_value):
                with m.Switch(index):
                    for field in range(UNIFORM_MAX + 1):
                        named = uniform_operand(field)
                        if isinstance(named, SpecialReg):
                            with m.Case(field):
                                m.d.comb += value.eq(sreg[int(named)])
                        elif named < p.param_words:
                            with m.Case(field):
                                m.d.comb += value.eq(param[named])

        m.submodules.tid = tid = memory.Memory(shape=lane_data(p.warp_size), depth=p.warps * TID_ROWS, init=[])
        wr = tid.write_port()
        rd = tid.read_port(transparent_for=())
        m.d.comb += [wr.en.eq(self.tid_en), wr.addr.eq(self.tid_addr), wr.data.eq(self.tid_data),
                     rd.addr.eq(self.tid_read_addr), self.tid_read_data.eq(rd.data)]

        # A warp whose pc goes past the highest word loaded ran off the end (pc + 1 would
        # otherwise wrap to 0): the issue stage traps PC_RANGE.
        with m.If(self.load_en & (~self.code_loaded | (self.load_addr > self.code_last))):
            m.d.sync += [self.code_last.eq(self.load_addr), self.code_loaded.eq(1)]
        return m

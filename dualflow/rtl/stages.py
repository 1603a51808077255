"""Payloads between the core's stages, each named for the pair of stages it connects (minerva's
``_fd_layout``, ``_dx_layout``), and the retirement-trace port.

- ``info_layout``: the side-band word every instruction carries from issue to writeback.
- ``issue_exec_layout`` (issue -> execute, through a collector unit): what the ALU or LSU needs
  besides the operands.
- ``issue_control_layout`` (issue -> control unit).
- ``completion_layout`` (execute -> writeback): a completed instruction; as registered after
  writeback it is the retirement-trace record (``TraceSignature``).
"""

from __future__ import annotations

from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

from .decode import Op, Space
from .layouts import lane_data
from .params import CoreParams
from .register_pointer import ADVANCE_BITS, rp_width

__all__ = ["COLLECTOR_TAG_BITS", "SEQ_BITS", "TraceSignature", "completion_layout", "info_layout",
           "issue_control_layout", "issue_exec_layout", "trace_layout"]

#: Width of the per-warp sequence number of the trace (program order within a warp, modulo 2**16).
SEQ_BITS = 16
#: Width of the collector's opaque tag in the core: none, the issued instruction travels whole in
#: the payload (``issue_exec_layout``).
COLLECTOR_TAG_BITS = 0


def info_layout(params: CoreParams) -> data.StructLayout:
    """Side-band word of an instruction in flight: what writeback, traps and the trace need
    (``seq`` and ``rp`` only the trace: absent without ``params.trace``). ``dst`` is the entry of
    the warp's register-file space written; with hands (``params.hands`` > 1), ``hand`` is the
    written-hand selector (the hand a producer writes, ``rpinc`` or a reserving ``ssy`` advances;
    0 otherwise), ``rp`` that hand's RP, and ``dst`` is in that hand's ring."""
    traced = params.trace
    return data.StructLayout({
        "warp": range(params.warps), "pc": range(params.imem_words), **({"seq": SEQ_BITS} if traced else {}),
        "op": Op, "mod": 4, **({"rp": rp_width(params)} if traced else {}), "mask": params.warp_size,
        "dst": range(params.entries_per_warp), "writes": 1, "mem": 1, "store": 1,
        **({"hand": range(params.hands)} if params.hands > 1 else {}),
    })


def issue_exec_layout(params: CoreParams) -> data.StructLayout:
    """Collector payload (issue -> execute): immediates and operand selects of the read stage."""
    return data.StructLayout({"imm": 32, "bimm": 1, "tid": 1, "laneid": 1, "dim": 2, "space": Space,
                              "info": info_layout(params)})


def issue_control_layout(params: CoreParams) -> data.StructLayout:
    """A control instruction (issue -> control unit): its warp, side-band word, immediate (the
    target, or the RP increment), its first source (a branch condition) if it has one and, DFLOW,
    ``ssy``'s reserved advance (``reserved-ssy``; 0 for the original ``ssy``); with
    ``uniform_operands``, ``uniform_cond``: the condition is a uniform operand, non-zero (in every lane)."""
    return data.StructLayout({"warp": range(params.warps), "info": info_layout(params), "imm": 32,
                              "src": range(params.entries_per_warp), "has_src": 1,
                              **({"advance": ADVANCE_BITS} if params.mode.ring else {}),
                              **({"uniform_cond": 1} if params.uniform_operands else {})})


def completion_layout(params: CoreParams) -> data.StructLayout:
    """A completed instruction (execute -> writeback): its side-band word, per-lane result
    values, and, for the trace (``params.trace``), the per-lane addresses and store data of a
    memory access (unused fields zero)."""
    L = params.warp_size
    return data.StructLayout({"info": info_layout(params), "values": lane_data(L),
                              **({"addrs": lane_data(L), "data": lane_data(L)} if params.trace else {})})


def trace_layout(params: CoreParams) -> data.StructLayout:
    """One retired warp instruction (the fields of ``models.trace.TraceRecord``)."""
    return completion_layout(params)


class TraceSignature(wiring.Signature):
    """The retirement-trace port (in the spirit of RISC-V's RVFI): one record per retired warp
    instruction, at most one per cycle, in retirement order (out of program order within a warp
    in DFLOW; ``info.seq`` restores it).

    Members
    -------
    valid: Out(1), a record this cycle.
    payload: Out(trace_layout(params)): ``info`` (warp, pc, seq, op, mod, rp, active mask, dst,
        writes, mem, store; with hands, the written hand: ``rp`` is its RP and ``dst`` the entry
        ``hand_base[hand] + slot``), ``values`` (per-lane result), ``addrs`` and ``data`` (per-lane
        address and store data of a memory access).

    A stream without ``ready``: the trace cannot hold the core back.
    """

    def __init__(self, params: CoreParams):
        super().__init__({"valid": Out(1), "payload": Out(trace_layout(params))})

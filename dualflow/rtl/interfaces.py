"""The contracts between the core's blocks: every payload layout, port signature and port code
that one block drives and another reads, so that no block imports another to talk to it (Vortex
keeps its interfaces apart the same way, in ``hw/rtl/interfaces/``). A layout only one block uses
stays in that block. What these are built from is vocabulary, not a block: ``params``, the
decoded instruction's enums (``decode.Op``, ``decode.Space``, generated from the ISA) and the
RP widths (``register_pointer``).
"""

from __future__ import annotations

from amaranth import Cat, Mux, unsigned
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from .decode import Op, Space
from .params import CoreParams
from .register_pointer import ADVANCE_BITS, rp_width

__all__ = [
    "COLLECTOR_TAG_BITS", "COLOR_BITS", "SEQ_BITS", "SOURCES", "TID_ROWS", "LsuFault", "TraceSignature", "TrapCause",
    "alloc_layout", "alu_input_layout", "check_signature", "clear_layout", "clear_valid",
    "completion_layout", "dispatch_layout", "entry_layout", "event_layout", "hand_clear", "hand_clear_layout",
    "info_layout", "issue_control_layout", "issue_exec_layout", "lane_data", "mem_layout", "mem_request_layout",
    "mem_response_layout", "peek_signature", "read_request_layout", "read_response_signature", "request_clear",
    "source_layout", "trace_layout", "trap_request_layout", "trap_signature", "waiting_layout",
    "write_request_layout",
]


# Warp-wide values.

def lane_data(lanes: int) -> data.ArrayLayout:
    """One warp-wide value: a 32-bit word per lane (a register-file entry, an operand, a result,
    the addresses or data of a memory access)."""
    return data.ArrayLayout(unsigned(32), lanes)


# Payloads between the stages, each named for the pair of stages it connects (minerva's
# ``_fd_layout``, ``_dx_layout``), and the retirement-trace port. ``info_layout`` is the side-band
# word every instruction carries from issue to writeback; ``completion_layout``, registered after
# writeback, is the trace record.

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


# Register file (regfile.py): requests of (warp, index), answered on the port of the entry's bank.

def entry_layout(params: CoreParams) -> data.StructLayout:
    """A (warp, index) entry reference with a valid bit: writeback broadcasts, pending reads."""
    return data.StructLayout({"valid": 1, "warp": range(params.warps), "index": range(params.entries_per_warp)})


def read_request_layout(params: CoreParams) -> data.StructLayout:
    """Payload of a read request: which warp's entry."""
    return data.StructLayout({"warp": range(params.warps), "index": range(params.entries_per_warp)})


def write_request_layout(params: CoreParams) -> data.StructLayout:
    """Payload of a write: entry, per-lane write enable (bit i = lane i) and per-lane data."""
    return data.StructLayout({
        "warp": range(params.warps),
        "index": range(params.entries_per_warp),
        "mask": params.warp_size,
        "data": lane_data(params.warp_size),
    })


def read_response_signature(params: CoreParams, requesters: int) -> wiring.Signature:
    """One bank's read data, valid the cycle after its grant (no backpressure: capture it then)."""
    return wiring.Signature({
        "valid": Out(1),
        "requester": Out(range(requesters)),
        "data": Out(lane_data(params.warp_size)),
    })


# Operand collector (collector.py): allocate (issue), wait (issue), dispatch (execution units).

#: Source operands per instruction.
SOURCES = 3
#: Width of a memory color (docs/isa.md: 4-bit ``mod`` field).
COLOR_BITS = 4


def source_layout(params: CoreParams) -> data.StructLayout:
    """One source operand at allocation: needed, entry index, value already in the register file;
    with ``uniform_operands``, ``value``: the operand of every lane when it is not needed (a
    uniform operand; 0 for an absent one)."""
    return data.StructLayout({"valid": 1, "index": range(params.entries_per_warp), "ready": 1,
                              **({"value": 32} if params.uniform_operands else {})})


def mem_layout() -> data.StructLayout:
    """Memory-ordering fields: is a memory instruction, is a store, its color."""
    return data.StructLayout({"valid": 1, "store": 1, "color": COLOR_BITS})


def alloc_layout(params: CoreParams, *, payload_width: int, tag_width: int, units: int) -> data.StructLayout:
    """Payload of the allocate stream (one issued instruction)."""
    return data.StructLayout({
        "warp": range(params.warps),
        "tag": tag_width,
        "unit": range(units),
        "mem": mem_layout(),
        "src": data.ArrayLayout(source_layout(params), SOURCES),
        "payload": payload_width,
    })


def waiting_layout(params: CoreParams) -> data.StructLayout:
    """A CU that holds an instruction with an operand not ready (``valid``), and its warp."""
    return data.StructLayout({"valid": 1, "warp": range(params.warps)})


def dispatch_layout(params: CoreParams, *, payload_width: int, tag_width: int) -> data.StructLayout:
    """Payload of a dispatch stream: the instruction and its operand values (0 for absent ones)."""
    return data.StructLayout({
        "warp": range(params.warps),
        "tag": tag_width,
        "payload": payload_width,
        "operands": data.ArrayLayout(lane_data(params.warp_size), SOURCES),
    })


# Scoreboard (scoreboard.py), seen from the issue stage.

def check_signature(params: CoreParams) -> wiring.Signature:
    """A warp's candidate instruction, seen from the issue stage: its sources and destination
    (entries: registers in BASE, ring slots in DFLOW) out, the verdict in."""
    operand = data.StructLayout({"valid": 1, "index": range(params.entries_per_warp)})
    return wiring.Signature({
        "src": Out(data.ArrayLayout(operand, SOURCES)),
        "dst": Out(operand),
        "blocked": In(1),
        "src_pending": In(SOURCES),
    })


def peek_signature(params: CoreParams) -> wiring.Signature:
    """A warp's next instruction (behind its candidate), seen from the issue stage: its sources
    out, whether each is still in flight in."""
    operand = data.StructLayout({"valid": 1, "index": range(params.entries_per_warp)})
    return wiring.Signature({"src": Out(data.ArrayLayout(operand, SOURCES)), "src_pending": In(SOURCES)})


# Written bits (written_bits.py): the clear port the control unit and the SIMT stack drive.

def hand_clear_layout(params: CoreParams) -> data.StructLayout:
    """Clear ``count`` slots (a ring at most: every slot) of warp ``warp`` from slot ``first`` on,
    for the lanes in ``mask``: of the ring, or of one hand's (``first`` a slot of the largest ring)."""
    largest = max(params.ring_sizes)
    return data.StructLayout({"valid": 1, "warp": range(params.warps), "first": ceil_log2(largest),
                              "count": range(largest + 1), "mask": params.warp_size})


def clear_layout(params: CoreParams) -> data.Layout:
    """The clear port: ``hand_clear_layout``, one per hand (an array) with hands."""
    one = hand_clear_layout(params)
    return one if params.hands == 1 else data.ArrayLayout(one, params.hands)


def hand_clear(params: CoreParams, port, hand: int):
    """Hand ``hand``'s clear of a ``clear_layout`` view (the port itself with one hand)."""
    return port if params.hands == 1 else port[hand]


def clear_valid(params: CoreParams, port):
    """Some clear of a ``clear_layout`` view is valid."""
    return port.valid if params.hands == 1 else Cat(port[h].valid for h in range(params.hands)).any()


def request_clear(params: CoreParams, port, *, warp, first_rp, length, mask, hand: int = 0) -> list:
    """Assignments of ``port`` (a ``hand_clear_layout`` view: ``hand_clear`` of the clear port)
    clearing positions ``first_rp`` .. ``first_rp + length - 1`` of hand ``hand``'s ring (RP
    values; a length of a ring or more clears every slot)."""
    n = params.ring_sizes[hand]
    return [port.valid.eq(1), port.warp.eq(warp), port.first.eq(first_rp[:ceil_log2(n)]),
            port.count.eq(Mux(length >= n, n, length)), port.mask.eq(mask)]


# Execution units: the ALU's input (the FP units take the same), the load/store unit's memory port
# and fault codes (lsu.py).

def alu_input_layout(params: CoreParams, tag_width: int) -> data.StructLayout:
    """Payload entering the ALU: opcode, ``mod``, active mask, three operand vectors and a tag."""
    return data.StructLayout({
        "op": Op, "mod": 4, "mask": params.warp_size, "tag": tag_width,
        "a": lane_data(params.warp_size), "b": lane_data(params.warp_size), "c": lane_data(params.warp_size),
    })


class LsuFault(enum.Enum, shape=1):
    """Why the unit refused an access (``fault_kind``)."""

    MISALIGNED = 0  #: an active lane's address is not a multiple of 4
    SHARED_BOUNDS = 1  #: a shared access at or past ``shared_limit``


def mem_request_layout(params: CoreParams, tag_width: int) -> data.StructLayout:
    return data.StructLayout({
        "tag": tag_width, "warp": range(params.warps), "store": 1, "local": 1, "mask": params.warp_size,
        "addr": lane_data(params.warp_size), "data": lane_data(params.warp_size),
    })


def mem_response_layout(params: CoreParams, tag_width: int) -> data.StructLayout:
    return data.StructLayout({"tag": tag_width, "data": lane_data(params.warp_size)})


# Traps (trap.py): what every source of a trap sends the ``TrapCollector``.

class TrapCause(enum.Enum, shape=4):
    """Why the core stopped (``trap_cause``); 0 while running."""

    NONE = 0
    ILLEGAL = 1  #: not a valid instruction word for this core
    STACK_OVERFLOW = 2  #: more than ``params.stack_depth`` nested divergence entries
    STACK_EMPTY = 3  #: sync without ssy, or the stack ran dry with lanes alive
    BARRIER = 4  #: bar reached by a diverged warp (a deadlock in the functional model)
    PARAM = 5  #: ldc beyond ``params.param_words``
    MISALIGNED = 6  #: a load or store address not a multiple of 4 (any space)
    SHARED_BOUNDS = 7  #: a shared access at or past the block's ``.shared`` size
    PC_RANGE = 8  #: a warp ran past the last instruction loaded (a path without ``exit``)
    DFLOW_READ = 9  #: a DFLOW source slot an active lane did not write at that position (written_bits.py)


def trap_request_layout(params: CoreParams) -> data.StructLayout:
    """What a trap names: its cause, the instruction's pc and its warp."""
    return data.StructLayout({"cause": TrapCause, "pc": range(params.imem_words), "warp": range(params.warps)})


def trap_signature(params: CoreParams) -> wiring.Signature:
    """A trap request, seen from its source: ``valid`` in the cycle the error is found (a stream
    without backpressure: the collector takes or ignores it at once)."""
    return wiring.Signature({"valid": Out(1), "payload": Out(trap_request_layout(params))})


# Configuration registers (configuration.py) and the event port (events.py).

#: Rows of the tid table per warp: tid.x, tid.y, tid.z and one unused row.
TID_ROWS = 4  # dualflow/testbench/core/protocol.py says the same to the bench


def event_layout(params: CoreParams) -> data.StructLayout:
    """The flags of one cycle (``EventMonitor``'s port; events.py says what each is)."""
    return data.StructLayout({"bank_conflict": 1, "cu_full": 1, "ring_guard": 1, "barrier_wait": 1,
                              "stack_depth": range(params.stack_depth + 1)})

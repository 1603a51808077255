"""Faults in co-simulation: does the RTL stop for the same reason the golden model faulted?

The functional model raises a ``KernelFault`` naming the kernel, pc, block, warp and lane. The
core stops with a trap (``TrapCause``, pc, warp, block): misaligned accesses, shared memory past
the block's size, stack and barrier errors, a path running past the last instruction, an illegal
DFLOW read (a source slot an active lane did not write at that position). The
bench's global-memory model reports the accesses it cannot perform (outside every allocation,
outside a thread's local memory). Both sides are reduced to a *kind* and compared by kind and,
for traps, pc. The warp and block may differ: the two machines interleave warps and blocks
differently, so when several threads fault, each may meet a different one first.

Both of the model's barrier deadlocks are BARRIER: a diverged warp at ``bar`` (the core traps
it), and warps left waiting at a barrier that can never complete, which the model checks after
every step but cannot reach: it releases a barrier as soon as every warp of the block that has
not exited waits (at every ``bar`` and every warp's final ``exit``), and the core the same way.
The kind the core does not detect, the instruction budget, never agrees: the case fails and
says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.common.errors import KernelFault
from dualflow.rtl.interfaces import TrapCause

__all__ = ["FaultCheck", "golden_kind", "check_fault"]

#: Golden-model message prefixes -> kind: the core's ``TrapCause`` name, or ``"bounds <space>"``
#: for the accesses the memory side refuses.
_GOLDEN_PREFIXES = (
    ("sync with no pending ssy", TrapCause.STACK_EMPTY.name),
    ("divergence stack empty", TrapCause.STACK_EMPTY.name),
    ("barrier deadlock: ", TrapCause.BARRIER.name),
    ("illegal DFLOW read", TrapCause.DFLOW_READ.name),
    ("execution ran past the end of the kernel", TrapCause.PC_RANGE.name),
    ("misaligned ", TrapCause.MISALIGNED.name),
    ("out-of-bounds shared access", TrapCause.SHARED_BOUNDS.name),
    ("out-of-bounds global access", "bounds global"),
    ("out-of-bounds local access", "bounds local"),
)
#: Memory-model messages (dualflow/testbench/global_memory.py) -> kind.
_MEMORY_PREFIXES = (
    ("global access not inside any allocation", "bounds global"),
    ("local access outside", "bounds local"),
)


def golden_kind(fault: KernelFault) -> str:
    """The kind of a functional-model fault (its message when the core has no counterpart)."""
    message = fault.message
    for prefix, kind in _GOLDEN_PREFIXES:
        if message.startswith(prefix):
            return kind
    return message


def _memory_kind(error: str) -> str | None:
    text = error.split(": ", 1)[1] if error.startswith("block ") else error
    for prefix, kind in _MEMORY_PREFIXES:
        if text.startswith(prefix):
            return kind
    return None


@dataclass(frozen=True)
class FaultCheck:
    """The verdict on one case whose golden run faulted."""

    agree: bool
    message: str


def check_fault(golden: KernelFault, trap: dict | None, error: str | None, timeout: bool) -> FaultCheck:
    """Compare the golden fault with how the RTL run stopped (``trap``: the bench's trap record,
    ``error``: the memory model's message, ``timeout``: it never stopped)."""
    want = golden_kind(golden)
    block = "?" if golden.block is None else "({},{},{})".format(*golden.block)
    head = f"golden model faulted at pc {golden.pc} block {block} warp {golden.warp}: {golden.message}"
    if trap is not None:
        got = TrapCause(trap["cause"]).name
        where = f"pc {trap['pc']} block {trap.get('block', 0)} warp {trap['warp']}"
        if got == want and trap["pc"] == golden.pc:
            return FaultCheck(True, f"{head}; the RTL trapped alike ({got} at {where})")
        return FaultCheck(False, f"{head}; the RTL trapped with {got} at {where} instead")
    if error is not None:
        got = _memory_kind(error)
        if got == want:
            return FaultCheck(True, f"{head}; the memory model saw it alike ({error})")
        return FaultCheck(False, f"{head}; the memory model reported instead: {error}")
    outcome = "ran out of cycles" if timeout else "finished normally"
    return FaultCheck(False, f"{head}; the RTL {outcome}: it does not detect this kind of fault ({want})")

"""Why and where the core stopped: the trap causes and the one place that records a trap.

Four parts of the core detect errors; each raises a trap request (cause, pc, warp) on a port of
the ``TrapCollector``. The first trap since ``start`` is recorded and held (the core stops: no
warp issues while it is set); requests of the same cycle are taken in this fixed priority, highest
first (``TRAP_SOURCES``):

1. ``control``: the control unit found a ``bar`` in a diverged warp (BARRIER).
2. ``lsu``: the load/store unit refused an access (MISALIGNED, SHARED_BOUNDS).
3. ``stack``: the SIMT stack overflowed or ran dry (STACK_OVERFLOW, STACK_EMPTY).
4. ``issue``: the issue stage met an instruction it cannot run (PC_RANGE, ILLEGAL, PARAM,
   DFLOW_READ).

Only the issue stage names the trapping warp's pc at issue; the others name the instruction
that was being executed.
"""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .params import CoreParams

__all__ = ["TRAP_SOURCES", "TrapCause", "TrapCollector", "trap_request_layout", "trap_signature"]

#: Trap sources, highest priority first.
TRAP_SOURCES = ("control", "lsu", "stack", "issue")


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


class TrapCollector(wiring.Component):
    """Records the first trap since ``clear``, choosing among simultaneous requests by priority.

    Parameters
    ----------
    params: CoreParams (``imem_words``, ``warps``).

    Members
    -------
    control, lsu, stack, issue: In(trap_signature(params)), one per ``TRAP_SOURCES`` entry.
    clear: In(1), forget the trap (``start``); takes precedence over a request of that cycle.
    trap: Out(1), a trap is recorded (registered).
    cause: Out(TrapCause), pc, warp: Out, the recorded trap (cause NONE while running).
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"TrapCollector needs CoreParams, not {params!r}")
        self.params = params
        super().__init__({
            **{name: In(trap_signature(params)) for name in TRAP_SOURCES},
            "clear": In(1), "trap": Out(1), "cause": Out(TrapCause),
            "pc": Out(range(params.imem_words)), "warp": Out(range(params.warps)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        with m.If(self.clear):
            m.d.sync += [self.trap.eq(0), self.cause.eq(TrapCause.NONE)]
        with m.Elif(~self.trap):
            for i, name in enumerate(TRAP_SOURCES):
                request = getattr(self, name)
                with (m.If if i == 0 else m.Elif)(request.valid):
                    r = request.payload
                    m.d.sync += [self.trap.eq(1), self.cause.eq(r.cause), self.pc.eq(r.pc), self.warp.eq(r.warp)]
        return m

"""Why and where the core stopped: the one place that records a trap (its causes, ``TrapCause``, are
in interfaces.py: every source of a trap sends one).

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
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .interfaces import TrapCause, trap_signature
from .params import CoreParams

__all__ = ["TRAP_SOURCES", "TrapCollector"]

#: Trap sources, highest priority first.
TRAP_SOURCES = ("control", "lsu", "stack", "issue")


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

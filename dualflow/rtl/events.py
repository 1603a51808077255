"""Micro-architectural events of the core, one flag word per cycle, for functional coverage.

The co-simulation bench samples the core's ``events`` port every cycle (a port, so Icarus and
Verilator see it alike; internal names do not survive flattening and Verilator hides them) and
the campaign's coverage model (dualflow/testbench/coverage.py) bins what it saw. Each field is a state
of one cycle, registered (it describes the cycle before the one it is seen in):

- ``bank_conflict``: a register-file read request lost its bank.
- ``cu_full``: every collector unit holds an instruction (issue of a non-control instruction waits).
- ``ring_guard``: DFLOW: a warp's next instruction may issue but for its destination slot (the
  slot still has a write in flight, or a pending read of its previous value: the ring guard).
- ``barrier_wait``: a warp waits at ``bar`` while another warp of the block still runs.
- ``stack_depth``: the deepest SIMT stack of any warp (entries).
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .interfaces import event_layout
from .params import CoreParams

__all__ = ["EventMonitor"]


class EventMonitor(wiring.Component):
    """Gathers the cycle's events from the core's blocks (observation only: drives nothing else).

    Members
    -------
    bank_conflict: In(1), the register file refused a read. cu_free: In(1), a collector unit is free.
    head_valid: In(warps), a warp has an instruction at the head of its buffer.
    head_blocked: In(warps), DFLOW only: the scoreboard blocks that instruction (its destination slot).
    running, waiting: In(warps), the control unit's warp state. stack_depth: In.array(warps).
    events: Out(event_layout(params)), registered.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"EventMonitor needs CoreParams, not {params!r}")
        self.params = params
        W = params.warps
        super().__init__({
            "bank_conflict": In(1), "cu_free": In(1), "head_valid": In(W),
            **({"head_blocked": In(W)} if params.mode.ring else {}),
            "running": In(W), "waiting": In(W), "stack_depth": In(range(params.stack_depth + 1)).array(W),
            "events": Out(event_layout(params)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p, e = self.params, self.events
        live = self.running & ~self.waiting
        # The deepest stack by a tree of named maxima: a chain of Muxes that each name the running
        # maximum twice is an expression tree of 2**warps nodes to elaborate.
        level = list(self.stack_depth)
        while len(level) > 1:
            pairs = []
            for k in range(0, len(level) - 1, 2):
                x, y = level[k], level[k + 1]
                top = Signal(range(p.stack_depth + 1), name=f"deepest_{len(level)}_{k // 2}")
                m.d.comb += top.eq(Mux(y > x, y, x))
                pairs.append(top)
            level = pairs + level[len(level) - len(level) % 2:]
        deepest = level[0]
        m.d.sync += [
            e.bank_conflict.eq(self.bank_conflict),
            e.cu_full.eq(~self.cu_free),
            e.ring_guard.eq((live & self.head_valid & self.head_blocked).any() if p.mode.ring else 0),
            e.barrier_wait.eq(self.waiting.any() & live.any()),
            e.stack_depth.eq(deepest),
        ]
        return m

"""Writeback arbitration: one completed instruction per cycle reaches the register file and the trace.

Every execution unit of ``units.UNITS`` completes instructions on a stream of its own, named after
the unit (``alu``, ``fpu``, ``sfu``, ``lsu``, ``ctrl``). Priority is the table's order (units.py
says why). The units that cannot wait (the fixed-latency ALU and FPU) have always-ready streams
and come first; ``WritebackSlots`` reserves their completion cycles when an instruction enters
one, so no two of them complete together, and the core lets none enter while a result that can
wait is waiting (``others_waiting``), so that result gets a slot within the fixed latencies.
"""

from amaranth import Cat, Const, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .units import FIXED_LATENCY, UNITS, ExecUnit

__all__ = ["WritebackArbiter", "WritebackSlots"]


class WritebackArbiter(wiring.Component):
    """Fixed-priority choice of one completion per cycle.

    Parameters
    ----------
    layout: payload of a completion (the same for every source; unused fields are zero).

    Members
    -------
    alu, fpu, sfu, lsu, ctrl (one per ``ExecUnit``, lower-case): In(stream.Signature(layout)), the
        unit's completion; always ready for a unit that cannot wait (``UnitRow.waits`` False).
    out: Out(stream.Signature(layout, always_ready=True)), the chosen completion.
    source: Out(ExecUnit), the unit it came from.
    others_waiting: Out(1), a unit that can wait has a completion waiting.
    """

    def __init__(self, layout: data.Layout):
        if not isinstance(layout, data.Layout):
            raise reject(self, f"writeback layout must be an Amaranth data layout, not {layout!r}")
        if UNITS[:len(FIXED_LATENCY)] != tuple(r for r in UNITS if not r.waits):
            raise reject(self, "the units of units.UNITS that cannot wait for writeback must come first")
        self.layout = layout
        super().__init__({
            **{row.unit.name.lower(): In(stream.Signature(layout, always_ready=not row.waits)) for row in UNITS},
            "out": Out(stream.Signature(layout, always_ready=True)), "source": Out(ExecUnit),
            "others_waiting": Out(1),
        })

    def source_port(self, unit: ExecUnit) -> stream.Interface:
        """The completion stream of ``unit``."""
        return getattr(self, unit.name.lower())

    def elaborate(self, platform) -> Module:
        m = Module()
        ports = [(row, self.source_port(row.unit)) for row in UNITS]
        m.d.comb += self.others_waiting.eq(Cat(port.valid for row, port in ports if row.waits).any())
        for i, (row, port) in enumerate(ports):
            with (m.If if i == 0 else m.Elif)(port.valid):
                m.d.comb += [self.out.valid.eq(1), self.out.payload.eq(port.payload), self.source.eq(row.unit)]
                if row.waits:
                    m.d.comb += port.ready.eq(1)
        return m


class WritebackSlots(wiring.Component):
    """Reservations of the writeback cycles of the fixed-latency units.

    An instruction may enter fixed-latency unit ``u`` only if no other is due to complete
    ``distance[u]`` cycles later; entering reserves that cycle. Same-cycle requests for the same
    cycle go to the unit first in ``FIXED_LATENCY``.

    Parameters
    ----------
    distance: cycles from entry (the cycle the core grants) to completion, per unit of
        ``FIXED_LATENCY``.

    Members
    -------
    request: In(1).array(len(FIXED_LATENCY)), unit ``FIXED_LATENCY[i]`` has an instruction to enter.
    hold: In(1), no unit enters this cycle (the core holds them while a result that can wait is
        waiting); nothing is reserved.
    free: Out(1).array(...), its completion cycle is not reserved: with ``request`` the entry
        happens and reserves that cycle.
    """

    def __init__(self, distance: dict[ExecUnit, int]):
        if set(distance) != set(FIXED_LATENCY) or any(not isinstance(d, int) or d < 1 for d in distance.values()):
            raise reject(self, f"writeback slots need a distance >= 1 for each of {FIXED_LATENCY}, not {distance!r}")
        self.distance = [distance[u] for u in FIXED_LATENCY]
        n = len(FIXED_LATENCY)
        super().__init__({"request": In(1).array(n), "hold": In(1), "free": Out(1).array(n)})

    def elaborate(self, platform) -> Module:
        m = Module()
        # due[j]: a fixed-latency unit completes lo + j cycles from now, for lo (the shortest
        # distance) up to the longest minus one: nearer completions cannot meet a new entry's, and
        # only a same-cycle entry can be due as far ahead as the longest distance.
        lo, hi = min(self.distance), max(self.distance)
        due = Signal(hi - lo, name="due")
        reserve = 0
        grant = [self.request[i] & self.free[i] & ~self.hold for i in range(len(self.distance))]
        for i, d in enumerate(self.distance):
            taken = due[d - lo] if d < hi else Const(0, 1)
            for j in range(i):  # a higher-priority entry this cycle for the same cycle
                if self.distance[j] == d:
                    taken = taken | grant[j]
            m.d.comb += self.free[i].eq(~taken)
            if d - 1 >= lo:  # next cycle it is d - 1 away
                reserve = reserve | (grant[i] << (d - 1 - lo))
        m.d.sync += due.eq((due >> 1) | reserve)
        return m

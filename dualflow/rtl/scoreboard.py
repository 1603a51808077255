"""Scoreboard: pending writes per (warp, entry) and the issue checks of both modes.

BASE (registers): an instruction may issue only when none of its sources (true dependency,
RAW) and not its destination (false dependency, WAW) has a write in flight. Its operands are then
ready when it enters a collector unit.

DFLOW (ring slots): issue is never blocked by a source: the collector unit waits for it (the
``src_pending`` outputs give the CU operands' ready bits at allocation). What remains is the
ring guard: a producer that will write slot s of warp w may not issue while

- slot s still has a write in flight (its previous producer has not written back), or
- a collector unit still has to read slot s of warp w (the ``reads`` inputs; distances are at
  most Dmax < ring, so such a read is of the value the new producer would overwrite).

Pending bits are set by ``issue`` and cleared by ``writeback``. A writeback in the current cycle
already counts as done for the checks (its value is in the register file for any read granted
from the next cycle on); an issue and a writeback of one entry in the same cycle leave it pending.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from dualflow.common.errors import ConfigError
from dualflow.machine.mode import ScoreboardKind

from .interfaces import check_signature, entry_layout, peek_signature
from .params import CoreParams

__all__ = ["Scoreboard"]


class Scoreboard(wiring.Component):
    """Pending-write bits of every warp's entries, one check port per warp.

    Parameters
    ----------
    params : CoreParams (mode, warps, entries_per_warp, collector_units).
    writeback_ports : writebacks per cycle (the register file's write ports; default 1).
    read_ports : DFLOW only: pending-read inputs, default ``3 * collector_units`` (connect the
        collector's ``pending``; add ports for any issued instruction not yet in a CU).
    lookahead : add the ``peek`` ports (default False).

    Members
    -------
    check : In(check_signature(params)).array(warps). Combinational: ``check[w].blocked`` says
        whether warp w's instruction presented on ``check[w]`` may not issue this cycle;
        ``check[w].src_pending[k]`` whether source k's value is still in flight.
    issue : In(entry_layout(params)). The instruction issued this cycle writes (warp, index):
        mark it pending. Leave ``valid`` low for instructions without destination.
    writeback : In(entry_layout(params)).array(writeback_ports). A write of (warp, index) lands
        this cycle: clear its pending bit.
    reads : In(entry_layout(params)).array(read_ports), DFLOW only. Entries collector units still
        have to read (the ring guard).
    peek : In(peek_signature(params)).array(warps), ``lookahead`` only. Combinational, like
        ``check[w].src_pending``: whether each source presented on ``peek[w]`` is still in flight.
        The DFLOW issue stage asks it about a warp's next buffered instruction.

    Latency: checks are combinational; issue and writeback update the bits at the clock edge.
    """

    def __init__(self, params: CoreParams, *, writeback_ports: int = 1, read_ports: int | None = None,
                 lookahead: bool = False):
        if not isinstance(params, CoreParams):
            raise ConfigError(f"scoreboard needs CoreParams, not {params!r}")
        if not isinstance(writeback_ports, int) or not 1 <= writeback_ports <= 8:
            raise ConfigError(f"scoreboard writeback_ports must be an integer in 1..8, not {writeback_ports!r}")
        read_ports = 3 * params.collector_units if read_ports is None else read_ports
        if not isinstance(read_ports, int) or not 1 <= read_ports <= 256:
            raise ConfigError(f"scoreboard read_ports must be an integer in 1..256, not {read_ports!r}")
        self.params, self.writeback_ports, self.read_ports = params, writeback_ports, read_ports
        members = {
            "check": In(check_signature(params)).array(params.warps),
            "issue": In(entry_layout(params)),
            "writeback": In(entry_layout(params)).array(writeback_ports),
        }
        if params.mode.scoreboard is ScoreboardKind.SLOTS:
            members["reads"] = In(entry_layout(params)).array(read_ports)
        self.lookahead = bool(lookahead)
        if self.lookahead:
            members["peek"] = In(peek_signature(params)).array(params.warps)
        super().__init__(members)

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        n = p.entries_per_warp
        pending = [Signal(n, name=f"pending{w}") for w in range(p.warps)]

        def onehot(index):
            return (Const(1, n) << index)[:n]

        for w in range(p.warps):
            cleared = Signal(n, name=f"cleared{w}")  # written back this cycle
            acc = Const(0, n)
            for wb in self.writeback:
                acc = acc | (onehot(wb.index) & (wb.valid & (wb.warp == w)).replicate(n))
            m.d.comb += cleared.eq(acc)
            effective = Signal(n, name=f"effective{w}")
            m.d.comb += effective.eq(pending[w] & ~cleared)

            chk = self.check[w]
            src_pending = Cat(s.valid & effective.bit_select(s.index, 1) for s in chk.src)
            dst_pending = chk.dst.valid & effective.bit_select(chk.dst.index, 1)
            m.d.comb += chk.src_pending.eq(src_pending)
            if self.lookahead:
                peek = self.peek[w]
                m.d.comb += peek.src_pending.eq(Cat(s.valid & effective.bit_select(s.index, 1) for s in peek.src))
            if p.mode.scoreboard is ScoreboardKind.SLOTS:
                unread = Const(0, 1)
                for r in self.reads:
                    unread = unread | (r.valid & (r.warp == w) & (r.index == chk.dst.index))
                m.d.comb += chk.blocked.eq(dst_pending | (chk.dst.valid & unread))
            else:
                m.d.comb += chk.blocked.eq(src_pending.any() | dst_pending)

            issued = onehot(self.issue.index) & (self.issue.valid & (self.issue.warp == w)).replicate(n)
            m.d.sync += pending[w].eq((pending[w] & ~cleared) | issued)
        return m

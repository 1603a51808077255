"""SIMT divergence stacks of all warps (docs/isa.md, "Control flow"; ``dualflow/models/executor.py``).

Each warp has a stack of at most ``depth`` entries (kind SYNC or DIV, pc, mask, rp). The
entries of all warps live in one ``Memory`` (row ``warp * depth + level``); per warp, flops hold
the stack pointer and a kind bit per level, so ``sync`` finds the nearest SYNC entry without a
search through the memory. Operations, exactly as the executor does them:

- ``SSY``: push SYNC(pc = target, mask = active mask, rp = current RP + ``advance``, the reserved
  advance k of ``ssy L, k``: DFLOW, ``reserved-ssy``; 0 for the original ``ssy``).
- ``DIV``: push DIV(pc = fall-through, mask = not-taken lanes, rp = current RP); the caller goes on
  with the taken lanes.
- ``SYNC``: (DFLOW) the nearest SYNC entry's rp becomes max(its rp, current RP), compared modulo
  the RP width; then resume. A sync with no SYNC entry on the stack is a trap.
  DFLOW also keeps the written bits exact (``written_bits.py``): ``clear`` names the ring
  positions that lanes parked at that entry will skip when they resume at the max (from the
  path's RP up to the entry's rp for the arriving lanes ``mask``; from the entry's rp up to the
  path's RP for the lanes parked there before), and the arriving lanes join the warp's *parked*
  lanes (lanes waiting at a SYNC entry; they are in no entry above it: ``sync`` always meets
  the nearest one) until an entry resumes them.
- ``EXIT``: the caller has retired the active lanes (``alive`` is the warp's remaining lanes);
  resume.
- resume: pop entries until one has lanes still alive (entry mask & alive): answer RESUME with
  its pc, that mask and its rp. An empty stack answers DONE if no lane is alive, else a trap.

Handshake: ``cmd`` is accepted (ready) only while the stack is idle. SSY and DIV complete in
their accept cycle and give no response. SYNC and EXIT give exactly one ``resp`` transfer,
which the caller waits for (the warp's next pc, mask and RP). Latency from accept to ``resp``
valid: EXIT 3 cycles, SYNC 4 cycles (DFLOW; 3 in BASE), plus 2 per popped entry whose lanes
have all exited; a trap on SYNC without SSY answers after 1 cycle.

Hands (``CoreParams.rings``): an entry's rp is one RP per hand; SSY's reserved advance is added
to the hand the command names (``hand``: ``ssy L, k -> h``), SYNC keeps each hand's later RP
independently (and clears each hand's skipped positions), resume restores every hand's.

Traps: a push onto a full stack (overflow; the push is dropped), a SYNC without SSY, and an
empty stack with live lanes raise the sticky ``trap`` output with the first trap's cause and
warp; SYNC and EXIT traps also answer with status TRAP. Reset clears everything.
"""

from __future__ import annotations

from enum import IntEnum

from amaranth import Array, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.common.errors import ConfigError

from .interfaces import clear_layout, hand_clear, request_clear
from .params import CoreParams
from .register_pointer import ADVANCE_BITS, rp_width

__all__ = ["Op", "SimtStack", "Status", "Trap", "cmd_layout", "hand_rps", "resp_layout", "rp_layout"]


class Op(IntEnum):
    SSY = 0
    DIV = 1
    SYNC = 2
    EXIT = 3


class Status(IntEnum):
    RESUME = 0
    DONE = 1
    TRAP = 2


class Trap(IntEnum):
    NONE = 0
    OVERFLOW = 1
    NO_SSY = 2
    EMPTY = 3


def pc_width(params: CoreParams) -> int:
    return ceil_log2(params.imem_words)


def rp_layout(params: CoreParams) -> data.Layout | int:
    """A warp's RP as the stack holds it: one RP, or (hands) an array of one RP per hand."""
    return rp_width(params) if params.hands == 1 else data.ArrayLayout(rp_width(params), params.hands)


def hand_rps(params: CoreParams, rp) -> list:
    """The per-hand RPs of an ``rp_layout`` value (a one-element list with one hand)."""
    return [rp] if params.hands == 1 else [rp[h] for h in range(params.hands)]


def cmd_layout(params: CoreParams) -> data.StructLayout:
    """A stack operation of one warp. ``pc``: SSY target or DIV fall-through; ``mask``: SSY active
    mask or DIV not-taken lanes, SYNC (DFLOW) the path's active lanes; ``rp``: the warp's current
    RP (DFLOW; with hands, one per hand); ``advance``: DFLOW, SSY's reserved advance
    (``reserved-ssy``: the entry's rp is ``rp + advance``; ignored by the other operations);
    ``hand``: with hands, the hand the advance is on; ``alive``: the warp's lanes that have not
    exited (after the EXIT), used by SYNC and EXIT."""
    return data.StructLayout({
        "op": 2, "warp": range(params.warps), "pc": pc_width(params), "mask": params.warp_size,
        "rp": rp_layout(params), **({"advance": ADVANCE_BITS} if params.mode.ring else {}), "alive": params.warp_size,
        **({"hand": range(params.hands)} if params.hands > 1 else {}),
    })


def resp_layout(params: CoreParams) -> data.StructLayout:
    """Outcome of SYNC or EXIT: RESUME at (pc, mask, rp), DONE (no lane alive), or TRAP."""
    return data.StructLayout({
        "warp": range(params.warps), "status": 2, "pc": pc_width(params), "mask": params.warp_size,
        "rp": rp_layout(params),
    })


class SimtStack(wiring.Component):
    """Divergence stacks of every warp, one operation at a time.

    Parameters
    ----------
    params : CoreParams (mode, warps, lanes, imem_words, ring).
    depth : entries per warp (1..64).

    Members
    -------
    cmd : In(stream.Signature(cmd_layout(params))), ``op`` an ``Op``.
    resp : Out(stream.Signature(resp_layout(params))), ``status`` a ``Status``.
    trap : Out(1), sticky.
    trap_cause : Out(2), a ``Trap`` (the first one).
    trap_warp : Out(range(warps)).
    clear : Out(written_bits.clear_layout), DFLOW with ``read_check`` only: written bits to clear (in the cycle after
        a SYNC is accepted).
    depth_of : Out(range(depth + 1)).array(warps), the entries each warp's stack holds (coverage).
    """

    def __init__(self, params: CoreParams, *, depth: int = 8):
        if not isinstance(params, CoreParams):
            raise ConfigError(f"SIMT stack needs CoreParams, not {params!r}")
        if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 64:
            raise ConfigError(f"SIMT stack depth must be an integer in 1..64, not {depth!r}")
        self.params, self.depth = params, depth
        super().__init__({
            "cmd": In(stream.Signature(cmd_layout(params))),
            "resp": Out(stream.Signature(resp_layout(params))),
            "trap": Out(1),
            "trap_cause": Out(2),
            "trap_warp": Out(range(params.warps)),
            **({"clear": Out(clear_layout(params))} if params.checks_reads else {}),
            "depth_of": Out(range(depth + 1)).array(params.warps),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p, depth = self.params, self.depth
        ring = p.mode.ring  # entries carry the warp's RP (and a SYNC's advance)
        rpw = rp_width(p)
        H = p.hands
        row = data.StructLayout({"pc": pc_width(p), "mask": p.warp_size, **({"rp": rp_layout(p)} if ring else {})})
        m.submodules.entries = mem = memory.Memory(shape=row, depth=p.warps * depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(transparent_for=())

        sp_regs = [Signal(range(depth + 1), name=f"sp{w}") for w in range(p.warps)]
        kind_regs = [Signal(depth, name=f"kinds{w}") for w in range(p.warps)]  # bit set: SYNC entry
        sp, kinds = Array(sp_regs), Array(kind_regs)
        m.d.comb += [self.depth_of[w].eq(sp_regs[w]) for w in range(p.warps)]

        def set_sp(w, value):
            for i, reg in enumerate(sp_regs):
                with m.If(w == i):
                    m.d.sync += reg.eq(value)
        c = self.cmd.payload
        # The operation being answered.
        warp = Signal(range(p.warps))
        alive = Signal(p.warp_size)
        cur_rp = Signal(rp_layout(p))
        path_mask = Signal(p.warp_size)
        # lanes parked at a SYNC entry: the written bits' clears at sync need them
        checks = p.checks_reads
        parked = Array(Signal(p.warp_size, name=f"parked{w}") for w in range(p.warps)) if checks else None
        sync_level = Signal(range(depth))
        result = Signal(resp_layout(p))
        m.d.comb += self.resp.payload.eq(result)

        def base(w):
            return w * depth

        def raise_trap(cause, w):
            with m.If(~self.trap):
                m.d.sync += [self.trap.eq(1), self.trap_cause.eq(cause), self.trap_warp.eq(w)]

        # Nearest SYNC entry below the stack pointer of the commanding warp.
        below = Signal(depth)
        m.d.comb += below.eq(kinds[c.warp] & ((Const(1, depth + 1) << sp[c.warp]) - 1)[:depth])
        nearest = Signal(range(depth))
        for level in range(depth):  # later assignments win: the highest set level
            with m.If(below[level]):
                m.d.comb += nearest.eq(level)

        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.cmd.ready.eq(1)
                with m.If(self.cmd.valid):
                    m.d.sync += [warp.eq(c.warp), alive.eq(c.alive), cur_rp.eq(c.rp), sync_level.eq(nearest)]
                    if checks:
                        m.d.sync += path_mask.eq(c.mask)
                    with m.Switch(c.op):
                        with m.Case(Op.SSY, Op.DIV):
                            with m.If(sp[c.warp] == depth):
                                raise_trap(Trap.OVERFLOW, c.warp)
                            with m.Else():
                                m.d.comb += [
                                    wr.addr.eq(base(c.warp) + sp[c.warp]), wr.en.eq(1),
                                    wr.data.pc.eq(c.pc), wr.data.mask.eq(c.mask),
                                ]
                                if ring and H == 1:  # modulo the RP width, as RP itself
                                    m.d.comb += wr.data.rp.eq(c.rp + Mux(c.op == Op.SSY, c.advance, 0))
                                elif ring:  # the advance on its hand
                                    for h in range(H):
                                        m.d.comb += wr.data.rp[h].eq(
                                            c.rp[h] + Mux((c.op == Op.SSY) & (c.hand == h), c.advance, 0))
                                set_sp(c.warp, sp[c.warp] + 1)
                                for i, reg in enumerate(kind_regs):
                                    with m.If(c.warp == i):
                                        m.d.sync += reg.bit_select(sp[c.warp], 1).eq(c.op == Op.SSY)
                        with m.Case(Op.SYNC):
                            with m.If(~below.any()):
                                raise_trap(Trap.NO_SSY, c.warp)
                                m.d.sync += [result.warp.eq(c.warp), result.status.eq(Status.TRAP),
                                             result.pc.eq(0), result.mask.eq(0),
                                             *[r.eq(0) for r in hand_rps(p, result.rp)]]
                                m.next = "RESP"
                            with m.Else():
                                if ring:
                                    m.d.comb += [rd.addr.eq(base(c.warp) + nearest), rd.en.eq(1)]
                                    m.next = "RAISE"
                                else:
                                    m.next = "POP"
                        with m.Case(Op.EXIT):
                            m.next = "POP"
            if ring:
                with m.State("RAISE"):
                    # rd.data holds the nearest SYNC entry: keep the later of its rp and the path's
                    # (each hand's, with hands).
                    entry = rd.data
                    hand_entry_rps, hand_cur_rps = hand_rps(p, entry.rp), hand_rps(p, cur_rp)
                    laters = []
                    for entry_rp, path_rp in zip(hand_entry_rps, hand_cur_rps):
                        later = Signal(rpw, name="later" if H == 1 else f"later{len(laters)}")
                        m.d.comb += later.eq(entry_rp)
                        with m.If((entry_rp - path_rp)[rpw - 1]):
                            m.d.comb += later.eq(path_rp)
                        laters.append(later)
                    m.d.comb += [
                        wr.addr.eq(base(warp) + sync_level), wr.en.eq(1),
                        wr.data.pc.eq(entry.pc), wr.data.mask.eq(entry.mask),
                        *[r.eq(later) for r, later in zip(hand_rps(p, wr.data.rp), laters)],
                    ]
                    for h, (entry_rp, path_rp) in enumerate(zip(hand_entry_rps, hand_cur_rps)):
                        if checks:
                            # written bits: the positions between the two RPs are skipped by whichever
                            # side is behind
                            clear = hand_clear(p, self.clear, h)
                            behind = (path_rp - entry_rp)[rpw - 1]  # the arriving path is behind the entry
                            with m.If(behind):
                                m.d.comb += request_clear(p, clear, warp=warp, first_rp=path_rp,
                                                          length=(entry_rp - path_rp)[:rpw], mask=path_mask, hand=h)
                            with m.Elif(path_rp != entry_rp):
                                m.d.comb += request_clear(p, clear, warp=warp, first_rp=entry_rp,
                                                          length=(path_rp - entry_rp)[:rpw],
                                                          mask=parked[warp] & entry.mask, hand=h)
                    if checks:
                        m.d.sync += parked[warp].eq(parked[warp] | path_mask)
                    m.next = "POP"
            with m.State("POP"):
                with m.If(sp[warp] == 0):
                    with m.If(alive.any()):
                        raise_trap(Trap.EMPTY, warp)
                        m.d.sync += result.status.eq(Status.TRAP)
                    with m.Else():
                        m.d.sync += result.status.eq(Status.DONE)
                    m.d.sync += [result.warp.eq(warp), result.pc.eq(0), result.mask.eq(0),
                                 *[r.eq(0) for r in hand_rps(p, result.rp)]]
                    m.next = "RESP"
                with m.Else():
                    m.d.comb += [rd.addr.eq(base(warp) + sp[warp] - 1), rd.en.eq(1)]
                    m.next = "CHECK"
            with m.State("CHECK"):
                entry = rd.data
                live = entry.mask & alive
                set_sp(warp, sp[warp] - 1)
                with m.If(live.any()):
                    m.d.sync += [result.warp.eq(warp), result.status.eq(Status.RESUME), result.pc.eq(entry.pc),
                                 result.mask.eq(live), *[r.eq(e if ring else 0) for r, e in zip(
                                     hand_rps(p, result.rp), hand_rps(p, entry.rp) if ring else [0] * H)]]
                    if checks:
                        m.d.sync += parked[warp].eq(parked[warp] & ~live)
                    m.next = "RESP"
                with m.Else():  # every lane of this entry has exited: drop it
                    m.next = "POP"
            with m.State("RESP"):
                m.d.comb += self.resp.valid.eq(1)
                with m.If(self.resp.ready):
                    m.next = "IDLE"
        return m

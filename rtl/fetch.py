"""Instruction fetch: the instruction memory and a one-entry instruction buffer per warp.

The instruction memory (``params.imem_words`` 64-bit words, a ``Memory``) is written through the
``load`` port before a run. Each cycle the fetch stage picks (round robin) one warp whose buffer
is empty or being emptied by issue this cycle, whose previous fetch is not in flight, and which
is not stopped, and reads its next instruction; a cycle later the word is decoded (``Decoder``)
into the warp's buffer (``f_`` stage -> ``ib_``). A control instruction stops its warp's fetch
until the core redirects the warp to its next pc (branches, reconvergence, barriers): there is
no branch prediction, so nothing fetched is ever thrown away.
"""

from amaranth import Cat, Module, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ._checks import reject
from .decode import DecodedLayout, Decoder, Unit
from .params import CoreParams
from .scheduler import WarpScheduler

__all__ = ["FetchUnit"]


class FetchUnit(wiring.Component):
    """Instruction memory, per-warp fetch pc and instruction buffer.

    Parameters
    ----------
    params: CoreParams (``warps``, ``imem_words``, ``mode``).

    Members
    -------
    load_en, load_addr, load_data: In, write one instruction word into the instruction memory.
    enable: In(warps), warp w may fetch (it is running).
    redirect_valid, redirect_warp, redirect_pc: In, continue warp w at pc (empties its buffer,
        restarts its fetch). Used after every control instruction and at launch.
    consume: In(warps), issue takes warp w's buffered instruction this cycle.
    ib_valid: Out(warps), warp w's buffer holds an instruction.
    ib_pc: Out(range(imem_words)).array(warps), its pc.
    ib_inst: Out(DecodedLayout).array(warps), its decoded fields.
    """

    def __init__(self, params: CoreParams):
        if not isinstance(params, CoreParams):
            raise reject(self, f"FetchUnit needs CoreParams, not {params!r}")
        self.params = params
        pcs = range(params.imem_words)
        super().__init__({
            "load_en": In(1), "load_addr": In(pcs), "load_data": In(64),
            "enable": In(params.warps),
            "redirect_valid": In(1), "redirect_warp": In(range(params.warps)), "redirect_pc": In(pcs),
            "consume": In(params.warps),
            "ib_valid": Out(params.warps), "ib_pc": Out(pcs).array(params.warps),
            "ib_inst": Out(DecodedLayout()).array(params.warps),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        n = p.warps
        m.submodules.imem = imem = memory.Memory(shape=unsigned(64), depth=p.imem_words, init=[])
        wr = imem.write_port()
        rd = imem.read_port(transparent_for=())
        m.d.comb += [wr.en.eq(self.load_en), wr.addr.eq(self.load_addr), wr.data.eq(self.load_data)]
        m.submodules.decoder = dec = Decoder(dflow=p.dflow)
        m.submodules.pick = pick = WarpScheduler(warps=n, policy="lrr")

        pc = [Signal(range(p.imem_words), name=f"w{w}_fetch_pc") for w in range(n)]
        stopped = Signal(n)
        f_valid = Signal()  # a read is in flight (f_ stage)
        f_warp = Signal(range(n))
        f_pc = Signal(range(p.imem_words))
        redirect = [self.redirect_valid & (self.redirect_warp == w) for w in range(n)]

        can = Cat(
            self.enable[w] & ~stopped[w] & (~self.ib_valid[w] | self.consume[w]) & ~(f_valid & (f_warp == w))
            & ~redirect[w]
            for w in range(n))
        m.d.comb += [pick.ready.eq(can), pick.issue.eq(pick.valid)]
        chosen_pc = Signal(range(p.imem_words))
        for w in range(n):
            with m.If(pick.warp == w):
                m.d.comb += chosen_pc.eq(pc[w])
        m.d.comb += [rd.addr.eq(chosen_pc), rd.en.eq(1)]
        m.d.sync += [f_valid.eq(pick.valid), f_warp.eq(pick.warp), f_pc.eq(chosen_pc)]
        m.d.comb += dec.word.eq(rd.data)

        for w in range(n):
            with m.If(self.consume[w]):
                m.d.sync += self.ib_valid[w].eq(0)
            with m.If(pick.valid & (pick.warp == w)):
                m.d.sync += pc[w].eq(pc[w] + 1)
            with m.If(f_valid & (f_warp == w) & ~redirect[w]):
                m.d.sync += [self.ib_valid[w].eq(1), self.ib_pc[w].eq(f_pc), self.ib_inst[w].eq(dec.out)]
                with m.If(dec.out.unit == Unit.CTRL):
                    m.d.sync += stopped[w].eq(1)
            with m.If(redirect[w]):
                m.d.sync += [pc[w].eq(self.redirect_pc), stopped[w].eq(0), self.ib_valid[w].eq(0)]
        return m


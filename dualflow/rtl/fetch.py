"""Instruction fetch: the instruction memory and a small instruction buffer per warp.

The instruction memory (``params.imem_words`` 64-bit words, a ``Memory``) is written through the
``load`` port before a run. Each cycle the fetch stage picks (round robin) one warp whose buffer
has room (counting the entry issue empties this cycle), whose previous fetch is not in flight,
and which is not stopped, and reads its next instruction; a cycle later the word is decoded
(``Decoder``) into the warp's buffer (``f_`` stage -> ``ib_``). A control instruction stops its
warp's fetch until the core redirects the warp to its next pc (branches, reconvergence,
barriers): there is no branch prediction, so nothing fetched is ever thrown away.

The buffer holds ``depth`` instructions per warp: 1 in BASE, 2 in DFLOW, where the issue stage
looks at a warp's next instruction (``ib_next``) to decide whether sending the head ahead into a
collector unit to wait lets that next instruction issue (docs/rtl.md, "Issue"). With two entries
the round robin first serves warps whose buffer will be empty, so a second entry never delays a
warp that has nothing to issue.
"""

from amaranth import Cat, Module, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from dualflow.isa.opcodes import Form

from ._checks import reject
from .decode import Decoder, Unit, decoded_layout
from .params import CoreParams
from .scheduler import WarpScheduler

__all__ = ["FetchUnit"]


class FetchUnit(wiring.Component):
    """Instruction memory, per-warp fetch pc and instruction buffer.

    Parameters
    ----------
    params: CoreParams (``warps``, ``imem_words``, ``mode``).
    depth: instructions buffered per warp, 1 or 2 (default: 2 in DFLOW, 1 in BASE).

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
    ib_next_valid: Out(warps), depth 2 only: warp w's buffer also holds the instruction after
        the head. ib_next: Out(DecodedLayout).array(warps), depth 2 only: its decoded fields.
    """

    def __init__(self, params: CoreParams, *, depth: int | None = None):
        if not isinstance(params, CoreParams):
            raise reject(self, f"FetchUnit needs CoreParams, not {params!r}")
        depth = (2 if params.mode.out_of_order else 1) if depth is None else depth  # 2: the next one peeked
        if depth not in (1, 2) or isinstance(depth, bool):
            raise reject(self, f"FetchUnit depth must be 1 or 2, not {depth!r}")
        self.params, self.depth = params, depth
        pcs = range(params.imem_words)
        members = {
            "load_en": In(1), "load_addr": In(pcs), "load_data": In(64),
            "enable": In(params.warps),
            "redirect_valid": In(1), "redirect_warp": In(range(params.warps)), "redirect_pc": In(pcs),
            "consume": In(params.warps),
            "ib_valid": Out(params.warps), "ib_pc": Out(pcs).array(params.warps),
            "ib_inst": Out(decoded_layout(params)).array(params.warps),
        }
        if depth == 2:
            members.update({"ib_next_valid": Out(params.warps),
                            "ib_next": Out(decoded_layout(params)).array(params.warps)})
        super().__init__(members)

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        n = p.warps
        m.submodules.imem = imem = memory.Memory(shape=unsigned(64), depth=p.imem_words, init=[])
        wr = imem.write_port()
        rd = imem.read_port(transparent_for=())
        m.d.comb += [wr.en.eq(self.load_en), wr.addr.eq(self.load_addr), wr.data.eq(self.load_data)]
        m.submodules.decoder = dec = Decoder(distance_operands=p.mode.form is Form.DFLOW, hands=p.hands,
                                             uniform=p.uniform_operands)
        m.submodules.pick = pick = WarpScheduler(warps=n, policy="lrr", two_level=self.depth == 2)

        pc = [Signal(range(p.imem_words), name=f"w{w}_fetch_pc") for w in range(n)]
        stopped = Signal(n)
        f_valid = Signal()  # a read is in flight (f_ stage)
        f_warp = Signal(range(n))
        f_pc = Signal(range(p.imem_words))
        redirect = [self.redirect_valid & (self.redirect_warp == w) for w in range(n)]
        # room for one more instruction after this cycle's issue (the head leaves when consumed)
        if self.depth == 2:
            second = self.ib_next_valid
            nx_pc = [Signal(range(p.imem_words), name=f"w{w}_ib_next_pc") for w in range(n)]
            room = [~second[w] | self.consume[w] for w in range(n)]
            empty = Cat(~self.ib_valid[w] | (self.consume[w] & ~second[w]) for w in range(n))
        else:
            room = [~self.ib_valid[w] | self.consume[w] for w in range(n)]

        can = Cat(
            self.enable[w] & ~stopped[w] & (room[w]) & ~(f_valid & (f_warp == w))
            & ~redirect[w]
            for w in range(n))
        m.d.comb += [pick.ready.eq(can), pick.issue.eq(pick.valid)]
        if self.depth == 2:
            m.d.comb += pick.prefer.eq(empty)
        chosen_pc = Signal(range(p.imem_words))
        for w in range(n):
            with m.If(pick.warp == w):
                m.d.comb += chosen_pc.eq(pc[w])
        m.d.comb += [rd.addr.eq(chosen_pc), rd.en.eq(1)]
        m.d.sync += [f_valid.eq(pick.valid), f_warp.eq(pick.warp), f_pc.eq(chosen_pc)]
        m.d.comb += dec.word.eq(rd.data)

        for w in range(n):
            landing = f_valid & (f_warp == w) & ~redirect[w]
            if self.depth == 2:
                # the head leaves: the second entry moves up
                with m.If(self.consume[w]):
                    m.d.sync += [self.ib_valid[w].eq(second[w]), self.ib_pc[w].eq(nx_pc[w]),
                                 self.ib_inst[w].eq(self.ib_next[w]), second[w].eq(0)]
            else:
                with m.If(self.consume[w]):
                    m.d.sync += self.ib_valid[w].eq(0)
            with m.If(pick.valid & (pick.warp == w)):
                m.d.sync += pc[w].eq(pc[w] + 1)
            if self.depth == 2:
                # a fetch lands behind what stays (a fetch only starts with room for it)
                head_free = ~self.ib_valid[w] | (self.consume[w] & ~second[w])
                with m.If(landing & head_free):
                    m.d.sync += [self.ib_valid[w].eq(1), self.ib_pc[w].eq(f_pc), self.ib_inst[w].eq(dec.out)]
                with m.Elif(landing):
                    m.d.sync += [second[w].eq(1), nx_pc[w].eq(f_pc), self.ib_next[w].eq(dec.out)]
                with m.If(landing & (dec.out.unit == Unit.CTRL)):
                    m.d.sync += stopped[w].eq(1)
            else:
                with m.If(landing):
                    m.d.sync += [self.ib_valid[w].eq(1), self.ib_pc[w].eq(f_pc), self.ib_inst[w].eq(dec.out)]
                    with m.If(dec.out.unit == Unit.CTRL):
                        m.d.sync += stopped[w].eq(1)
            with m.If(redirect[w]):
                m.d.sync += [pc[w].eq(self.redirect_pc), stopped[w].eq(0), self.ib_valid[w].eq(0)]
                if self.depth == 2:
                    m.d.sync += second[w].eq(0)
        return m

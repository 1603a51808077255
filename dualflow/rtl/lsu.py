"""Load/store unit: banked on-core shared memory and a tagged global/local memory port.

A memory instruction arrives from the operand collector with its per-lane base addresses (A),
store data (B), offset, active mask, space and color, and a side-band ``info`` word the unit
returns untouched with the result (the core's writeback and trace fields).

- **Shared** (``lds``/``sts``): ``params.shared_banks`` single-port ``Memory`` banks, word ``w`` in bank
  ``w mod banks``. Each cycle every bank serves the lowest-numbered pending lane that maps to it,
  so a conflict-free access takes one cycle and an n-way conflict n cycles; lanes writing the
  same word are served in lane order, so the highest lane's value is kept (docs/isa.md).
- **Global and local** (``ldg``/``stg``/``ldl``/``stl``): one request per warp instruction on
  the ``mem_req`` stream (all lanes, a ``local`` flag and the warp: local memory is per thread,
  so the memory side places it), answered on ``mem_resp`` with the request's tag, after any
  latency and in any order. Stores are answered too (an acknowledgement): a store has performed
  when its answer returns. Up to ``params.requests_in_flight`` requests are in flight; a request waits while an
  older in-flight request of its warp must stay ordered before it: in DFLOW the same color with
  a store on either side (docs/isa.md, coloring), in BASE any pair with a store (program order).
  The operand collector dispatches such pairs in program order, so waiting here keeps them so.

Faults, as the functional model reports them: an access whose address in an active lane is not
a multiple of 4 (any space), or a shared access at or past ``shared_limit`` (the bytes of shared
memory the block declared, ``.shared``), is not performed; the unit raises ``fault`` with the
instruction's ``info`` and keeps it until ``clear``, and the core traps. Misalignment takes
precedence, as in the functional model. Bounds of global and local memory belong to the memory
side (it knows the allocations and the per-thread size).
"""

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ._checks import reject
from .decode import Space
from .interfaces import LsuFault, lane_data, mem_request_layout, mem_response_layout
from .params import CoreParams
from .scheduler import lowest_set, onehot_index

__all__ = ["LoadStoreUnit", "lsu_input_layout", "lsu_output_layout"]


def lsu_input_layout(params: CoreParams, info_width: int) -> data.StructLayout:
    return data.StructLayout({
        "warp": range(params.warps), "store": 1, "space": Space, "color": 4, "offset": 32,
        "mask": params.warp_size, "a": lane_data(params.warp_size), "b": lane_data(params.warp_size),
        "info": info_width,
    })


def lsu_output_layout(params: CoreParams, info_width: int) -> data.StructLayout:
    """A performed access: loaded values (loads), the addresses and store data (for the trace:
    absent without ``params.trace``)."""
    lanes = lane_data(params.warp_size)
    return data.StructLayout({"info": info_width, "values": lanes,
                              **({"addrs": lanes, "data": lanes} if params.trace else {})})


class LoadStoreUnit(wiring.Component):
    """Shared memory, and the global/local request port.

    Parameters
    ----------
    params: CoreParams (``lanes``, ``warps``, ``shared_bytes``, ``shared_banks``,
        ``requests_in_flight``, ``mode``).
    info_width: bits of the side-band word carried from input to output.
    outstanding: global/local requests in flight at most; default ``params.requests_in_flight``
        (a block bench may override it).

    Members
    -------
    i: In(stream.Signature(lsu_input_layout)), one memory instruction.
    o: Out(stream.Signature(lsu_output_layout)), one performed instruction.
    mem_req: Out(stream.Signature(mem_request_layout)), global/local requests.
    mem_resp: In(stream.Signature(mem_response_layout)), their answers, by tag, in any order.
    clear: In(1), zero the shared memory (at launch: the functional model starts every block
        with zeroed shared memory); takes ``shared_words / banks`` cycles, during which a shared
        access waits (global and local ones go on). Also clears ``fault``.
    shared_limit: In(range(shared_bytes + 1)), the block's shared-memory size in bytes (reset:
        all of it).
    idle: Out(1), nothing in flight, nothing held, not clearing.
    fault: Out(1), an access was refused (held until ``clear``); fault_kind: Out(LsuFault);
    fault_info: Out(info_width), the refused instruction's side-band word.
    """

    def __init__(self, params: CoreParams, *, info_width: int, outstanding: int | None = None):
        if not isinstance(params, CoreParams):
            raise reject(self, f"LoadStoreUnit needs CoreParams, not {params!r}")
        outstanding = params.requests_in_flight if outstanding is None else outstanding
        if not isinstance(outstanding, int) or not 1 <= outstanding <= 64:
            raise reject(self, f"outstanding must be an integer in 1..64, not {outstanding!r}")
        self.params, self.info_width, self.outstanding = params, info_width, outstanding
        self.tag_width = max(1, ceil_log2(outstanding))
        self.shared_words = params.shared_bytes // 4
        self.banks = params.shared_banks
        super().__init__({
            "i": In(stream.Signature(lsu_input_layout(params, info_width))),
            "o": Out(stream.Signature(lsu_output_layout(params, info_width))),
            "mem_req": Out(stream.Signature(mem_request_layout(params, self.tag_width))),
            "mem_resp": In(stream.Signature(mem_response_layout(params, self.tag_width))),
            "clear": In(1), "idle": Out(1),
            "shared_limit": In(range(params.shared_bytes + 1), init=params.shared_bytes),
            "fault": Out(1), "fault_kind": Out(LsuFault), "fault_info": Out(info_width),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        L = p.warp_size
        nb = self.banks
        word_bits = ceil_log2(self.shared_words)
        bank_bits = ceil_log2(nb)

        # ---- head: the instruction being performed (h_ stage)
        h_valid = Signal()
        h = Signal(lsu_input_layout(p, self.info_width))
        h_addr = Signal(lane_data(L))
        rows = max(1, self.shared_words // nb)
        clearing = Signal()
        clear_row = Signal(range(rows))
        with m.If(self.clear):
            m.d.sync += [clearing.eq(1), clear_row.eq(0)]
        with m.Elif(clearing):
            m.d.sync += clear_row.eq(clear_row + 1)
            with m.If(clear_row == rows - 1):
                m.d.sync += clearing.eq(0)
        m.d.comb += self.i.ready.eq(~h_valid & ~self.clear)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [h_valid.eq(1), h.eq(self.i.payload)]
            for n in range(L):
                m.d.sync += h_addr[n].eq(self.i.payload.a[n] + self.i.payload.offset)

        # ---- output register (o_ stage)
        o_valid = Signal()
        o = Signal(lsu_output_layout(p, self.info_width))
        m.d.comb += [self.o.valid.eq(o_valid), self.o.payload.eq(o)]
        o_free = ~o_valid | self.o.ready
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += o_valid.eq(0)

        # ---- outstanding global/local requests
        n_out = self.outstanding
        busy = Signal(n_out)
        s_warp = [Signal(range(p.warps), name=f"out{t}_warp") for t in range(n_out)]
        s_color = [Signal(4, name=f"out{t}_color") for t in range(n_out)]
        s_store = [Signal(name=f"out{t}_store") for t in range(n_out)]
        s_info = [Signal(self.info_width, name=f"out{t}_info") for t in range(n_out)]
        traced = p.trace  # a request's addresses and store data go back with its answer, for the trace
        s_addr = [Signal(lane_data(L), name=f"out{t}_addr") for t in range(n_out)] if traced else None
        s_data = [Signal(lane_data(L), name=f"out{t}_data") for t in range(n_out)] if traced else None

        is_shared = h.space == Space.SHARED
        # ---- faults: checked on the head, before anything is performed
        misaligned = Cat(h.mask[n] & (h_addr[n][:2] != 0) for n in range(L)).any()
        out_of_bounds = is_shared & Cat(h.mask[n] & (h_addr[n] >= self.shared_limit) for n in range(L)).any()
        bad = Signal()
        m.d.comb += bad.eq(h_valid & (misaligned | out_of_bounds))
        fault = Signal()
        m.d.comb += self.fault.eq(fault)
        with m.If(self.clear):
            m.d.sync += fault.eq(0)
        with m.Elif(bad & ~fault):
            m.d.sync += [fault.eq(1), self.fault_info.eq(h.info),
                         self.fault_kind.eq(Mux(misaligned, LsuFault.MISALIGNED, LsuFault.SHARED_BOUNDS))]
        conflict = Const(0, 1)
        for t in range(n_out):
            pair = h.store | s_store[t]
            if p.mode.out_of_order:  # only same-colour pairs keep their order
                pair = pair & (s_color[t] == h.color)
            conflict = conflict | (busy[t] & (s_warp[t] == h.warp) & pair)
        free_slot = lowest_set(m, ~busy, n_out, "free_slot")
        slot = Signal(self.tag_width)
        m.d.comb += slot.eq(onehot_index(free_slot, n_out))
        req = self.mem_req
        m.d.comb += [
            req.valid.eq(h_valid & ~is_shared & ~conflict & (~busy).any() & ~bad),
            req.payload.tag.eq(slot), req.payload.warp.eq(h.warp), req.payload.store.eq(h.store),
            req.payload.local.eq(h.space == Space.LOCAL), req.payload.mask.eq(h.mask),
            req.payload.addr.eq(h_addr), req.payload.data.eq(h.b),
        ]
        sent = req.valid & req.ready
        with m.If(sent):
            m.d.sync += h_valid.eq(0)
        for t in range(n_out):
            with m.If(sent & free_slot[t]):
                m.d.sync += [busy[t].eq(1), s_warp[t].eq(h.warp), s_color[t].eq(h.color),
                             s_store[t].eq(h.store), s_info[t].eq(h.info)]
                if traced:
                    m.d.sync += [s_addr[t].eq(h_addr), s_data[t].eq(h.b)]

        # ---- shared memory engine
        sh_active = Signal()  # the head is a shared access being performed
        sh_pending = Signal(L)  # lanes not yet served
        sh_result = Signal(lane_data(L))
        sh_rd_valid = [Signal(name=f"sh_rd{b}_valid") for b in range(nb)]  # a bank read lands this cycle
        sh_rd_lane = [Signal(range(L), name=f"sh_rd{b}_lane") for b in range(nb)]
        word = [h_addr[n][2:2 + word_bits] for n in range(L)]
        bank_of_lane = [word[n][:bank_bits] if bank_bits else Const(0, 1) for n in range(L)]
        row_of_lane = [word[n][bank_bits:] for n in range(L)]
        with m.If(h_valid & is_shared & ~sh_active & ~clearing & ~bad):
            m.d.sync += [sh_active.eq(1), sh_pending.eq(h.mask)]
        served = Const(0, L)
        for b in range(nb):
            bank = memory.Memory(shape=unsigned(32), depth=rows, init=[])
            m.submodules[f"shared_bank{b}"] = bank
            rd = bank.read_port(transparent_for=())
            wr = bank.write_port()
            wants = Cat(sh_pending[n] & (bank_of_lane[n] == b) for n in range(L))
            pick = lowest_set(m, wants, L, f"sh_pick{b}")
            lane = onehot_index(pick, L)
            go = sh_active & wants.any()
            row = Signal(range(max(2, rows)), name=f"sh_row{b}")
            for n in range(L):
                with m.If(pick[n]):
                    m.d.comb += [row.eq(row_of_lane[n]), wr.data.eq(h.b[n])]
            m.d.comb += [rd.addr.eq(row), wr.addr.eq(row), rd.en.eq(go & ~h.store), wr.en.eq(go & h.store)]
            with m.If(clearing):
                m.d.comb += [wr.addr.eq(clear_row), wr.data.eq(0), wr.en.eq(1)]
            m.d.sync += [sh_rd_valid[b].eq(go & ~h.store), sh_rd_lane[b].eq(lane)]
            for n in range(L):
                with m.If(sh_rd_valid[b] & (sh_rd_lane[b] == n)):
                    m.d.sync += sh_result[n].eq(rd.data)
            served = served | Mux(go, pick, 0)
        with m.If(sh_active):
            m.d.sync += sh_pending.eq(sh_pending & ~served)
        reads_landing = Cat(sh_rd_valid).any()
        sh_done = sh_active & (sh_pending == 0) & ~reads_landing
        # A shared access finishes into the output register; a global answer only when no shared
        # one does.
        with m.If(sh_done & o_free):
            m.d.sync += [
                sh_active.eq(0), h_valid.eq(0), o_valid.eq(1),
                o.info.eq(h.info), o.values.eq(sh_result),
            ]
            if traced:
                m.d.sync += [o.addrs.eq(h_addr), o.data.eq(h.b)]
        resp = self.mem_resp
        m.d.comb += resp.ready.eq(o_free & ~sh_done)
        with m.If(resp.valid & resp.ready):
            m.d.sync += [o_valid.eq(1), o.values.eq(resp.payload.data)]
            for t in range(n_out):
                with m.If(resp.payload.tag == t):
                    m.d.sync += [busy[t].eq(0), o.info.eq(s_info[t])]
                    if traced:
                        m.d.sync += [o.addrs.eq(s_addr[t]), o.data.eq(s_data[t])]
        m.d.comb += self.idle.eq(~h_valid & ~o_valid & (busy == 0) & ~clearing)
        return m

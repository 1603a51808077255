"""Banked register file of the SIMT core: ring slots (DFLOW) or registers (BASE), one bank per memory.

Every warp owns ``params.entries_per_warp`` entries; an entry holds one 32-bit value per lane.
Where entry (warp, index) lives is the machine's one rule (``dualflow.machine.register_bank``,
``bank_row``, ``rows_per_warp``; the timing model uses the same functions): bank
``(index + warp) mod register_banks``, row ``warp * rows_per_warp + index // register_banks``.
``bank_of`` and ``row_of`` apply it at elaboration time: to integers they return the machine's
values; to signals the same arithmetic with ``register_banks`` a power of two, so the modulo and
the division are bit slices (tests/rtl/test_rtl_params.py checks both agree on every entry).

Ports are requests, not addresses: the collector units (one read requester per operand slot)
ask for (warp, index) and a ``BankArbiter`` grants at most one read per bank per cycle; the data
comes back the next cycle on that bank's response port, tagged with the requester. Writes
(writeback) have priority over reads of their bank.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from dualflow.common.errors import ConfigError
from dualflow.machine import bank_row, register_bank
from dualflow.machine import rows_per_warp as machine_rows_per_warp

from .interfaces import lane_data, read_request_layout, read_response_signature, write_request_layout
from .params import CoreParams

__all__ = ["BankArbiter", "BankedRegisterFile", "RegisterBank", "bank_of", "row_of", "rows_per_warp"]


def rows_per_warp(params: CoreParams) -> int:
    """Rows one warp occupies in every bank (``machine.rows_per_warp``)."""
    return machine_rows_per_warp(params.entries_per_warp, params.register_banks)


def bank_of(params: CoreParams, warp, index):
    """Bank of entry (warp, index) (``machine.register_bank``): an int for ints, an Amaranth
    expression for signals."""
    if isinstance(warp, int) and isinstance(index, int):
        return register_bank(index, warp, params.register_banks)
    bits = ceil_log2(params.register_banks)  # a power of two: mod is the low bits
    return (index + warp)[:bits] if bits else Const(0, 1)


def row_of(params: CoreParams, warp, index):
    """Row of entry (warp, index) inside its bank (``machine.bank_row``; int or expression, like
    ``bank_of``)."""
    if isinstance(warp, int) and isinstance(index, int):
        return bank_row(index, warp, params.entries_per_warp, params.register_banks)
    # a power of two: the division is a shift
    return warp * rows_per_warp(params) + (index >> ceil_log2(params.register_banks))


def _encode(onehot, n: int):
    """Index of the set bit of a one-hot vector (0 when none), as an OR of bit columns."""
    bits = max(ceil_log2(n), 1)
    return Cat(Cat(onehot[i] for i in range(n) if i >> k & 1).any() if n > 1 << k else Const(0, 1)
               for k in range(bits))


class RegisterBank(wiring.Component):
    """One register-file bank: a ``Memory`` of ``depth`` rows of ``lanes`` 32-bit words.

    One synchronous read port (data the cycle after ``read_en``; a read and a write of the same
    row in one cycle return the old data, which the arbiter never lets happen) and one write port
    with a per-lane write enable. It is its own submodule so that synthesis reports each bank.

    Parameters
    ----------
    depth : rows.
    lanes : 32-bit words per row.

    Members
    -------
    read_addr : In(range(depth))
    read_en : In(1)
    read_data : Out(ArrayLayout(32, lanes)), the row addressed in the previous cycle with read_en.
    write_addr : In(range(depth))
    write_en : In(lanes), lane i written when bit i is set.
    write_data : In(ArrayLayout(32, lanes))
    """

    def __init__(self, *, depth: int, lanes: int):
        if not isinstance(depth, int) or depth < 1:
            raise ConfigError(f"register bank depth must be a positive integer, not {depth!r}")
        if not isinstance(lanes, int) or lanes < 1:
            raise ConfigError(f"register bank lanes must be a positive integer, not {lanes!r}")
        self.depth, self.lanes = depth, lanes
        super().__init__({
            "read_addr": In(range(depth)),
            "read_en": In(1),
            "read_data": Out(lane_data(lanes)),
            "write_addr": In(range(depth)),
            "write_en": In(lanes),
            "write_data": In(lane_data(lanes)),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        m.submodules.storage = mem = memory.Memory(shape=unsigned(32 * self.lanes), depth=self.depth, init=[])
        wr = mem.write_port(granularity=32)
        rd = mem.read_port(transparent_for=())
        m.d.comb += [
            wr.addr.eq(self.write_addr), wr.en.eq(self.write_en), wr.data.eq(self.write_data.as_value()),
            rd.addr.eq(self.read_addr), rd.en.eq(self.read_en), self.read_data.eq(rd.data),
        ]
        return m


class BankArbiter(wiring.Component):
    """Grants at most one read per bank per cycle; rotating (round-robin) priority per bank.

    Each bank keeps a pointer; among the requesters that want the bank, the first one at or after
    the pointer (in requester order, wrapping) wins and the pointer moves just past it. A
    requester that keeps asking is therefore served within ``requesters`` grants of its bank.
    A bank marked ``busy`` (a write takes it this cycle) grants nothing. Purely combinational but
    for the pointers, so a grant is known in the request cycle.

    Parameters
    ----------
    requesters : number of read requesters.
    banks : number of banks.

    Members
    -------
    request : In(requesters), requester i wants a read this cycle.
    bank : In(range(banks)).array(requesters), the bank requester i wants.
    busy : In(banks), bank b is taken by a write this cycle.
    grant : Out(requesters), requester i is served this cycle.
    bank_valid : Out(banks), bank b serves a read this cycle.
    bank_requester : Out(range(requesters)).array(banks), whom bank b serves.
    conflict : Out(1), some request was not granted this cycle (lost to a read or a write).
    """

    def __init__(self, *, requesters: int, banks: int):
        if not isinstance(requesters, int) or requesters < 1:
            raise ConfigError(f"bank arbiter requesters must be a positive integer, not {requesters!r}")
        if not isinstance(banks, int) or banks < 1:
            raise ConfigError(f"bank arbiter banks must be a positive integer, not {banks!r}")
        self.requesters, self.banks = requesters, banks
        super().__init__({
            "request": In(requesters),
            "bank": In(range(banks)).array(requesters),
            "busy": In(banks),
            "grant": Out(requesters),
            "bank_valid": Out(banks),
            "bank_requester": Out(range(requesters)).array(banks),
            "conflict": Out(1),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        n = self.requesters
        grants = []
        for b in range(self.banks):
            ptr = Signal(range(n), name=f"ptr{b}")
            wants = Cat(self.request[i] & (self.bank[i] == b) for i in range(n))
            wants_hi = Cat(wants[i] & (i >= ptr) for i in range(n))  # at or after the pointer
            cand = Signal(n, name=f"cand{b}")
            m.d.comb += cand.eq(Mux(wants_hi.any(), wants_hi, wants))
            onehot = Signal(n, name=f"onehot{b}")
            m.d.comb += onehot.eq(cand & (~cand + 1))  # lowest set bit
            pick = Signal(range(n), name=f"pick{b}")
            m.d.comb += pick.eq(_encode(onehot, n))
            serve = Signal(name=f"serve{b}")
            m.d.comb += [
                serve.eq(wants.any() & ~self.busy[b]),
                self.bank_valid[b].eq(serve),
                self.bank_requester[b].eq(pick),
            ]
            with m.If(serve):
                m.d.sync += ptr.eq(Mux(pick == n - 1, 0, pick + 1))
            grants.append(Cat(serve & (pick == i) for i in range(n)))
        grant = Signal(n)
        for g in grants:
            grant = grant | g
        m.d.comb += [self.grant.eq(grant), self.conflict.eq((self.request & ~grant).any())]
        return m


class BankedRegisterFile(wiring.Component):
    """The register file: ``params.register_banks`` ``RegisterBank`` submodules, a ``BankArbiter``, writes.

    Reads: requester i presents ``read[i]`` (a stream of (warp, index)); ``read[i].ready`` is the
    grant, in the same cycle. The value arrives on ``response[b]`` one cycle after the grant, with
    ``response[b].requester == i``, where b = ``bank_of(params, warp, index)``: a requester only
    needs to watch the bank of its entry. Responses cannot be stalled.

    Writes: ``write[j]`` (a stream of (warp, index, lane mask, data)) is accepted when no
    lower-numbered write port targets the same bank in that cycle; port 0 is always ready. The
    write lands at the end of the cycle, so a read granted in the next cycle sees it. A write takes
    its bank's read port for the cycle (writes have priority; reads of that bank wait).

    Latency: read request to data 1 cycle when granted at once; a write is visible to reads
    granted from the next cycle on.

    Never-written registers (BASE): the functional model starts every block with its registers at
    0. Instead of clearing the banks (rows x cycles at each ``start``), each bank keeps a bit per
    row, cleared by ``clear``: a row whose bit is clear reads as 0, and its first write writes
    every lane (the inactive ones with 0) and sets the bit, so lanes a masked write skipped read 0
    too. One flip-flop per (warp, register); DFLOW has none (reading a slot not written is a trap,
    ``written_bits.py``).

    Parameters
    ----------
    params : CoreParams (warps, warp_size, register_banks, entries_per_warp).
    read_ports : number of read requesters; default ``params.collector_units * 3``.
    write_ports : number of write ports (writeback), default 1.

    Members
    -------
    read : In(stream.Signature(read_request_layout(params))).array(read_ports)
    write : In(stream.Signature(write_request_layout(params))).array(write_ports)
    response : Out(read_response_signature(params, read_ports)).array(banks)
    conflict : Out(1), a valid read request was not granted this cycle.
    conflicts : Out(range(read_ports + 1)), how many valid read requests were not granted this
        cycle (each lost its bank to another read or to a write): the timing model's count of
        register-file bank conflicts (``rf_bank_conflicts``), per cycle.
    clear : In(1), BASE only: every register reads 0 from the next cycle until written (a block starts).
    """

    def __init__(self, params: CoreParams, *, read_ports: int | None = None, write_ports: int = 1):
        if not isinstance(params, CoreParams):
            raise ConfigError(f"register file needs CoreParams, not {params!r}")
        read_ports = params.collector_units * 3 if read_ports is None else read_ports
        if not isinstance(read_ports, int) or read_ports < 1:
            raise ConfigError(f"register file read_ports must be a positive integer, not {read_ports!r}")
        if not isinstance(write_ports, int) or not 1 <= write_ports <= 8:
            raise ConfigError(f"register file write_ports must be an integer in 1..8, not {write_ports!r}")
        self.params, self.read_ports, self.write_ports = params, read_ports, write_ports
        self.depth = params.warps * rows_per_warp(params)
        super().__init__({
            "read": In(stream.Signature(read_request_layout(params))).array(read_ports),
            "write": In(stream.Signature(write_request_layout(params))).array(write_ports),
            "response": Out(read_response_signature(params, read_ports)).array(params.register_banks),
            "conflict": Out(1), "conflicts": Out(range(read_ports + 1)),
            **({} if params.mode.ring else {"clear": In(1)}),
        })

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        nb = p.register_banks
        m.submodules.arbiter = arb = BankArbiter(requesters=self.read_ports, banks=nb)
        banks = [RegisterBank(depth=self.depth, lanes=p.warp_size) for _ in range(nb)]
        for b, bank in enumerate(banks):
            m.submodules[f"bank{b}"] = bank

        # Writes: port j wins its bank unless a lower port wants the same bank.
        wbank = [bank_of(p, w.payload.warp, w.payload.index) for w in self.write]
        for j, w in enumerate(self.write):
            lost = Const(0, 1)
            for k in range(j):
                lost = lost | (self.write[k].valid & (wbank[k] == wbank[j]))
            m.d.comb += w.ready.eq(~lost)
        # BASE: a bit per row, set by its first write since ``clear`` (class docstring)
        written = [Signal(self.depth, name=f"written{b}") for b in range(nb)] if not p.mode.ring else None
        for b, bank in enumerate(banks):
            busy = Const(0, 1)
            # Highest-numbered winning port last, but only one port can win a bank anyway.
            for j, w in enumerate(self.write):
                hit = w.valid & w.ready & (wbank[j] == b)
                busy = busy | hit
                with m.If(hit):
                    row = row_of(p, w.payload.warp, w.payload.index)
                    m.d.comb += [bank.write_addr.eq(row), bank.write_en.eq(w.payload.mask),
                                 bank.write_data.eq(w.payload.data)]
                    if written is not None:
                        with m.If(~written[b].bit_select(row, 1)):  # first write: every lane
                            m.d.comb += bank.write_en.eq(-1)
                            m.d.comb += [bank.write_data[n].eq(Mux(w.payload.mask[n], w.payload.data[n], 0))
                                         for n in range(p.warp_size)]
                        m.d.sync += written[b].bit_select(row, 1).eq(1)
            m.d.comb += arb.busy[b].eq(busy)
            if written is not None:
                with m.If(self.clear):
                    m.d.sync += written[b].eq(0)

        # Reads: arbitrate, address the bank with the winner's row, tag the response.
        for i, r in enumerate(self.read):
            m.d.comb += [
                arb.request[i].eq(r.valid),
                arb.bank[i].eq(bank_of(p, r.payload.warp, r.payload.index)),
                r.ready.eq(arb.grant[i]),
            ]
        rows = [row_of(p, r.payload.warp, r.payload.index) for r in self.read]
        for b, bank in enumerate(banks):
            for i in range(self.read_ports):
                with m.If(arb.bank_requester[b] == i):
                    m.d.comb += bank.read_addr.eq(rows[i])
            resp = self.response[b]
            m.d.comb += bank.read_en.eq(arb.bank_valid[b])
            m.d.sync += [resp.valid.eq(arb.bank_valid[b]), resp.requester.eq(arb.bank_requester[b])]
            if written is None:
                m.d.comb += resp.data.eq(bank.read_data)
            else:  # a row not written since ``clear`` reads 0
                was_written = Signal(name=f"read_written{b}")
                m.d.sync += was_written.eq(written[b].bit_select(bank.read_addr, 1))
                m.d.comb += resp.data.eq(Mux(was_written, bank.read_data.as_value(), 0))
        m.d.comb += [self.conflict.eq(arb.conflict),
                     self.conflicts.eq(sum(r.valid & ~arb.grant[i] for i, r in enumerate(self.read)))]
        return m

"""cocotb bench of ``OperandCollector`` reading a ``BankedRegisterFile`` (``CollectorTop``).

The bench plays the rest of the core: an issue stage that allocates random instructions (ready
bits from its own record of which entries have a producer in flight, as the scoreboard lookup
gives them), producers that start on entries no CU still needs (the ring guard's promise) and
write back later through the register file's write ports (random lane masks, held while a
write conflict holds them off), and execution units that accept dispatches with random
backpressure. ``CollectorModel`` knows every entry's value; each dispatch is checked for:

- operand values (a not-ready operand must carry its producer's value);
- ordering: BASE in program order per warp; DFLOW no same-warp, same-color memory pair with a
  store overtaken; the unit of the dispatch stream;
- stream rules: an offered dispatch keeps its payload until accepted;
- the ``pending`` output: every operand still waiting for its producer is listed, and nothing
  is listed that no CU needs;
- the dispatch priority (gray box: which CUs hold all their operands is read from the
  collector's ``cu<c>_collected`` signals): a new offer on stream u is the oldest instruction
  of unit u that has its operands and that the ordering rules let go.

At the end allocation stops and every instruction must drain. In DFLOW the bench also requires
some out-of-order dispatches (coverage).

Parameters: ``core``, ``payload_width``, ``tag_width``, ``units``, ``write_ports``, ``cycles``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import cocotb

from dualflow.rtl.params import CoreParams
from dualflow.testbench.sim import bench_env, bench_ports, pack, unpack

from .harness import BlockBench, chance


@dataclass
class Instr:
    tag: int
    seq: int
    warp: int
    unit: int
    mem: dict
    payload: int
    sources: list[int | None]
    expected: list[list[int] | None]  # None while the producer has not written back
    dispatched: bool = False


@dataclass
class CollectorModel:
    """Entry values, producers in flight, and the undispatched instructions in allocation order."""

    warps: int
    lanes: int
    entries: int
    inject: bool = False
    values: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    in_flight: set[tuple[int, int]] = field(default_factory=set)
    waiting: dict[tuple[int, int], list[tuple[Instr, int]]] = field(default_factory=dict)
    live: list[Instr] = field(default_factory=list)

    def value(self, e: tuple[int, int]) -> list[int]:
        return self.values.get(e, [0] * self.lanes)

    def readers(self) -> Counter:
        return Counter((i.warp, s) for i in self.live for s in i.sources if s is not None)

    def unresolved(self) -> Counter:
        return Counter((i.warp, s) for i in self.live for s, v in zip(i.sources, i.expected)
                       if s is not None and v is None)

    def allocate(self, ins: Instr) -> None:
        for k, s in enumerate(ins.sources):
            if s is None:
                ins.expected[k] = [0] * self.lanes
            elif (ins.warp, s) in self.in_flight and not self.inject:
                self.waiting.setdefault((ins.warp, s), []).append((ins, k))
            else:  # the injected bug: a not-ready operand expects the stale value
                ins.expected[k] = self.value((ins.warp, s))
        self.live.append(ins)

    def write(self, e: tuple[int, int], mask: int, data: list[int]) -> None:
        old = self.value(e)
        self.values[e] = [d if mask >> lane & 1 else o for lane, (o, d) in enumerate(zip(old, data))]
        self.in_flight.discard(e)
        for ins, k in self.waiting.pop(e, []):
            ins.expected[k] = self.values[e]


class CollectorBench(BlockBench):
    def __init__(self, dut: Any, params: dict, seed: int, inject: bool):
        super().__init__(dut, seed)
        self.core = p = CoreParams(**params["core"])
        self.units = params.get("units", 1)
        self.writes_n = params.get("write_ports", 1)
        self.tag_width = params.get("tag_width", 8)
        self.payload_width = params.get("payload_width", 16)
        ports = bench_ports()
        self.alayout = ports["alloc__payload"]
        self.dlayout = ports["dispatch__0__payload"]
        self.wlayout = ports["write__0__payload"]
        self.elayout = ports["pending__0"]
        self.model = CollectorModel(p.warps, p.warp_size, p.entries_per_warp, inject)
        # A few hot entries per warp, so that readers and producers meet often.
        self.hot = min(p.entries_per_warp, 6)
        self.alloc_rate = self.rng.choice([0.3, 0.6, 0.9])
        self.write_rate = self.rng.choice([0.2, 0.5])
        self.ready_rate = self.rng.choice([0.3, 0.7, 1.0])
        self.producer_rate = self.rng.choice([0.2, 0.5])
        self.alloc: Instr | None = None
        self.writes: list[tuple[tuple[int, int], int, list[int]] | None] = [None] * self.writes_n
        self.offered: list[dict | None] = [None] * self.units
        self.ready_now = [False] * self.units
        self.seq = 0
        self.draining = False
        self.dispatches = self.out_of_order = self.woken = 0

    def idle(self) -> None:
        self.set("alloc__valid", 0)
        for j in range(self.writes_n):
            self.set(f"write__{j}__valid", 0)
        for u in range(self.units):
            self.set(f"dispatch__{u}__ready", 0)

    # ------------------------------------------------------------------ drivers
    def new_instruction(self) -> Instr:
        warp = self.rng.randrange(self.core.warps)
        sources = [self.rng.randrange(self.hot) if chance(self.rng, 0.7) else None for _ in range(3)]
        is_mem = chance(self.rng, 0.4)
        mem = {"valid": int(is_mem), "store": int(is_mem and chance(self.rng, 0.5)),
               "color": self.rng.randrange(2) if is_mem else 0}
        ins = Instr(tag=self.seq % (1 << self.tag_width), seq=self.seq, warp=warp, unit=self.rng.randrange(self.units),
                    mem=mem, payload=self.rng.getrandbits(self.payload_width), sources=sources,
                    expected=[None] * 3)
        self.seq += 1
        return ins

    def drive(self) -> None:
        m = self.model
        # Issue: only into a free CU (alloc.ready depends on registered state only), ready bits now.
        self.alloc = None
        if not self.draining and self.get("alloc__ready") and chance(self.rng, self.alloc_rate):
            self.alloc = ins = self.new_instruction()
            src = [{"valid": int(s is not None), "index": s or 0,
                    "ready": int(s is not None and (ins.warp, s) not in m.in_flight)} for s in ins.sources]
            self.set("alloc__payload", pack(self.alayout, {"warp": ins.warp, "tag": ins.tag, "unit": ins.unit,
                                                            "mem": ins.mem, "src": src, "payload": ins.payload}))
        self.set("alloc__valid", self.alloc is not None)
        # Writebacks of producers in flight, each held until its port is ready.
        busy = {w[0] for w in self.writes if w is not None}
        for j in range(self.writes_n):
            if self.writes[j] is None and chance(self.rng, self.write_rate):
                choices = sorted(m.in_flight - busy)
                if choices:
                    e = self.rng.choice(choices)
                    busy.add(e)
                    mask = self.rng.choice([(1 << self.core.warp_size) - 1, self.rng.getrandbits(self.core.warp_size)])
                    self.writes[j] = (e, mask, [self.rng.getrandbits(32) for _ in range(self.core.warp_size)])
            w = self.writes[j]
            self.set(f"write__{j}__valid", w is not None)
            if w is not None:
                self.set(f"write__{j}__payload", pack(self.wlayout, {"warp": w[0][0], "index": w[0][1],
                                                                     "mask": w[1], "data": w[2]}))
        for u in range(self.units):
            self.ready_now[u] = chance(self.rng, self.ready_rate)
            self.set(f"dispatch__{u}__ready", self.ready_now[u])

    # ------------------------------------------------------------------ checks
    def check_pending(self) -> None:
        m = self.model
        listed = Counter()
        for r in range(3 * self.core.collector_units):
            e = unpack(self.elayout, self.get(f"pending__{r}"))
            if e["valid"]:
                listed[(e["warp"], e["index"])] += 1
        readers, unresolved = m.readers(), m.unresolved()
        for e, n in listed.items():
            if n > readers[e]:
                self.fail(f"pending lists entry (warp, index) {e} {n} times but only {readers[e]} operands need it")
        for e, n in unresolved.items():
            if listed[e] < n:
                self.fail(f"pending lists entry {e} {listed[e]} times, but {n} operands still wait for its producer")
        self.checked += 1

    def check_dispatch(self) -> None:
        m = self.model
        fired: list[tuple[int, dict]] = []
        new_offers: dict[int, int] = {}
        for u in range(self.units):
            valid = bool(self.get(f"dispatch__{u}__valid"))
            prev = self.offered[u]
            if prev is not None:  # offered last cycle and not taken: must still be offered, unchanged
                if not valid:
                    self.fail(f"dispatch[{u}] withdrew its offer of tag {prev['tag']}")
            if not valid:
                self.offered[u] = None
                continue
            d = unpack(self.dlayout, self.get(f"dispatch__{u}__payload"))
            if prev is not None and d != prev:
                self.fail(f"dispatch[{u}] changed its payload while waiting: tag {prev['tag']} -> {d['tag']}")
            if prev is None:
                new_offers[u] = d["tag"]
            if self.ready_now[u]:
                fired.append((u, d))
                self.offered[u] = None
            else:
                self.offered[u] = d
        if new_offers:
            self.check_priority(new_offers)
        live_before = [i for i in m.live if not i.dispatched]
        for u, d in fired:
            self.check_one(u, d, live_before)

    def may_go(self, ins: Instr, live: list[Instr]) -> bool:
        """The ordering rules alone (BASE program order, DFLOW memory colors)."""
        older = [o for o in live if o.warp == ins.warp and o.seq < ins.seq]
        if not self.core.mode.out_of_order:
            return not older
        return not (ins.mem["valid"] and any(
            o.mem["valid"] and o.mem["color"] == ins.mem["color"] and (o.mem["store"] or ins.mem["store"])
            for o in older))

    def check_priority(self, offers: dict[int, int]) -> None:
        """New offers (unit -> tag) must pick the oldest ready instruction the rules let go."""
        col = self.dut.collector
        by_tag = {i.tag: i for i in self.model.live if not i.dispatched}
        ready = []
        for c in range(self.core.collector_units):
            if int(getattr(col, f"cu{c}_collected").value):
                ins = by_tag.get(int(getattr(col, f"cu{c}_tag").value))
                if ins is None:
                    self.fail(f"CU {c} holds a tag the model does not know")
                    continue
                ready.append(ins)
        live = list(by_tag.values())
        for u, tag in offers.items():
            cands = [i for i in ready if i.unit == u and self.may_go(i, live)]
            if not cands:
                self.fail(f"dispatch[{u}] offers tag {tag} while no CU of unit {u} may go")
                continue
            oldest = min(cands, key=lambda i: i.seq)
            self.expect(f"dispatch[{u}] new offer (oldest ready of the unit): tag", oldest.tag, tag)

    def check_one(self, u: int, d: dict, live_before: list[Instr]) -> None:
        m = self.model
        match = [i for i in m.live if i.tag == d["tag"] and not i.dispatched]
        if len(match) != 1:
            self.fail(f"dispatch[{u}] of unknown or repeated tag {d['tag']}")
            return
        ins = match[0]
        ins.dispatched = True
        self.dispatches += 1
        where = f"dispatch[{u}] tag {ins.tag} (warp {ins.warp}, seq {ins.seq})"
        self.expect(f"{where} warp", ins.warp, d["warp"])
        self.expect(f"{where} payload", ins.payload, d["payload"])
        self.expect(f"{where} unit", ins.unit, u)
        for k in range(3):
            want = ins.expected[k]
            if want is None:
                self.fail(f"{where} dispatched before operand {k} (entry {ins.sources[k]}) was written back")
            elif want != d["operands"][k]:
                self.fail(f"{where} operand {k} entry {ins.sources[k]}: [MODEL] {[hex(x) for x in want]} "
                          f"[RTL] {[hex(x) for x in d['operands'][k]]}")
            self.checked += 1
        older = [i for i in live_before if i.warp == ins.warp and i.seq < ins.seq]
        if older:
            self.out_of_order += 1
        if not self.core.mode.out_of_order and older:
            self.fail(f"{where} overtook older seq {older[0].seq} of its warp (BASE dispatches in order)")
        if self.core.mode.out_of_order and ins.mem["valid"]:
            for o in older:
                if o.mem["valid"] and o.mem["color"] == ins.mem["color"] and (o.mem["store"] or ins.mem["store"]):
                    self.fail(f"{where} (mem color {ins.mem['color']}, store {ins.mem['store']}) overtook older "
                              f"seq {o.seq} (store {o.mem['store']}) of the same color")
        self.checked += 1

    def sample_and_check(self) -> None:
        m = self.model
        self.check_pending()  # against the state before this cycle's events
        self.check_dispatch()
        m.live = [i for i in m.live if not i.dispatched]
        if self.alloc is not None:
            if not self.get("alloc__ready"):
                self.fail("alloc.ready fell while a CU was free at the start of the cycle")
            self.woken += sum(1 for s in self.alloc.sources if s is not None and (self.alloc.warp, s) in m.in_flight)
            m.allocate(self.alloc)
        for j in range(self.writes_n):
            w = self.writes[j]
            if w is not None and self.get(f"write__{j}__ready"):
                m.write(*w)
                self.writes[j] = None
        # New producers start on entries no operand still needs (the ring guard's promise).
        if not self.draining and chance(self.rng, self.producer_rate):
            e = (self.rng.randrange(self.core.warps), self.rng.randrange(self.hot))
            pending_writes = {w[0] for w in self.writes if w is not None}
            if e not in m.in_flight and e not in pending_writes and m.readers()[e] == 0:
                m.in_flight.add(e)


@cocotb.test()
async def random_allocate_collect_dispatch(dut: Any) -> None:
    """Random instructions, writebacks and dispatch backpressure; then drain."""
    params, seed, inject = bench_env()
    tb = CollectorBench(dut, params, seed, inject)
    await tb.start()
    await tb.run(params.get("cycles", 1500))
    tb.draining = True
    for _ in range(400):
        if not tb.model.live and not tb.model.in_flight:
            break
        await tb.run(1)
    left = [i.seq for i in tb.model.live]
    if left:
        tb.fail(f"{len(left)} instructions never dispatched (seq {left[:8]})")
    dut._log.info(f"{tb.seq} allocated, {tb.dispatches} dispatched, {tb.out_of_order} out of order, "
                  f"{tb.woken} operands woken by writeback; rates alloc {tb.alloc_rate} write {tb.write_rate} "
                  f"ready {tb.ready_rate} producer {tb.producer_rate}")
    if tb.dispatches < 50:
        tb.fail(f"only {tb.dispatches} dispatches: the stimulus did not exercise the collector")
    if tb.core.mode.out_of_order and tb.out_of_order == 0:
        tb.fail("no out-of-order dispatch in DFLOW mode (coverage)")
    tb.finish()

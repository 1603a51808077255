"""The ``hands`` variant: the values a loop carries from one iteration to the next, on a hand of
their own (the *carried hand*, t), so that no iteration relays them past hand s's reach.

A register carried around an innermost loop (live at its header, written in it) goes on the
carried hand when the loop writes it exactly once per iteration: one definition D in the loop, in
a block on every path from the header to its back edges; every read of it in the loop comes after
D on every path (it reads D's value) or before D on every path (it reads the value the iteration
started with); and it is not live where the loop is left. Every iteration then writes the m
carried values on the hand in the same order, so at the header the value the i-th of them
carries is always at distance m - i + 1 (i = 1..m): a read needs no relay, in any iteration.
The loop's preheader (its one predecessor outside it, which may branch elsewhere too: nothing on
the hand is live outside the loop) writes the initial values on the hand in the same order (one
``mov`` each, once per entry into the loop). Nothing else writes the hand.

The pass rewrites the REG code of the loop (``carry``): the reads of the start-of-iteration value
name a fresh register that the preheader's ``mov`` writes; D and the reads after it name another.
Liveness then sees the first as an invariant of the loop and the second as a value of one
iteration; the back edge's ``start = D's value`` is never written in REG but is what the hand's
positions (``frame``) give. Only the hands plan reads these registers: both are on the carried
hand, outside hand s's analysis.

A compiler that reads a carried register's old value after computing its new one (a loop test
on the old stride, ``for (h = n / 2; h > 0; h /= 2)``) computes the new value into another
register and copies it at the latch: ``S: ishr s, r, 1 ... C: mov r, s``. REG pays that copy every
iteration; on the carried hand it is free, since the old value stays readable at its own
distance: S writes the update on the hand, C is dropped (a ``nop``, reported as removed), and
the reads of r between S and C read the start value (*coalesced*, ``Carried.source``). Such a
loop is worth the hand whatever its length: the copy it saves runs every iteration.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dualflow.isa.encoding import MAX_REGS, Instruction
from dualflow.isa.opcodes import Opcode

from .cfg import Cfg, natural_loops
from .hands import LONG_SPAN, HandPlan, _renamed
from .liveness import defines, liveness, uses

#: The hand the carried values of one loop go on (``t``); the other hands then start at ``u``.
CARRIED_HAND = 1


@dataclass
class Carried:
    """The registers one loop carries on the carried hand, in the order each iteration writes them."""

    header: int
    preheader: int
    regs: list[int]  #: the carried registers, in update order
    start: list[int]  #: per register: the one its start-of-iteration reads name after ``carry``
    update: list[int]  #: per register: the one D and the reads after it name after ``carry``
    #: register -> the register its D (``mov r, s``) copies, when coalesced: s's definition writes
    #: the update and the copy is dropped
    source: dict[int, int] = field(default_factory=dict)
    #: the pcs (in the kernel as given) of the copies ``carry`` dropped
    dropped: list[int] = field(default_factory=list)

    @property
    def registers(self) -> set[int]:
        return set(self.start) | set(self.update)


def _forward(cfg: Cfg, body: set[int], index: dict[int, int], start: int, avoid: int | None) -> set[int]:
    """Blocks of ``body`` reached from ``start`` by forward edges (not entering ``avoid``)."""
    seen, work = {start}, [start]
    while work:
        b = work.pop()
        for s in cfg.blocks[b].succs:
            if s in body and s not in seen and s != avoid and index[s] > index[b]:
                seen.add(s)
                work.append(s)
    return seen


def find(cfg: Cfg, weight: dict[int, float], least: int = LONG_SPAN) -> Carried | None:
    """The innermost loop whose carried values are worth a hand (more than ``least`` values
    written per iteration; by default ``LONG_SPAN``: hand s would relay them), hottest first, and
    those of its carried registers that qualify; None if no loop has any. Registers are not
    renamed yet."""
    order = cfg.rpo()
    index = {b: i for i, b in enumerate(order)}
    loops = natural_loops(cfg)
    live_in, live_out = liveness(cfg)
    best: tuple[float, Carried] | None = None
    for header in sorted(loops, key=lambda h: index[h]):
        body = loops[header]
        if any(h != header and loops[h] < body for h in loops):
            continue  # holds another loop: copy_carried's business
        short = sum(defines(ins) is not None for b in body for ins in cfg.blocks[b].code) <= least
        outside = [p for p in cfg.blocks[header].preds if p not in body]
        if len(outside) != 1:  # the preheader: it writes the start values (its other successors ignore them)
            continue
        latches = [p for p in cfg.blocks[header].preds if p in body]
        exits = {s for b in body for s in cfg.blocks[b].succs if s not in body}
        reach = {b: _forward(cfg, body, index, b, None) for b in body}
        # block -> blocks reached from the header without passing it (those it does not dominate)
        avoiding = {d: _forward(cfg, body, index, header, d) if d != header else set() for d in body}

        def dominates(d: int, b: int, avoiding: dict[int, set[int]] = avoiding) -> bool:
            return b == d or b not in avoiding[d]

        defs: dict[int, list[tuple[int, int]]] = {}
        for b in body:
            for k, ins in enumerate(cfg.blocks[b].code):
                r = defines(ins)
                if r is not None:
                    defs.setdefault(r, []).append((b, k))
        chosen = []
        for r in sorted(live_in[header]):
            if len(defs.get(r, ())) != 1:
                continue
            bd, kd = defs[r][0]
            if not all(dominates(bd, latch) for latch in latches):
                continue
            # read where the loop is left only by exit blocks entered from the loop after D, and
            # nowhere after them unless they write it anew (each group of lanes reads D's value
            # as it leaves; a copy ``mov r, r`` before a join is such a write)
            if any(r in live_in[x] and ((r in live_out[x] and all(defines(ins) != r for ins in cfg.blocks[x].code))
                                        or not all(p in body and dominates(bd, p) for p in cfg.blocks[x].preds))
                   for x in exits):
                continue
            # every block of the loop sees D always or never before it (one advance per block)
            if not all(dominates(bd, b) or b not in reach[bd] for b in body if b != bd):
                continue
            s = _copied(cfg, body, defs, (bd, kd), r, live_in[header], exits, live_in, dominates, reach)
            if any(s is not None and s == other for *_, other in chosen):
                s = None  # copied into two carried registers: S can write only one update
            if s is None and short:
                continue
            at = (bd, kd) if s is None else defs[s][0]  # where the update is written on the hand
            chosen.append((index[at[0]], at[1], r, s))
        if not chosen:
            continue
        chosen.sort()
        source = {r: s for _, _, r, s in chosen if s is not None}
        score = weight.get(header, 1) * (len(chosen) + len(source))
        if best is None or score > best[0]:
            best = (score, Carried(header, outside[0], [r for _, _, r, _ in chosen], [], [], source))
    return best[1] if best else None


def _copied(cfg: Cfg, body: set[int], defs: dict[int, list[tuple[int, int]]], d: tuple[int, int], r: int,
            header_live: set[int], exits: set[int], live_in, dominates, reach) -> int | None:
    """The register s if carried register r's one definition ``d`` in the loop is a copy ``mov r, s``
    that can be coalesced (module docstring): s has one definition S in the loop, before ``d`` on
    every path to it, not carried (not live at the header), not read where the loop is left, and
    every block of the loop sees S always or never before it; else None."""
    ins = cfg.blocks[d[0]].code[d[1]]
    if ins.op is not Opcode.MOV or ins.bimm or ins.is_uniform("b"):
        return None
    s = ins.b - 1
    if s == r or s < 0 or len(defs.get(s, ())) != 1 or s in header_live or any(s in live_in[x] for x in exits):
        return None
    bs, ks = defs[s][0]
    if not dominates(bs, d[0]) or (bs == d[0] and ks > d[1]):
        return None
    if not all(dominates(bs, b) or b not in reach[bs] for b in body if b != bs):
        return None
    return s


def carry(cfg: Cfg, c: Carried) -> bool:
    """Rewrite the loop's REG code for the carried hand (module docstring) and fill ``c.start``
    and ``c.update``; False (nothing changed) if the registers would run out."""
    top = max([r for b in cfg.blocks for ins in b.code for r in (defines(ins), *uses(ins)) if r is not None],
              default=-1)
    if top + 2 * len(c.regs) >= MAX_REGS:
        return False
    body = natural_loops(cfg)[c.header]
    index = {b: i for i, b in enumerate(cfg.rpo())}
    exits = {s for b in body for s in cfg.blocks[b].succs if s not in body}
    c.start = [top + 1 + 2 * i for i in range(len(c.regs))]
    c.update = [top + 2 + 2 * i for i in range(len(c.regs))]
    wanted = set(c.regs) | set(c.source.values())  # each D, and each coalesced copy's S
    where = {}
    for b in body:
        for k, ins in enumerate(cfg.blocks[b].code):
            r = defines(ins)
            if r in wanted:
                where[r] = (b, k)
    for r, start, update in zip(c.regs, c.start, c.update):
        bd, kd = where[r]
        s = c.source.get(r)
        after = _forward(cfg, body, index, bd, None) - {bd}  # D comes before these (dominated: checked)
        for b in body:
            blk = cfg.blocks[b]
            code = list(blk.code)
            for k, ins in enumerate(code):
                new = (b == bd and k > kd) or b in after
                ins = _renamed(ins, r, update if new else start)
                if s is not None:  # the copy's source is the update, and its definition writes it
                    ins = _renamed(ins, s, update)
                    if (b, k) == where[s]:
                        ins = dataclasses.replace(ins, dst=update + 1)
                if (b, k) == (bd, kd):
                    if s is None:
                        ins = dataclasses.replace(ins, dst=update + 1)
                    else:
                        ins = Instruction(Opcode.NOP)
                        c.dropped.append(blk.pcs[k])
                code[k] = ins
            blk.code = code
        for x in exits:  # an exit block reads the last update (find: entered only after D)
            code = list(cfg.blocks[x].code)
            for k, ins in enumerate(code):
                code[k] = _renamed(ins, r, update)
                if defines(ins) == r:
                    break
            cfg.blocks[x].code = code
    pre = cfg.blocks[c.preheader]
    at = len(pre.code) - (1 if pre.terminator is not None else 0)
    # Initial values the preheader itself computes, in the hand's order, are written on the hand
    # where they are computed; a ``mov`` writes each of the others after them.
    last = {defines(ins): k for k, ins in enumerate(pre.code[:at]) if defines(ins) is not None}
    written, after = 0, -1
    for r in c.regs:
        k = last.get(r)
        if k is None or k <= after:
            break
        after, written = k, written + 1
    code = list(pre.code)
    for r, start in zip(c.regs[:written], c.start[:written]):
        k = last[r]
        code[k] = dataclasses.replace(code[k], dst=start + 1)
        code[k + 1:] = [_renamed(ins, r, start) for ins in code[k + 1:]]
    movs = [Instruction(Opcode.MOV, dst=start + 1, b=r + 1)
            for r, start in zip(c.regs[written:], c.start[written:])]
    pre.code = code[:at] + movs + code[at:]
    pre.pcs = pre.pcs[:at] + [None] * len(movs) + pre.pcs[at:]
    return True


def frame(cfg: Cfg, c: Carried, plan: HandPlan | None, limit: int) -> HandPlan | None:
    """``plan`` (the other hands', or None) with the carried registers on ``CARRIED_HAND`` at
    their positions; None if a distance read on it would exceed ``limit``. The preheader starts
    the hand at 0 (nothing before the loop is live on it), the header at m."""
    h = CARRIED_HAND
    m = len(c.regs)
    order = cfg.rpo()
    index = {b: i for i, b in enumerate(order)}
    body = natural_loops(cfg)[c.header]
    mine = {r: h for r in c.registers}
    hin = {b: 0 for b in order}
    pos: dict[int, int] = {}
    for i, start in enumerate(c.start):
        pos[start] = i
    for b in sorted(body, key=index.get):  # forward order: every block's predecessors first
        if b != c.header:
            hin[b] = max(hin[p] + sum(defines(ins) in mine for ins in cfg.blocks[p].code)
                         for p in cfg.blocks[b].preds if p in body and index[p] < index[b])
        else:
            hin[b] = m
    exits = {s for b in body for s in cfg.blocks[b].succs if s not in body}
    for x in exits:  # where each group of lanes leaves: the same position whichever iteration it is
        entries = {hin[p] + sum(defines(ins) in mine for ins in cfg.blocks[p].code)
                   for p in cfg.blocks[x].preds if p in body}
        if any(r in mine for ins in cfg.blocks[x].code for r in uses(ins)):
            if len(entries) != 1 or any(p not in body for p in cfg.blocks[x].preds):
                return None
            hin[x] = entries.pop()
    far = 0
    for b in sorted(body | {x for x in exits if hin[x]}, key=index.get):
        now = hin[b]
        for ins in cfg.blocks[b].code:
            for r in uses(ins):
                if r in mine:
                    far = max(far, now - pos[r])
            r = defines(ins)
            if r in mine:
                pos[r] = now
                now += 1
    if far > limit:
        return None
    if plan is None:
        plan = HandPlan({}, {}, {b: {} for b in order}, {}, {})
    plan.hand.update(mine)
    plan.pos.update(pos)
    for b in order:
        plan.hand_in.setdefault(b, {})[h] = hin[b]
    plan.max_distance[h] = far
    plan.limit = max(plan.limit, limit)
    return plan

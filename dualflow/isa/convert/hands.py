"""The ``hands`` variant in converted code: which registers live on a hand of their own.

Hand s (0) is the ring the rest of the converter manages (frames, tails, relays, spills). A
register may go on another hand (t, u, v: 1..3) when it holds one value a loop reads without
writing it: it has one definition in the whole CFG (not live at the kernel's entry, so that
definition is on every path to each of its reads), it is not carried around a loop that contains
its definition (not live at that loop's header), and it is live into some loop that does not
contain its definition (an invariant of that loop, read in it or live through it). A loop whose
header has a value of hand h live writes nothing on h, so inside it h's RP stands still and
every distance on h is constant: the loop needs no relay, recomputation or reload for those
values, and they take no place in hand s's frames. So the invariants of an outer loop and those
of an inner loop defined in the outer loop's body (which the outer loop writes every iteration)
go on different hands.

Positions on a hand are RP advances from the kernel's entry (``hand_in``) along the forward
edges; a back edge is followed only into a header where a value of the hand is live (then the
loop writes nothing on it). Every join where a value of the hand is live must be reached with
the same advance on every edge, which makes each value's distance the same on every path: where
paths of unequal advance meet, the shorter ones end with ``rpinc k -> h`` (``hand_pad``), which
also satisfies the reconvergence rule (the join takes the largest RP per hand: every path
arrives with the same). A loop that writes a hand starts each iteration at another advance, but
nothing on that hand is live across its header, so distances within an iteration do not depend
on it. A hand's ring needs one entry more than the largest distance read on it
(``HandPlan.ring``): a value is never relayed on it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dualflow.isa.encoding import MAX_REGS, Instruction
from dualflow.isa.opcodes import MAX_HANDS, SPECS, Opcode

from . import costs
from .cfg import Cfg, natural_loops
from .liveness import defines, liveness, uses
from .work import charge

#: The hand the invariants of the outermost loops go on first (``t``; hand s is 0).
INVARIANT_HAND = 1
#: The hands other than s the converter may put values on (t, u, v).
OTHER_HANDS = tuple(range(INVARIANT_HAND, MAX_HANDS))
#: A value read more than this many values after its definition is a candidate for another hand
#: even if no loop reads it (hand s would relay it past its Dmax, or spill it).
LONG_SPAN = 16


@dataclass(frozen=True)
class CfgFacts:
    """What ``HandPlan.of`` reads of a CFG, decoded once for the many plans tried on it: the blocks
    in reverse postorder (and each one's index), the natural loops, and per block the register
    each instruction writes (None: none) and those it reads."""

    order: list[int]
    index: dict[int, int]
    loops: dict[int, set[int]]
    defs: dict[int, list[int | None]]
    reads: dict[int, list[list[int]]]

    @staticmethod
    def of(cfg: Cfg) -> CfgFacts:
        order = cfg.rpo()
        code = {b: cfg.blocks[b].code for b in order}
        return CfgFacts(order, {b: i for i, b in enumerate(order)}, natural_loops(cfg),
                        {b: [defines(ins) for ins in code[b]] for b in order},
                        {b: [uses(ins) for ins in code[b]] for b in order})


@dataclass
class HandPlan:
    """Registers on hands other than s, and where their values sit."""

    hand: dict[int, int]  #: register -> its hand (1..)
    pos: dict[int, int]  #: register -> position on its hand (RP advance before its write)
    hand_in: dict[int, dict[int, int]]  #: block -> hand -> RP advance at its entry
    hand_pad: dict[int, dict[int, int]]  #: block -> hand -> rpinc at its end
    max_distance: dict[int, int] = field(default_factory=dict)  #: hand -> largest distance read
    limit: int = 0  #: the largest distance allowed on the hands (their rings less one, Dmax)
    pad_cost: float = 0.0  #: the pads in loops, loop-weighted (each ``rpinc`` its block's weight)
    #: pcs of REG copies the plan makes unnecessary (coalesced on the carried hand, carried.py)
    dropped: list[int] = field(default_factory=list)

    @property
    def hands(self) -> int:
        """How many hands the kernel needs (s and up to the highest used)."""
        return 1 + max(self.hand.values(), default=0)

    def ring(self, h: int) -> int:
        """The ring hand ``h`` needs: one more than its largest distance read."""
        return self.max_distance.get(h, 0) + 1

    def rings(self) -> dict[int, int]:
        """The ring each hand other than s needs, for every hand up to the highest used."""
        return {h: self.ring(h) for h in range(INVARIANT_HAND, self.hands)}

    @staticmethod
    def of(cfg: Cfg, regs: dict[int, int], live_in: dict[int, set[int]] | None = None,
           weight: dict[int, float] | None = None, facts: CfgFacts | None = None) -> HandPlan | None:
        """The positions of ``regs`` (register -> hand) in ``cfg``; None if a loop would have to
        write or pad a hand with a value live at its header, or an edge would have to pad (a
        block whose successors need different advances).

        Only joins where a value of the hand is live need every path to arrive with the same
        advance: after another join, values written later are read at distances that do not
        depend on the path, whatever the advance the join starts from. ``facts``: ``CfgFacts.of(cfg)``,
        given when many plans are tried on one CFG."""
        if live_in is None:
            live_in = liveness(cfg)[0]
        weight = weight or {}
        facts = facts or CfgFacts.of(cfg)
        order, index, loops = facts.order, facts.index, facts.loops
        hands = sorted(set(regs.values()))
        writes = {b: {h: 0 for h in hands} for b in order}
        for b in order:
            for r in facts.defs[b]:
                if r in regs:
                    writes[b][regs[r]] += 1
        # Joins that constrain their predecessors, per hand: a value of the hand is live there.
        bound = {b: {regs[r] for r in live_in[b] if r in regs} for b in order}
        # Lanes of a warp run the blocks of an ssy region apart and meet only at its join, which
        # takes each hand's later RP: if a value of the hand is live there, every group must get
        # there with the same advance, so every join inside the region is bound too (a value
        # written after it would otherwise sit at a position that depends on the path).
        for region in cfg.regions.values():
            need = bound.get(region.join, set())
            for b in region.blocks if need else ():
                if b in index and sum(p in index for p in cfg.blocks[b].preds) > 1:
                    bound[b] |= need
        for header, body in loops.items():  # such a loop may not write the hand
            if any(writes[b][h] for h in bound[header] for b in body):
                return None
        # Edges followed per hand: every forward edge; a back edge only into a header that holds
        # a value of the hand (its loop writes nothing on it).
        preds = {b: {h: [p for p in cfg.blocks[b].preds if p in index
                         and (index[p] < index[b] or h in bound[b])] for h in hands} for b in order}
        hin = {b: {h: 0 for h in hands} for b in order}
        hout = {b: dict(writes[b]) for b in order}
        changed, passes = True, 0
        while changed:  # largest advance over incoming paths; a block ends at what its successors need
            changed = False
            passes += 1
            charge(len(order) * len(hands))
            if passes > 2 * len(order) + 4:
                return None  # an edge would need a pad of its own: no fixed point
            for b in order:
                blk = cfg.blocks[b]
                for h in hands:
                    new_in = max((hout[p][h] for p in preds[b][h]), default=0)
                    new_out = max([new_in + writes[b][h]] + [hin[s][h] for s in blk.succs if s in index
                                                             and h in bound[s]])
                    if new_in != hin[b][h] or new_out != hout[b][h]:
                        hin[b][h], hout[b][h] = new_in, new_out
                        changed = True
        pad = {b: {h: hout[b][h] - hin[b][h] - writes[b][h] for h in hands} for b in order}
        for b in order:  # every successor that needs it gets exactly the advance the block ends with
            for s in cfg.blocks[b].succs:
                if s in index and any(hin[s][h] != hout[b][h] for h in bound[s]):
                    return None
        for header, body in loops.items():
            if any(pad[b][h] for h in bound[header] for b in body):
                return None
        if not _lanes_agree(cfg, regs, live_in, writes, pad, facts):
            return None
        pos: dict[int, int] = {}
        at = {b: dict(hin[b]) for b in order}
        for b in order:
            for r in facts.defs[b]:
                if r in regs:
                    pos[r] = at[b][regs[r]]
                    at[b][regs[r]] += 1
        # Largest distance read on each hand.
        far: dict[int, int] = {}
        for b in order:
            now = dict(hin[b])
            for reads, r in zip(facts.reads[b], facts.defs[b]):
                for u in reads:
                    if u in regs:
                        h = regs[u]
                        far[h] = max(far.get(h, 0), now[h] - pos[u])
                if r in regs:
                    now[regs[r]] += 1
        pads = {b: {h: k for h, k in p.items() if k} for b, p in pad.items()}
        in_loop = set().union(*loops.values()) if loops else set()
        cost = sum(weight.get(b, 1) * len(p) for b, p in pads.items() if b in in_loop)
        return HandPlan(dict(regs), pos, hin, pads, far, pad_cost=cost)


def _loop_blocks(cfg: Cfg, loops: dict[int, set[int]], region) -> set[int]:
    """The blocks of the loops inside an ``ssy`` region (a cyclic region's)."""
    return set().union(*(body for h, body in loops.items() if h in region.blocks))


def _lanes_agree(cfg: Cfg, regs: dict[int, int], live_in, writes, pad, facts: CfgFacts) -> bool:
    """Whether every value of a hand live at the join of a region with a loop inside sits at the
    same position for every lane. Lanes leave such a loop after different iterations, each group
    going on from the RPs it had at its exit: a value written in the loop, or on a hand the loop
    writes or pads, would sit at a position that depends on the lane. One written in the region
    outside its loops, on a hand they do not move, is where the plan says for every group."""
    for region in cfg.regions.values():
        if not region.lanes_leave_apart or region.join not in live_in:
            continue
        inner = _loop_blocks(cfg, facts.loops, region)
        moved = {h for b in inner if b in writes for h in writes[b] if writes[b][h] or pad[b][h]}
        defs = {r: b for b in region.blocks if b in writes for r in facts.defs[b]}
        for r in live_in[region.join]:
            if r in regs and r in defs and (defs[r] in inner or regs[r] in moved):
                return False
    return True


def spans(cfg: Cfg) -> dict[int, int]:
    """Register -> the most values written between one of its definitions and a read of it, in
    the blocks' reverse postorder (a value read that far on hand s is relayed or spilled)."""
    at, last_def, far = 0, {}, {}
    for b in cfg.rpo():
        for ins in cfg.blocks[b].code:
            for r in uses(ins):
                if r in last_def:
                    far[r] = max(far.get(r, 0), at - last_def[r])
            r = defines(ins)
            if r is not None:
                last_def[r] = at
                at += 1
    return far


def invariant_candidates(cfg: Cfg, weight: dict[int, float], long_span: int = LONG_SPAN) -> list[int]:
    """``candidate_values``' registers, most valuable first."""
    value = candidate_values(cfg, weight, long_span)
    return sorted(value, key=lambda r: (-value[r], r))


def candidate_values(cfg: Cfg, weight: dict[int, float], long_span: int = LONG_SPAN) -> dict[int, float]:
    """Registers that may live on a hand other than s, and what that saves, roughly, in
    loop-weighted instructions (their loop-weighted reads, the loops they are live into: each
    would relay them every iteration, and their span: hand s relays a far value now and then).

    One definition in the CFG; not live at the entry (so the definition is on every path to
    every read); not live at the header of a loop containing the definition (not carried
    around it); live into some loop that does not contain the definition, or read more than
    ``long_span`` values after it (``spans``)."""
    order = cfg.rpo()
    live_in, _ = liveness(cfg)
    loops = natural_loops(cfg)
    defs: dict[int, list[int]] = {}
    for b in order:
        for ins in cfg.blocks[b].code:
            r = defines(ins)
            if r is not None:
                defs.setdefault(r, []).append(b)
    span = spans(cfg)
    apart_joins = {rg.join: rid for rid, rg in cfg.regions.items() if rg.lanes_leave_apart}
    value: dict[int, float] = {}
    for r, where in defs.items():
        if len(where) != 1 or r in live_in[cfg.entry]:
            continue
        d = where[0]
        if any(d in body and r in live_in[h] for h, body in loops.items()):
            continue
        into = [h for h, body in loops.items() if d not in body and r in live_in[h]]
        crosses = [j for j in apart_joins if r in live_in[j] and d in cfg.regions[apart_joins[j]].blocks]
        if crosses:  # else stored on its way to the join and reloaded after it (hand s)
            value[r] = weight.get(d, 1) * (costs.LOCAL_STORE_COST + costs.LOCAL_LOAD_COST)
        elif into or span.get(r, 0) > long_span:
            # each loop it is live into would relay it every iteration; hand s relays a value read
            # far away about once per LONG_SPAN values written in between
            value[r] = sum(weight.get(h, 1) for h in into) + weight.get(d, 1) * span.get(r, 0) / long_span
    for b in order:
        for ins in cfg.blocks[b].code:
            for r in uses(ins):
                if r in value:
                    value[r] += weight.get(b, 1)
    return value


#: The orders ``assign`` may take its candidates in; the driver converts with each and keeps the
#: cheaper code (driver.py, ``_convert_in_budget``).
ORDERS = ("value", "outside-first")


def assign(cfg: Cfg, weight: dict[int, float], limit: int | dict[int, int],
           hands: tuple[int, ...] = OTHER_HANDS, total: int | None = None,
           exclude: set[int] = frozenset(), order: str = "value") -> HandPlan | None:
    """The registers on hands other than s: the candidates one at a time, each on the one of
    ``hands`` where the rings grow least (the first such) and the plan stays possible, every
    distance read on that hand stays at most its limit (``limit``: one for all, or hand ->
    limit), the rings of those hands take at most ``total`` entries together and the pads it adds
    in loops cost less than half of what the value saves (``candidate_values``); None if none
    fits. Registers in ``exclude`` are placed by someone else (carried.py).

    ``order`` (``ORDERS``): ``value``, most valuable first; or ``outside-first``, values defined
    outside every loop first, then by value. A value defined in a loop makes its hand one that
    loop writes, where no invariant of the loop may go: taken first because it is the most
    valuable one, it can shut out a loop nest's many invariants, which together save more
    (bitonic's compare-and-swap loops, docs/converter.md)."""
    limits = limit if isinstance(limit, dict) else {h: limit for h in hands}
    hands = tuple(h for h in hands if limits.get(h, 0) > 0)
    live_in = liveness(cfg)[0]
    value = candidate_values(cfg, weight)
    ranked = sorted((r for r in value if r not in exclude), key=lambda r: (-value[r], r))
    if order == "outside-first":
        loops = natural_loops(cfg)
        in_loops = set().union(*loops.values()) if loops else set()
        defined_in_loop = {defines(ins) for b in in_loops for ins in cfg.blocks[b].code} - {None}
        ranked.sort(key=lambda r: r in defined_in_loop)  # stable: by value within each group
    elif order != "value":
        raise ValueError(f"unknown order {order!r} (have: {', '.join(ORDERS)})")
    plan = _greedy(cfg, ranked, value, weight, live_in, hands, limits, total, CfgFacts.of(cfg))
    if plan is not None:
        plan.limit = max(limits[h] for h in set(plan.hand.values()))
    return plan


def _greedy(cfg: Cfg, order: list[int], value: dict[int, float], weight: dict[int, float], live_in,
            hands: tuple[int, ...], limits: dict[int, int], total: int | None, facts: CfgFacts) -> HandPlan | None:
    """``assign``'s plan with the candidates taken in ``order``."""
    chosen: dict[int, int] = {}
    plan = None
    for r in order:
        best = None
        for h in hands:
            trial = HandPlan.of(cfg, {**chosen, r: h}, live_in, weight, facts)
            if (trial is None or trial.max_distance.get(h, 0) > limits[h]
                    or trial.pad_cost - (plan.pad_cost if plan else 0) > value[r] / 2
                    or total is not None and sum(trial.rings().values()) > total):
                continue
            if best is None or sum(trial.rings().values()) < sum(best[1].rings().values()):
                best = (h, trial)
        if best is not None:
            chosen[r], plan = best
    return plan


def _renamed(ins: Instruction, old: int, new: int) -> Instruction:
    """``ins`` reading register ``new`` instead of ``old``."""
    change = {}
    for name in SPECS[ins.op].sources:
        if (name == "b" and ins.bimm) or ins.is_uniform(name):
            continue
        if getattr(ins, name) == old + 1:
            change[name] = new + 1
    return dataclasses.replace(ins, **change) if change else ins


def split_webs(cfg: Cfg) -> int:
    """Give a register of its own to every value that could live on a hand other than s but
    shares its register with other values (a compiler reuses registers): a definition whose
    every read is reached by it alone, read in a loop that does not contain it, live into one,
    live at the join of a region with a loop inside, or read more than ``LONG_SPAN`` values
    after it. Rewrites
    the REG code of ``cfg``'s blocks (before its analysis); returns how many values it renamed."""
    order = cfg.rpo()
    loops = natural_loops(cfg)
    defs_of: dict[int, list[tuple[int, int]]] = {}
    top = -1
    for b in order:
        for k, ins in enumerate(cfg.blocks[b].code):
            r = defines(ins)
            if r is not None:
                defs_of.setdefault(r, []).append((b, k))
                top = max(top, r)
            top = max([top, *uses(ins)])
    shared = {r for r, where in defs_of.items() if len(where) > 1}
    if not shared:  # without loops, still the values read far away
        return 0
    # Reaching definitions of the shared registers, per block entry: register -> set of (block,
    # index) definitions; (-1, -1) is the value at the kernel's entry.
    entry = (-1, -1)
    gen: dict[int, dict[int, tuple[int, int]]] = {b: {} for b in order}
    for b in order:
        for k, ins in enumerate(cfg.blocks[b].code):
            r = defines(ins)
            if r in shared:
                gen[b][r] = (b, k)
    reach_in = {b: {} for b in order}
    reach_in[cfg.entry] = {r: {entry} for r in shared}
    changed = True
    while changed:
        changed = False
        for b in order:
            out = {r: set(v) for r, v in reach_in[b].items()}
            out.update({r: {d} for r, d in gen[b].items()})
            for s in cfg.blocks[b].succs:
                if s not in reach_in:
                    continue
                for r, v in out.items():
                    have = reach_in[s].setdefault(r, set())
                    if not v <= have:
                        have |= v
                        changed = True
    # Each use of a shared register: the definitions reaching it; and the definitions live into
    # a loop header.
    live_in, _ = liveness(cfg)
    reaches: dict[tuple[int, int], list[tuple[int, int, frozenset]]] = {}  # def -> its uses
    live_loop: dict[tuple[int, int], set[int]] = {}  # def -> headers it is live into
    for b in order:
        if b in loops:
            for r in live_in[b] & shared:
                for d in reach_in[b].get(r, ()):
                    live_loop.setdefault(d, set()).add(b)
        now = {r: set(v) for r, v in reach_in[b].items()}
        for k, ins in enumerate(cfg.blocks[b].code):
            for r in set(uses(ins)) & shared:
                at = frozenset(now.get(r, ()))
                for d in at:
                    reaches.setdefault(d, []).append((b, k, at))
            r = defines(ins)
            if r in shared:
                now[r] = {(b, k)}
    # Each instruction's place in the reverse postorder, in values written before it.
    place: dict[tuple[int, int], int] = {}
    at = 0
    for b in order:
        for k, ins in enumerate(cfg.blocks[b].code):
            place[(b, k)] = at
            at += defines(ins) is not None
    apart_joins = [rg.join for rg in cfg.regions.values() if rg.lanes_leave_apart and rg.join in reach_in]
    renamed = 0
    for r in sorted(shared):
        for d in defs_of[r]:
            b, k = d
            used = reaches.get(d, [])
            if not used or any(at != {d} for _, _, at in used):
                continue
            outside = {h for h, body in loops.items() if b not in body}  # loops it may be invariant in
            long = max(place[(ub, uk)] - place[d] for ub, uk, _ in used) > LONG_SPAN
            crosses = any(d in reach_in.get(j, {}).get(r, ()) for j in apart_joins)
            if not long and not crosses and not live_loop.get(d, set()) & outside and not any(
                    ub in loops[h] for ub, _, _ in used for h in outside):
                continue
            if top + 1 >= MAX_REGS:
                return renamed
            top += 1
            new = top
            blk = cfg.blocks[b]
            blk.code = list(blk.code)
            blk.code[k] = dataclasses.replace(blk.code[k], dst=new + 1)  # its own reads stay
            for ub, uk, _ in used:
                ublk = cfg.blocks[ub]
                ublk.code = list(ublk.code)
                ublk.code[uk] = _renamed(ublk.code[uk], r, new)
            renamed += 1
    return renamed


def copy_carried(cfg: Cfg) -> list[tuple[int, int, int]]:
    """Copy, at the top of each loop that holds other loops, every register carried around it
    (live at its header, written in it) that is live into an inner loop not writing it:
    ``mov r, r``, which ``split_webs`` then gives a register of its own (read by the rest of the
    iteration), a candidate for another hand. One ``mov`` per outer iteration instead of a relay,
    spill or reload of the value in every inner loop it lives through. Rewrites the REG code of
    ``cfg``'s blocks (before its analysis); returns each copy as (block, index, register)."""
    loops = natural_loops(cfg)
    live_in, _ = liveness(cfg)
    written = {h: {defines(ins) for b in body for ins in cfg.blocks[b].code} - {None} for h, body in loops.items()}
    copies = []
    for header, body in sorted(loops.items()):
        inner = [h for h in loops if h != header and loops[h] < body]
        carried = sorted(r for r in live_in[header] & written[header]
                         if any(r in live_in[h] and r not in written[h] for h in inner))
        if not carried:
            continue
        blk = cfg.blocks[header]
        blk.code = [Instruction(Opcode.MOV, dst=r + 1, b=r + 1) for r in carried] + list(blk.code)
        blk.pcs = [None] * len(carried) + list(blk.pcs)
        copies += [(header, k, r) for k, r in enumerate(carried)]
    return copies


def copy_region_exits(cfg: Cfg) -> list[tuple[int, int, int]]:
    """Copy, on the way to the join of each region with a loop inside, every register the
    region's loops write that is live at the join: ``mov r, r`` before the ``sync`` of the
    join's one predecessor, which ``split_webs`` then gives a register of its own. Lanes leave
    such a loop after different iterations, so on hand s the value's position would depend on
    the lane (the code generator stores it on the way and reloads it after the join); each
    group of lanes writes the copy on another hand, which the loop does not move, at the same
    position (``_lanes_agree``). One ``mov`` per group instead of a store, and no reload.
    Rewrites the REG code (before analysis); returns each copy as (block, index, register)."""
    loops = natural_loops(cfg)
    live_in, _ = liveness(cfg)
    copies = []
    for region in sorted(cfg.regions.values(), key=lambda rg: rg.id):
        join = region.join
        preds = [p for p in cfg.blocks[join].preds if p in live_in] if join in live_in else []
        if not region.lanes_leave_apart or len(preds) != 1:
            continue
        inner = _loop_blocks(cfg, loops, region)
        written = {defines(ins) for b in inner for ins in cfg.blocks[b].code} - {None}
        regs = sorted(live_in[join] & written)
        pre = cfg.blocks[preds[0]]
        if not regs or pre.id in inner:
            continue
        at = len(pre.code) - (1 if pre.terminator is not None else 0)
        pre.code = pre.code[:at] + [Instruction(Opcode.MOV, dst=r + 1, b=r + 1) for r in regs] + pre.code[at:]
        pre.pcs = pre.pcs[:at] + [None] * len(regs) + pre.pcs[at:]
        copies += [(pre.id, at + k, r) for k, r in enumerate(regs)]
    return copies


def drop_unused_copies(cfg: Cfg, copies: list[tuple[int, int, int]], plan: HandPlan | None) -> None:
    """Undo the copies of ``copy_carried`` and ``copy_region_exits`` whose value did not go on
    another hand (``plan``): the registers ``split_webs`` made of the copy and of the definition
    it copies (a copy can leave that definition's reads to itself alone) name the copied
    register again, and the copy becomes a ``nop``. A copy whose source went on a hand stays."""
    on_hands = set(plan.hand) if plan is not None else set()
    for b, k, r in copies:
        ins = cfg.blocks[b].code[k]
        new, src = ins.dst - 1, ins.b - 1
        if new in on_hands or src in on_hands:
            continue
        for old in {new, src} - {r}:  # back to the register it was split from
            for blk in cfg.blocks:
                blk.code = [_renamed(dataclasses.replace(i, dst=r + 1) if defines(i) == old else i, old, r)
                            for i in blk.code]
        cfg.blocks[b].code[k] = Instruction(Opcode.NOP)

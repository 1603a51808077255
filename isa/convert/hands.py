"""The ``hands`` variant in converted code: which registers live on a hand of their own.

Hand s (0) is the ring the rest of the converter manages (frames, tails, relays, spills). A
register is put on the *invariant hand* (hand 1, ``t``) when nothing inside a loop writes it: it
has one definition in the whole CFG, outside every loop, on every path to each of its reads
(not live at the kernel's entry), and it is live into some loop. No instruction in a loop
writes that hand, so inside a loop its RP stands still and every distance on it is constant:
the loop needs no relay, recomputation or reload for those values, and they take no place in
hand s's frames.

Positions on the invariant hand are *absolute*: every block has one RP advance on it from the
kernel's entry (``hand_in``), the same on every path, which makes the position of each value the
same wherever it is read. Blocks outside loops that write the hand advance it; where paths of
unequal advance meet, the shorter ones end with ``rpinc k -> t`` (``hand_pad``), which also
satisfies the reconvergence rule (the join takes the largest RP per hand: every path arrives
with the same). Inside a loop nothing writes or pads the hand: if a pad would be needed there
(a loop block with an edge to a join that other paths reach with a larger advance), the
assignment is given up (``HandPlan.of`` returns None). The hand's ring needs one entry more
than the largest distance read on it (values are never relayed on it, so the hand holds every
value it got until the kernel ends): ``HandPlan.ring``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dualflow.isa.encoding import MAX_REGS, Instruction
from dualflow.isa.opcodes import SPECS

from .cfg import Cfg, natural_loops
from .liveness import defines, liveness, uses

#: The hand loop invariants defined outside every loop live on (``t``; hand s is 0).
INVARIANT_HAND = 1


@dataclass
class HandPlan:
    """Registers on hands other than s, and where their values sit."""

    hand: dict[int, int]  #: register -> its hand (1..)
    pos: dict[int, int]  #: register -> absolute position on its hand (RP advance before its write)
    hand_in: dict[int, dict[int, int]]  #: block -> hand -> RP advance at its entry
    hand_pad: dict[int, dict[int, int]]  #: block -> hand -> rpinc at its end
    max_distance: dict[int, int] = field(default_factory=dict)  #: hand -> largest distance read
    limit: int = 0  #: the largest distance allowed on the hands (their rings less one, Dmax)

    @property
    def hands(self) -> int:
        """How many hands the kernel needs (s and up to the highest used)."""
        return 1 + max(self.hand.values(), default=0)

    def ring(self, h: int) -> int:
        """The ring hand ``h`` needs: one more than its largest distance read."""
        return self.max_distance.get(h, 0) + 1

    @staticmethod
    def of(cfg: Cfg, regs: dict[int, int], live_in: dict[int, set[int]] | None = None) -> HandPlan | None:
        """The positions of ``regs`` (register -> hand) in ``cfg``; None if some loop would have
        to pad a hand, or an edge would (a block whose successors need different advances).

        Only joins where a value of the hand is live need every path to arrive with the same
        advance: after another join, values written later are read at distances that do not
        depend on the path, whatever the advance the join starts from."""
        if live_in is None:
            live_in = liveness(cfg)[0]
        order = cfg.rpo()
        index = {b: i for i, b in enumerate(order)}
        hands = sorted(set(regs.values()))
        writes = {b: {h: 0 for h in hands} for b in order}
        for b in order:
            for ins in cfg.blocks[b].code:
                r = defines(ins)
                if r in regs:
                    writes[b][regs[r]] += 1
        hin = {b: {h: 0 for h in hands} for b in order}
        hout = {b: dict(writes[b]) for b in order}
        # Joins that constrain their predecessors, per hand: a value of the hand is live there.
        bound = {b: {h for h in hands if any(regs.get(r) == h for r in live_in[b])} for b in order}
        changed, passes = True, 0
        while changed:  # largest advance over incoming paths; a block ends at what its successors need
            changed = False
            passes += 1
            if passes > 2 * len(order) + 4:
                return None  # an edge would need a pad of its own: no fixed point
            for b in order:
                blk = cfg.blocks[b]
                for h in hands:
                    preds = [p for p in blk.preds if p in index]
                    new_in = max((hout[p][h] for p in preds), default=0)
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
        for body in natural_loops(cfg).values():
            if any(pad[b][h] or writes[b][h] for b in body for h in hands):
                return None
        pos: dict[int, int] = {}
        at = {b: dict(hin[b]) for b in order}
        for b in order:
            for ins in cfg.blocks[b].code:
                r = defines(ins)
                if r in regs:
                    pos[r] = at[b][regs[r]]
                    at[b][regs[r]] += 1
        # Largest distance read on each hand.
        far: dict[int, int] = {}
        for b in order:
            now = dict(hin[b])
            for ins in cfg.blocks[b].code:
                for r in uses(ins):
                    if r in regs:
                        h = regs[r]
                        far[h] = max(far.get(h, 0), now[h] - pos[r])
                r = defines(ins)
                if r in regs:
                    now[regs[r]] += 1
        return HandPlan(dict(regs), pos, hin, {b: {h: k for h, k in p.items() if k} for b, p in pad.items()}, far)


def invariant_candidates(cfg: Cfg, weight: dict[int, float]) -> list[int]:
    """Registers that may live on the invariant hand, most valuable first (loop-weighted reads).

    One definition in the CFG, outside every loop; not live at the entry (so the definition is on
    every path to every read); live into some loop."""
    order = cfg.rpo()
    live_in, _ = liveness(cfg)
    loops = natural_loops(cfg)
    in_loop = set().union(*loops.values()) if loops else set()
    defs: dict[int, list[int]] = {}
    for b in order:
        for ins in cfg.blocks[b].code:
            r = defines(ins)
            if r is not None:
                defs.setdefault(r, []).append(b)
    into = set().union(*(live_in[h] for h in loops)) if loops else set()
    cands = [r for r, where in defs.items()
             if len(where) == 1 and where[0] not in in_loop and r not in live_in[cfg.entry] and r in into]
    value = {r: 0.0 for r in cands}
    for b in order:
        for ins in cfg.blocks[b].code:
            for r in uses(ins):
                if r in value:
                    value[r] += weight.get(b, 1)
    return sorted(cands, key=lambda r: (-value[r], r))


def assign(cfg: Cfg, weight: dict[int, float], limit: int) -> HandPlan | None:
    """The invariant hand's registers: the candidates, most valuable first, while every distance
    read on the hand stays at most ``limit``; None if none fits."""
    chosen: dict[int, int] = {}
    plan = None
    live_in = liveness(cfg)[0]
    for r in invariant_candidates(cfg, weight):
        trial = HandPlan.of(cfg, {**chosen, r: INVARIANT_HAND}, live_in)
        if trial is None or trial.max_distance.get(INVARIANT_HAND, 0) > limit:
            continue
        chosen[r] = INVARIANT_HAND
        plan = trial
        plan.limit = limit
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
    """Give a register of its own to every value that could live on the invariant hand but shares
    its register with other values (a compiler reuses registers): a definition outside every
    loop whose every read is reached by it alone, read in a loop or live through one. Rewrites
    the REG code of ``cfg``'s blocks (before its analysis); returns how many values it renamed."""
    order = cfg.rpo()
    loops = natural_loops(cfg)
    in_loop = set().union(*loops.values()) if loops else set()
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
    if not shared or not loops:
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
    live_loop: set[tuple[int, int]] = set()
    for b in order:
        if b in loops:
            for r in live_in[b] & shared:
                live_loop |= reach_in[b].get(r, set())
        now = {r: set(v) for r, v in reach_in[b].items()}
        for k, ins in enumerate(cfg.blocks[b].code):
            for r in set(uses(ins)) & shared:
                at = frozenset(now.get(r, ()))
                for d in at:
                    reaches.setdefault(d, []).append((b, k, at))
            r = defines(ins)
            if r in shared:
                now[r] = {(b, k)}
    renamed = 0
    for r in sorted(shared):
        for d in defs_of[r]:
            b, k = d
            used = reaches.get(d, [])
            if b in in_loop or not used or any(at != {d} for _, _, at in used):
                continue
            if d not in live_loop and not any(ub in in_loop for ub, _, _ in used):
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

"""Code generation: REG blocks to DFLOW code, tracking where each live value sits in the ring.

Each block is generated with a *layout*: for every live register, the ring position of its
current value (relative to the block's entry RP), or a recipe that recomputes it, or its
local-memory spill slot. A source operand becomes the distance from the current RP to that
position. At a join, the incoming values must sit at the same positions on every edge: the
join's *frame*. Each predecessor ends with a *tail* that puts the frame in place with relay
``mov``s, recomputations, reloads and ``rpinc`` padding; inside an acyclic ``ssy`` region the tails
also equalize how far every path has advanced RP (docs/isa.md, rule 1). The reconvergence of a
region that contains a loop passes its live values through local memory (rule 3).

Every emitted instruction carries a cause ("orig", "relay-join", "relay-dmax", "remat", "pad",
"spill", "reload", "branch") for the overhead report.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from dualflow.isa.encoding import FIELDS, HAND_FIELDS, Instruction
from dualflow.isa.opcodes import SPECS, Opcode

from .cfg import Block, Cfg, ConvertError, natural_loops
from .liveness import defines, live_after_each, liveness, uses
from .remat import reaching_recipes, recipe_of
from .surgery import JoinKind, anchor, classify
from .work import charge

#: Headroom kept below Dmax: a value is relayed when its distance reaches Dmax - MARGIN, which
#: leaves room for the recomputations one instruction may need before it reads.
MARGIN = 4
#: A frame built from a predecessor's layout keeps values at most Dmax - FRAME_SLACK away.
FRAME_SLACK = 8
#: The smallest Dmax the converter accepts: a join frame then still has MARGIN positions between
#: its deepest values (Dmax - FRAME_SLACK) and the relay point (Dmax - MARGIN). The converter is
#: tested down to it (tests/isa/convert/test_convert_property.py runs every program at Dmax 12).
MIN_DMAX = FRAME_SLACK + MARGIN

#: In a loop chosen to keep its values in the ring, the share of the reach (Dmax - MARGIN) that
#: values may fill before keep_in_reach stores the oldest instead of relaying it (elsewhere: half).
RELAY_SHARE = 0.75

_ident = itertools.count()

#: The hands variant: where each source's hand selector sits in the dst field of a DFLOW
#: instruction (``encoding.HAND_FIELDS`` less the field's own offset); the written hand at 0.
HAND_SHIFT = {name: lsb - FIELDS["dst"][0] for name, (lsb, _) in HAND_FIELDS.items()}


@dataclass
class Val:
    """Where the current value of one register is."""

    pos: int | None  # ring position relative to the block's entry RP, or None
    recipe: Instruction | None = None  # recomputes it (s2r, ldc, mov imm)
    spilled: bool = False  # its local-memory slot holds it
    ident: int = field(default_factory=lambda: next(_ident))  # same value, relayed or not

    def moved(self, pos: int | None) -> Val:
        """The same ring entry in another block's coordinates (or dropped from the ring)."""
        return Val(pos, self.recipe, self.spilled, self.ident)

    def placed(self, pos: int) -> Val:
        """The same value, put in the ring again (relayed, recomputed or reloaded) at ``pos``."""
        return Val(pos, self.recipe, self.spilled, self.ident)


@dataclass
class Emitted:
    ins: Instruction
    cause: str
    pc: int | None = None  # REG pc it came from
    target: int | None = None  # block id of a branch or ssy target


@dataclass
class BlockCode:
    block: int
    body: list[Emitted] = field(default_factory=list)
    tail: list[Emitted] = field(default_factory=list)
    term: list[Emitted] = field(default_factory=list)
    layout: dict[int, Val] = field(default_factory=dict)
    cur: int = 0  # RP advance from block entry, body + tail
    hcur: dict[int, int] = field(default_factory=dict)  # hands variant: advance of hands 1.. from entry
    offset0: int | None = None  # offset from the anchor's ssy at cur == 0
    pending: Block | None = None  # terminator not yet emitted (tail decided at the join)
    done: bool = False


@dataclass
class Analysis:
    """What code generation needs to know about a CFG, whatever the choices it tries."""

    order: list[int]
    rpo_index: dict[int, int]
    kinds: dict[int, JoinKind]
    live_in: dict[int, set[int]]
    live_out: dict[int, set[int]]
    recipes: dict[int, dict[int, Instruction]]
    loops: dict[int, set[int]]
    loop_defs: dict[int, set[int]]  #: registers each loop writes
    parked: dict[int, set[int]]  #: values live through each loop, neither used nor changed in it
    use_order: dict[int, dict[int, int]] = field(default_factory=dict)  #: filled on demand
    block_info: dict[int, tuple] = field(default_factory=dict)  #: per block: liveness, next uses (on demand)


def analyze(cfg: Cfg) -> Analysis:
    """The analyses of ``cfg``, computed once (the converter generates code many times)."""
    cached = getattr(cfg, "analysis", None)
    if cached is not None:
        return cached
    order = cfg.rpo()
    rpo_index = {b: i for i, b in enumerate(order)}
    live_in, live_out = liveness(cfg)
    recipes = reaching_recipes(cfg, order, live_in)
    plan = getattr(cfg, "hand_plan", None)
    if plan is not None:  # registers on other hands: not hand s's business (hands.py)
        other = set(plan.hand)
        live_in = {b: regs - other for b, regs in live_in.items()}
        live_out = {b: regs - other for b, regs in live_out.items()}
        recipes = {b: {r: x for r, x in rs.items() if r not in other} for b, rs in recipes.items()}
    loops = natural_loops(cfg)
    loop_defs, parked = {}, {}
    for header, body in loops.items():
        code = [ins for b in body for ins in cfg.blocks[b].code]
        loop_defs[header] = {defines(ins) for ins in code} - {None}
        touched = loop_defs[header].union(*(uses(ins) for ins in code))
        parked[header] = live_in[header] - touched - set(recipes[header])
    a = Analysis(order, rpo_index, classify(cfg, rpo_index), live_in, live_out, recipes, loops, loop_defs, parked)
    cfg.analysis = a
    return a


class CodeGen:
    def __init__(self, cfg: Cfg, dmax: int, spill_base: int, loop_frames: dict[int, dict[int, int]] | None = None,
                 in_memory_invariants: dict[int, set[int]] | None = None,
                 region_memory: dict[int, set[int]] | None = None,
                 ring_recipes: dict[int, set[int]] | None = None, relay_loops: set[int] = frozenset()):
        self.cfg, self.dmax, self.spill_base = cfg, dmax, spill_base
        #: the hands variant: registers on hands other than s, with their fixed positions (hands.py)
        self.hand_plan = getattr(cfg, "hand_plan", None)
        self.hand_of = self.hand_plan.hand if self.hand_plan is not None else {}
        a = analyze(cfg)
        self.order, self.rpo_index, self.kinds = a.order, a.rpo_index, a.kinds
        self.live_in, self.live_out, self.recipes = a.live_in, a.live_out, a.recipes
        self.loops, self.loop_defs, self._use_order = a.loops, a.loop_defs, a.use_order
        self.block_info = a.block_info
        self.frames: dict[int, dict[int, int]] = dict(loop_frames or {})
        self.header_idents: dict[int, dict[int, int]] = {}
        self.codes: dict[int, BlockCode] = {}
        self.in_memory: dict[int, set[int]] = {}  # forward plain join -> values it receives in memory
        # Values live through a loop but neither used nor changed in it are parked in local
        # memory around the loop instead of being relayed every iteration; so are the invariants
        # chosen to live in memory (reloaded where used instead of relayed every iteration).
        self.parked = {h: set(regs) for h, regs in a.parked.items()}
        # Loops chosen to keep their values in the ring: a local-memory reload costs a warp about
        # 40 cycles where a relay costs about 6, so in them values are relayed rather than stored
        # while the ring can hold them (keep_in_reach), and nothing is parked around their inner loops.
        self.relay_blocks: set[int] = set()
        for header in relay_loops:
            self.relay_blocks |= self.loops.get(header, set())
        for header in self.loops:
            if header in self.relay_blocks:
                self.parked[header] = set()
        for header, regs in (in_memory_invariants or {}).items():
            self.parked[header] |= regs & self.invariants(header)
        # Recomputable values a loop uses, chosen to be carried through it in the ring: one
        # relay per pass of the latch (every other iteration in an unrolled loop) instead of one
        # recomputation per use. Each keeps its recipe: once out of reach it is recomputed.
        self.ring_recipes = {h: regs & self.loop_recipes(h) for h, regs in (ring_recipes or {}).items()}
        for header in self.loops:
            # A frame from another trial may hold values parked here, or miss values parked
            # there: the former leave the frame, the latter arrive through memory.
            if header in self.frames:
                ring = self.ring_recipes.get(header, set())
                frame = {r: p for r, p in self.frames[header].items() if r not in self.parked[header]
                         and (r not in self.recipes[header] or (r in ring and p is not None))}
                for r in self.live_in[header] - set(self.recipes[header]) - self.parked[header] - set(frame):
                    frame[r] = None
                self.frames[header] = frame
        # Values live across an acyclic ssy region, chosen to be stored at its ssy: paths too long
        # for the ring's reach would otherwise relay them on every path to the join.
        self.region_memory = {rid: regs - set(self.recipes.get(cfg.regions[rid].join, {}))
                              for rid, regs in (region_memory or {}).items()}
        self.spilled_regs: set[int] = set()
        self.proposals: dict[int, dict[int, int]] = {}

    # ------------------------------------------------------------------ helpers
    def region_candidates(self) -> dict[int, set[int]]:
        """Acyclic ssy regions with values live across them that could be stored at the ssy."""
        out = {}
        for rid, region in sorted(self.cfg.regions.items()):
            if region.cyclic or region.join not in self.rpo_index:
                continue
            regs = self.live_in[region.join] - set(self.recipes[region.join])
            if regs:
                out[rid] = regs
        return out

    def loop_recipes(self, header: int) -> set[int]:
        """Recomputable values live into a loop and used in it."""
        used = {r for b in self.loops[header] for ins in self.cfg.blocks[b].code for r in uses(ins)}
        return set(self.recipes[header]) & used

    def invariants(self, header: int) -> set[int]:
        """Values live into a loop, used in it, never redefined in it, and not recomputable."""
        return self.live_in[header] - self.loop_defs[header] - set(self.recipes[header]) - self.parked[header]

    def use_order(self, join: int) -> dict[int, int]:
        """Registers by the order of their first use from the start of ``join`` onwards (within
        its loop if it is a loop header), following blocks in reverse postorder."""
        cached = self._use_order.get(join)
        if cached is not None:
            return cached
        body = self.loops.get(join)
        start = self.rpo_index[join]
        order: dict[int, int] = {}
        for bid in self.order[start:]:
            if body is not None and bid not in body:
                continue
            for ins in self.cfg.blocks[bid].code:
                for r in uses(ins):
                    order.setdefault(r, len(order))
        self._use_order[join] = order
        return order

    def is_back_edge(self, p: int, s: int) -> bool:
        return self.rpo_index[s] <= self.rpo_index[p]

    def spill_addr(self, reg: int) -> int:
        return self.spill_base + 4 * reg

    def emit(self, bc: BlockCode, ins: Instruction, cause: str, where: list[Emitted], pc=None, target=None):
        where.append(Emitted(ins, cause, pc, target))
        if ins.dst:  # the hands variant: another hand's RP moves, not hand s's
            h = ins.dst_hand
            if h:
                bc.hcur[h] = bc.hcur.get(h, 0) + (1 if SPECS[ins.op].produces else ins.imm)
                return
        if SPECS[ins.op].produces:
            bc.cur += 1
        elif ins.op is Opcode.RPINC:
            bc.cur += ins.imm

    def distance(self, bc: BlockCode, reg: int, blk: Block) -> int:
        d = bc.cur - bc.layout[reg].pos
        if not 1 <= d <= self.dmax:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: distance {d} for r{reg} outside 1..{self.dmax}")
        return d

    def hand_distance(self, bc: BlockCode, reg: int, blk: Block) -> int:
        """The hands variant: the distance of ``reg``'s value on its hand (other than s), whose
        positions are fixed for the whole kernel (hands.py)."""
        h = self.hand_of[reg]
        d = self.hand_plan.hand_in[blk.id][h] + bc.hcur.get(h, 0) - self.hand_plan.pos[reg]
        if not 1 <= d <= self.hand_plan.limit:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: distance {d} for r{reg} on hand {h} "
                               f"outside 1..{self.hand_plan.limit}")
        return d

    def operands(self, bc: BlockCode, fields, blk: Block) -> tuple[dict[str, int], int]:
        """Source fields as distances, and the hand selectors of those on other hands than s (the
        dst field's bits, ``encoding.HAND_FIELDS``)."""
        out, select = {}, 0
        for name, raw in fields:
            if raw and raw - 1 in self.hand_of:
                out[name] = self.hand_distance(bc, raw - 1, blk)
                select |= self.hand_of[raw - 1] << HAND_SHIFT[name]
            else:
                out[name] = self.distance(bc, raw - 1, blk) if raw else 0
        return out, select

    def reach(self, bc: BlockCode, pos: int, reg: int, blk: Block) -> int:
        """The distance from the current RP to ``pos``, checked to be encodable."""
        d = bc.cur - pos
        if not 1 <= d <= self.dmax:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: distance {d} for r{reg} outside 1..{self.dmax}")
        return d

    def materialize(self, bc: BlockCode, reg: int, where: list[Emitted], blk: Block) -> None:
        """Make sure the value of ``reg`` is in the ring, within reach."""
        v = bc.layout.get(reg)
        if v is None:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: r{reg} has no value here")
        if v.pos is not None and bc.cur - v.pos <= self.dmax:
            return
        self.make_room(bc, where, blk)
        if v.recipe is not None:
            self.emit(bc, v.recipe, "remat", where)
        elif v.spilled:
            self.emit(bc, Instruction(Opcode.LDL, imm=self.spill_addr(reg)), "reload", where)
        else:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: r{reg} fell out of the ring")
        bc.layout[reg] = v.placed(bc.cur - 1)

    def make_room(self, bc: BlockCode, where: list[Emitted], blk: Block) -> None:
        """Before a new ring entry: store the values only the ring holds that it would push out of
        reach. A two-way branch's tail leaves the values its other successor needs at up to Dmax,
        and that successor may have to recompute or reload its branch condition before any
        ``keep_in_reach``."""
        for r in [r for r, v in bc.layout.items() if self._needs_ring(bc, r) and bc.cur - v.pos == self.dmax]:
            self.spill(bc, r, blk, where)

    def keep_in_reach(self, bc: BlockCode, live: set[int], where: list[Emitted], blk: Block,
                      next_use: dict[int, int] | None = None) -> None:
        """Before an instruction: relay, drop (if recomputable) or spill values about to pass Dmax.

        ``next_use``: producers until each register's next use in this block (absent: not used
        again here). A value needed again soon is relayed; one needed only after another drift,
        or any value while the ring is crowded (each relay ages every other value, so crowding
        feeds itself), is stored to local memory once and reloaded when needed."""
        limit = self.dmax - MARGIN
        layout, oldest = bc.layout, bc.cur - limit
        ring_vals = [r for r in live if r in layout and layout[r].pos is not None]
        if all(layout[r].pos > oldest for r in ring_vals):
            return  # the common case: nothing about to pass Dmax
        while True:
            charge()
            old = [r for r in ring_vals if bc.cur - bc.layout[r].pos >= limit]
            if not old:
                return
            r = min(old, key=lambda x: bc.layout[x].pos)
            v = bc.layout[r]
            ring_vals.remove(r)
            if v.recipe is not None or v.spilled:
                bc.layout[r] = v.moved(None)
                continue
            nxt = next_use.get(r) if next_use is not None else None
            # Relaying every other old value first would push this one out of reach: it must go.
            lost = bc.cur - v.pos + len(old) - 1 > self.dmax
            far = nxt is not None and nxt > limit
            if blk.id in self.relay_blocks:
                # Relayed while the ring holds them: fewer values than the reach, so every relay
                # round ends (a value relayed again only after the others).
                spill = lost or len(ring_vals) >= RELAY_SHARE * limit
            else:
                spill = lost or far or len(ring_vals) >= limit // 2
            if spill:
                self.emit(bc, Instruction(Opcode.STL, b=self.reach(bc, v.pos, r, blk), imm=self.spill_addr(r)),
                          "spill", where)
                self.spilled_regs.add(r)
                bc.layout[r] = Val(None, v.recipe, True, v.ident)
                continue
            self.emit(bc, Instruction(Opcode.MOV, b=self.reach(bc, v.pos, r, blk)), "relay-dmax", where)
            bc.layout[r] = v.placed(bc.cur - 1)
            ring_vals.append(r)

    # ------------------------------------------------------------------ frames and tails
    def propose_frame(self, bc: BlockCode, join: int, invariant_idents: dict[int, int] | None = None,
                      in_memory: set[int] = frozenset()) -> dict[int, int | None]:
        """A frame for ``join`` taken from this predecessor's layout: values already near the end stay
        where they are; the rest (and loop invariants) go into tail slots just before the join.

        At most Dmax - FRAME_SLACK values, none deeper than Dmax - MARGIN: values beyond that many
        (those used last after the join) and the ``in_memory`` ones arrive through local memory
        (position None)."""
        cap = max(1, self.dmax - FRAME_SLACK)  # values in the ring
        depth = max(cap, self.dmax - MARGIN)  # deepest frame position
        rank = self.use_order(join)
        ring = self.ring_recipes.get(join, set())
        cands = [r for r in sorted(self.live_in[join])
                 if (r not in self.recipes[join] or r in ring) and r not in self.parked.get(join, ())
                 and r not in in_memory]
        cands.sort(key=lambda r: rank.get(r, -1))
        keep, overflow = cands[:cap], [r for r in cands[cap:] if r not in ring]  # the others are recomputed
        dist: dict[int, int] = {}
        for r in keep:
            v = bc.layout.get(r)
            # A loop invariant still where the header had it must be relayed by the latch; one
            # the body already put in the ring again (e.g. to keep it in reach) can stay there.
            invariant = invariant_idents is not None and r not in self.loop_defs.get(join, ())
            if v is not None and v.pos is not None and not invariant:
                dist[r] = bc.cur - v.pos
        natural = dict(dist)
        while True:
            charge()
            k = len(keep) - len(natural)
            fits = {r: d for r, d in natural.items() if d + k <= depth}
            if len(fits) == len(natural):
                break
            natural = fits
        # Relayed values used soonest after the join go deepest; those used latest stay nearest
        # to the join's RP, so that they are still in reach when needed.
        tail = [r for r in keep if r not in natural]
        k = len(tail)
        frame: dict[int, int | None] = {r: -d - k for r, d in natural.items()}
        for i, r in enumerate(tail):
            frame[r] = -k + i
        for r in overflow:
            frame[r] = None
        for r in in_memory:
            if r in self.live_in[join] and r not in self.recipes[join]:
                frame[r] = None
        return frame

    def tail_plan(self, bc: BlockCode, frame: dict[int, int | None], length: int) -> list[int | None] | None:
        """Which register goes to each of ``length`` new positions (None: padding), or None if
        the frame cannot be met with exactly that many."""
        end = bc.cur + length
        plan: list[int | None] = [None] * length
        for r, p in frame.items():
            if p is None:
                continue
            target = end + p
            if target < bc.cur:
                v = bc.layout.get(r)
                if v is None or v.pos != target:
                    return None
            else:
                plan[target - bc.cur] = r
        return plan

    def min_tail(self, bc: BlockCode, frame: dict[int, int | None]) -> int:
        depth = max((-p for p in frame.values() if p is not None), default=0)
        for length in range(depth + 1):
            if self.tail_plan(bc, frame, length) is not None:
                return length
        return depth

    def settle_tail(self, bc: BlockCode, frame: dict[int, int | None], blk: Block, length: int | None = None,
                    cond: int | None = None) -> int | None:
        """Decide the tail's length. ``cond``, read by the terminator right after the tail, must
        stay in reach: if needed it is relayed through a padding slot of the tail (a longer tail
        if none is free). A value that would be out of reach at its place in the tail, with no
        padding slot on the way to relay it through, is stored now and reloaded there. With a
        fixed ``length`` (padded joins), returns None if that length cannot work."""
        if cond is not None:
            self.materialize(bc, cond, bc.tail, blk)
        n = length if length is not None else self.min_tail(bc, frame)
        while True:
            charge()
            plan = self.tail_plan(bc, frame, n)
            if plan is None:
                if length is not None or n > self.dmax + len(frame):
                    return None
                n += 1
                continue
            relays, stuck = self._assign_relays(bc, plan, cond)
            if cond in stuck:
                if length is not None or n > self.dmax + len(frame):
                    return None
                n += 1  # one more padding slot to relay the condition through
                continue
            if not stuck:
                return n
            # No padding slot on the way to relay it through: store it now (a store does not move
            # RP) and reload it at its place in the tail.
            for r in stuck:
                self.spill(bc, r, blk)
                bc.layout[r] = bc.layout[r].moved(None)

    def _assign_relays(self, bc: BlockCode, plan: list[int | None],
                       cond: int | None = None) -> tuple[dict[int, int], list[int]]:
        """Padding slots of the tail at which values bound for later positions are relayed so
        they stay in reach (each as late as possible), and the values that cannot be saved so.

        ``cond`` must be in reach right after the tail (index ``len(plan)``), whatever it is: a
        value out of the ring is recomputed or reloaded at its slot."""
        relays: dict[int, int] = {}
        stuck: list[int] = []
        targets = list(enumerate(plan)) + ([(len(plan), cond)] if cond is not None else [])
        for k, r in targets:
            if r is None or (r != cond and not self._needs_ring(bc, r)):
                continue
            pos = bc.layout[r].pos
            if pos is not None and bc.cur + k - pos <= self.dmax:
                continue
            if r == cond and k == len(plan) and cond in plan and plan[::-1].index(cond) + 1 <= self.dmax:
                continue  # the frame itself puts the condition in the tail, in reach of the terminator
            slot = next((j for j in range(k - 1, -1, -1) if plan[j] is None and j not in relays
                         and (pos is None or bc.cur + j - pos <= self.dmax) and k - j <= self.dmax), None)
            if slot is None:
                stuck.append(r)
            else:
                relays[slot] = r
        return relays, stuck

    def _needs_ring(self, bc: BlockCode, r: int) -> bool:
        v = bc.layout.get(r)
        return v is not None and v.pos is not None and v.recipe is None and not v.spilled

    def emit_tail(self, bc: BlockCode, frame: dict[int, int], blk: Block, length: int | None = None,
                  cond: int | None = None) -> None:
        """Put ``frame`` in place at the end of the block (``length`` new positions, or the fewest
        possible). ``cond``: a register the terminator reads after the tail; it is kept in reach,
        relayed through a padding slot of the tail if needed.

        Positions of the tail that no frame value needs are padding, except where a value bound
        for a later position would fall out of reach on the way: it is relayed there first."""
        # Values arriving through local memory are stored first (a store does not move RP).
        self.spill_all(bc, [r for r, p in frame.items() if p is None], blk)
        n = self.settle_tail(bc, frame, blk, length, cond)
        if n is None:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: no tail meets the join's frame")
        plan = self.tail_plan(bc, frame, n)
        relay_at, _ = self._assign_relays(bc, plan, cond)
        pad = 0
        for k, r in enumerate(plan):
            cause = "relay-join"
            if r is None:
                if k not in relay_at:
                    pad += 1
                    continue
                r, cause = relay_at[k], "relay-dmax"
            if pad:
                self.emit(bc, Instruction(Opcode.RPINC, bimm=True, imm=pad), "pad", bc.tail)
                pad = 0
            self.place(bc, r, blk, cause)
        if pad:
            self.emit(bc, Instruction(Opcode.RPINC, bimm=True, imm=pad), "pad", bc.tail)

    def place(self, bc: BlockCode, r: int, blk: Block, cause: str = "relay-join") -> None:
        """Produce the value of ``r`` at the current position (relay, recompute or reload)."""
        v = bc.layout.get(r)
        if v is None:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: r{r} needed at a join has no value")
        if v.pos is not None and bc.cur - v.pos <= self.dmax:
            self.emit(bc, Instruction(Opcode.MOV, b=self.reach(bc, v.pos, r, blk)), cause, bc.tail)
        elif v.recipe is not None:
            self.emit(bc, v.recipe, "remat", bc.tail)
        elif v.spilled:
            self.emit(bc, Instruction(Opcode.LDL, imm=self.spill_addr(r)), "reload", bc.tail)
        else:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: r{r} out of reach for a join")
        bc.layout[r] = v.placed(bc.cur - 1)

    def spill(self, bc: BlockCode, r: int, blk: Block, where: list[Emitted] | None = None) -> None:
        """Store the value of ``r`` to its local-memory slot, unless the slot already holds it."""
        v = bc.layout[r]
        if v.spilled:
            return
        where = bc.tail if where is None else where
        self.materialize(bc, r, where, blk)
        v = bc.layout[r]
        self.emit(bc, Instruction(Opcode.STL, b=self.reach(bc, v.pos, r, blk), imm=self.spill_addr(r)), "spill", where)
        self.spilled_regs.add(r)
        bc.layout[r] = Val(v.pos, v.recipe, True, v.ident)

    def spill_all(self, bc: BlockCode, regs, blk: Block, where: list[Emitted] | None = None) -> None:
        """Store several values: first those in the ring (stores do not move RP, so none of them
        drifts), then those to recompute or reload, each stored as soon as it is produced."""
        todo = [r for r in sorted(regs) if r in bc.layout and not bc.layout[r].spilled]
        in_ring = [r for r in todo if bc.layout[r].pos is not None and bc.cur - bc.layout[r].pos <= self.dmax]
        produced = len(todo) - len(in_ring)
        if produced:
            # The recomputations below age every live value: store those they would push away.
            in_ring += [r for r, v in bc.layout.items() if r not in todo and v.pos is not None
                        and v.recipe is None and not v.spilled and bc.cur - v.pos + produced >= self.dmax]
        for r in sorted(in_ring, key=lambda x: bc.layout[x].pos):
            self.spill(bc, r, blk, where)
        for r in todo:
            if r not in in_ring:
                self.spill(bc, r, blk, where)

    def emit_spills_for(self, bc: BlockCode, join: int, blk: Block) -> None:
        """Tail of a predecessor of a memory join: store every carried live value."""
        self.spill_all(bc, [r for r in self.live_in[join] if r not in self.recipes[join]], blk)

    # ------------------------------------------------------------------ blocks
    def entry_layout(self, blk: Block) -> tuple[dict[int, Val], int | None]:
        bid = blk.id
        kind = self.kinds[bid]
        live = self.live_in[bid]
        recipes = self.recipes[bid]
        preds = [p for p in blk.preds if p in self.rpo_index]
        if bid == self.cfg.entry and not preds:
            return {r: Val(None, recipes.get(r)) for r in live}, None
        if kind is JoinKind.NONE:
            p = preds[0]
            pc = self.codes[p]
            if not pc.done:
                raise ConvertError(f"{self.cfg.where(blk)}: internal: predecessor not generated")
            layout = {r: pc.layout[r].moved(None if pc.layout[r].pos is None else pc.layout[r].pos - pc.cur)
                      for r in live if r in pc.layout}
            missing = live - set(layout)
            if missing:
                raise ConvertError(f"{self.cfg.where(blk)}: internal: r{min(missing)} has no value on entry")
            off = None if pc.offset0 is None else pc.offset0 + pc.cur
            return layout, off
        if kind is JoinKind.MEMORY:
            for p in preds:
                if p not in self.codes or self.codes[p].pending is None:
                    raise ConvertError(f"{self.cfg.where(blk)}: reconvergence point reached from a path that "
                                       "is not generated before it (a loop around an ssy join is not supported)")
            for p in preds:
                pcode = self.codes[p]
                self.emit_spills_for(pcode, bid, self.cfg.blocks[p])
                self.finish(pcode)
            return {r: Val(None, recipes.get(r), spilled=r not in recipes) for r in live}, None
        if kind is JoinKind.PADDED:
            return self.padded_join(blk, preds)
        # PLAIN join: frame fixed by the first finished predecessor or a loop refinement.
        frame = self.frames.get(bid)
        if frame is None:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: join reached before any predecessor")
        idents = {}
        layout = {}
        parked = self.parked.get(bid, set()) | self.in_memory.get(bid, set())
        for r in live:
            if r in recipes:
                layout[r] = Val(frame.get(r), recipes[r])  # in the frame if carried in the ring
            elif r in parked or frame.get(r) is None:
                layout[r] = Val(None, spilled=True)
            else:
                layout[r] = Val(frame[r])
            idents[r] = layout[r].ident
        self.header_idents[bid] = idents
        return layout, None

    def padded_join(self, blk: Block, preds: list[int]) -> tuple[dict[int, Val], int | None]:
        bid = blk.id
        codes = []
        for p in preds:
            pcode = self.codes.get(p)
            if pcode is None or pcode.pending is None or pcode.offset0 is None:
                raise ConvertError(f"{self.cfg.where(blk)}: internal: padded join with an unready predecessor")
            codes.append(pcode)
        # Frame from the path that advanced furthest: it needs no padding. A value every path
        # has in its local-memory slot stays there: a ring frame slot would cost an instruction
        # on every path that does not hold it there, a reload at most one later.
        longest = max(codes, key=lambda c: c.offset0 + c.cur)
        in_memory = {r for r in self.live_in[bid] - set(self.recipes[bid]) if all(c.layout[r].spilled for c in codes)}
        frame = self.propose_frame(longest, bid, in_memory=in_memory)
        for c in codes:  # values arriving through memory are stored first: that may recompute them
            self.spill_all(c, [r for r, p in frame.items() if p is None], self.cfg.blocks[c.block])
        end = max(c.offset0 + c.cur + self.min_tail(c, frame) for c in codes)
        for _ in range(4 * self.dmax):
            # Where some path's values already sit elsewhere than this end needs, no tail can
            # meet it: skip to the next end without planning the other paths' tails.
            if all(self.tail_plan(c, frame, end - c.offset0 - c.cur) is not None for c in codes):
                lengths = [self.settle_tail(c, frame, self.cfg.blocks[c.block], end - c.offset0 - c.cur)
                           for c in codes]
                if all(x is not None for x in lengths):
                    break
            end += 1
        else:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: cannot equalize the paths into this join")
        recipes = self.recipes[bid]
        # A recomputable value every path left at the same place (produced before the ssy, or
        # carried through a loop in the ring) stays usable after the join at no cost.
        for r in sorted(self.live_in[bid] & set(recipes)):
            at = {c.offset0 + c.layout[r].pos if r in c.layout and c.layout[r].pos is not None else None
                  for c in codes}
            if len(at) == 1 and None not in at and end - min(at) <= self.dmax - MARGIN:
                frame[r] = min(at) - end
        for c in codes:
            self.emit_tail(c, frame, self.cfg.blocks[c.block], end - c.offset0 - c.cur)
            self.finish(c)
        layout = {r: Val(frame.get(r), recipes[r]) if r in recipes else Val(None, spilled=True)
                  if frame.get(r) is None else Val(frame[r]) for r in self.live_in[bid]}
        inner = anchor(self.cfg, blk.stack or ())
        return layout, (end if inner is not None else None)

    def finish(self, bc: BlockCode) -> None:
        """Emit the terminator of a block whose tail is complete."""
        blk = bc.pending
        bc.pending = None
        term = blk.terminator
        if self.hand_plan is not None:  # paths of unequal advance on a hand meet: pad the shorter
            for h, k in sorted(self.hand_plan.hand_pad.get(blk.id, {}).items()):
                self.emit(bc, Instruction(Opcode.RPINC, bimm=True, imm=k, dst=h), "pad", bc.tail)
        if term is not None:
            if SPECS[term.op].conditional:
                r = uses(term)[0] if uses(term) else None
                a = term.a if term.is_uniform("a") else 0  # a uniform condition passes through
                select = 0
                if r is not None and r in self.hand_of:
                    a = self.hand_distance(bc, r, blk)
                    select = self.hand_of[r] << HAND_SHIFT["a"]
                elif r is not None:
                    self.materialize(bc, r, bc.tail, blk)
                    a = self.distance(bc, r, blk)
                ins = Instruction(term.op, a=a, bimm=True, imm=0, uniform=term.uniform, dst=select)
                self.emit(bc, ins, "orig" if blk.pcs[-1] is not None else "branch", bc.term,
                          pc=blk.pcs[-1], target=blk.succs[0])
            elif term.op is Opcode.BRA:
                self.emit(bc, Instruction(Opcode.BRA, bimm=True, imm=0),
                          "orig" if blk.pcs[-1] is not None else "branch", bc.term, pc=blk.pcs[-1],
                          target=blk.succs[0])
            else:
                self.emit(bc, Instruction(term.op), "orig", bc.term, pc=blk.pcs[-1])
        bc.done = True

    def gen_block(self, bid: int) -> None:
        blk = self.cfg.blocks[bid]
        charge(len(blk.code) + 1)
        bc = BlockCode(bid)
        self.codes[bid] = bc
        bc.layout, bc.offset0 = self.entry_layout(blk)
        term = blk.terminator
        body = blk.code[:-1] if term is not None else blk.code
        info = self.block_info.get(bid)
        if info is None:
            after = live_after_each(blk.code, self.live_out[bid])
            # Registers whose value dies at each instruction (everything not live, at the first).
            dies = [(after[k - 1] | {defines(body[k])}) - {None} - after[k] for k in range(1, len(body))]
            dies.insert(0, set())  # the first instruction sweeps the whole layout
            # Per instruction: source fields (name, register + 1; uniform operands left out: they pass
            # through), the register written and its recipe.
            fields = [tuple((name, getattr(ins, name)) for name in SPECS[ins.op].sources
                            if not (name == "b" and ins.bimm) and not ins.is_uniform(name)) for ins in body]
            writes = [(defines(ins), recipe_of(ins)) if SPECS[ins.op].produces else (None, None) for ins in body]
            info = self.block_info[bid] = (after, self._next_uses(body), [uses(ins) for ins in body],
                                           [after[k] | set(uses(ins)) for k, ins in enumerate(body)], dies,
                                           fields, writes)
        after, next_use, sources, needed, dies, operand_fields, writes = info
        for k, ins in enumerate(body):
            pc = blk.pcs[k]
            if ins.op is Opcode.NOP:
                continue
            srcs = sources[k]
            self.keep_in_reach(bc, needed[k], bc.body, blk, next_use[k])
            for r in srcs:
                if r not in self.hand_of:
                    self.materialize(bc, r, bc.body, blk)
            if self.hand_of:
                fields, select = self.operands(bc, operand_fields[k], blk)
                reg = writes[k][0]
                if reg in self.hand_of:
                    select |= self.hand_of[reg]
            else:
                fields = {name: self.distance(bc, raw - 1, blk) if raw else 0 for name, raw in operand_fields[k]}
                select = 0
            if ins.uniform:
                fields.update((name, getattr(ins, name)) for name in "abc" if ins.is_uniform(name))
            target = None
            imm = ins.imm
            if ins.op is Opcode.SSY:
                rid = self._region_of_ssy(blk, k)
                target = self.cfg.regions[rid].join
                if rid in self.region_memory:
                    # Stored once here, the values need no relay on any path of the region.
                    self.spill_all(bc, self.region_memory[rid] & set(bc.layout), blk, bc.body)
                imm = 0
                if anchor(self.cfg, (blk.stack or ()) + (rid,)) == rid:
                    bc.offset0 = -bc.cur
            out = Instruction(ins.op, a=fields.get("a", 0), b=fields.get("b", 0), c=fields.get("c", 0),
                              mod=ins.mod, bimm=ins.bimm, imm=imm, uniform=ins.uniform, dst=select)
            # the only instruction of the REG code with no source pc: a carried value's copy (hands.py)
            self.emit(bc, out, "orig" if pc is not None else "relay-join", bc.body, pc=pc, target=target)
            reg, recipe = writes[k]
            if reg is not None and reg not in self.hand_of:
                bc.layout[reg] = Val(bc.cur - 1, recipe)
            if k == 0:
                for r in list(bc.layout):
                    if r not in after[0]:
                        del bc.layout[r]
            else:
                for r in dies[k]:
                    bc.layout.pop(r, None)
        bc.pending = blk
        self.after_body(bc, blk)

    @staticmethod
    def _next_uses(body: list[Instruction]) -> list[dict[int, int]]:
        """For each instruction, the producers from it to each register's next use in ``body``."""
        out: list[dict[int, int]] = [{} for _ in body]
        upcoming: dict[int, int] = {}  # register -> producer count at its next use (from the end)
        produced = 0
        for k in range(len(body) - 1, -1, -1):
            for r in uses(body[k]):
                upcoming[r] = produced
            if SPECS[body[k].op].produces:
                produced += 1
            out[k] = {r: produced - at for r, at in upcoming.items()}
        return out

    def _region_of_ssy(self, blk: Block, k: int) -> int:
        # The k-th instruction's ssy opened the region whose ssy block is this one, in order. A
        # block the CFG walk reached opened its own regions (copies too, one set per entry stack);
        # a join copied onto a split edge has those of the block it copies.
        rids = [r.id for r in self.cfg.regions.values() if r.ssy_block == blk.id]
        if not rids and blk.copy_of is not None and blk.copy_of >= 0:
            rids = [r.id for r in self.cfg.regions.values() if r.ssy_block == blk.copy_of]
        nth = sum(1 for ins in blk.code[:k] if ins.op is Opcode.SSY)
        return sorted(rids)[nth]

    def after_body(self, bc: BlockCode, blk: Block) -> None:
        """Build the tail for successors whose frame is known now, or leave the block pending."""
        succs = blk.succs
        deferred = [s for s in succs if self.kinds[s] in (JoinKind.PADDED, JoinKind.MEMORY)]
        if deferred:
            if len(set(succs)) > 1:
                raise ConvertError(f"{self.cfg.where(blk)}: internal: edge to a reconvergence point not isolated")
            return  # the join builds this block's tail
        plain = [s for s in succs if self.kinds[s] is JoinKind.PLAIN]
        if len(set(plain)) > 1:
            raise ConvertError(f"{self.cfg.where(blk)}: internal: two joins after one block")
        if plain:
            s = plain[0]
            frame = self.frames.get(s)
            if frame is None:
                if s not in self.loops:
                    # A forward join: what this first path keeps in local memory stays there.
                    self.in_memory[s] = {r for r in self.live_in[s] - set(self.recipes[s]) - self.parked.get(s, set())
                                         if bc.layout[r].spilled and bc.layout[r].pos is None}
                frame = self.propose_frame(bc, s, in_memory=self.in_memory.get(s, set()))
                self.frames[s] = frame
            self.spill_all(bc, self.in_memory.get(s, ()), blk)
            if self.is_back_edge(blk.id, s) and s not in self.proposals:
                # What the header's frame would have to be for this latch to need no relays but
                # those of loop invariants: read off the layout before the tail.
                before = BlockCode(bc.block, layout=dict(bc.layout), cur=bc.cur)
                self.proposals[s] = self.propose_frame(before, s, invariant_idents=self.header_idents.get(s, {}))
            self.spill_all(bc, self.parked.get(s, ()), blk)
            self.spill_all(bc, [r for r, p in frame.items() if p is None], blk)
            term = blk.terminator
            cond = uses(term)[0] if term is not None and SPECS[term.op].conditional and uses(term) else None
            if cond in self.hand_of:
                cond = None  # read on its own hand: nothing to keep in hand s's reach
            # Values the other successor needs must still be in the ring after the tail: those the
            # tail would push past Dmax are stored (a store does not move RP, so the frame and the
            # tail's length are unaffected). Decided against the tail's final length, after every
            # recomputation or store the tail itself needs.
            others = set().union(*(self.live_in[o] for o in succs if o != s)) - {cond}
            while True:
                charge()
                n = self.settle_tail(bc, frame, blk, None, cond)
                if n is None:
                    raise ConvertError(f"{self.cfg.where(blk)}: internal: no tail meets the join's frame")
                far = [r for r in sorted(others)
                       if self._needs_ring(bc, r) and bc.cur + n - bc.layout[r].pos > self.dmax]
                if not far:
                    break
                for r in far:
                    self.spill(bc, r, blk)  # keeps its ring position for the frame; reloaded past reach
            start = bc.cur
            self.emit_tail(bc, frame, blk, n, cond=cond)
            if bc.cur - start != n:
                raise ConvertError(f"{self.cfg.where(blk)}: internal: tail of {bc.cur - start} positions, planned {n}")
        self.finish(bc)

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        for bid in self.order:
            self.gen_block(bid)
        for bid, bc in self.codes.items():
            if not bc.done:
                raise ConvertError(f"{self.cfg.where(self.cfg.blocks[bid])}: internal: block left unfinished")


def block_code_order(cfg: Cfg, reachable: set[int]) -> list[int]:
    """Layout order: every block right before the block it falls through to (a split edge's
    block, or a copy, after the block that falls into it); the chains so formed that start at an
    original block in source order, then those that start at an edge block or a copy."""
    falls_into = {b.id: b.succs[-1] for b in cfg.blocks
                  if b.succs and (b.terminator is None or SPECS[b.terminator.op].conditional)}
    fallen = set(falls_into.values())
    heads = [b.id for b in cfg.blocks if b.copy_of is None] + [b.id for b in cfg.blocks if b.copy_of is not None]
    order = []
    for bid in heads:
        chain = bid if bid not in fallen else None
        while chain is not None:
            order.append(chain)
            chain = falls_into.get(chain)
    return [b for b in order if b in reachable]

"""The converter's driver: a REG kernel's conversions tried (loops unrolled, values in local
memory or in the ring, the hands variant's ring sizes), each generated (``codegen``) and costed
(``costs``), the cheapest linked into the DFLOW kernel and its report. The package's docstring
lists the pipeline; docs/converter.md explains the algorithm.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import DEFAULT_DMAX, DEFAULT_RING, MAX_RING, Kernel, Module
from dualflow.isa.opcodes import Form, Opcode, Variant

from .breakdown import LoopInfo
from .carried import CARRIED_HAND, carry, frame
from .carried import find as find_carried
from .cfg import ConvertError
from .codegen import FRAME_SLACK, MARGIN, MIN_DMAX, CodeGen, Emitted, block_code_order
from .colors import assign_colors
from .costs import loop_weighted_cost, loop_weights
from .divergence import analysed_cfg
from .hands import (
    LONG_SPAN,
    ORDERS,
    OTHER_HANDS,
    HandPlan,
    assign,
    copy_carried,
    copy_region_exits,
    drop_unused_copies,
    split_webs,
)
from .reserve import reserve_advances
from .sink import Sunk, pays_at_exits, sink_into_exits
from .surgery import isolate_critical_edges
from .uniform import use_uniform_operands
from .unroll import Loop, unroll, unrollable_loops
from .work import WORK_LIMIT, metered

#: The DFLOW variants the converter can use.
VARIANTS = frozenset({Variant.RESERVED_SSY, Variant.UNIFORM_OPERANDS, Variant.HANDS})

#: The DFLOW variants the toolkit's default variant form uses (``dualflow reproduce``'s third
#: column, against the paper's original form), converted at BASE's register-file capacity
#: (``base_capacity_ring``): chosen by measurement, docs/converter.md "Variants".
DEFAULT_VARIANTS = VARIANTS

#: The hands variant with a budget: the largest other hand's ring sizes tried, from what its
#: values need down (each entry less gives hand s one more).
HAND_SPLITS = 3
#: The hands variant with a budget: plans made for up to this many entries more, kept if their
#: rings, cut to the distances read, fit the budget (hand s's planning minimum exceeds what many
#: kernels read on it).
MAX_SPARE = 8
#: Overhead that a ring's reach causes (the rest, pads and relays at joins, comes from the shape
#: of the control flow): only a conversion with some is planned again for a larger budget.
CROWDING = frozenset({"spill", "reload", "relay-dmax", "remat"})
#: Rounds of loop-frame refinement (each regenerates the kernel with the frames the latches want).
REFINE_ROUNDS = 4
#: Choices tried, each by regenerating the kernel and keeping it if its loop-weighted overhead is
#: lower: loops unrolled, then sets of loop invariants or of values live across an if/else put
#: in local memory (a bound on conversion time, independent of the machine).
UNROLL_TRIALS = 6
#: The most copies of a loop body (a loop written twice with gain is tried four times next, when
#: four bodies fit in the ring's reach and its exits need no join).
MAX_COPIES = 4
MEMORY_TRIALS = 16
#: Code generations (all trials and refinement rounds, each weighted by the length of the code it
#: generates relative to the kernel as given) after which no further trial starts.
GEN_BUDGET = 27
#: The part of it unrolling trials may take (the trials of memory and ring choices need the rest).
UNROLL_BUDGET = 20
#: What building and analysing the CFG of an unrolled kernel costs, in code generations (measured).
ANALYSIS_COST = 1
#: Refinement rounds of a memory trial (it starts from the best frames found so far).
TRIAL_ROUNDS = 2


@dataclass
class ConversionReport:
    """What the converter did to one kernel.

    ``causes`` gives, per output pc, why the instruction is there: "orig" (translated from the
    REG instruction at ``source_pc``), or overhead: "relay-join", "relay-dmax", "remat", "pad",
    "spill", "reload", "branch" (a jump added for a split edge).
    """

    kernel: str
    causes: list[str] = field(default_factory=list)
    source_pc: list[int | None] = field(default_factory=list)
    static_reg: int = 0
    #: translations beyond one per REG instruction: tiny joins copied onto split edges, code reached
    #: with different open ssy regions copied per set (a shared early exit), bodies of unrolled
    #: loops (each copy runs instead of the original, never in addition to it), a join's reader of a
    #: loop's result moved into each exit path (sink.py)
    duplicated: int = 0
    rounds: int = 0
    spill_bytes: int = 0
    #: REG pcs with no translation: every read of their value became a uniform operand
    #: (``uniform-operands``: an ``ldc`` or ``s2r`` the DFLOW code reads as ``c[w]`` or ``%sreg``),
    #: or a latch copy coalesced on the carried hand (``hands``, carried.py)
    removed: list[int] = field(default_factory=list)
    #: the loops of the converted kernel, and per output pc the innermost one it sits in (an
    #: index into ``loops``, None outside loops); ``breakdown.loop_breakdown`` sums them up
    loops: list[LoopInfo] = field(default_factory=list)
    loop_of: list[int | None] = field(default_factory=list)
    #: the steps the conversion took (work.py), its search included
    work: int = 0

    def static_overhead(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.causes:
            if c != "orig":
                out[c] = out.get(c, 0) + 1
        return out


@dataclass(frozen=True)
class _Choices:
    """Where values go, beyond what code generation decides alone (each by loop or region)."""

    memory: dict[int, set[int]]  #: loop header -> invariants kept in local memory
    stored: dict[int, set[int]]  #: acyclic region -> values stored at its ssy
    ring: dict[int, set[int]]  #: loop header -> recomputable values carried in the ring
    relay: dict[int, set[int]] = field(default_factory=dict)  #: loop header -> {header}: values kept in the ring

    def but(self, kind: str, key: int, regs: set[int]) -> _Choices:
        """These choices with ``regs`` for ``key`` (a single register toggles in or out)."""
        table = getattr(self, kind)
        now = table.get(key, set())
        new = {**table, key: now ^ regs if len(regs) == 1 and kind == "memory" else set(regs)}
        return _Choices(**{**self.__dict__, kind: new})


@dataclass
class _Plan:
    """One way to convert a kernel: the REG code (maybe with loops unrolled) and its generation."""

    kernel: Kernel
    origin: list[int | None]
    cfg: object
    gen: CodeGen
    cost: float
    rounds: int
    weight: dict[int, float]
    unrolled: dict[int, int]  #: header pc (in ``kernel``) of each unrolled loop -> its copies
    choices: _Choices = field(default_factory=lambda: _Choices({}, {}, {}))
    #: pcs (in ``kernel``) with no translation: values read as uniform operands, copies coalesced
    dropped: set[int] = field(default_factory=set)


def _plan(kernel: Kernel, origin: list[int | None], unrolled: dict[int, int], dmax: int, spill_base: int,
          uniform: bool, hand_limit: dict[int, int] | None = None, carry_from: int = LONG_SPAN,
          order: str = ORDERS[0]) -> _Plan:
    cfg = analysed_cfg(kernel)
    isolate_critical_edges(cfg)
    dropped = use_uniform_operands(cfg) if uniform else set()
    weight = loop_weights(cfg, unrolled)
    if hand_limit:  # the hands variant: loop invariants on hands of their own (hands.py, carried.py)
        cfg.hand_plan = _place_on_hands(cfg, weight, hand_limit, carry_from=carry_from, order=order)
        if cfg.hand_plan is not None:
            dropped |= set(cfg.hand_plan.dropped)
    gen, cost, rounds = _generate(cfg, dmax, spill_base, weight, origin, _Choices({}, {}, {}))
    return _Plan(kernel, origin, cfg, gen, cost, rounds, weight, unrolled, dropped=dropped)


def _place_on_hands(cfg, weight: dict[int, float], limits: dict[int, int] | None = None,
                    room: int = 0, dmax: int = 0, carry_from: int = LONG_SPAN, order: str = ORDERS[0]):
    """The hands variant's plan for ``cfg`` (whose REG code it rewrites): one innermost loop's
    carried values on hand t, if a loop qualifies and they fit (carried.py), then invariants and
    values read far away on the other hands (hands.py). ``limits`` (hand -> largest distance)
    when the rings are known, else ``room``: what all hands but s may take together, each
    distance at most ``dmax``; ``carry_from``: a loop's carried values go on hand t only if it
    writes more values than this per iteration (``carried.find``); ``order``: the order the
    other hands' candidates are taken in (``hands.ORDERS``)."""
    copies = copy_carried(cfg) + copy_region_exits(cfg)
    carried = find_carried(cfg, weight, carry_from)
    plan = None
    if carried is not None:
        limit = limits.get(CARRIED_HAND, 0) if limits else min(room - 1, dmax)
        saved = {b.id: (b.code, b.pcs) for b in cfg.blocks}
        if limit < 1 or not carry(cfg, carried):
            carried = None
        else:
            plan = frame(cfg, carried, None, limit)
            if plan is None:  # too far on its ring: the loop's values stay on hand s
                for b in cfg.blocks:
                    b.code, b.pcs = saved[b.id]
                carried = None
    split_webs(cfg)
    hands = tuple(h for h in OTHER_HANDS if carried is None or h != CARRIED_HAND)
    taken = plan.ring(CARRIED_HAND) if plan is not None else 0
    others = assign(cfg, weight, limits if limits else min(room - taken - 1, dmax), hands=hands,
                    total=None if limits else room - taken, exclude=carried.registers if carried else set(),
                    order=order)
    if plan is not None:
        plan = frame(cfg, carried, others, plan.max_distance[CARRIED_HAND])
        if plan is not None:
            plan.dropped = list(carried.dropped)
    else:
        plan = others
    drop_unused_copies(cfg, copies, plan)
    return plan


@dataclass(frozen=True)
class _Way:
    """How a conversion was made: ``_convert``'s arguments, and the budget its rings were cut to
    (``_fit``), if any; ``again`` converts another kernel the same way, without the search."""

    dmax: int
    ring: int
    rings: tuple[int, ...] | None
    carry_from: int
    order: str = ORDERS[0]
    fit: int | None = None

    def again(self, kernel: Kernel, variants: frozenset[Variant]) -> _Done | None:
        done = _convert(kernel, self.dmax, self.ring, variants, self.rings, self.carry_from, self.order)
        return done if self.fit is None else _fit(done, self.fit)


#: A conversion: the DFLOW kernel, its report, the loop-weighted cost of what it added, and how.
_Done = tuple[Kernel, ConversionReport, float, _Way]


def convert_kernel(kernel: Kernel, *, dmax: int = DEFAULT_DMAX, ring: int = DEFAULT_RING,
                   variants: frozenset[Variant] = frozenset(), rings: tuple[int, ...] | None = None,
                   work_limit: int | None = WORK_LIMIT) -> tuple[Kernel, ConversionReport]:
    """Translate one REG-form kernel into an equivalent DFLOW-form kernel, using the DFLOW
    ``variants`` given where they save instructions (the kernel declares those it uses).

    With ``Variant.HANDS``, ``ring`` is the register-file budget per warp (the sum of the hands'
    rings): hands t, u, v get what the loop invariants put on them need, hand s the rest (and
    Dmax no more than its ring less one); ``rings`` (s, t[, u[, v]]) fixes the sizes instead.
    A conversion past ``work_limit`` steps (work.py; None: no limit) stops with ``WorkLimitExceeded``."""
    with metered(work_limit) as meter:
        out, report = _convert_kernel(kernel, dmax, ring, variants, rings)
    return out, dataclasses.replace(report, work=meter.steps)


def _convert_kernel(kernel: Kernel, dmax: int, ring: int, variants: frozenset[Variant],
                    rings: tuple[int, ...] | None) -> tuple[Kernel, ConversionReport]:
    """``convert_kernel`` inside its work meter."""
    if kernel.form is not Form.REG:
        raise ConvertError(f"kernel {kernel.name!r} is already in {kernel.form.value.upper()} form")
    if variants - VARIANTS:
        unused = ", ".join(sorted(v.value for v in variants - VARIANTS))
        raise ConvertError(f"the converter does not use .variant {unused} yet "
                           f"(it uses {', '.join(sorted(v.value for v in VARIANTS))})")
    hands = Variant.HANDS in variants
    if rings is not None:
        if not hands:
            raise ConvertError("rings (one size per hand) need the hands variant")
        if not 2 <= len(rings) <= 1 + len(OTHER_HANDS) or any(not 1 <= n <= MAX_RING for n in rings):
            raise ConvertError(f"rings {rings}: the converter uses two to {1 + len(OTHER_HANDS)} hands "
                               f"(s, t, u, v), each of 1..{MAX_RING} entries")
        if rings[0] - 1 < MIN_DMAX:
            raise ConvertError(f"rings {rings}: hand s's ring must exceed {MIN_DMAX}, the converter's smallest Dmax")
        ring = sum(rings)
    if ring <= dmax and not hands:
        raise ConvertError(f"ring {ring} must exceed dmax {dmax}")
    if ring > MAX_RING:
        raise ConvertError(f"ring {ring}: at most {MAX_RING} entries per warp")
    if dmax < MIN_DMAX:
        raise ConvertError(f"dmax {dmax} is too small for the converter: it needs at least {MIN_DMAX} (room for "
                           f"a join's values below Dmax - {FRAME_SLACK} plus {MARGIN} positions of headroom)")
    done = _convert_checked(kernel, dmax, ring, variants, rings)
    # A join's reader of a loop's result moved into the exit paths, where it replaces the copy
    # each group of lanes leaving needs (sink.py): kept when it costs less.
    sunk = sink_into_exits(kernel, loop_weights)
    if sunk is not None and pays_at_exits(done[1].causes, done[1].source_pc, sunk.syncs):
        try:  # converted as the kernel as given was (its search again would double the work)
            other = done[3].again(sunk.kernel, variants)
        except ConvertError:  # a shape the code generator refuses once moved: keep the kernel as given
            other = None
        if other is not None and other[2] + sunk.extra < done[2]:
            return other[0], _sources_as_given(other[1], sunk, kernel)
    return done[:2]


def _sources_as_given(report: ConversionReport, sunk: Sunk, kernel: Kernel) -> ConversionReport:
    """A report on the converted sunk kernel, with its source pcs those of ``kernel``."""
    source = [None if pc is None else sunk.origin[pc] for pc in report.source_pc]
    translated = [src for c, src in zip(report.causes, source) if c == "orig"]
    static_reg = sum(1 for i in kernel.code if i.op is not Opcode.NOP)
    return dataclasses.replace(report, source_pc=source, static_reg=static_reg,
                               duplicated=len(translated) - len(set(translated)),
                               removed=sorted({sunk.origin[pc] for pc in report.removed}))


def _convert_checked(kernel: Kernel, dmax: int, ring: int, variants: frozenset[Variant],
                     rings: tuple[int, ...] | None) -> _Done:
    """``convert_kernel`` once its arguments are checked, with the loop-weighted cost of what it added."""
    hands = Variant.HANDS in variants
    if hands and rings is None:
        # Planned for the budget, then for a few entries more: a plan whose rings, cut to the
        # distances its code reads, fit the budget after all (hand s keeps MIN_DMAX + 1 entries
        # for planning only) is as good as one planned for it. The cheapest (loop-weighted) is kept.
        options = _carry_options(kernel)
        best = None
        if ring > MIN_DMAX:
            best = _convert_in_budget(kernel, dmax, ring, variants, options)
            crowded = CROWDING & set(best[1].causes)  # what more reach could save
            short = best[0].rings[0] <= DEFAULT_RING  # hand s's reach is what crowds (a bound on work)
            spare = min(MAX_SPARE, best[0].rings[0] - _reach(best[0])[0]) if crowded and short else 0
            larger = range(ring + 1, ring + spare + 1)
        else:  # below hand s's planning minimum: only a plan for more entries that fits
            larger = range(MIN_DMAX + 1, MIN_DMAX + 2 + MAX_SPARE)
        for budget in larger:
            done = _fit(_convert_in_budget(kernel, dmax, budget, variants, options), ring)
            if done is not None and (best is None or done[2] < best[2]):
                best = done
        if best is None:
            raise ConvertError(f"ring budget {ring}: no conversion fits (hand s plans with at least {MIN_DMAX + 1} "
                               f"entries; cut to what they read, the plans for up to {larger[-1]} take more)")
        return best
    if hands:
        return min((_convert(kernel, dmax, ring, variants, rings, least, order)
                    for least in _carry_options(kernel) for order in ORDERS), key=lambda done: done[2])
    return _convert(kernel, dmax, ring, variants, rings)


def _carry_options(kernel: Kernel) -> tuple[int, ...]:
    """The ``carry_from`` thresholds worth trying: ``LONG_SPAN`` (only loops hand s would relay
    in), and, if it picks another loop, 0 (any innermost loop: its carried values on hand t
    leave hand s's frame at the loop's entry shorter, which can save a pad there)."""
    cfg = analysed_cfg(kernel)
    isolate_critical_edges(cfg)
    weight = loop_weights(cfg)
    picks = [find_carried(cfg, weight, least) for least in (LONG_SPAN, 0)]
    same = (picks[0] is None) == (picks[1] is None) and (picks[0] is None or picks[0].header == picks[1].header)
    return (LONG_SPAN,) if same else (LONG_SPAN, 0)


def _convert_in_budget(kernel: Kernel, dmax: int, ring: int, variants: frozenset[Variant],
                       options: tuple[int, ...]) -> _Done:
    """The hands variant with a budget of ``ring`` entries: the other hands as large as their
    invariants need, or the largest a little smaller (more reach for hand s, a value or two left
    on it); with each ``carry_from`` of ``options`` (``_carry_options``) and each order of the
    candidates (``hands.ORDERS``, an order only where it places other values than the first);
    the conversion that costs least (loop-weighted)."""
    best = None
    for least, order, plan in _orders(kernel, dmax, ring, Variant.UNIFORM_OPERANDS in variants, options):
        need = None if plan is None else plan.rings()
        if need is None:  # nothing to put on another hand: the original form, all of the budget one ring
            tries = [(min(dmax, ring - 1), None)]
        else:
            largest = max(need, key=lambda h: (need[h], -h))
            tries = []
            for less in range(min(HAND_SPLITS, need[largest])):
                others = [need[h] - (less if h == largest else 0) for h in sorted(need)]
                tries.append((dmax, (ring - sum(others), *others)))
        for limit, rings in tries:
            done = _convert(kernel, limit, ring, variants, rings, least, order)
            if best is None or done[2] < best[2]:
                best = done
    return best


def _reach(kernel: Kernel) -> list[int]:
    """Per ring of a DFLOW kernel, the smallest size its code's reads allow (the farthest
    distance read on it, plus one)."""
    need = [1] * len(kernel.rings)
    for ins in kernel.code:
        for hand, distance in ins.hand_sources():
            need[hand] = max(need[hand], distance + 1)
    return need


def _fit(done: _Done, budget: int) -> _Done | None:
    """A conversion's rings cut to what its code reads, hand s taking what the others leave of
    ``budget``; None if they do not fit in it."""
    kernel = done[0]
    need = _reach(kernel)
    if sum(need) > budget:
        return None
    rings = (budget - sum(need[1:]), *need[1:])
    dmax = max(max(need) - 1, 1)
    fitted = dataclasses.replace(kernel, ring=rings[0], rings=rings if kernel.hands else (rings[0],), dmax=dmax)
    return fitted, done[1], done[2], dataclasses.replace(done[3], fit=budget)


def _convert(kernel: Kernel, dmax: int, ring: int, variants: frozenset[Variant],
             rings: tuple[int, ...] | None, carry_from: int = LONG_SPAN, order: str = ORDERS[0]) -> _Done:
    """``convert_kernel`` once the rings are known (``rings``: the hands variant's, s first),
    with the loop-weighted cost of what it added."""
    way = _Way(dmax, ring, rings, carry_from, order)
    spill_base = kernel.local_bytes
    uniform = Variant.UNIFORM_OPERANDS in variants
    identity: list[int | None] = list(range(len(kernel.code)))
    hand_limit = None
    declared = dmax
    if rings is not None:
        declared = min(dmax, max(rings) - 1)
        dmax = min(dmax, rings[0] - 1)
        hand_limit = {h: min(dmax, n - 1) for h, n in enumerate(rings) if h and n > 1} or None
    best = _plan(kernel, identity, {}, dmax, spill_base, uniform, hand_limit, carry_from, order)
    rounds = best.rounds
    work = float(rounds)  # in generations of the kernel as given (an unrolled one is longer)
    # Loops written twice, one at a time (innermost first; never two that overlap), kept where
    # the relays saved on the back edge outweigh what the doubled body costs; then four times.
    chosen: list[Loop] = []
    base = best
    first = {blk.first_pc: blk.id for blk in base.cfg.blocks if blk.copy_of is None}
    loops = [lp for lp in unrollable_loops(kernel, dmax - MARGIN)
             if _added(base.gen, base.gen.loops.get(first.get(lp.start), ()))]  # costs nothing: gains nothing
    queue = loops[:UNROLL_TRIALS]
    while queue and work < UNROLL_BUDGET:
        lp = queue.pop(0)
        others = [c for c in chosen if (c.start, c.end) != (lp.start, lp.end)]
        if any(lp.overlaps(c) for c in others):
            continue
        done = unroll(kernel, others + [lp])
        try:
            plan = _plan(done.kernel, done.origin, done.loops, dmax, spill_base, uniform, hand_limit, carry_from,
                         order)
        except ConvertError:  # a shape the code generator refuses once doubled: keep the loop as is
            continue
        rounds += plan.rounds
        work += (plan.rounds + ANALYSIS_COST) * len(done.kernel.code) / len(kernel.code)
        if plan.cost < best.cost:
            best, chosen = plan, others + [lp]
            if (lp.copies < MAX_COPIES and lp.exits_alone(kernel)
                    and 2 * lp.copies * lp.producers(kernel) <= dmax - MARGIN):
                queue.insert(0, Loop(lp.start, lp.end, 2 * lp.copies))
    gen = best.gen
    # Then values in local memory: the invariants of a loop, reloaded where used instead of
    # relayed (once or more) every iteration, and values live across an if/else whose paths
    # outrun the ring's reach, stored once at its ssy instead of relayed on every path. A loop
    # crowded with invariants gains only when most leave the ring, so each loop first tries all
    # of them; single invariants move in or out last. Recomputable values a loop uses may be
    # carried in the ring instead (one relay per pass of the latch, instead of a recomputation
    # per use: cheaper in unrolled loops). Loops that cost most first (loop-weighted), then
    # hottest code first.
    hot = best.weight
    paid = {h: sum(hot.get(b, 1) * _added(gen, (b,)) for b in gen.loops[h]) for h in gen.loops}
    headers = sorted(gen.loops, key=lambda h: (-paid[h], gen.rpo_index[h]))
    invariants = {h: gen.invariants(h) for h in headers}
    regions = sorted(gen.region_candidates().items(),
                     key=lambda item: (-hot.get(best.cfg.regions[item[0]].ssy_block, 1), item[0]))
    costly = {h for h in headers if _added(gen, gen.loops[h])}
    # Loops that go through local memory first: the same loop with its values relayed instead
    # (kept if cheaper, a reload weighing costs.LOCAL_LOAD_COST relays).
    trials = [("relay", h, {h}) for h in headers if _local(gen, gen.loops[h])]
    trials += [(kind, h, regs) for h in headers if h in costly
              for kind, regs in (("memory", invariants[h]), ("ring", gen.loop_recipes(h))) if regs]
    trials += [("stored", rid, regs) for rid, regs in regions if _added(gen, best.cfg.regions[rid].blocks)]
    trials += [("memory", h, {r}) for h in headers for r in sorted(invariants[h])
               if len(invariants[h]) > 1 and h in costly]
    scale = len(best.kernel.code) / len(kernel.code)
    for kind, key, regs in trials[:MEMORY_TRIALS]:
        if work >= GEN_BUDGET:
            break
        done_rounds = _try(best, best.choices.but(kind, key, regs))
        rounds += done_rounds
        work += done_rounds * scale
    hand_plan = getattr(best.cfg, "hand_plan", None)
    if rings is None:
        out, report = _link(kernel, best, dmax, ring, rounds)
    elif hand_plan is None:  # no value on another hand after all: the original form with hand s's ring
        out, report = _link(kernel, best, dmax, rings[0], rounds)
    else:
        out, report = _link(kernel, best, declared, rings[0], rounds, rings[1:])
    if Variant.RESERVED_SSY in variants:
        out, report = reserve_advances(out, report)
    return out, report, best.cost, way


def _hand_plan(kernel: Kernel, dmax: int, ring: int, uniform: bool, carry_from: int = LONG_SPAN,
               order: str = ORDERS[0]) -> HandPlan | None:
    """The hands variant with a budget of ``ring`` entries: the kernel's (as given, not unrolled)
    values on other hands, whose rings (``HandPlan.rings``) leave hand s at least MIN_DMAX + 1
    entries; None if nothing goes on another hand."""
    cfg = analysed_cfg(kernel)
    isolate_critical_edges(cfg)
    if uniform:
        use_uniform_operands(cfg)
    room = ring - MIN_DMAX - 1  # what the other hands may take together
    return _place_on_hands(cfg, loop_weights(cfg), room=room, dmax=dmax, carry_from=carry_from, order=order)


def _orders(kernel: Kernel, dmax: int, ring: int, uniform: bool,
            options: tuple[int, ...]) -> list[tuple[int, str, HandPlan | None]]:
    """The (``carry_from``, order, plan) triples worth converting with: every ``carry_from`` of
    ``options`` with the first order, and with each other order that puts other values on the
    hands (the same plan would give the same code)."""
    out = []
    for least in options:
        seen = []
        for order in ORDERS:
            plan = _hand_plan(kernel, dmax, ring, uniform, least, order)
            placed = None if plan is None else plan.hand
            if order == ORDERS[0] or placed not in seen:
                out.append((least, order, plan))
                seen.append(placed)
    return out


def _added(gen: CodeGen, blocks) -> int:
    """Instructions the conversion added to these blocks."""
    return sum(1 for b in blocks if b in gen.codes
               for e in gen.codes[b].body + gen.codes[b].tail + gen.codes[b].term if e.cause != "orig")


def _local(gen: CodeGen, blocks) -> bool:
    """Whether the conversion added local-memory stores or reloads to these blocks."""
    return any(e.cause in ("spill", "reload") for b in blocks if b in gen.codes
               for e in gen.codes[b].body + gen.codes[b].tail + gen.codes[b].term)


def _try(best: _Plan, choices: _Choices) -> int:
    """Generate ``best``'s kernel with these choices, starting from its loop frames; adopt them
    if cheaper."""
    gen, cost, rounds = _generate(best.cfg, best.gen.dmax, best.gen.spill_base, best.weight, best.origin,
                                  choices, {h: best.gen.frames[h] for h in best.gen.loops
                                            if h in best.gen.frames}, TRIAL_ROUNDS)
    if cost < best.cost:
        best.gen, best.cost, best.choices = gen, cost, choices
    return rounds


def _generate(cfg, dmax: int, spill_base: int, weight: dict[int, float], origin: list[int | None],
              choices: _Choices, frames: dict[int, dict] | None = None,
              max_rounds: int = REFINE_ROUNDS) -> tuple[CodeGen, float, int]:
    """Generate the kernel, refining loop-header frames from the latches; the cheapest round."""
    best, best_cost, frames, rounds = None, None, dict(frames or {}), 0
    for _ in range(max_rounds):
        rounds += 1
        gen = CodeGen(cfg, dmax, spill_base, frames, choices.memory, choices.stored, choices.ring,
                      {h for h, on in choices.relay.items() if on})
        gen.run()
        cost = loop_weighted_cost(gen, weight, origin)
        if best is None or cost < best_cost:
            best, best_cost = gen, cost
        proposals = {h: f for h, f in gen.proposals.items() if gen.frames.get(h) != f}
        if not proposals:
            break
        frames = {**frames, **{h: gen.frames[h] for h in gen.frames if h in gen.proposals}, **proposals}
    return best, best_cost, rounds


def _link(kernel: Kernel, plan: _Plan, dmax: int, ring: int, rounds: int,
          hand_rings: tuple[int, ...] = ()) -> tuple[Kernel, ConversionReport]:
    cfg, gen, origin = plan.cfg, plan.gen, plan.origin
    order = block_code_order(cfg, set(gen.codes))
    owner, emitted = [], []
    for bid in order:
        bc = gen.codes[bid]
        owner.extend(bid for _ in bc.body + bc.tail + bc.term)
        emitted.extend(bc.body + bc.tail + bc.term)
    owner, emitted, start = _drop_jumps_to_next(order, owner, emitted)
    code: list[Instruction] = []
    for e in emitted:
        ins = e.ins
        if e.target is not None:
            ins = dataclasses.replace(ins, bimm=True, imm=start[e.target])
        code.append(ins)
    code = assign_colors(plan.kernel, code, [e.pc for e in emitted])
    labels = {}
    for bid in order:
        blk = cfg.blocks[bid]
        if blk.label and blk.copy_of is None and start[bid] < len(code):
            labels.setdefault(start[bid], blk.label)
    spill_bytes = 4 * (max(gen.spilled_regs) + 1) if gen.spilled_regs else 0
    variants = frozenset({Variant.UNIFORM_OPERANDS}) if any(ins.uniform for ins in code) else frozenset()
    rings = (ring,)
    hands = getattr(cfg, "hand_plan", None)
    if hands is not None:  # hand s, then the others as large as asked or as their values need
        rings = (ring, *(hand_rings or tuple(hands.rings().values())))
        variants |= {Variant.HANDS}
    out = Kernel(name=kernel.name, form=Form.DFLOW, code=code, params=list(kernel.params),
                 shared_bytes=kernel.shared_bytes, local_bytes=kernel.local_bytes + spill_bytes,
                 rings=rings, dmax=dmax, labels=labels, variants=variants)
    # Source pcs of the kernel as given; the exit branch an unrolled loop gains is overhead.
    source = [None if e.pc is None else origin[e.pc] for e in emitted]
    causes = ["branch" if e.cause == "orig" and src is None else e.cause for e, src in zip(emitted, source)]
    translated = [src for c, src in zip(causes, source) if c == "orig"]
    removed = sorted({origin[pc] for pc in plan.dropped} - set(translated))
    report = ConversionReport(kernel.name, causes, source,
                              static_reg=sum(1 for i in kernel.code if i.op is not Opcode.NOP), rounds=rounds,
                              duplicated=len(translated) - len(set(translated)), spill_bytes=spill_bytes,
                              removed=removed)
    report.loops, innermost = _loop_infos(kernel, plan)
    report.loop_of = [innermost.get(bid) for bid in owner]
    return out, report


def _block_starts(order: list[int], owner: list[int]) -> dict[int, int]:
    """The first pc of each block (``owner``: the block of each instruction, grouped in ``order``);
    a block without code starts where the next one does."""
    counts: dict[int, int] = {}
    for bid in owner:
        counts[bid] = counts.get(bid, 0) + 1
    start, at = {}, 0
    for bid in order:
        start[bid] = at
        at += counts.get(bid, 0)
    return start


def _drop_jumps_to_next(order: list[int], owner: list[int],
                        emitted: list[Emitted]) -> tuple[list[int], list[Emitted], dict[int, int]]:
    """Remove every ``bra`` whose target is the next instruction (the first copy of an unrolled
    loop with a ``bra`` back edge continues into the second; a split edge's block may end up right
    before its target): it would cost an instruction and a fetch stall each time it ran. A ``bra``
    neither moves RP nor touches the divergence stack, so removing it changes nothing else; targets
    (``ssy`` ones included) and labels are resolved from the block starts afterwards. Removing one
    can make another (a ``bra`` to it) a jump to the next instruction, hence the loop."""
    while True:
        start = _block_starts(order, owner)
        drop = {k for k, e in enumerate(emitted)
                if e.ins.op is Opcode.BRA and e.target is not None and start[e.target] == k + 1}
        if not drop:
            return owner, emitted, start
        owner = [b for k, b in enumerate(owner) if k not in drop]
        emitted = [e for k, e in enumerate(emitted) if k not in drop]


def _loop_infos(kernel: Kernel, plan: _Plan) -> tuple[list[LoopInfo], dict[int, int]]:
    """The loops of the generated code (outermost first), and the innermost loop of each block."""
    cfg, loops = plan.cfg, plan.gen.loops
    headers = sorted(loops, key=lambda h: (-len(loops[h]), plan.gen.rpo_index[h]))
    infos, innermost = [], {}
    for index, h in enumerate(headers):
        first = cfg.blocks[h].first_pc
        src = plan.origin[first] if first is not None else None
        name = kernel.labels.get(src, f"pc {src}") if src is not None else f"block {h}"
        depth = sum(1 for o in headers if h in loops[o])
        infos.append(LoopInfo(name, depth, plan.unrolled.get(first, 1)))
        for b in loops[h]:
            innermost[b] = index  # later (smaller) loops overwrite the ones around them
    return infos, innermost


def base_capacity_ring(module: Module) -> int:
    """The ring budget per warp that holds as much register file as BASE's form of ``module``:
    the most registers any of its kernels uses per thread (``Kernel.regs``; dualflow/machine/footprint.py
    sizes BASE's footprint the same way), and at least the converter's smallest hand s."""
    return max(max((max(k.regs, 1) for k in module), default=1), MIN_DMAX + 1)


def convert_module(module: Module, *, dmax: int = DEFAULT_DMAX, ring: int = DEFAULT_RING,
                   variants: frozenset[Variant] = frozenset(),
                   rings: tuple[int, ...] | None = None) -> tuple[Module, dict[str, ConversionReport]]:
    """Convert every kernel of a REG-form module."""
    kernels, reports = {}, {}
    for k in module:
        kernels[k.name], reports[k.name] = convert_kernel(k, dmax=dmax, ring=ring, variants=variants, rings=rings)
    return Module(kernels, module.path), reports

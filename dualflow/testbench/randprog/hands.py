"""Random hands programs (DFLOW ``Variant.HANDS``) for the RTL core, legal by construction.

The converter does not emit hands, so a hands program is made from a converted kernel of the
original form (``core_programs.form_kernel``; its one ring is the *main* hand's, converted for
that hand's ring) by ``handify``:

- the main hand ``m`` (drawn per program) takes every producer, source, ``rpinc`` and reserving
  ``ssy`` of the original: its RP moves exactly as the original's one RP did, so every read the
  golden model accepted is still legal;
- inside each *segment* (a run of instructions with no control instruction and no branch target
  inside: one path, the same active lanes throughout) side instructions are put on the other
  hands: producers writing a side hand whose sources are side values written earlier in the
  segment (at their exact distance, below the hand's ring and Dmax), the main-hand sources of
  the next original instruction (the same positions it reads, at the same RP_m), or an
  immediate; ``rpinc k -> h`` on a side hand; and *reroutes*: a copy ``mov |m d| -> h`` of one of
  the next instruction's main sources, which that instruction then reads on hand h instead;
- an ``ssy`` without a reservation may get one on a side hand (``ssy L, k -> h``): the side
  hands' RPs rise at the join, and nothing reads a side value across a segment's end;
- *far reads*: a side value read at the largest distance its hand allows (``min(ring - 1,
  Dmax)``: a write, ``rpinc`` over the positions between, the read);
- *side branches*: a lane-dependent if/else of its own on side hands only (``s2r %tid.x``,
  ``iand 1``, ``ssy``, ``brnz``), whose paths advance a side hand by different amounts, so
  the stack's per-hand max decides that hand's RP at the join (its ``ssy`` may reserve on a side
  hand too); a new segment begins after it.

So every hand selector position is exercised (written hands, source hands on producers, stores,
branch conditions and memory addresses), with rings of any size, and the golden model accepts
the program: a side read names a position its own segment wrote, with every lane of the
segment active, less than a ring back.
"""

from __future__ import annotations

import dataclasses
import random

from dualflow.isa import FIELDS, SPECS, Instruction, Kernel, Opcode, SpecialReg, UnitClass, Variant
from dualflow.isa.encoding import HAND_FIELDS

__all__ = ["branch_targets", "handify", "selectors", "side_branch"]

#: Side producers: an ALU opcode with sources A and B (B maybe an immediate).
SIDE_OPS = (Opcode.IADD, Opcode.ISUB, Opcode.IXOR, Opcode.IMUL, Opcode.IMIN, Opcode.UMAX, Opcode.IAND, Opcode.IOR)


def selectors(write: int = 0, **sources: int) -> int:
    """The dst field holding the written hand and the source hands (``a``, ``b``, ``c``)."""
    base = FIELDS["dst"][0]
    out = write << (HAND_FIELDS["write"][0] - base)
    for name, hand in sources.items():
        out |= hand << (HAND_FIELDS[name][0] - base)
    return out


def _relabel(ins: Instruction, main: int) -> Instruction:
    """``ins`` of the original form moved to hand ``main`` (writes, sources, advances)."""
    if not main:
        return ins
    write = main if ins.names_written_hand else 0
    srcs = {}
    for name in SPECS[ins.op].sources:
        if (name == "b" and ins.bimm) or ins.is_uniform(name) or not getattr(ins, name):
            continue
        srcs[name] = main
    return dataclasses.replace(ins, dst=selectors(write, **srcs))


def branch_targets(code: list[Instruction]) -> set[int]:
    """The pcs the branches of ``code`` name."""
    return {ins.imm for ins in code if "target" in SPECS[ins.op].syntax.value}


def side_branch(at: int, sides: list[int], diverge: int, reserve: int | None, rng: random.Random) -> list[Instruction]:
    """A lane-dependent if/else on side hands only, to be put at pc ``at`` (its targets final):
    odd ``%tid.x`` lanes write side hand ``diverge`` once or twice more than the even lanes, which
    may advance the other side hands; the ``ssy`` reserves 1 to 3 on side hand ``reserve`` (none:
    no reservation). Reads only its own values."""
    cond = rng.choice(sides)
    others = [h for h in sides if h != diverge]

    def filler(h: int) -> Instruction:
        if rng.randrange(3):
            return Instruction(Opcode.MOV, dst=selectors(h), bimm=True, imm=rng.randrange(1 << 12))
        return Instruction(Opcode.RPINC, dst=selectors(h), bimm=True, imm=rng.randint(1, 3))

    odd = [Instruction(Opcode.MOV, dst=selectors(diverge), bimm=True, imm=rng.randrange(1 << 12))
           for _ in range(rng.randint(1, 2))]
    odd += [filler(rng.choice(sides)) for _ in range(rng.randint(0, 1))]
    even = [filler(rng.choice(others)) for _ in range(rng.randint(0, 2))] if others else []
    ssy = Instruction(Opcode.SSY, dst=selectors(reserve) if reserve is not None else 0,
                      a=rng.randint(1, 3) if reserve is not None else 0, bimm=True)
    head = [Instruction(Opcode.S2R, dst=selectors(cond), mod=int(SpecialReg.TID_X)),
            Instruction(Opcode.IAND, dst=selectors(cond, a=cond), a=1, bimm=True, imm=1), ssy,
            Instruction(Opcode.BRNZ, dst=selectors(a=cond), a=1, bimm=True)]
    odd_at = at + len(head) + len(even) + 1
    join = odd_at + len(odd) + 1
    head[2] = dataclasses.replace(ssy, imm=join)
    head[3] = dataclasses.replace(head[3], imm=odd_at)
    return [*head, *even, Instruction(Opcode.SYNC), *odd, Instruction(Opcode.SYNC)]


def handify(kernel: Kernel, rings: tuple[int, ...], main: int, rng: random.Random, *,
            side_percent: int = 35, reroute_percent: int = 30, far_percent: int = 3,
            branch_percent: int = 3, reserve_percent: int = 50, words: int | None = None) -> Kernel:
    """The hands kernel of ``kernel`` (original DFLOW form, its ring ``rings[main]``) for a core with
    ``rings``: see the module docstring. ``side_percent``: chance of side instructions before an
    instruction; ``reroute_percent``: chance of rerouting one of its main sources;
    ``reserve_percent``: chance that an ``ssy`` without a reservation gets one on a side hand;
    ``far_percent``: chance of a far read before it (on the side hands in turn); ``branch_percent``:
    of a side branch (diverging, and reserving on, the side hands in turn); besides, with a chance
    above 0, one of each per side hand comes before random instructions. A kernel longer than
    ``words`` instructions is made again (the same draws) with half those two chances."""
    state = rng.getstate()
    while True:
        out = _handify(kernel, rings, main, rng, side_percent, reroute_percent, far_percent, branch_percent,
                       reserve_percent)
        if words is None or len(out.code) <= words or not (far_percent or branch_percent):
            return out
        rng.setstate(state)
        far_percent, branch_percent = far_percent // 2, branch_percent // 2


def _handify(kernel: Kernel, rings: tuple[int, ...], main: int, rng: random.Random, side_percent: int,
             reroute_percent: int, far_percent: int, branch_percent: int, reserve_percent: int) -> Kernel:
    if kernel.ring != rings[main] or kernel.hands:
        raise ValueError(f"handify needs an original-form kernel of ring {rings[main]}, not {kernel.rings}")
    sides = [h for h in range(len(rings)) if h != main]
    dmax = kernel.dmax
    targets = branch_targets(kernel.code)
    out: list[Instruction] = []
    final: set[int] = set()  # positions in ``out`` whose targets are final (side branches)
    new_pc: dict[int, int] = {}
    reserve = False
    fars = [h for h in sides if min(rings[h] - 1, dmax) > 1]  # side hands with far reads
    far_reads = branches = 0
    # pcs before which a far read and a side branch come whatever the chances: as many as side hands
    forced_far = set(rng.sample(range(len(kernel.code)), min(len(fars), len(kernel.code)))) if far_percent else set()
    forced_branch = set(rng.sample(range(len(kernel.code)), min(len(sides), len(kernel.code)))) \
        if branch_percent else set()
    # per side hand: advances since the segment began, and the positions written in it
    count = {h: 0 for h in sides}
    written: dict[int, list[int]] = {h: [] for h in sides}

    def new_segment():
        for h in sides:
            count[h] = 0
            written[h] = []

    def side_source(pick_main: list[tuple[int, int]]) -> tuple[int, int] | None:
        """A (hand, distance) a side instruction may read here: a side value of this segment or
        a main source of the next instruction."""
        options = [(h, count[h] - pos) for h in sides for pos in written[h]
                   if 1 <= count[h] - pos < rings[h] and count[h] - pos <= dmax]
        options += pick_main
        return rng.choice(options) if options else None

    def write_side(h: int, ins: Instruction):
        out.append(ins)
        written[h].append(count[h])
        count[h] += 1

    for pc, ins in enumerate(kernel.code):
        if pc in targets:
            new_segment()
        new_pc[pc] = len(out)
        spec = SPECS[ins.op]
        ins = _relabel(ins, main)
        main_srcs = [(main, getattr(ins, name)) for name in spec.sources
                     if not (name == "b" and ins.bimm) and not ins.is_uniform(name) and getattr(ins, name)]
        if sides and rng.randrange(100) < side_percent:
            for _ in range(rng.randint(1, 3)):
                h = rng.choice(sides)
                if rng.randrange(100) < 15:
                    out.append(Instruction(Opcode.RPINC, dst=selectors(h), bimm=True, imm=rng.randint(1, 3)))
                    count[h] += out[-1].imm
                    continue
                a = side_source(main_srcs)
                if a is None:
                    write_side(h, Instruction(Opcode.MOV, dst=selectors(h), bimm=True, imm=rng.randrange(1 << 16)))
                    continue
                op = rng.choice(SIDE_OPS)
                b = side_source(main_srcs) if rng.randrange(2) else None
                if b is None:
                    write_side(h, Instruction(op, dst=selectors(h, a=a[0]), a=a[1], bimm=True,
                                              imm=rng.randrange(1 << 12)))
                else:
                    write_side(h, Instruction(op, dst=selectors(h, a=a[0], b=b[0]), a=a[1], b=b[1]))
        if fars and (rng.randrange(100) < far_percent or pc in forced_far):
            h, to = fars[far_reads % len(fars)], rng.choice(sides)
            far_reads += 1
            far = min(rings[h] - 1, dmax)
            write_side(h, Instruction(Opcode.MOV, dst=selectors(h), bimm=True, imm=rng.randrange(1 << 12)))
            out.append(Instruction(Opcode.RPINC, dst=selectors(h), bimm=True, imm=far - 1))
            count[h] += far - 1
            write_side(to, Instruction(rng.choice(SIDE_OPS), dst=selectors(to, a=h), a=far, bimm=True,
                                       imm=rng.randrange(1 << 12)))
        if sides and (rng.randrange(100) < branch_percent or pc in forced_branch):
            # the first of them reserve on every side hand in turn, the others three times in four
            reserved = sides[(branches + 1) % len(sides)] if branches < len(sides) or rng.randrange(4) else None
            block = side_branch(len(out), sides, sides[branches % len(sides)], reserved, rng)
            branches += 1
            final.update(range(len(out), len(out) + len(block)))
            out += block
            reserve |= bool(block[2].a)
            new_segment()
        if sides and main_srcs and rng.randrange(100) < reroute_percent:
            # copy one main source to a side hand, then read it there
            names = [name for name in spec.sources
                     if not (name == "b" and ins.bimm) and not ins.is_uniform(name) and getattr(ins, name)]
            name = rng.choice(names)
            h = rng.choice(sides)
            write_side(h, Instruction(Opcode.MOV, dst=selectors(h, b=main), b=getattr(ins, name)))
            copy = count[h] - 1
            if rng.randrange(2):  # something else on that hand in between
                write_side(h, Instruction(Opcode.MOV, dst=selectors(h), bimm=True, imm=rng.randrange(100)))
            distance = count[h] - copy
            if distance < rings[h] and distance <= dmax:
                lsb = HAND_FIELDS[name][0] - FIELDS["dst"][0]
                dst = ins.dst & ~(3 << lsb) | h << lsb
                ins = dataclasses.replace(ins, dst=dst, **{name: distance})
        if ins.op is Opcode.SSY and not ins.a and sides and rng.randrange(100) < reserve_percent:
            ins = dataclasses.replace(ins, a=rng.randint(1, 4), dst=selectors(rng.choice(sides)))
            reserve = True
        out.append(ins)
        if spec.unit is UnitClass.CTRL:
            new_segment()
    code = []
    for at, ins in enumerate(out):
        if "target" in SPECS[ins.op].syntax.value and at not in final:
            ins = dataclasses.replace(ins, imm=new_pc[ins.imm])
        code.append(ins)
    variants = kernel.variants | {Variant.HANDS} | ({Variant.RESERVED_SSY} if reserve else set())
    return Kernel(name=kernel.name, form=kernel.form, code=code, params=kernel.params,
                  shared_bytes=kernel.shared_bytes, local_bytes=kernel.local_bytes, rings=tuple(rings),
                  dmax=dmax, variants=frozenset(variants),
                  labels={new_pc[pc]: name for pc, name in kernel.labels.items()})

"""Sinking a join's first consumer of a loop's result into the region's exit paths (REG form,
before conversion).

Lanes that leave a lane-dependent loop at different iterations hold the loop's values at
different ring positions, so a value read after the reconvergence must be written once more on
each exit path, at a position every group of lanes agrees on: a copy per group of lanes leaving
(docs/converter.md, "Variants"). When the join's first reader of that value is a plain
computation whose other operands are already there, it can be that write itself:

    LOOP: ...                           LOOP: ...
          brnz p, LOOP                        brnz p, LOOP
          sync                  ->            i2f r13, r7     ; once per group leaving
    JOIN: ishl r10, r3, 2                     sync
          i2f r13, r7                   JOIN: ishl r10, r3, 2

Every lane reaches the join through exactly one of the region's ``sync`` instructions, so each
computes the moved instruction once, from the same values, as before. In REG form this costs
instructions (one per path instead of one per warp); in DFLOW form it replaces the copy each
path needs anyway. The caller converts both forms and keeps the cheaper (``extra`` is what the
moved copies add, loop-weighted).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import SPECS, Opcode, UnitClass

from .cfg import Block, Cfg, ConvertError, Region, natural_loops
from .divergence import analysed_cfg
from .liveness import defines, live_after_each, liveness, uses

#: Most instructions sunk in one kernel (each needs a new control-flow graph).
MAX_SINKS = 8
#: Units whose instructions compute from their sources alone (no memory, no control).
_PURE_UNITS = frozenset({UnitClass.INT, UnitClass.FP, UnitClass.SFU})
#: Of those, the ones that depend on more than the lane's registers (the active lanes, the lane).
_LANE_BOUND = frozenset({Opcode.VOTE, Opcode.S2R, Opcode.NOP})


@dataclass
class Sunk:
    kernel: Kernel  #: the REG kernel with the instructions moved
    origin: list[int]  #: pc in the kernel as given of each instruction
    moved: int  #: instructions sunk
    syncs: frozenset[int]  #: pcs in the kernel as given of the ``sync`` instructions they moved before
    #: instructions the moved copies add beyond the originals, each weighted by how often its block
    #: runs (``weight``: block id -> relative count, of the kernel as given)
    extra: float


def sink_into_exits(kernel: Kernel, weigh) -> Sunk | None:
    """``kernel`` with each join's first consumer of a loop's result that can move into the
    region's exit paths moved there; None if there is none. ``weigh(cfg)`` gives the relative
    run count of each block id of a control-flow graph."""
    origin = list(range(len(kernel.code)))
    extra, moved, syncs = 0.0, 0, set()
    for _ in range(MAX_SINKS):
        try:
            cfg = analysed_cfg(kernel)
        except ConvertError:  # the converter reports it on the kernel as given
            return None
        found = _candidate(cfg)
        if found is None:
            break
        join, index, exits = found
        weight = weigh(cfg)
        extra += sum(weight.get(b.id, 1) for b in exits) - weight.get(join.id, 1)
        syncs |= {origin[b.pcs[-1]] for b in exits}
        kernel, origin = _move(kernel, origin, join.pcs[index], [b.pcs[-1] for b in exits])
        moved += 1
    return Sunk(kernel, origin, moved, frozenset(syncs), extra) if moved else None


def pays_at_exits(causes: list[str], source_pc: list[int | None], syncs: frozenset[int]) -> bool:
    """Whether a conversion (a report's ``causes`` and ``source_pc``) added an instruction right
    before one of ``syncs``: a copy or store there is what moving a reader can save; without one,
    the move only adds (the caller then need not convert the moved kernel at all)."""
    return any(src in syncs and pc and causes[pc - 1] != "orig" for pc, src in enumerate(source_pc))


def _pure(ins: Instruction) -> bool:
    spec = SPECS[ins.op]
    return spec.unit in _PURE_UNITS and spec.produces and ins.op not in _LANE_BOUND and defines(ins) is not None


def _exits(cfg: Cfg, region: Region) -> list[Block] | None:
    """The blocks that enter the region's join, if each ends with a ``sync`` closing it."""
    join = cfg.blocks[region.join]
    if join.copy_of is not None or not join.preds:
        return None
    exits = [cfg.blocks[p] for p in join.preds]
    for b in exits:
        term = b.terminator
        if (term is None or term.op is not Opcode.SYNC or b.copy_of is not None or None in b.pcs
                or not b.stack or b.stack[-1] != region.id or any(i.op is Opcode.SSY for i in b.code)):
            return None
    return exits


def _candidate(cfg: Cfg) -> tuple[Block, int, list[Block]] | None:
    """A join, the index in it of an instruction to sink, and the region's exit blocks."""
    loops = natural_loops(cfg)
    _, live_out = liveness(cfg)
    once = Counter(r.pc for r in cfg.regions.values())
    for region in sorted(cfg.regions.values(), key=lambda r: r.pc):
        if once[region.pc] != 1:  # a region copied for a shared tail: left alone
            continue
        exits = _exits(cfg, region)
        if exits is None:
            continue
        # values a loop inside the region writes: at a different position per group leaving
        carried = {defines(ins) for body in loops.values() if body <= region.blocks
                   for b in body for ins in cfg.blocks[b].code} - {None}
        join = cfg.blocks[region.join]
        after = live_after_each(join.code, live_out[join.id])
        written: set[int] = set()
        read: set[int] = set()
        for index, ins in enumerate(join.code):
            sources = set(uses(ins))
            if (_pure(ins) and not sources & written and defines(ins) not in written | read
                    and any(r in carried and r not in after[index] and r not in read for r in sources)):
                return join, index, exits
            read |= sources
            if defines(ins) is not None:
                written.add(defines(ins))
    return None


def _move(kernel: Kernel, origin: list[int], pc: int, before: list[int]) -> tuple[Kernel, list[int]]:
    """The kernel with the instruction at ``pc`` moved to just before each pc of ``before``
    (branch and ``ssy`` targets follow their instructions; one that named ``pc`` names the next)."""
    code, moving = kernel.code, kernel.code[pc]
    new: list[Instruction] = []
    came_from: list[int] = []  # pc in ``kernel`` of each new instruction
    new_pc: dict[int, int] = {}
    for old, ins in enumerate(code):
        new_pc[old] = len(new)
        if old in before:
            new.append(moving)
            came_from.append(pc)
        if old != pc:
            new.append(ins)
            came_from.append(old)
    new_pc[len(code)] = len(new)
    new = [dataclasses.replace(ins, imm=new_pc[ins.imm]) if SPECS[ins.op].has_target else ins for ins in new]
    labels = {new_pc[p]: name for p, name in kernel.labels.items()}
    locations = {k: kernel.locations[old] for k, old in enumerate(came_from) if old in kernel.locations}
    kernel = dataclasses.replace(kernel, code=new, labels=labels, locations=locations)
    return kernel, [origin[old] for old in came_from]

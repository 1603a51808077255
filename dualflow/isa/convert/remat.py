"""Which values are cheap to recompute instead of being carried in the ring.

A value is rematerializable where every definition that reaches it is the same source-free
instruction: a special-register read (``s2r``), a kernel parameter (``ldc``) or a constant
(``mov`` of an immediate). Registers never written read 0 in REG form, a constant too.
"""

from __future__ import annotations

from dualflow.isa.encoding import Instruction
from dualflow.isa.opcodes import Opcode

from .cfg import Cfg
from .liveness import defines

ZERO = Instruction(Opcode.MOV, bimm=True, imm=0)


def recipe_of(ins: Instruction) -> Instruction | None:
    """The DFLOW instruction that recomputes the value ``ins`` writes, if it has no sources."""
    if ins.op in (Opcode.S2R, Opcode.LDC) or (ins.op is Opcode.MOV and ins.bimm):
        return Instruction(ins.op, mod=ins.mod, bimm=ins.bimm, imm=ins.imm)
    return None


def reaching_recipes(cfg: Cfg, order: list[int],
                     live_in: dict[int, set[int]]) -> dict[int, dict[int, Instruction]]:
    """For each block, the live-in registers whose reaching definitions all share one recipe.

    A forward dataflow over one value per register: the recipe every reaching definition shares,
    or None once two disagree or one has no recipe. A register absent from a block's map has
    only the kernel entry's definition reaching it (the constant 0), so the maps hold just the
    registers written somewhere (a kernel may name r200 and never write most registers)."""
    out_gen: dict[int, dict[int, Instruction | None]] = {}
    for b in cfg.blocks:
        last: dict[int, Instruction | None] = {}
        for ins in b.code:
            reg = defines(ins)
            if reg is not None:
                last[reg] = recipe_of(ins)
        out_gen[b.id] = last
    rd_in: dict[int, dict[int, Instruction | None] | None] = {bid: None for bid in order}  # None: nothing yet
    changed = True
    while changed:
        changed = False
        for bid in order:
            # The kernel's entry is reached by the entry definitions too (and by back edges, if
            # the kernel starts with a loop).
            merged: dict[int, Instruction | None] | None = {} if bid == cfg.entry else None
            for p in cfg.blocks[bid].preds:
                if rd_in.get(p) is None:
                    continue
                out = {**rd_in[p], **out_gen[p]}
                if merged is None:
                    merged = out
                    continue
                for r in merged.keys() | out.keys():
                    a, b = merged.get(r, ZERO), out.get(r, ZERO)
                    merged[r] = a if a == b else None
            if merged is not None and merged != rd_in[bid]:
                rd_in[bid] = merged
                changed = True
    result: dict[int, dict[int, Instruction]] = {}
    for bid in order:
        values = rd_in[bid] or {}
        found = {}
        for r in live_in[bid]:
            recipe = values.get(r, ZERO)
            if recipe is not None:
                found[r] = recipe
        result[bid] = found
    return result

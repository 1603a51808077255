"""The ``uniform-operands`` variant in converted code: kernel parameters and warp-uniform special
registers read as uniform operands instead of carried in the ring.

A register whose every reaching definition is the same ``ldc`` of a parameter word (below
``UNIFORM_PARAM_WORDS``) or ``s2r`` of a uniform special register holds, in every lane, the value
a uniform operand names (docs/isa.md, "Variants"). Each source that reads such a register is
rewritten, in the REG blocks before code generation, to name that value directly; once any is,
every such definition no longer read is turned into a ``nop`` (which code generation leaves
out). What remains is
ordinary REG code for the code generator: liveness, relays, recomputations and frames see fewer
values, and a uniform operand passes through untouched. A register that another definition may
also reach (a different recipe, or a computed value) keeps the ordinary path for that read.
"""

from __future__ import annotations

import dataclasses

from dualflow.isa.encoding import UNIFORM_FLAG, Instruction
from dualflow.isa.opcodes import SPECS, Opcode, SpecialReg, uniform_field

from .cfg import Cfg
from .liveness import defines, live_after_each, liveness
from .remat import reaching_recipes, recipe_of


def uniform_of(recipe: Instruction | None) -> int | None:
    """The uniform operand field naming the value ``recipe`` computes, if a uniform operand can
    name it: a parameter word (``ldc``) or a uniform special register (``s2r``)."""
    if recipe is None:
        return None
    if recipe.op is Opcode.LDC:
        return uniform_field(recipe.imm // 4)  # a kernel's ldc offsets are multiples of 4
    if recipe.op is Opcode.S2R:
        return uniform_field(SpecialReg(recipe.mod))
    return None


def use_uniform_operands(cfg: Cfg) -> set[int]:
    """Rewrite the REG blocks of ``cfg`` (before its analysis is computed): reads of registers
    that hold a uniform value become uniform operands, and uniform definitions no longer read
    become ``nop``. Returns the pcs (in ``cfg.kernel``) of the definitions so dropped."""
    if cfg.analysis is not None:
        raise AssertionError("uniform operands must be chosen before the CFG is analysed")
    order = cfg.rpo()
    live_in, _ = liveness(cfg)
    recipes = reaching_recipes(cfg, order, live_in)
    rewritten = False
    for bid in order:
        code = cfg.blocks[bid].code
        # registers holding a uniform value at this point, and the field that names it
        held = {r: f for r, recipe in recipes[bid].items() if (f := uniform_of(recipe)) is not None}
        for k, ins in enumerate(code):
            new = {}
            for name in SPECS[ins.op].sources:
                raw = getattr(ins, name)
                if raw and not (name == "b" and ins.bimm) and not ins.is_uniform(name) and raw - 1 in held:
                    new[name] = held[raw - 1]
            if new:
                flags = ins.uniform
                for name in new:
                    flags |= UNIFORM_FLAG[name]
                code[k] = dataclasses.replace(ins, uniform=flags, **new)
                rewritten = True
            reg = defines(ins)
            if reg is not None:
                field = uniform_of(recipe_of(ins))
                if field is None:
                    held.pop(reg, None)
                else:
                    held[reg] = field
    return _drop_unread(cfg) if rewritten else set()


def _drop_unread(cfg: Cfg) -> set[int]:
    """Turn uniform definitions whose register is no longer read into ``nop``; their pcs."""
    _, live_out = liveness(cfg)
    dropped = set()
    for b in cfg.blocks:
        after = live_after_each(b.code, live_out[b.id])
        for k, ins in enumerate(b.code):
            reg = defines(ins)
            if reg is not None and reg not in after[k] and uniform_of(recipe_of(ins)) is not None:
                b.code[k] = Instruction(Opcode.NOP)
                dropped.add(b.pcs[k])
    return dropped

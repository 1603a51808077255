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

INIT = -1  #: the "definition" of a register by kernel entry (value 0)
ZERO = Instruction(Opcode.MOV, bimm=True, imm=0)


def recipe_of(ins: Instruction) -> Instruction | None:
    """The DFLOW instruction that recomputes the value ``ins`` writes, if it has no sources."""
    if ins.op in (Opcode.S2R, Opcode.LDC) or (ins.op is Opcode.MOV and ins.bimm):
        return Instruction(ins.op, mod=ins.mod, bimm=ins.bimm, imm=ins.imm)
    return None


def reaching_recipes(cfg: Cfg, order: list[int]) -> dict[int, dict[int, Instruction]]:
    """For each block, the live-in registers whose reaching definitions all share one recipe."""
    def_ins: dict[int, Instruction] = {}
    gen: dict[int, dict[int, int]] = {}
    for b in cfg.blocks:
        last: dict[int, int] = {}
        for k, ins in enumerate(b.code):
            reg = defines(ins)
            if reg is not None:
                key = b.id * 100_000 + k
                def_ins[key] = ins
                last[reg] = key
        gen[b.id] = last
    nregs = max(cfg.kernel.regs, 1)
    rd_in: dict[int, dict[int, frozenset[int]]] = {bid: {} for bid in order}
    rd_in[cfg.entry] = {r: frozenset({INIT}) for r in range(nregs)}
    changed = True
    while changed:
        changed = False
        for bid in order:
            b = cfg.blocks[bid]
            if bid != cfg.entry:
                merged: dict[int, set[int]] = {}
                for p in b.preds:
                    if p not in rd_in:
                        continue
                    out = dict(rd_in[p])
                    out.update({r: frozenset({d}) for r, d in gen[p].items()})
                    for r, ds in out.items():
                        merged.setdefault(r, set()).update(ds)
                new = {r: frozenset(ds) for r, ds in merged.items()}
                if new != rd_in[bid]:
                    rd_in[bid] = new
                    changed = True
    result: dict[int, dict[int, Instruction]] = {}
    for bid in order:
        found = {}
        for r, ds in rd_in[bid].items():
            recipes = {ZERO if d == INIT else recipe_of(def_ins[d]) for d in ds}
            if len(recipes) == 1 and None not in recipes:
                found[r] = recipes.pop()
        result[bid] = found
    return result

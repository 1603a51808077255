"""Register liveness over the CFG (REG form): which registers a block needs and keeps alive."""

from __future__ import annotations

from dualflow.isa.encoding import Instruction
from dualflow.isa.opcodes import SPECS

from .cfg import Cfg
from .work import charge


def uses(ins: Instruction) -> list[int]:
    """Registers an instruction reads (REG numbering), in operand order."""
    return [field - 1 for field in ins.source_fields()]


def defines(ins: Instruction) -> int | None:
    """The register an instruction writes, if any (``rz`` writes none)."""
    if SPECS[ins.op].produces and ins.dst:
        return ins.dst - 1
    return None


def liveness(cfg: Cfg) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """Live-in and live-out register sets per block id (iterated to a fixed point)."""
    use: dict[int, set[int]] = {}
    kill: dict[int, set[int]] = {}
    for b in cfg.blocks:
        u, d = set(), set()
        for ins in b.code:
            u.update(r for r in uses(ins) if r not in d)
            reg = defines(ins)
            if reg is not None:
                d.add(reg)
        use[b.id], kill[b.id] = u, d
    live_in = {b.id: set(use[b.id]) for b in cfg.blocks}
    live_out = {b.id: set() for b in cfg.blocks}
    changed = True
    order = cfg.rpo()[::-1]
    while changed:
        changed = False
        charge(len(order))
        for bid in order:
            out = set().union(*(live_in[s] for s in cfg.blocks[bid].succs)) if cfg.blocks[bid].succs else set()
            new_in = use[bid] | (out - kill[bid])
            if out != live_out[bid] or new_in != live_in[bid]:
                live_out[bid], live_in[bid] = out, new_in
                changed = True
    return live_in, live_out


def live_after_each(code: list[Instruction], live_out: set[int]) -> list[set[int]]:
    """For each instruction of a block, the registers live just after it."""
    after: list[set[int]] = [set() for _ in code]
    live = set(live_out)
    for i in range(len(code) - 1, -1, -1):
        after[i] = set(live)
        reg = defines(code[i])
        if reg is not None:
            live.discard(reg)
        live.update(uses(code[i]))
    return after

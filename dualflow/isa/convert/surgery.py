"""Edge surgery before code generation, and the classification of join blocks.

A join's predecessors put the join's live values in place at their ends (the "tail"); a block
that branches two ways cannot hold a tail meant for one of its edges only. Such critical edges
get a block of their own: a copy of the join when the join is tiny (a lone ``sync`` or ``exit``,
as a compiler would duplicate it), otherwise a new block that holds the tail and branches on.
"""

from __future__ import annotations

import enum

from dualflow.isa.encoding import Instruction
from dualflow.isa.opcodes import Opcode

from .cfg import Block, Cfg, ConvertError, natural_loops


class JoinKind(enum.Enum):
    NONE = "none"  #: one predecessor: the layout flows straight in
    PLAIN = "plain"  #: values must sit at the same distances on every incoming edge
    PADDED = "padded"  #: also every incoming path must have advanced RP equally (inside an acyclic ssy region)
    MEMORY = "memory"  #: reconvergence of a region with a loop: live values travel through local memory


def anchor(cfg: Cfg, stack: tuple[int, ...]) -> int | None:
    """The outermost region of the innermost chain of acyclic regions in ``stack``, if any.

    Offsets (RP advanced since the anchor's ssy) are well defined exactly inside such a chain.
    """
    found = None
    for rid in reversed(stack):
        if cfg.regions[rid].cyclic:
            break
        found = rid
    return found


def classify(cfg: Cfg, rpo_index: dict[int, int]) -> dict[int, JoinKind]:
    kinds = {}
    joins_of = {r.join: r for r in cfg.regions.values()}
    for b in cfg.blocks:
        if b.id not in rpo_index:
            continue
        preds = [p for p in b.preds if p in rpo_index]
        region = joins_of.get(b.id)
        if region is not None and region.lanes_leave_apart:
            # Even with one predecessor block: lanes arrive from different loop iterations.
            kinds[b.id] = JoinKind.MEMORY
        elif len(preds) < 2:
            kinds[b.id] = JoinKind.NONE
        elif (region is not None and not region.cyclic) or anchor(cfg, b.stack or ()) is not None:
            kinds[b.id] = JoinKind.PADDED
        else:
            kinds[b.id] = JoinKind.PLAIN
    return kinds


def _is_tiny(block: Block) -> bool:
    term = block.terminator
    return term is not None and term.op in (Opcode.SYNC, Opcode.EXIT) and len(block.code) <= 2


def isolate_critical_edges(cfg: Cfg) -> None:
    """Give every edge from a two-way branch into a join that needs an edge-specific tail a block
    of its own. Modifies ``cfg`` in place; new blocks get ``copy_of`` set."""
    order = cfg.rpo()
    rpo_index = {b: i for i, b in enumerate(order)}
    kinds = classify(cfg, rpo_index)
    loops = natural_loops(cfg)
    for bid in order:
        p = cfg.blocks[bid]
        if len(set(p.succs)) < 2:
            continue
        edges = list(enumerate(p.succs))
        needs = [i for i, s in edges if kinds.get(s) in (JoinKind.PADDED, JoinKind.MEMORY)]
        plain = [i for i, s in edges if kinds.get(s) is JoinKind.PLAIN]
        if len(plain) == 2:
            # Keep a back edge's tail in the branching block (it is the hot path); split the other.
            back = [i for i in plain if rpo_index[p.succs[i]] <= rpo_index[bid]]
            needs.append(next(i for i in plain if i not in back) if back else plain[0])
        elif len(plain) == 1 and _leaves_loop(loops, bid, p.succs[plain[0]]):
            # A loop exit into a join (an unrolled loop's exits meet): its tail would otherwise
            # run on every iteration, in the branching block, instead of once on the way out.
            needs.append(plain[0])
        for i in needs:
            _isolate(cfg, p, i)
    cfg.relink()


def _leaves_loop(loops: dict[int, set[int]], src: int, dst: int) -> bool:
    return any(src in body and dst not in body for body in loops.values())


def _isolate(cfg: Cfg, p: Block, index: int) -> None:
    target = cfg.blocks[p.succs[index]]
    if _is_tiny(target):
        new = cfg.copy(target, target.stack)
    else:
        code: list[Instruction] = []
        is_fallthrough = index == len(p.succs) - 1
        if not is_fallthrough:
            code = [Instruction(Opcode.BRA, bimm=True, imm=0)]  # target fixed at link time
        new = Block(len(cfg.blocks), code, [None] * len(code), None, [target.id], [], target.stack, copy_of=-1)
        cfg.blocks.append(new)
    p.succs[index] = new.id
    if new.stack is None:
        raise ConvertError(f"{cfg.where(target)}: internal: edge target has no region stack")

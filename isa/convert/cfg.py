"""Control-flow graph of a REG-form kernel, with its SIMT reconvergence regions.

Blocks end at branches, ``sync`` and ``exit``, and begin at branch and ``ssy`` targets. A
``sync`` returns control to the reconvergence point of the innermost open ``ssy``; which one
that is follows from walking the CFG with a stack of open regions, so each block is tagged with
the regions open at its entry. A block reached with two different stacks is unstructured code
the converter refuses, naming the pc.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.errors import DualflowError
from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import SPECS, Opcode


class ConvertError(DualflowError):
    """A kernel the converter cannot translate, with the construct and its location."""


@dataclass
class Block:
    """A basic block. ``code`` are REG instructions; the terminator, if any, is the last one.

    ``succs`` lists successor block ids: for a conditional branch [target, fall-through]; for
    ``sync`` the reconvergence block of its region; for ``exit`` nothing.
    """

    id: int
    code: list[Instruction]
    pcs: list[int | None]  # source pc of each instruction (None for instructions the converter made)
    label: str | None = None
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)
    stack: tuple[int, ...] | None = None  # open ssy regions (ids) at entry
    copy_of: int | None = None  # for blocks made by duplication or edge splitting

    @property
    def terminator(self) -> Instruction | None:
        if self.code and SPECS[self.code[-1].op].redirects:
            return self.code[-1]
        return None

    @property
    def first_pc(self) -> int | None:
        return next((pc for pc in self.pcs if pc is not None), None)


@dataclass
class Region:
    """An ``ssy`` region: from the ssy instruction to its reconvergence block."""

    id: int
    ssy_block: int
    join: int
    blocks: set[int] = field(default_factory=set)
    cyclic: bool = False


@dataclass
class Cfg:
    kernel: Kernel
    blocks: list[Block]
    regions: dict[int, Region]
    entry: int = 0
    analysis: object | None = None  #: codegen.Analysis, once computed (after the edge surgery)

    def where(self, block: Block) -> str:
        pc = block.first_pc
        loc = self.kernel.locations.get(pc) if pc is not None else None
        return f"kernel {self.kernel.name!r}, pc {pc}" + (f" ({loc})" if loc else "")

    def rpo(self) -> list[int]:
        """Reverse postorder from the entry (unreachable blocks left out)."""
        seen, order = set(), []

        def visit(b: int) -> None:
            stack = [(b, iter(self.blocks[b].succs))]
            seen.add(b)
            while stack:
                node, it = stack[-1]
                nxt = next((s for s in it if s not in seen), None)
                if nxt is None:
                    order.append(node)
                    stack.pop()
                else:
                    seen.add(nxt)
                    stack.append((nxt, iter(self.blocks[nxt].succs)))

        visit(self.entry)
        return order[::-1]

    def relink(self) -> None:
        for b in self.blocks:
            b.preds = []
        for b in self.blocks:
            for s in b.succs:
                self.blocks[s].preds.append(b.id)


def build_cfg(kernel: Kernel) -> Cfg:
    code = kernel.code
    leaders = {0}
    for pc, ins in enumerate(code):
        spec = SPECS[ins.op]
        if spec.has_target:
            leaders.add(ins.imm)
        if spec.redirects and pc + 1 < len(code):
            leaders.add(pc + 1)
    starts = sorted(leaders)
    block_at = {pc: i for i, pc in enumerate(starts)}
    blocks = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(code)
        blocks.append(Block(i, list(code[start:end]), list(range(start, end)), kernel.labels.get(start)))
    cfg = Cfg(kernel, blocks, {})
    last = blocks[-1]
    if last.terminator is None or SPECS[last.terminator.op].falls_through:
        raise ConvertError(f"{cfg.where(last)}: control falls off the end of the kernel (end it with exit, "
                           "bra or sync)")

    # Successors and reconvergence: walk with the stack of open ssy regions.
    entry_stack: dict[int, tuple[int, ...]] = {0: ()}
    work = [0]
    while work:
        b = blocks[work.pop()]
        stack = list(entry_stack[b.id])
        for ins in b.code:
            if ins.op is Opcode.SSY:
                rid = len(cfg.regions)
                cfg.regions[rid] = Region(rid, b.id, block_at[ins.imm])
                stack.append(rid)
        term = b.terminator
        succ_stacks: list[tuple[int, tuple[int, ...]]] = []
        if term is None or SPECS[term.op].conditional:
            fall = b.id + 1
            if term is not None:
                succ_stacks.append((block_at[term.imm], tuple(stack)))
            succ_stacks.append((fall, tuple(stack)))
        elif term.op is Opcode.BRA:
            succ_stacks.append((block_at[term.imm], tuple(stack)))
        elif term.op is Opcode.SYNC:
            if not stack:
                raise ConvertError(f"{cfg.where(b)}: sync with no open ssy on this path")
            rid = stack.pop()
            succ_stacks.append((cfg.regions[rid].join, tuple(stack)))
        # A branch to its own fall-through has one successor, reached twice by a divergent warp.
        b.succs = list(dict.fromkeys(s for s, _ in succ_stacks))
        b.stack = entry_stack[b.id]
        for s, st in succ_stacks:
            if s in entry_stack:
                if entry_stack[s] != st:
                    raise ConvertError(f"{cfg.where(blocks[s])}: unstructured reconvergence: this block is "
                                       "reached with different sets of open ssy regions")
            else:
                entry_stack[s] = st
                work.append(s)
    # Each block is walked once, so an ssy inside a loop opens one region, not one per visit.
    cfg.relink()
    if blocks[0].preds:
        raise ConvertError(f"{cfg.where(blocks[0])}: a branch targets the kernel's first instruction; the "
                           "converter needs an entry outside every loop (put an instruction such as nop "
                           "before the loop)")
    _find_region_blocks(cfg)
    return cfg


def _find_region_blocks(cfg: Cfg) -> None:
    """Region membership from the entry stacks, and whether a region contains a cycle."""
    for b in cfg.blocks:
        if b.stack is None:
            continue
        for rid in b.stack:
            cfg.regions[rid].blocks.add(b.id)
    for region in cfg.regions.values():
        # The block holding the ssy is inside from the ssy on; its successors carry the region.
        inside = region.blocks | {region.ssy_block}
        region.cyclic = _has_cycle(cfg, inside, region.ssy_block)


def _has_cycle(cfg: Cfg, nodes: set[int], start: int) -> bool:
    color: dict[int, int] = {}

    def dfs(n: int) -> bool:
        color[n] = 1
        for s in cfg.blocks[n].succs:
            if s not in nodes:
                continue
            if color.get(s) == 1:
                return True
            if s not in color and dfs(s):
                return True
        color[n] = 2
        return False

    return dfs(start)


def natural_loops(cfg: Cfg) -> dict[int, set[int]]:
    """Loop header -> blocks of its natural loop(s), from the back edges of a reverse postorder."""
    order = cfg.rpo()
    index = {b: i for i, b in enumerate(order)}
    loops: dict[int, set[int]] = {}
    for b in order:
        for s in cfg.blocks[b].succs:
            if s in index and index[s] <= index[b]:
                body, work = {s, b}, ([b] if b != s else [])
                while work:
                    n = work.pop()
                    for p in cfg.blocks[n].preds:
                        if p in index and p not in body:
                            body.add(p)
                            work.append(p)
                loops.setdefault(s, set()).update(body)
    return loops

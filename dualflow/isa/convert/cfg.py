"""Control-flow graph of a REG-form kernel, with its SIMT reconvergence regions.

Blocks end at branches, ``sync`` and ``exit``, and begin at branch and ``ssy`` targets. A
``sync`` returns control to the reconvergence point of the innermost open ``ssy``; which one
that is follows from walking the CFG with a stack of open regions, so each block is tagged with
the regions open at its entry. A block reached with two different stacks is copied, one copy per
stack, when the regions its paths close are the same on both (an early exit shared by two
nesting levels); otherwise it is unstructured code the converter refuses, naming the pc.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.common.errors import DualflowError
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
    copy_of: int | None = None  # the block whose code this copy runs; -1: an edge block with code of its own

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
    pc: int  #: of its ssy instruction (the same for the regions of a block and of its copies)
    blocks: set[int] = field(default_factory=set)
    cyclic: bool = False
    uniform: bool = False  #: its branches are all warp-uniform (divergence.py sets it): its lanes stay together

    @property
    def lanes_leave_apart(self) -> bool:
        """Groups of a warp's lanes may reach the join from different iterations of a loop inside
        (docs/isa.md, rule 3): a region with a cycle whose branches are not all warp-uniform
        (divergence.py). Its join's live values then travel through memory or another hand."""
        return self.cyclic and not self.uniform


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

    def source(self, bid: int) -> int:
        """The block whose code ``bid`` runs: itself, or the block it is a copy of."""
        copy_of = self.blocks[bid].copy_of
        return bid if copy_of is None or copy_of < 0 else copy_of

    def copy(self, block: Block, stack: tuple[int, ...] | None) -> Block:
        """A copy of ``block`` (same code and successors, no label) entered with ``stack``, appended."""
        new = Block(len(self.blocks), list(block.code), list(block.pcs), None, list(block.succs), [], stack,
                    copy_of=block.id)
        self.blocks.append(new)
        return new

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

    _Walk(cfg, block_at).run()
    cfg.relink()
    if blocks[0].preds:
        raise ConvertError(f"{cfg.where(blocks[0])}: a branch targets the kernel's first instruction; the "
                           "converter needs an entry outside every loop (put an instruction such as nop "
                           "before the loop)")
    _find_region_blocks(cfg)
    return cfg


class _Walk:
    """Successors and reconvergence: a walk from the entry with the stack of open ssy regions.

    Each block is walked once per stack it is reached with, so an ssy inside a loop opens one
    region, not one per visit. The first stack keeps the block; every other one gets a copy
    (``Cfg.copy``) with regions of its own, provided the regions that paths from the block close
    were opened by the same ssy instructions on both stacks: an early exit shared by two nesting
    levels becomes one exit per level, as if the source had written it twice, and so does the
    code after it, down to its own ifs. A block that would reconverge at different places
    depending on the path that reached it is unstructured and refused.
    """

    def __init__(self, cfg: Cfg, block_at: dict[int, int]):
        self.cfg, self.block_at = cfg, block_at
        self.node: dict[tuple[int, tuple[int, ...]], int] = {}  # (source block, entry stack) -> block
        self.work: list[int] = []
        self.closes: dict[int, int | None] = {}  # source block -> entry regions its paths close

    def run(self) -> None:
        self.reach(self.cfg.entry, ())
        while self.work:
            self.step(self.cfg.blocks[self.work.pop()])

    def reach(self, source: int, stack: tuple[int, ...]) -> int:
        """The block that runs ``source``'s code when entered with ``stack``, queued if new."""
        bid = self.node.get((source, stack))
        if bid is not None:
            return bid
        block = self.cfg.blocks[source]
        if block.stack is None:
            bid = source
            block.stack = stack
        elif self._copyable(block, stack):
            bid = self.cfg.copy(block, stack).id
        else:
            raise ConvertError(f"{self.cfg.where(block)}: unstructured reconvergence: this block is reached "
                               "with different sets of open ssy regions")
        self.node[(source, stack)] = bid
        self.work.append(bid)
        return bid

    def step(self, b: Block) -> None:
        cfg = self.cfg
        stack = list(b.stack)
        for pc, ins in zip(b.pcs, b.code):
            if ins.op is Opcode.SSY:
                rid = len(cfg.regions)
                cfg.regions[rid] = Region(rid, b.id, self.block_at[ins.imm], pc)
                stack.append(rid)
        term = b.terminator
        if term is not None and term.op is Opcode.SYNC:
            if not stack:
                raise ConvertError(f"{cfg.where(b)}: sync with no open ssy on this path")
            region = cfg.regions[stack.pop()]
            # The join as entered with the regions still open after this sync (a copy if it was
            # reached with others first).
            region.join = self.reach(cfg.source(region.join), tuple(stack))
            succs = [region.join]
        else:
            succs = [self.reach(s, tuple(stack)) for s in _targets(b, cfg.source(b.id), self.block_at)]
        # A branch to its own fall-through has one successor, reached twice by a divergent warp.
        b.succs = list(dict.fromkeys(succs))

    def _copyable(self, block: Block, stack: tuple[int, ...]) -> bool:
        """Whether ``block``, walked with its first stack, may run with ``stack`` too: the innermost
        regions its paths close were opened by the same ssy instructions on both."""
        if block.id not in self.closes:
            self.closes[block.id] = _closed_by_paths(self.cfg, self.block_at, block.id, self._ssy_pcs(block.stack))
        closed = self.closes[block.id]
        if closed is None or len(stack) < closed:
            return False
        return self._ssy_pcs(block.stack)[len(block.stack) - closed:] == self._ssy_pcs(stack)[len(stack) - closed:]

    def _ssy_pcs(self, stack: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.cfg.regions[rid].pc for rid in stack)


def _targets(b: Block, source: int, block_at: dict[int, int]) -> list[int]:
    """Source blocks a block without ``sync`` continues to: its branch target, then its fall-through."""
    term = b.terminator
    if term is None:
        return [source + 1]
    if SPECS[term.op].conditional:
        return [block_at[term.imm], source + 1]
    if term.op is Opcode.BRA:
        return [block_at[term.imm]]
    return []


def _closed_by_paths(cfg: Cfg, block_at: dict[int, int], start: int, entry: tuple[int, ...]) -> int | None:
    """How many of the regions open at source block ``start`` (``entry``: their ssy pcs, innermost
    last) the paths from it close, at most; None if a path closes more than are open, or opens
    regions without end (an ssy in a loop that has no sync for it: structured code nests each ssy
    at most once). Walks the source blocks with the ssy pcs of the open regions."""
    deepest = len(entry) + sum(1 for ins in cfg.kernel.code if ins.op is Opcode.SSY)
    lowest = len(entry)
    seen: set[tuple[int, tuple[int, ...]]] = set()
    work = [(start, entry)]
    while work:
        state = work.pop()
        if state in seen:
            continue
        seen.add(state)
        b = cfg.blocks[state[0]]
        open_pcs = list(state[1]) + [pc for pc, ins in zip(b.pcs, b.code) if ins.op is Opcode.SSY]
        if len(open_pcs) > deepest:
            return None
        if b.terminator is not None and b.terminator.op is Opcode.SYNC:
            if not open_pcs:
                return None
            join = block_at[cfg.kernel.code[open_pcs.pop()].imm]
            lowest = min(lowest, len(open_pcs))
            work.append((join, tuple(open_pcs)))
        else:
            work.extend((s, tuple(open_pcs)) for s in _targets(b, b.id, block_at))
    return len(entry) - lowest


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

"""Reconvergence: ``ssy``/``sync`` at immediate post-dominators, as GPGPU-Sim reconverges PTX.

PTX has no reconvergence points; our ISA reconverges where an ``ssy`` says (docs/isa.md,
"Control flow"). For each conditional branch the join is its immediate post-dominator P (none
when a path leaves through ``exit``: an early exit needs no ``ssy``). The ``ssy P`` goes just
before the branch, or, when the branch sits in loops that P is outside of, on the entry edges of
the outermost such loop, so that it is pushed once per entry and not once per iteration.
Branches that share a join inside one region share its ``ssy``. Every edge into P from inside
the region then runs ``sync`` (a ``bra P`` becomes the ``sync``; other edges go through a
one-instruction block).

The placement is checked, not trusted: an abstract run over the control-flow graph follows the
stack of pending joins and requires every block to be reached with one stack, and every
pending join to be left only through its own edges. A graph that fails (irreducible loops,
jumps out of a region past its join) is refused with the PTX line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.isa.opcodes import Opcode

from .errors import FrontendError
from .ir import Function, LabelMark, Op

EXIT = "__exit__"


@dataclass
class Block:
    name: str
    ops: list[Op] = field(default_factory=list)
    succs: list[str] = field(default_factory=list)  #: taken target first, then the fall-through

    @property
    def branch(self) -> Op | None:
        last = self.ops[-1] if self.ops else None
        return last if last is not None and last.spec.conditional else None


def build_blocks(fn: Function) -> list[Block]:
    """Basic blocks in program order; each gets a label (made up where the code has none)."""
    blocks: list[Block] = []
    cur: Block | None = None
    made = 0
    for item in fn.items:
        if isinstance(item, LabelMark):
            if cur is not None and not cur.ops:
                # two labels in a row: an empty block falling through
                cur.succs = [item.name]
                blocks.append(cur)
            elif cur is not None:
                blocks.append(cur)
            cur = Block(item.name)
            continue
        if cur is None:
            made += 1
            cur = Block(f"__b{made}")
        cur.ops.append(item)
        if item.spec.redirects:
            blocks.append(cur)
            cur = None
    if cur is not None:
        blocks.append(cur)
    names = [b.name for b in blocks]
    if len(set(names)) != len(names):
        raise FrontendError(f"kernel {fn.name}: duplicate label")
    for i, b in enumerate(blocks):
        if b.succs:
            continue
        nxt = blocks[i + 1].name if i + 1 < len(blocks) else None
        last = b.ops[-1] if b.ops else None
        if last is None or not last.spec.redirects:
            b.succs = [nxt] if nxt else []
        elif last.opcode is Opcode.EXIT:
            b.succs = []
        elif last.opcode is Opcode.BRA:
            b.succs = [last.target]
        else:  # brnz / brz
            b.succs = [last.target] + ([nxt] if nxt else [])
    known = set(names)
    for b in blocks:
        for s in b.succs:
            if s not in known:
                raise FrontendError(f"kernel {fn.name}: branch to unknown label {s}")
    return blocks


def _rpo(entry: str, succs: dict[str, list[str]]) -> list[str]:
    seen, order = set(), []
    stack = [(entry, iter(succs[entry]))]
    seen.add(entry)
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succs[s])))
                break
        else:
            order.append(node)
            stack.pop()
    return order[::-1]


def _idoms(entry: str, succs: dict[str, list[str]]) -> dict[str, str]:
    """Immediate dominators (Cooper, Harvey and Kennedy's iteration) of the nodes reachable from entry."""
    order = _rpo(entry, succs)
    index = {n: i for i, n in enumerate(order)}
    preds: dict[str, list[str]] = {n: [] for n in order}
    for n in order:
        for s in succs[n]:
            if s in index:
                preds[s].append(n)
    idom = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            new = None
            for p in preds[n]:
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while index[a] > index[b]:
                        a = idom[a]
                    while index[b] > index[a]:
                        b = idom[b]
                new = a
            if new is not None and idom.get(n) != new:
                idom[n] = new
                changed = True
    return idom


def _dominates(idom: dict[str, str], a: str, b: str) -> bool:
    while True:
        if a == b:
            return True
        if idom.get(b, b) == b:
            return False
        b = idom[b]


class Reconvergence:
    def __init__(self, fn: Function, path: str) -> None:
        self.fn, self.path = fn, path
        self.blocks = build_blocks(fn)
        self.entry = self.blocks[0].name
        reach = set(_rpo(self.entry, {b.name: b.succs for b in self.blocks}))
        self.blocks = [b for b in self.blocks if b.name in reach]  # drop unreachable code
        self._index()

    def _index(self) -> None:
        self.by_name = {b.name: b for b in self.blocks}
        self.entry = self.blocks[0].name
        self.succs = {b.name: list(b.succs) for b in self.blocks}

    def error(self, block: Block, why: str) -> FrontendError:
        line = next((op.line for op in reversed(block.ops) if op.line), 0)
        return FrontendError(f"{self.path}:{line}: kernel {self.fn.name}: {why}")

    def run(self) -> Function:
        self._add_preheaders(self._loops(_idoms(self.entry, self.succs)))
        idom = _idoms(self.entry, self.succs)
        # post-dominators: dominators of the reversed graph from a virtual exit
        rsuccs: dict[str, list[str]] = {b.name: [] for b in self.blocks}
        rsuccs[EXIT] = []
        for b in self.blocks:
            if not b.succs:
                rsuccs[EXIT].append(b.name)
            for s in b.succs:
                rsuccs[s].append(b.name)
        self.ipdom = _idoms(EXIT, rsuccs)
        self.loops = self._loops(idom)
        self._candidates()
        self._place()
        return self._rebuild()

    def _loops(self, idom) -> dict[str, set[str]]:
        """Natural loops: header -> body (a graph whose retreating edges all go to a dominator)."""
        order = _rpo(self.entry, self.succs)
        index = {n: i for i, n in enumerate(order)}
        preds: dict[str, list[str]] = {n: [] for n in order}
        for n in order:
            for s in self.succs[n]:
                preds[s].append(n)
        loops: dict[str, set[str]] = {}
        for n in order:
            for s in self.succs[n]:
                if index[s] <= index[n]:
                    if not _dominates(idom, s, n):
                        raise self.error(self.by_name[n], "irreducible control flow (a loop with two entries) "
                                                          "is not supported")
                    body = loops.setdefault(s, {s})
                    work = [n]
                    while work:
                        x = work.pop()
                        if x not in body:
                            body.add(x)
                            work.extend(preds[x])
        return loops

    def _add_preheaders(self, loops: dict[str, set[str]]) -> None:
        """Give every loop a block of its own that its entry edges go through (its preheader):
        the place for the ssys a loop needs pushed once per entry, and a join distinct from the
        header when the code before the loop reconverges just where the loop begins."""
        for header, body in loops.items():
            pre = Block(f"__pre_{header}", [], [header])
            for b in self.blocks:
                if b.name in body:
                    continue
                b.succs = [pre.name if s == header else s for s in b.succs]
                for op in b.ops:
                    if op.target == header and op.spec.jumps:
                        op.target = pre.name
            at = next(i for i, b in enumerate(self.blocks) if b.name == header)
            self.blocks.insert(at, pre)
            # a block of the loop that fell through into the header now jumps to it (_rebuild)
        self._index()

    def _candidates(self) -> None:
        """Each conditional branch's ssy: (join, block at whose end it is pushed). The block is the
        branch's own, or the preheader of the outermost loop that holds the branch but not its join."""
        self.candidates: list[tuple[str, str]] = []
        for b in self.blocks:
            if b.branch is None or len(set(b.succs)) < 2:
                continue
            p = self.ipdom.get(b.name)
            if p is None or p == EXIT or [op.opcode for op in self.by_name[p].ops] == [Opcode.EXIT]:
                continue  # an early exit: the lanes that leave need no join
            outside = [h for h, body in self.loops.items() if b.name in body and p not in body]
            place = f"__pre_{max(outside, key=lambda h: len(self.loops[h]))}" if outside else b.name
            self.candidates.append((p, place))

    def _place(self) -> None:
        """Keep the candidates whose join is not already pending on top where they go (an enclosing
        branch's ssy for the same join), innermost first; then the final abstract run checks the
        whole placement and marks the sync edges."""
        order = {n: i for i, n in enumerate(_rpo(self.entry, self.succs))}
        kept = set(self.candidates)
        changed = True
        while changed:
            changed = False
            for key in sorted(kept, key=lambda k: (-order[k[1]], k)):
                others = kept - {key}
                state = self._states(others, final=False).get(key[1])
                pushed = self._pushes(others).get(key[1], [])
                if state is not None and (state + tuple(pushed))[-1:] == (key[0],):
                    kept = others
                    changed = True
                    break
        self.kept = kept
        self._states(kept, final=True)

    def _pushes(self, kept) -> dict[str, list[str]]:
        """Joins pushed at the end of each block; several at one place: the one that
        post-dominates the others first."""
        at: dict[str, list[str]] = {}
        for join, place in kept:
            at.setdefault(place, []).append(join)
        for js in at.values():
            js.sort(key=lambda j: (-self._pdom_depth(j), j))
        return at

    def _pdom_depth(self, node: str) -> int:
        depth = 0
        while node != EXIT and node in self.ipdom:
            node = self.ipdom[node]
            depth += 1
        return depth

    def _states(self, kept, final: bool) -> dict[str, tuple]:
        """Stack of pending joins at each block's entry (an abstract run); with ``final``, also
        checks consistency and records the sync edges."""
        at = self._pushes(kept)
        states: dict[str, tuple] = {self.entry: ()}
        work = [self.entry]
        self.sync_edges: set[tuple[str, str]] = set()
        while work:
            name = work.pop()
            b = self.by_name[name]
            s = states[name] + tuple(at.get(name, ()))
            for succ in b.succs:
                t = s
                if t and t[-1] == succ:
                    t = t[:-1]
                    self.sync_edges.add((name, succ))
                if final and succ in t:
                    raise self.error(b, f"control flow leaves a region past its join {succ} "
                                        "(unstructured control flow is not supported)")
                old = states.get(succ)
                if old is None:
                    states[succ] = t
                    work.append(succ)
                elif old != t:
                    if final:
                        raise self.error(b, f"block {succ} is reached with different reconvergence stacks "
                                            f"{list(old)} and {list(t)} (unstructured control flow is not supported)")
                    if len(t) < len(old):  # the fixed point decides; a conflict is an error in the final run
                        states[succ] = t
                        work.append(succ)
        return states

    def _rebuild(self) -> Function:
        at = self._pushes(self.kept)
        items: list = []
        tramps: list = []
        for i, b in enumerate(self.blocks):
            items.append(LabelMark(b.name))
            ops = list(b.ops)
            term = ops[-1] if ops and ops[-1].spec.redirects else None
            items.extend(ops[:-1] if term is not None else ops)
            line = term.line if term is not None else next((op.line for op in reversed(ops) if op.line), 0)
            for j in at.get(b.name, ()):
                items.append(Op(Opcode.SSY, target=j, line=line))
            nxt = self.blocks[i + 1].name if i + 1 < len(self.blocks) else None
            if term is not None and term.opcode is Opcode.EXIT:
                items.append(term)
                continue
            if term is not None and term.opcode is Opcode.BRA:
                if (b.name, term.target) in self.sync_edges:
                    items.append(Op(Opcode.SYNC, line=line))  # the sync goes to the join itself
                else:
                    items.append(term)
                continue
            if term is not None:  # conditional: a taken edge that syncs goes through a trampoline
                target = term.target
                if (b.name, target) in self.sync_edges:
                    target = f"__sync{len(tramps) + 1}"
                    tramps.append(Op(Opcode.SYNC, line=line))
                items.append(Op(term.opcode, None, list(term.srcs), target=target, line=line))
            fall = b.succs[-1] if b.succs and (term is None or len(b.succs) > 1) else None
            if fall is None:
                continue
            if (b.name, fall) in self.sync_edges:
                items.append(Op(Opcode.SYNC, line=line))
            elif fall != nxt:
                items.append(Op(Opcode.BRA, target=fall, line=line))
        for k, op in enumerate(tramps, 1):
            items.append(LabelMark(f"__sync{k}"))
            items.append(op)
        self.fn.items = items
        return self.fn


def reconverge(fn: Function, path: str) -> Function:
    """Insert ``ssy``/``sync`` into ``fn`` (in place) and return it."""
    return Reconvergence(fn, path).run()

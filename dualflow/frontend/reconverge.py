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
        self.by_name = {b.name: b for b in self.blocks}
        self.entry = self.blocks[0].name
        self.succs = {b.name: list(b.succs) for b in self.blocks}

    def error(self, block: Block, why: str) -> FrontendError:
        line = next((op.line for op in reversed(block.ops) if op.line), 0)
        return FrontendError(f"{self.path}:{line}: kernel {self.fn.name}: {why}")

    def run(self) -> Function:
        succs = self.succs
        reach = set(_rpo(self.entry, succs))
        self.blocks = [b for b in self.blocks if b.name in reach]  # drop unreachable code
        self.by_name = {b.name: b for b in self.blocks}
        idom = _idoms(self.entry, succs)
        # post-dominators: dominators of the reversed graph from a virtual exit
        rsuccs: dict[str, list[str]] = {b.name: [] for b in self.blocks}
        rsuccs[EXIT] = []
        for b in self.blocks:
            if not b.succs:
                rsuccs[EXIT].append(b.name)
            for s in b.succs:
                rsuccs[s].append(b.name)
        ipdom = _idoms(EXIT, rsuccs)
        loops = self._loops(idom)
        joins = self._joins(ipdom, loops)
        self._check_and_place(joins)
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

    def _joins(self, ipdom, loops) -> dict[tuple, list[str]]:
        """Where each ssy goes: (kind, place) -> joins, kind "branch" (before the branch of block
        place) or "loop" (on the entry edges of loop header place)."""
        candidates: list[tuple[str, str, str, str]] = []  # (join, kind, place, branch block)
        for b in self.blocks:
            if b.branch is None or len(set(b.succs)) < 2:
                continue
            p = ipdom.get(b.name)
            if p is None or p == EXIT or [op.opcode for op in self.by_name[p].ops] == [Opcode.EXIT]:
                continue  # an early exit: the lanes that leave need no join
            outside = [h for h, body in loops.items() if b.name in body and p not in body]
            if outside:
                outer = max(outside, key=lambda h: len(loops[h]))
                candidates.append((p, "loop", outer, b.name))
            else:
                candidates.append((p, "branch", b.name, b.name))
        self.loops = loops
        self.ipdom = ipdom
        self.candidates = candidates
        return {}

    def _check_and_place(self, _joins) -> None:
        """Decide which candidate ssys to emit, run the abstract stack and mark sync edges: a
        candidate whose join is already the pending top where it would go (an enclosing
        branch's ssy for the same join) is dropped, innermost first."""
        order = {n: i for i, n in enumerate(_rpo(self.entry, self.succs))}
        kept = {(j, k, p) for j, k, p, _b in self.candidates}
        changed = True
        while changed:
            changed = False
            for key in sorted(kept, key=lambda k: -order[k[2]]):
                others = kept - {key}
                st = self._state_at(self._states(others, final=False), key[1], key[2], others)
                if st and st[-1] == key[0]:
                    kept = others
                    changed = True
                    break
        self.kept = kept
        self._states(kept, final=True)

    def _pushes(self, kept) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        at_branch: dict[str, list[str]] = {}
        at_loop: dict[str, list[str]] = {}
        for join, kind, place in kept:
            (at_branch if kind == "branch" else at_loop).setdefault(place, []).append(join)
        # several joins pushed at one place: the one that post-dominates the others first
        for d in (at_branch, at_loop):
            for js in d.values():
                js.sort(key=lambda j: -self._pdom_depth(j))
        return at_branch, at_loop

    def _pdom_depth(self, node: str) -> int:
        depth = 0
        while node != EXIT and node in self.ipdom:
            node = self.ipdom[node]
            depth += 1
        return depth

    def _state_at(self, states, kind, place, kept):
        if place not in states:
            return None
        if kind == "branch":
            return states[place]
        # the state on the loop's entry edges: the header's state minus what those edges push
        at_branch, at_loop = self._pushes(kept)
        s = list(states[place])
        for j in at_loop.get(place, []):
            if s and s[-1] == j:
                s.pop()
        return tuple(s)

    def _states(self, kept, final: bool) -> dict[str, tuple]:
        """Stack of pending joins at each block's entry (an abstract run); with ``final``, also
        checks consistency and records the sync edges."""
        at_branch, at_loop = self._pushes(kept)
        states: dict[str, tuple] = {self.entry: ()}
        work = [self.entry]
        self.sync_edges: set[tuple[str, str]] = set()
        while work:
            name = work.pop()
            b = self.by_name[name]
            s = states[name]
            if name in at_branch:
                s = s + tuple(at_branch[name])
            for succ in b.succs:
                t = s
                if succ in at_loop and succ not in self._loop_of_edge(name, succ):
                    t = t + tuple(at_loop[succ])
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
                    # keep the shorter: the fixed point decides; a conflict remains an error at the end
                    if len(t) < len(old):
                        states[succ] = t
                        work.append(succ)
        return states

    def _loop_of_edge(self, src: str, header: str) -> set[str]:
        """The body of the loop headed by ``header`` if ``src`` is in it (a back edge), else empty."""
        body = self.loops.get(header, set())
        return body if src in body else set()

    def _rebuild(self) -> Function:
        at_branch, at_loop = self._pushes(self.kept)
        items: list = []
        tramps: list = []
        for i, b in enumerate(self.blocks):
            items.append(LabelMark(b.name))
            # ssys for loops headed here go on the entry edges: a preceding block that falls
            # through gets them at its end; branches into the header from outside go through a
            # trampoline holding the ssys
            ops = list(b.ops)
            term = ops[-1] if ops and ops[-1].spec.redirects else None
            body = ops[:-1] if term is not None else ops
            items.extend(body)
            line = term.line if term is not None else (ops[-1].line if ops else 0)
            if b.name in at_branch:
                for j in at_branch[b.name]:
                    items.append(Op(Opcode.SSY, target=j, line=line))
            nxt = self.blocks[i + 1].name if i + 1 < len(self.blocks) else None
            if term is not None and term.opcode is Opcode.EXIT:
                items.append(term)
                continue
            if term is not None and term.opcode is Opcode.BRA:
                target = term.target
                items.append(self._edge_op(b.name, target, term, tramps, at_loop))
                continue
            if term is not None:  # conditional: the taken edge may need a trampoline
                target = self._edge_target(b.name, term.target, tramps, at_loop, line)
                items.append(Op(term.opcode, None, list(term.srcs), target=target, line=line))
            fall = b.succs[-1] if b.succs else None
            if fall is None:
                continue
            # the fall-through edge: ssys of a loop entered, a sync, or a jump if the layout moved
            if fall in at_loop and b.name not in self.loops.get(fall, set()):
                for j in at_loop[fall]:
                    items.append(Op(Opcode.SSY, target=j, line=line))
            if (b.name, fall) in self.sync_edges:
                items.append(Op(Opcode.SYNC, line=line))
            elif fall != nxt:
                items.append(Op(Opcode.BRA, target=fall, line=line))
        for label, ops in tramps:
            items.append(LabelMark(label))
            items.extend(ops)
        self.fn.items = items
        return self.fn

    def _edge_op(self, src, target, term, tramps, at_loop) -> Op:
        """The instruction ending a block with ``bra target``: the sync itself on a sync edge."""
        if (src, target) in self.sync_edges and not (target in at_loop and src not in self.loops.get(target, set())):
            return Op(Opcode.SYNC, line=term.line)
        return Op(Opcode.BRA, target=self._edge_target(src, target, tramps, at_loop, term.line), line=term.line)

    def _edge_target(self, src, target, tramps, at_loop, line) -> str:
        """The label a branch from ``src`` to ``target`` jumps to: a trampoline when the edge
        pushes a loop's ssys or runs a sync."""
        ops = []
        if target in at_loop and src not in self.loops.get(target, set()):
            ops += [Op(Opcode.SSY, target=j, line=line) for j in at_loop[target]]
        if (src, target) in self.sync_edges:
            ops.append(Op(Opcode.SYNC, line=line))
        elif ops:
            ops.append(Op(Opcode.BRA, target=target, line=line))
        if not ops:
            return target
        label = f"__edge{len(tramps) + 1}"
        tramps.append((label, ops))
        return label


def reconverge(fn: Function, path: str) -> Function:
    """Insert ``ssy``/``sync`` into ``fn`` (in place) and return it."""
    return Reconvergence(fn, path).run()

"""Register allocation: PTX's unbounded virtual registers onto the REG form's r0..r254.

Liveness is per thread over the control-flow graph as PTX wrote it (a SIMT lane runs one path
through it, and a write by one group of lanes leaves the other lanes' registers alone, so
divergence needs no special case). The interference graph is coloured Chaitin-Briggs style:
simplify nodes of degree below K, push the others optimistically, then give each the lowest
free register, preferring one a ``mov`` partner already has (so most copies disappear). A
node left without a register is spilled to local memory (a store after each definition, a
load before each use, each through a fresh short-lived register) and the graph is coloured
again. The number of registers used is what ``-Xptxas -v`` reports as registers per thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.isa.encoding import MAX_REGS
from dualflow.isa.opcodes import Opcode

from .errors import FrontendError
from .ir import RZ, Function, LabelMark, Op
from .reconverge import build_blocks


@dataclass
class Allocation:
    registers: int
    spilled_values: int
    spill_stores: int
    spill_loads: int


def _liveness(fn: Function):
    blocks = build_blocks(fn)
    names = {}
    for b in blocks:
        for op in b.ops:
            for v in ([op.dst] if op.dst and op.dst != RZ else []) + op.registers_read():
                names.setdefault(v, len(names))
    use, defs = {}, {}
    for b in blocks:
        u = d = 0
        for op in b.ops:
            for v in op.registers_read():
                bit = 1 << names[v]
                if not d & bit:
                    u |= bit
            if op.dst and op.dst != RZ:
                d |= 1 << names[op.dst]
        use[b.name], defs[b.name] = u, d
    live_in = {b.name: 0 for b in blocks}
    live_out = {b.name: 0 for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            out = 0
            for s in b.succs:
                out |= live_in[s]
            inn = use[b.name] | (out & ~defs[b.name])
            if out != live_out[b.name] or inn != live_in[b.name]:
                live_out[b.name], live_in[b.name] = out, inn
                changed = True
    return blocks, names, live_out


def _interference(fn: Function):
    blocks, names, live_out = _liveness(fn)
    index = {i: v for v, i in names.items()}
    adj: dict[str, set[str]] = {v: set() for v in names}
    moves: dict[str, set[str]] = {v: set() for v in names}
    cost: dict[str, int] = {v: 0 for v in names}
    for b in blocks:
        live = live_out[b.name]
        for op in reversed(b.ops):
            if op.dst and op.dst != RZ:
                d = op.dst
                cost[d] += 1
                bits = live & ~(1 << names[d])
                if op.opcode is Opcode.MOV and isinstance(op.srcs[0], str) and op.srcs[0] != RZ:
                    bits &= ~(1 << names[op.srcs[0]])
                    moves[d].add(op.srcs[0])
                    moves[op.srcs[0]].add(d)
                while bits:
                    low = bits & -bits
                    other = index[low.bit_length() - 1]
                    adj[d].add(other)
                    adj[other].add(d)
                    bits ^= low
                live &= ~(1 << names[d])
            for v in op.registers_read():
                cost[v] += 1
                live |= 1 << names[v]
    return adj, moves, cost


def _colour(adj, moves, cost, k: int) -> tuple[dict[str, int], list[str]]:
    degree = {v: len(n) for v, n in adj.items()}
    removed: set[str] = set()
    stack: list[str] = []
    low = [v for v, d in degree.items() if d < k]
    pending = set(adj)
    while pending:
        if low:
            v = low.pop()
            if v in removed:
                continue
        else:  # optimistic: push the cheapest node per neighbour and hope it colours
            # (a spill's own short-lived register is never the one pushed: spilling it gains nothing)
            v = min(pending, key=lambda x: (x.startswith("%%s"), cost[x] / (degree[x] + 1), x))
        removed.add(v)
        pending.discard(v)
        stack.append(v)
        for n in adj[v]:
            if n not in removed:
                degree[n] -= 1
                if degree[n] == k - 1:
                    low.append(n)
    colour: dict[str, int] = {}
    spills: list[str] = []
    for v in reversed(stack):
        taken = {colour[n] for n in adj[v] if n in colour}
        preferred = [colour[m] for m in moves[v] if m in colour and colour[m] not in taken]
        if preferred:
            colour[v] = preferred[0]
            continue
        free = next((c for c in range(k) if c not in taken), None)
        if free is None:
            spills.append(v)
        else:
            colour[v] = free
    return colour, spills


def _spill(fn: Function, victims: list[str], slot_of: dict[str, int], counter: list[int]) -> tuple[int, int]:
    """Rewrite ``victims`` to live in local memory; returns (stores, loads) added."""
    stores = loads = 0
    out = []
    for item in fn.items:
        if isinstance(item, LabelMark):
            out.append(item)
            continue
        srcs = list(item.srcs)
        for i, s in enumerate(srcs):
            if isinstance(s, str) and s in slot_of:
                counter[0] += 1
                t = f"%%s{counter[0]}"
                out.append(Op(Opcode.LDL, t, [RZ], offset=slot_of[s], line=item.line))
                loads += 1
                srcs[i] = t
        item.srcs = srcs
        if item.dst in slot_of:
            counter[0] += 1
            t = f"%%s{counter[0]}"
            slot = slot_of[item.dst]
            item.dst = t
            out.append(item)
            out.append(Op(Opcode.STL, None, [RZ, t], offset=slot, line=item.line))
            stores += 1
        else:
            out.append(item)
    fn.items = out
    return stores, loads


def allocate(fn: Function, max_registers: int = MAX_REGS) -> Allocation:
    """Replace ``fn``'s virtual registers by ``r0``.. in place; spill what does not fit."""
    if not 8 <= max_registers <= MAX_REGS:
        raise FrontendError(f"max registers {max_registers}: must be 8..{MAX_REGS}")
    slot_of: dict[str, int] = {}
    spilled: set[str] = set()
    counter = [0]
    stores = loads = 0
    for _ in range(64):
        adj, moves, cost = _interference(fn)
        colour, spills = _colour(adj, moves, cost, max_registers)
        if not spills:
            break
        fresh = [v for v in spills if not v.startswith("%%s")]
        if not fresh:
            raise FrontendError(f"kernel {fn.name}: cannot allocate registers within {max_registers} even after "
                                "spilling (too many values live at one instruction)")
        for v in fresh:
            slot_of[v] = fn.local_bytes
            fn.local_bytes += 4
            spilled.add(v)
        added_stores, added_loads = _spill(fn, fresh, slot_of, counter)
        stores, loads = stores + added_stores, loads + added_loads
        slot_of = {v: slot_of[v] for v in fresh}  # later rounds rewrite only the new victims
    else:
        raise FrontendError(f"kernel {fn.name}: register allocation did not converge")
    used = 0
    out = []
    for item in fn.items:
        if isinstance(item, Op):
            item.srcs = [f"r{colour[s]}" if isinstance(s, str) and s != RZ else s for s in item.srcs]
            if item.dst and item.dst != RZ:
                item.dst = f"r{colour[item.dst]}"
            if item.opcode is Opcode.MOV and item.srcs and item.srcs[0] == item.dst:
                continue  # a coalesced copy
            for r in [item.dst] + item.srcs:
                if isinstance(r, str) and r.startswith("r") and r != RZ:
                    used = max(used, int(r[1:]) + 1)
        out.append(item)
    fn.items = out
    return Allocation(used, len(spilled), stores, loads)

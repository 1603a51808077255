"""Memory-ordering colors for the converted kernel (docs/isa.md, "Memory ordering").

Each memory instruction gets an *object*: its space and, for the address, the kernel parameter
it is derived from (found by a forward dataflow over the REG code: a value is "based on
parameter p" if it comes from ``ldc p`` through integer arithmetic with non-pointer values), or a
fixed address (``[rz+imm]``), or unknown. Two objects may alias if they are in the same space and
one is unknown/unbased or both are the same. Objects that may alias, at least one of them
stored to, must share a color; read-only objects never need ordering and take color 0.

Assumption, as with CUDA's ``__restrict__``: distinct pointer parameters point to distinct
allocations. The functional model can check that assumption at run time (memory-order check).
"""

from __future__ import annotations

import dataclasses

from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import LOADS, NUM_COLORS, SPECS, STORES, Opcode

from .liveness import defines, uses

UNKNOWN = ("unknown",)


def _combine(tags: list) -> object:
    based = {t for t in tags if t is not None}
    if not based:
        return None
    if len(based) == 1:
        return based.pop()
    return UNKNOWN


def address_bases(kernel: Kernel) -> dict[int, object]:
    """For each REG pc of a memory instruction, the base of its address (see module doc)."""
    code = kernel.code
    succs: dict[int, list[int]] = {}
    for pc, ins in enumerate(code):
        out = []
        spec = SPECS[ins.op]
        if spec.jumps:
            out.append(ins.imm)
        if ins.op is Opcode.SYNC:
            out.extend(i.imm for i in code if i.op is Opcode.SSY)  # conservative: any join
        if spec.falls_through and pc + 1 < len(code):
            out.append(pc + 1)
        succs[pc] = out
    state: dict[int, dict[int, object]] = {0: {}}
    work = [0]
    while work:
        pc = work.pop()
        regs = dict(state[pc])
        ins = code[pc]
        reg = defines(ins)
        if reg is not None:
            if ins.op is Opcode.LDC:
                regs[reg] = ("param", ins.imm)
            elif SPECS[ins.op].merges_address:
                regs[reg] = _combine([regs.get(r) for r in uses(ins)])
            elif ins.op in LOADS:
                regs[reg] = UNKNOWN
            else:
                regs[reg] = None
        for s in succs[pc]:
            old = state.get(s)
            new = dict(regs) if old is None else {r: (old.get(r) if old.get(r) == regs.get(r) else UNKNOWN)
                                                  for r in set(old) | set(regs)}
            if new != old:
                state[s] = new
                work.append(s)
    bases = {}
    for pc, ins in enumerate(code):
        if ins.op in LOADS or ins.op in STORES:
            if pc not in state:
                continue
            bases[pc] = ("abs", ins.imm) if ins.a == 0 else state[pc].get(ins.a - 1)
    return bases


def _may_alias(t1, t2) -> bool:
    return t1 in (None, UNKNOWN) or t2 in (None, UNKNOWN) or t1 == t2


def assign_colors(kernel: Kernel, code: list[Instruction], source_pc: list[int | None]) -> list[Instruction]:
    """Return ``code`` with a color in every memory instruction's ``mod`` field."""
    bases = address_bases(kernel)
    objs: list[tuple[str, object]] = []
    stored: set[tuple[str, object]] = set()
    obj_of: dict[int, tuple[str, object]] = {}
    for i, ins in enumerate(code):
        space = LOADS.get(ins.op) or STORES.get(ins.op)
        if space is None:
            continue
        pc = source_pc[i]
        base = bases.get(pc, UNKNOWN) if pc is not None else ("abs", ins.imm)
        obj = (space, base)
        obj_of[i] = obj
        if obj not in objs:
            objs.append(obj)
        if ins.op in STORES:
            stored.add(obj)
    parent = {o: o for o in objs}

    def find(o):
        while parent[o] != o:
            parent[o] = parent[parent[o]]
            o = parent[o]
        return o

    for i, a in enumerate(objs):
        for b in objs[i + 1:]:
            if a[0] == b[0] and _may_alias(a[1], b[1]) and (a in stored or b in stored):
                parent[find(a)] = find(b)
    color_of: dict[tuple, int] = {}
    for o in objs:
        root = find(o)
        if root in color_of:
            continue
        if any(find(x) == root and x in stored for x in objs):
            color_of[root] = 1 + len([c for c in color_of.values() if c]) % (NUM_COLORS - 1)
        else:
            color_of[root] = 0
    out = list(code)
    for i, obj in obj_of.items():
        ins = out[i]
        out[i] = dataclasses.replace(ins, mod=color_of[find(obj)])
    return out

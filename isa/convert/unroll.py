"""Unrolling of single-block loops by two, in REG form, before conversion.

A loop whose header is a join pays its back edge's relays once per iteration: every value live
around the loop that the body does not produce again must be put back at its frame position.
With the body written twice, those relays run once per two iterations, as long as the doubled
body still fits in the ring's reach (the caller measures that and keeps the unrolled form only
if it costs less).

    L:  body                        L:  body
        brnz c, L           ->          brnz c, L2      ; continuing lanes first, as before
    X:  ...                             bra X           ; (a copy of X if X is a lone sync or exit)
                                    L2: body
                                        brnz c, L
                                    X:  ...

Every copy keeps the loop's exit test, so any trip count (odd, zero extra, lane-dependent) runs
exactly as before: the same instructions in the same order for every lane, with lanes that leave
parked at the same place of the divergence stack. Only the exit path gains a ``bra``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import SPECS, Opcode

from .cfg import BRANCHES, TERMINATORS


@dataclass(frozen=True)
class Loop:
    start: int  #: pc of the loop's first instruction (the branch target)
    end: int  #: pc of its backward conditional branch


@dataclass
class Unrolled:
    kernel: Kernel
    origin: list[int | None]  #: source pc of each instruction (None: the added exit branch)
    loops: list[int]  #: pcs of the unrolled loops' headers, in the new kernel


def single_block_loops(kernel: Kernel, max_producers: int) -> list[Loop]:
    """Loops made of one block (no branch, ssy, sync, exit or branch target inside) that end in a
    conditional branch back to their first instruction, with at most ``max_producers`` producers."""
    code = kernel.code
    targets = {ins.imm for ins in code if ins.op in BRANCHES or ins.op is Opcode.SSY}
    loops = []
    for end, ins in enumerate(code):
        if ins.op not in (Opcode.BRNZ, Opcode.BRZ) or ins.imm >= end or end + 1 >= len(code):
            continue
        start = ins.imm
        inner = code[start:end]
        if any(i.op in TERMINATORS or i.op is Opcode.SSY for i in inner):
            continue
        if any(start < pc <= end for pc in targets):
            continue
        if sum(1 for i in inner if SPECS[i.op].produces) > max_producers:
            continue
        loops.append(Loop(start, end))
    return loops


def unroll(kernel: Kernel, loops: list[Loop]) -> Unrolled:
    """The kernel with each of ``loops`` (disjoint single-block loops) written twice."""
    code = kernel.code
    at = {lp.end: lp for lp in loops}
    new: list[Instruction] = []
    origin: list[int | None] = []
    new_pc: dict[int, int] = {}
    fixups: list[tuple[int, int | str]] = []  # (new index, old target pc or "copy2:<end>")
    headers = []
    copy2: dict[int, int] = {}
    for pc, ins in enumerate(code):
        new_pc[pc] = len(new)
        lp = at.get(pc)
        if lp is None:
            if ins.op in BRANCHES or ins.op is Opcode.SSY:
                fixups.append((len(new), ins.imm))
            new.append(ins)
            origin.append(pc)
            continue
        headers.append(new_pc[lp.start])
        # First copy: continue into the second copy, leave through the exit.
        fixups.append((len(new), f"copy2:{pc}"))
        new.append(ins)
        origin.append(pc)
        after = code[pc + 1]
        tiny = after.op in (Opcode.SYNC, Opcode.EXIT)
        if tiny:
            new.append(after)
            origin.append(pc + 1)
        else:
            fixups.append((len(new), pc + 1))
            new.append(Instruction(Opcode.BRA, bimm=True, imm=0))
            origin.append(None)
        copy2[pc] = len(new)
        for k in range(lp.start, pc + 1):
            body_ins = code[k]
            if k == pc:
                fixups.append((len(new), lp.start))
            new.append(body_ins)
            origin.append(k)
    for index, target in fixups:
        ins = new[index]
        imm = copy2[int(target.split(":")[1])] if isinstance(target, str) else new_pc[target]
        new[index] = Instruction(ins.op, dst=ins.dst, a=ins.a, b=ins.b, c=ins.c, mod=ins.mod, bimm=ins.bimm, imm=imm)
    labels = {new_pc[pc]: name for pc, name in kernel.labels.items()}
    locations = {}
    for k, src in enumerate(origin):
        if src is not None and src in kernel.locations:
            locations[k] = kernel.locations[src]
    out = Kernel(name=kernel.name, form=kernel.form, code=new, params=list(kernel.params),
                 shared_bytes=kernel.shared_bytes, local_bytes=kernel.local_bytes, regs=kernel.regs,
                 ring=kernel.ring, dmax=kernel.dmax, labels=labels, locations=locations)
    return Unrolled(out, origin, headers)

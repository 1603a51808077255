"""Unrolling of loops by two, in REG form, before conversion.

A loop whose header is a join pays its back edge's relays once per iteration: every value live
around the loop that the body does not produce again must be put back at its frame position
(a loop invariant costs one relay per iteration). With the body written twice, those relays run
once per two iterations, as long as the doubled body still fits in the ring's reach (the caller
measures that and keeps the unrolled form only if it costs less).

    L:  body                        L:  body
        brnz c, L           ->          brnz c, L2      ; continuing lanes first, as before
    X:  ...                             bra X           ; (a copy of X if X is a lone sync or exit)
                                    L2: body'
                                        brnz c, L
                                    X:  ...

A loop is any contiguous range of code that ends with a branch back to its first instruction
(``brnz``/``brz``, or ``bra`` when the exit test sits inside) and is entered only at its start;
its body may hold if-regions, barriers, inner loops and exits. In the second copy, branches and
``ssy`` targets inside the range point into the second copy, those outside are unchanged. Both
copies are the same code, so every trip count (odd, zero extra, lane-dependent) runs exactly as
before: the same instructions in the same order for every lane, with lanes that leave parked at
the same place of the divergence stack. Only a conditional loop's exit path gains a ``bra``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dualflow.isa.encoding import Instruction
from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import SPECS, Opcode


@dataclass(frozen=True)
class Loop:
    start: int  #: pc of the loop's first instruction (the branch target)
    end: int  #: pc of its backward branch
    copies: int = 2  #: how many times the body is written

    def producers(self, kernel: Kernel) -> int:
        return sum(1 for i in kernel.code[self.start:self.end] if SPECS[i.op].produces)

    def exits_alone(self, kernel: Kernel) -> bool:
        """Whether each copy leaves through its own copy of a lone ``sync`` or ``exit`` (no
        exit paths meet in a join that more copies would have to agree on)."""
        end = kernel.code[self.end]
        return SPECS[end.op].falls_through and kernel.code[self.end + 1].op in (Opcode.SYNC, Opcode.EXIT)

    def overlaps(self, other: Loop) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass
class Unrolled:
    kernel: Kernel
    origin: list[int | None]  #: source pc of each instruction (None: the added exit branch)
    loops: dict[int, int]  #: pc of each unrolled loop's header, in the new kernel -> its copies


def unrollable_loops(kernel: Kernel, max_producers: int) -> list[Loop]:
    """Contiguous loops entered only at their start, ending in a branch back to it, with at most
    ``max_producers`` producers in all; the most deeply nested (the hottest) first, then the
    shortest, then in code order."""
    code = kernel.code
    jumps = [(pc, ins.imm) for pc, ins in enumerate(code) if SPECS[ins.op].has_target]
    ranges = [(target, pc) for pc, target in jumps if target <= pc and SPECS[code[pc].op].jumps]
    loops, depth = [], {}
    for start, end in ranges:
        ins = code[end]
        if SPECS[ins.op].falls_through and end + 1 >= len(code):
            continue
        # Entered only at the start: nothing outside jumps (or reconverges) into the middle.
        if any(start < target <= end and not start <= pc <= end for pc, target in jumps):
            continue
        if Loop(start, end).producers(kernel) > max_producers:
            continue
        loops.append(Loop(start, end))
        depth[loops[-1]] = sum(1 for s, e in ranges if s <= start and end <= e)
    return sorted(loops, key=lambda lp: (-depth[lp], lp.end - lp.start, lp.start))


def unroll(kernel: Kernel, loops: list[Loop]) -> Unrolled:
    """The kernel with each of ``loops`` (disjoint, from ``unrollable_loops``) written ``copies``
    times: each copy's back branch continues into the next copy, the last one's into the first."""
    code = kernel.code
    at = {lp.end: lp for lp in loops}
    new: list[Instruction] = []
    origin: list[int | None] = []
    new_pc: dict[int, int] = {}
    fixups: list[tuple[int, int]] = []  # (new index, new target pc or -(old target pc) - 1)
    headers = {}
    for pc, ins in enumerate(code):
        new_pc[pc] = len(new)
        lp = at.get(pc)
        if lp is None:
            if SPECS[ins.op].has_target:
                fixups.append((len(new), -ins.imm - 1))
            new.append(ins)
            origin.append(pc)
            continue
        headers[new_pc[lp.start]] = lp.copies
        back = len(new)
        new.append(ins)  # the first copy's back branch: fixed below, to the second copy
        origin.append(pc)
        for _ in range(1, lp.copies):
            # Leaving from the previous copy: on to the exit (a conditional back edge falls
            # through to it); then the next copy starts.
            if SPECS[ins.op].falls_through:
                after = code[pc + 1]
                if after.op in (Opcode.SYNC, Opcode.EXIT):
                    new.append(after)
                    origin.append(pc + 1)
                else:
                    fixups.append((len(new), -(pc + 1) - 1))
                    new.append(Instruction(Opcode.BRA, bimm=True, imm=0))
                    origin.append(None)
            first = len(new)
            fixups.append((back, first))
            for k in range(lp.start, pc + 1):
                body_ins = code[k]
                if k == pc:
                    back = len(new)  # the next copy's start, or the loop's (the last copy)
                    fixups.append((back, -lp.start - 1))
                elif SPECS[body_ins.op].has_target:
                    inside = lp.start <= body_ins.imm <= pc
                    fixups.append((len(new), first + body_ins.imm - lp.start if inside else -body_ins.imm - 1))
                new.append(body_ins)
                origin.append(k)
    done: dict[int, int] = {}
    for index, target in fixups:  # later entries for the same index win (a back branch's final target)
        done[index] = target if target >= 0 else new_pc[-target - 1]
    for index, imm in done.items():
        ins = new[index]
        new[index] = dataclasses.replace(ins, imm=imm)
    labels = {new_pc[pc]: name for pc, name in kernel.labels.items()}
    locations = {}
    for k, src in enumerate(origin):
        if src is not None and src in kernel.locations:
            locations[k] = kernel.locations[src]
    out = Kernel(name=kernel.name, form=kernel.form, code=new, params=list(kernel.params),
                 shared_bytes=kernel.shared_bytes, local_bytes=kernel.local_bytes, regs=kernel.regs,
                 ring=kernel.ring, dmax=kernel.dmax, labels=labels, locations=locations)
    return Unrolled(out, origin, headers)

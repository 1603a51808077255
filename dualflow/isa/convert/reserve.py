"""The ``reserved-ssy`` variant in converted code: reserve each region's advance in its ``ssy``
and drop the ``rpinc`` pads that end its shorter paths.

The code generator pads every path of an acyclic ``ssy`` region to the same advance (isa.md,
rule 1). With ``ssy L, k`` the join's RP is at least RP + k whichever paths ran, so a pad directly
before one of the region's ``sync``s does nothing the reservation does not: it is dropped. Pads
that come before values a path must leave at the join's positions stay. A region whose advance
differs between paths (a loop inside it: lanes leave after different trip counts) keeps its pads
and a plain ``ssy``.
"""

from __future__ import annotations

import dataclasses

from dualflow.isa.encoding import OPERAND_MAX, Instruction
from dualflow.isa.kernel import Kernel
from dualflow.isa.opcodes import SPECS, Opcode, Variant


def region_advance(code: list[Instruction], ssy_pc: int) -> tuple[int, list[int]] | None:
    """The advance of RP from the ``ssy`` at ``ssy_pc`` to each ``sync`` that closes its region,
    if it is the same on every path: (advance, the pcs of those ``sync``s); None otherwise.

    Walks every path from the ``ssy`` with the stack of the regions opened on the way (an inner
    ``sync`` continues at its region's join); a pc reached twice with the same inner stack but a
    different advance means a loop or unequal paths."""
    seen: dict[tuple[int, tuple[int, ...]], int] = {}
    syncs: dict[int, int] = {}
    work = [(ssy_pc + 1, (), 0)]
    while work:
        pc, inner, advance = work.pop()
        while True:
            key = (pc, inner)
            if key in seen:
                if seen[key] != advance:
                    return None
                break
            seen[key] = advance
            ins = code[pc]
            spec = SPECS[ins.op]
            if ins.op is Opcode.EXIT:
                break
            if ins.op is Opcode.SYNC:
                if not inner:
                    syncs[pc] = advance
                    break
                pc, inner = inner[-1], inner[:-1]
                continue
            if ins.op is Opcode.SSY:
                inner += (ins.imm,)
            elif ins.dst_hand:  # the hands variant: another hand moves; the reservation is hand s's
                pass
            elif ins.op is Opcode.RPINC:
                advance += ins.imm
            elif spec.produces:
                advance += 1
            if ins.op is Opcode.BRA:
                pc = ins.imm
                continue
            if spec.conditional:
                work.append((ins.imm, inner, advance))
            pc += 1
    advances = set(syncs.values())
    return (advances.pop(), sorted(syncs)) if len(advances) == 1 else None


def _pad_before(code: list[Instruction], pc: int) -> int | None:
    """The pc of the hand-s ``rpinc`` right before ``pc`` (the hands variant: past the pads of
    other hands, which a code generator's tail ends with), if there is one."""
    pc -= 1
    while pc >= 0 and code[pc].op is Opcode.RPINC and code[pc].dst_hand:
        pc -= 1
    return pc if pc >= 0 and code[pc].op is Opcode.RPINC else None


def reserve_advances(kernel: Kernel, report):
    """``kernel`` (converted DFLOW code) and its ``ConversionReport`` with each acyclic region's
    advance reserved in its ``ssy`` where that drops a pad, the pads dropped, and
    ``Variant.RESERVED_SSY`` declared if any was."""
    code = list(kernel.code)
    drop: set[int] = set()
    for pc, ins in enumerate(code):
        if ins.op is not Opcode.SSY:
            continue
        found = region_advance(code, pc)
        if found is None or not 0 < found[0] <= OPERAND_MAX:
            continue
        advance, syncs = found
        pads = {p for p in (_pad_before(code, s) for s in syncs) if p is not None and report.causes[p] == "pad"}
        if pads:
            drop |= pads
            code[pc] = dataclasses.replace(ins, a=advance)
    if not drop:
        return kernel, report
    keep = [pc for pc in range(len(code)) if pc not in drop]
    new_pc, at = {}, 0
    for pc in range(len(code) + 1):  # a dropped pad's pc goes to the instruction after it
        new_pc[pc] = at
        at += pc < len(code) and pc not in drop
    out = []
    for pc in keep:
        ins = code[pc]
        if "target" in SPECS[ins.op].syntax.value:
            ins = dataclasses.replace(ins, imm=new_pc[ins.imm])
        out.append(ins)
    labels: dict[int, str] = {}
    for pc, name in sorted(kernel.labels.items()):
        labels.setdefault(new_pc[pc], name)
    locations = {new_pc[pc]: loc for pc, loc in kernel.locations.items() if pc not in drop}
    converted = dataclasses.replace(kernel, code=out, labels=labels, locations=locations,
                                    variants=kernel.variants | {Variant.RESERVED_SSY})
    report = dataclasses.replace(report, causes=[report.causes[pc] for pc in keep],
                                 source_pc=[report.source_pc[pc] for pc in keep],
                                 loop_of=[report.loop_of[pc] for pc in keep])
    return converted, report

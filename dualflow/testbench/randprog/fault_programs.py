"""Generated programs that fault on purpose: one maker per kind of trap the core has.

A fault program is a generated program (``core_programs.core_program``'s) with one faulting
statement put at a random place of its top level, or one instruction of its kernel replaced
(the faults the converter refuses to carry into DFLOW): the golden model faults, the core must trap
alike (dualflow/testbench/faults.py compares the kind and pc). The kinds come from ``rtl.trap.TrapCause``:
``fault_kinds()`` lists every cause but NONE, so a cause another part adds later shows up at
once; ``MAKERS`` holds the causes a program can be made for, and ``unmade_kinds()`` names the
rest (the golden model has no counterpart for them: the functional model's stack has no depth limit
and no parameter-word limit, and the assembler writes no illegal word), which the coverage
report then lists as never hit. DFLOW_READ (an early source reaching back Dmax, before any
write) is made for DFLOW cores only (``makers_for``); on a core with hands the source reads hand
``seed % hands`` before that hand's first position (``illegal_hand``), so the program seed
picks the hand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dualflow.common.errors import ConfigError
from dualflow.isa import FIELDS, Form, Instruction, Kernel, Opcode, UnitClass
from dualflow.isa.encoding import HAND_FIELDS
from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams

from .core_programs import CoreProgram, form_kernel, gen_config
from .generator import (
    EXTRA_SLOTS,
    INB,
    MAX_SHARED_PHASES,
    OUTB,
    SHARED_PHASE_BYTES,
    TCOND,
    TID,
    If,
    Node,
    Program,
    RandomSource,
    Seq,
    Source,
    Straight,
    generate,
    render,
)
from .hands import branch_targets, selectors

__all__ = ["MAKERS", "fault_kinds", "fault_program", "illegal_hand", "makers_for", "unmade_kinds"]

def _misaligned(src: Source, prog: Program) -> Node:
    k = src.int(0, 2)
    if k == 0:
        return Straight([f"ldg r{TCOND}, [r{INB}+{4 * src.int(0, 15) + src.choice((1, 2, 3))}]"])
    if k == 1:
        slot = len(prog.pool) + src.int(0, EXTRA_SLOTS - 1)
        return Straight([f"stg [r{OUTB}+{4 * slot + 2}], r{src.choice(prog.pool)}"])
    return Straight([f"ishl r{TCOND}, r{TID}, 2", f"lds r{TCOND}, [r{TCOND}+{src.choice((1, 2, 3))}]"])


def _shared_bounds(src: Source, prog: Program) -> Node:
    past = MAX_SHARED_PHASES * SHARED_PHASE_BYTES + 4 * src.int(0, 7)  # at or past the .shared size
    if src.chance(50):
        return Straight([f"sts [rz+{past}], r{src.choice(prog.pool)}"])
    return Straight([f"ishl r{TCOND}, r{TID}, 2", f"lds r{TCOND}, [r{TCOND}+{past}]"])


def _barrier(src: Source, prog: Program) -> Node:
    """``bar`` under a condition that splits every warp (odd and even threads)."""
    then = Seq([Straight(["bar"])])
    return If([f"iand r{TCOND}, r{TID}, 1"], TCOND, src.choice(("brz", "brnz")), then, None, 1)


# The converter refuses programs with these faults (a sync without ssy, a path without exit), so
# they are made in the kernel the core runs, either form: one instruction replaced in place
# (no pc moves); both models run the same patched kernel.
def _stack_empty(src: Source, code: list[Instruction]) -> None:
    """A ``sync`` in the converged code before the first ``ssy`` (no entry pending)."""
    first_ssy = next((pc for pc, ins in enumerate(code) if ins.op is Opcode.SSY), len(code))
    code[src.int(0, max(0, first_ssy - 1))] = Instruction(Opcode.SYNC)


def _pc_range(src: Source, code: list[Instruction]) -> None:
    """The last instruction (an ``exit``) becomes a ``nop``: a path runs past the end."""
    code[-1] = Instruction(Opcode.NOP)


#: Instructions from the start among which ``_dflow_read`` picks one (fewer producers than the
#: converter's smallest Dmax, so the longest distance reaches back before the first write).
_EARLY = 8


def _dflow_read(src: Source, code: list[Instruction], dmax: int) -> None:
    """DFLOW only: an early instruction's first source reaches back ``dmax``, before any write."""
    pcs = [pc for pc, ins in enumerate(code[:_EARLY]) if ins.a != 0]
    pc = src.choice(pcs)
    code[pc] = dataclasses.replace(code[pc], a=dmax)


#: Trap cause -> maker of a faulting statement put in the program's tree.
TREE_MAKERS: dict[TrapCause, Callable[[Source, Program], Node]] = {
    TrapCause.MISALIGNED: _misaligned,
    TrapCause.SHARED_BOUNDS: _shared_bounds,
    TrapCause.BARRIER: _barrier,
}
#: Trap cause -> patch of the kernel's code (given the code and the kernel's Dmax).
KERNEL_PATCHES: dict[TrapCause, Callable[[Source, list[Instruction], int], None]] = {
    TrapCause.STACK_EMPTY: lambda src, code, dmax: _stack_empty(src, code),
    TrapCause.PC_RANGE: lambda src, code, dmax: _pc_range(src, code),
    TrapCause.DFLOW_READ: _dflow_read,
}
#: Causes only a DFLOW core can meet.
DFLOW_ONLY = (TrapCause.DFLOW_READ,)
#: Every trap cause a program can be made for.
MAKERS = (*TREE_MAKERS, *KERNEL_PATCHES)


def makers_for(params: CoreParams) -> tuple[TrapCause, ...]:
    """The causes a program can be made for on a core of ``params``'s mode."""
    return tuple(c for c in MAKERS if params.mode.form is Form.DFLOW or c not in DFLOW_ONLY)


def illegal_hand(kernel: Kernel, seed: int) -> tuple[int, Instruction]:
    """Hands kernels: the illegal read, as (pc, instruction in its place), on hand ``seed % hands``
    at its largest distance ``min(ring - 1, Dmax)``: source A of the first instruction of the
    straight code at the start (no branch, no branch target) where that reaches before the hand's
    first position, else an ``iadd`` reading it in place of the first instruction."""
    rings, dmax = kernel.rings, kernel.dmax
    hand = seed % len(rings)
    far = min(rings[hand] - 1, dmax)
    lsb = HAND_FIELDS["a"][0] - FIELDS["dst"][0]
    targets = branch_targets(kernel.code)
    advanced = 0
    for at, ins in enumerate(kernel.code):
        if ins.spec.unit is UnitClass.CTRL or (at and at in targets) or advanced >= far:
            break
        if ins.a and "a" in ins.spec.sources and not ins.is_uniform("a"):
            return at, dataclasses.replace(ins, a=far, dst=ins.dst & ~(3 << lsb) | hand << lsb)
        if ins.names_written_hand and ins.dst_hand == hand:
            advanced += ins.imm if ins.op is Opcode.RPINC else int(ins.spec.produces)
    return 0, Instruction(Opcode.IADD, dst=selectors(hand, a=hand), a=far, bimm=True, imm=1)


def fault_kinds() -> list[TrapCause]:
    """Every trap cause of the core (all but NONE)."""
    return [cause for cause in TrapCause if cause is not TrapCause.NONE]


def unmade_kinds() -> list[TrapCause]:
    """The trap causes no program can be made for (see the module docstring)."""
    return [cause for cause in fault_kinds() if cause not in MAKERS]


def fault_program(params: CoreParams, seed: int, cause: TrapCause, *, fp: bool = False) -> CoreProgram:
    """The program of ``seed`` with a statement that meets ``cause`` (one of ``MAKERS``) put at a
    random place of its top level (deterministic). A program whose conversion the DFLOW
    converter refuses raises its ``ConvertError``."""
    if cause not in makers_for(params):
        raise ConfigError(f"no program can be made to meet trap {cause.name} on a {params.mode} core (have: "
                          f"{', '.join(c.name for c in makers_for(params))})")
    src = RandomSource(seed)
    prog = generate(src, gen_config(params, fp=fp))
    if cause in TREE_MAKERS:
        at = 0 if src.chance(70) else src.int(0, len(prog.body.items))
        prog.body.items.insert(at, TREE_MAKERS[cause](src, prog))
    text = render(prog)
    kernel = form_kernel(text, params, f"<random seed {seed} {cause.name}>", seed=seed)
    if cause in KERNEL_PATCHES:
        code = list(kernel.code)
        if kernel.hands and cause is TrapCause.DFLOW_READ:  # on the hand the seed names
            pc, code[pc] = illegal_hand(kernel, seed)
        else:
            KERNEL_PATCHES[cause](src, code, kernel.dmax)
        kernel = dataclasses.replace(kernel, code=code)
    return CoreProgram(seed, prog, text, kernel, cause)

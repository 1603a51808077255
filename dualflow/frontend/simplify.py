"""Local clean-ups of the lowered code that PTX leaves to the assembler in NVIDIA's tool chain.

- A loop's bottom test ``@p bra EXIT; bra LOOP; EXIT:`` becomes ``@!p bra LOOP`` falling through
  to EXIT: one branch per iteration instead of two.
- A register set once to a constant (a ``mov`` of an immediate, a shared array's base) is used as
  the constant: ``rz`` for zero in any register operand, the immediate where the syntax has one
  (swapping the operands of a commutative operation to get it there), folded into a memory
  operand's offset.
- An operation with its identity operand (``iadd d, a, 0``) becomes a copy, which the register
  allocator can then merge away.
- Instructions without side effects whose result nobody reads are removed.
"""

from __future__ import annotations

from collections import Counter

from dualflow.isa.opcodes import Opcode, UnitClass

from .ir import RZ, Function, LabelMark, Op

_COMMUTATIVE = {Opcode.IADD, Opcode.IMUL, Opcode.IAND, Opcode.IOR, Opcode.IXOR, Opcode.IMIN, Opcode.IMAX,
                Opcode.UMIN, Opcode.UMAX, Opcode.FADD, Opcode.FMUL, Opcode.FMIN, Opcode.FMAX}
_INVERTED = {Opcode.BRNZ: Opcode.BRZ, Opcode.BRZ: Opcode.BRNZ}


def invert_loop_branches(items: list) -> list:
    out = []
    i = 0
    while i < len(items):
        a = items[i]
        if (isinstance(a, Op) and a.opcode in _INVERTED and i + 2 < len(items)
                and isinstance(items[i + 1], Op) and items[i + 1].opcode is Opcode.BRA
                and isinstance(items[i + 2], LabelMark) and items[i + 2].name == a.target):
            b = items[i + 1]
            out.append(Op(_INVERTED[a.opcode], None, list(a.srcs), target=b.target, line=b.line))
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def _constants(items: list) -> dict[str, int]:
    defs: Counter = Counter(op.dst for op in items if isinstance(op, Op) and op.dst)
    return {op.dst: op.srcs[0] for op in items
            if isinstance(op, Op) and op.opcode is Opcode.MOV and isinstance(op.srcs[0], int) and defs[op.dst] == 1}


def _slots(op: Op) -> list[str]:
    """The syntax item of each source of ``op``: "a", "b", "c", "bi" or "mem"."""
    return [item for item in op.spec.syntax.value if item in ("a", "b", "c", "bi", "mem")]


def propagate_constants(items: list) -> None:
    consts = _constants(items)
    for op in items:
        if not isinstance(op, Op) or not op.srcs:
            continue
        slots = _slots(op)
        srcs = op.srcs
        if op.opcode in _COMMUTATIVE and len(srcs) == 2 and srcs[0] in consts and isinstance(srcs[1], str) \
                and srcs[1] not in consts:
            srcs[0], srcs[1] = srcs[1], srcs[0]
        for i, s in enumerate(srcs):
            if not isinstance(s, str) or s not in consts:
                continue
            value = consts[s]
            if slots[i] == "bi":
                srcs[i] = value
            elif slots[i] == "mem" and -(1 << 15) <= op.offset + _signed(value) < (1 << 15):
                srcs[i] = RZ
                op.offset += _signed(value)
            elif value == 0:
                srcs[i] = RZ


_IDENTITY = {Opcode.IADD: 0, Opcode.ISUB: 0, Opcode.IOR: 0, Opcode.IXOR: 0, Opcode.ISHL: 0, Opcode.ISHR: 0,
             Opcode.ISRA: 0, Opcode.IMUL: 1}


def identities_to_moves(items: list) -> None:
    """``iadd d, a, 0`` and the like are copies: as ``mov`` the register allocator can merge them."""
    for op in items:
        if isinstance(op, Op) and op.opcode in _IDENTITY and len(op.srcs) == 2 and op.srcs[1] == _IDENTITY[op.opcode]:
            op.opcode, op.srcs = Opcode.MOV, [op.srcs[0]]


def _signed(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def remove_dead(items: list) -> list:
    while True:
        used = Counter(s for op in items if isinstance(op, Op) for s in op.registers_read())
        keep = [op for op in items if not (isinstance(op, Op) and op.dst and op.dst != RZ and not used[op.dst]
                                           and op.spec.unit in (UnitClass.INT, UnitClass.FP)
                                           and op.opcode is not Opcode.VOTE)]
        if len(keep) == len(items):
            return items
        items = keep


def simplify(fn: Function) -> Function:
    items = invert_loop_branches(fn.items)
    propagate_constants(items)
    identities_to_moves(items)
    fn.items = remove_dead(items)
    return fn

"""The 64-bit instruction word: field layout, encoding and decoding.

One layout serves both operand forms; only the meaning of the operand fields differs::

    bits    field  meaning
    7:0     op     opcode (``Opcode``)
    8       bimm   1: bits 63:32 hold a 32-bit immediate that replaces source B
    11:9    -      reserved, zero
    15:12   mod    comparison, special register, vote mode or memory color (``ModKind``)
    23:16   dst    REG: destination register + 1 (0: none / rz); DFLOW: zero (implicit)
    31:24   a      source A
    39:32   b      source B           (when bimm = 0)
    47:40   c      source C           (when bimm = 0)
    63:48   imm16  signed 16-bit memory offset (when bimm = 0)
    63:32   imm32  32-bit immediate   (when bimm = 1)

Operand fields ``a``, ``b``, ``c`` read the same way in both forms where 0 means "zero"
(the ``rz`` operand); REG: field = register + 1 (r0..r254); DFLOW: field = distance 1..255.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.errors import DualflowError

from .opcodes import SPECS, ModKind, Opcode, OpSpec, SpecialReg, VoteMode

#: Field name -> (least significant bit, width). The RTL decoder builds its layout from this.
FIELDS: dict[str, tuple[int, int]] = {
    "op": (0, 8),
    "bimm": (8, 1),
    "reserved": (9, 3),
    "mod": (12, 4),
    "dst": (16, 8),
    "a": (24, 8),
    "b": (32, 8),
    "c": (40, 8),
    "imm16": (48, 16),
    "imm32": (32, 32),
}

WORD_BITS = 64
OPERAND_MAX = (1 << FIELDS["a"][1]) - 1  #: largest operand field value (255)
MAX_REGS = OPERAND_MAX  #: REG form: registers r0..r254
IMM16_MIN, IMM16_MAX = -(1 << 15), (1 << 15) - 1


class EncodingError(DualflowError):
    """A word that is not a valid instruction, or fields that do not fit."""


def _get(word: int, name: str) -> int:
    lsb, width = FIELDS[name]
    return (word >> lsb) & ((1 << width) - 1)


@dataclass(frozen=True)
class Instruction:
    """A decoded instruction, independent of operand form.

    ``dst``, ``a``, ``b``, ``c`` are raw operand fields (see the module docstring); ``imm`` is
    the 32-bit immediate (``bimm``) or the signed 16-bit offset (memory instructions).
    """

    op: Opcode
    dst: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    mod: int = 0
    bimm: bool = False
    imm: int = 0

    @property
    def spec(self) -> OpSpec:
        return SPECS[self.op]

    def source_fields(self) -> list[int]:
        """Raw values of the source operand fields this instruction reads, in operand order,
        leaving out absent ones (field 0: ``rz`` in REG form, no operand in DFLOW form) and an
        immediate in place of B. REG: register + 1; DFLOW: distance."""
        out = []
        for name in SPECS[self.op].sources:
            if name == "b" and self.bimm:
                continue
            value = getattr(self, name)
            if value:
                out.append(value)
        return out

    def check_fields(self) -> None:
        """Reject fields the opcode does not use, or ``mod`` values it does not define, so that
        every accepted word disassembles and reassembles to itself."""
        spec = self.spec
        items = spec.syntax.value
        name = spec.mnemonic
        legal_mod = {
            ModKind.NONE: {0}, ModKind.COLOR: set(range(16)),
            ModKind.CMP: {int(c) for c in spec.conditions},
            ModKind.VOTE: {int(v) for v in VoteMode}, ModKind.SREG: {int(r) for r in SpecialReg},
        }[spec.mod]
        if self.mod not in legal_mod:
            raise EncodingError(f"{name}: mod={self.mod} is not a valid {spec.mod.value} value")
        if self.dst and not spec.produces:
            raise EncodingError(f"{name} writes no value but dst={self.dst}")
        if self.a and not ("a" in items or "mem" in items or "advance" in items):
            raise EncodingError(f"{name} has no source A but a={self.a}")
        if self.c and "c" not in items:
            raise EncodingError(f"{name} has no source C but c={self.c}")
        if self.b and not ("b" in items or "bi" in items):
            raise EncodingError(f"{name} has no source B but b={self.b}")
        needs_imm = any(i in items for i in ("target", "param", "count"))
        if self.bimm and not (needs_imm or "bi" in items):
            raise EncodingError(f"{name} takes no 32-bit immediate")
        if needs_imm and not self.bimm:
            raise EncodingError(f"{name} needs its 32-bit immediate (bimm=1)")
        if not self.bimm and self.imm and "mem" not in items:
            raise EncodingError(f"{name} has no memory offset but imm16={self.imm}")

    def encode(self) -> int:
        for name in ("dst", "a", "b", "c"):
            value = getattr(self, name)
            if not 0 <= value <= OPERAND_MAX:
                raise EncodingError(f"operand field {name}={value} does not fit in 8 bits")
        if not 0 <= self.mod < 16:
            raise EncodingError(f"mod={self.mod} does not fit in 4 bits")
        if self.bimm and (self.b or self.c):
            raise EncodingError("an instruction with a 32-bit immediate has no B or C operand")
        self.check_fields()
        word = int(self.op) | (int(self.bimm) << 8) | (self.mod << 12) | (self.dst << 16) | (self.a << 24)
        if self.bimm:
            if self.b or self.c:
                raise EncodingError("an instruction with a 32-bit immediate has no B or C operand")
            if not -(1 << 31) <= self.imm < (1 << 32):
                raise EncodingError(f"immediate {self.imm} does not fit in 32 bits")
            word |= (self.imm & 0xFFFFFFFF) << 32
        else:
            if not IMM16_MIN <= self.imm <= IMM16_MAX:
                raise EncodingError(f"offset {self.imm} does not fit in a signed 16-bit field")
            word |= (self.b << 32) | (self.c << 40) | ((self.imm & 0xFFFF) << 48)
        return word

    @classmethod
    def decode(cls, word: int) -> Instruction:
        if not 0 <= word < (1 << WORD_BITS):
            raise EncodingError(f"word {word:#x} is not a 64-bit value")
        try:
            op = Opcode(_get(word, "op"))
        except ValueError:
            raise EncodingError(f"unknown opcode {_get(word, 'op'):#04x} in word {word:#018x}") from None
        if _get(word, "reserved"):
            raise EncodingError(f"reserved bits set in word {word:#018x}")
        bimm = bool(_get(word, "bimm"))
        if bimm:
            imm = _get(word, "imm32")
            b = c = 0
        else:
            imm16 = _get(word, "imm16")
            imm = imm16 - (1 << 16) if imm16 & 0x8000 else imm16
            b, c = _get(word, "b"), _get(word, "c")
        ins = cls(op=op, dst=_get(word, "dst"), a=_get(word, "a"), b=b, c=c,
                  mod=_get(word, "mod"), bimm=bimm, imm=imm)
        try:
            ins.check_fields()
        except EncodingError as exc:
            raise EncodingError(f"word {word:#018x}: {exc}") from None
        return ins

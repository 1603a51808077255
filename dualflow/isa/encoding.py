"""The 64-bit instruction word: field layout, encoding and decoding.

One layout serves both operand forms; only the meaning of the operand fields differs::

    bits    field  meaning
    7:0     op     opcode (``Opcode``)
    8       bimm   1: bits 63:32 hold a 32-bit immediate that replaces source B
    11:9    uniform  one flag per source field (bit 9: a, 10: b, 11: c): the field names a
                   uniform operand, not a register or distance (``Variant.UNIFORM_OPERANDS``)
    15:12   mod    comparison, special register, vote mode or memory color (``ModKind``)
    23:16   dst    REG: destination register + 1 (0: none / rz); DFLOW: four 2-bit hand
                   selectors (``HAND_FIELDS``, ``Variant.HANDS``), zero in the original form
    31:24   a      source A
    39:32   b      source B           (when bimm = 0)
    47:40   c      source C           (when bimm = 0)
    63:48   imm16  signed 16-bit memory offset (when bimm = 0)
    63:32   imm32  32-bit immediate   (when bimm = 1)

Operand fields ``a``, ``b``, ``c`` read the same way in both forms where 0 means "zero"
(the ``rz`` operand); REG: field = register + 1 (r0..r254); DFLOW: field = distance 1..255.
A field whose uniform flag is set (DFLOW form, with the variant declared) instead names a value
held once per warp (``opcodes.uniform_operand``): 0..63 a kernel parameter word, 64 + k the k-th
of ``UNIFORM_SREGS``.

DFLOW form, ``Variant.HANDS``: the dst field holds four 2-bit hand selectors (``HAND_FIELDS``):
bits 17:16 the hand a producer writes (also ``rpinc``'s and a reserving ``ssy``'s hand), 19:18
the hand source A reads, 21:20 B's, 23:22 C's; hand 0 (``s``) when zero, so the original form's
words are the all-zero case.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.common.errors import DualflowError

from .opcodes import (
    HAND_NAMES,
    SPECS,
    UNIFORM_PARAM_WORDS,
    UNIFORM_SREGS,
    Form,
    ModKind,
    Opcode,
    OpSpec,
    SpecialReg,
    Variant,
    VoteMode,
    uniform_operand,
)

#: Field name -> (least significant bit, width). The RTL decoder builds its layout from this.
FIELDS: dict[str, tuple[int, int]] = {
    "op": (0, 8),
    "bimm": (8, 1),
    "uniform": (9, 3),
    "mod": (12, 4),
    "dst": (16, 8),
    "a": (24, 8),
    "b": (32, 8),
    "c": (40, 8),
    "imm16": (48, 16),
    "imm32": (32, 32),
}

#: DFLOW form, ``Variant.HANDS``: the hand selectors the dst field holds, name -> (least
#: significant bit in the word, width), as ``FIELDS``: "write" the hand a producer (or ``rpinc``,
#: or ``ssy`` with a reserved advance) writes or advances, "a", "b", "c" the hand each source reads.
HAND_FIELDS: dict[str, tuple[int, int]] = {
    "write": (16, 2),
    "a": (18, 2),
    "b": (20, 2),
    "c": (22, 2),
}
assert all(FIELDS["dst"][0] <= lsb and lsb + width <= sum(FIELDS["dst"]) for lsb, width in HAND_FIELDS.values())

#: The written-hand selector's bits within the dst field.
_WRITE_MASK = ((1 << HAND_FIELDS["write"][1]) - 1) << (HAND_FIELDS["write"][0] - FIELDS["dst"][0])

WORD_BITS = 64
OPERAND_MAX = (1 << FIELDS["a"][1]) - 1  #: largest operand field value (255)
MAX_REGS = OPERAND_MAX  #: REG form: registers r0..r254
IMM16_MIN, IMM16_MAX = -(1 << 15), (1 << 15) - 1
#: Bit of each source field in the ``uniform`` flags (bit 9 of the word is field a's).
UNIFORM_FLAG = {"a": 1, "b": 2, "c": 4}
#: Largest value of a uniform operand field (the last uniform special register).
UNIFORM_MAX = UNIFORM_PARAM_WORDS + len(UNIFORM_SREGS) - 1


class EncodingError(DualflowError):
    """A word that is not a valid instruction, or fields that do not fit."""


def _get(word: int, name: str) -> int:
    lsb, width = FIELDS[name]
    return (word >> lsb) & ((1 << width) - 1)


@dataclass(frozen=True)
class Instruction:
    """A decoded instruction, independent of operand form.

    ``dst``, ``a``, ``b``, ``c`` are raw operand fields (see the module docstring); ``imm`` is
    the 32-bit immediate (``bimm``) or the signed 16-bit offset (memory instructions);
    ``uniform`` the flags of the source fields that name uniform operands (``UNIFORM_FLAG``).
    """

    op: Opcode
    dst: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    mod: int = 0
    bimm: bool = False
    imm: int = 0
    uniform: int = 0

    @property
    def spec(self) -> OpSpec:
        return SPECS[self.op]

    def is_uniform(self, name: str) -> bool:
        """Whether source field ``name`` ("a", "b", "c") names a uniform operand."""
        return bool(self.uniform & UNIFORM_FLAG[name])

    def hand_of(self, name: str) -> int:
        """DFLOW form: the hand selector ``name`` ("write", "a", "b", "c") of the dst field
        (``HAND_FIELDS``; 0, hand s, in the original form). Meaningless in REG form."""
        lsb, width = HAND_FIELDS[name]
        return (self.dst >> (lsb - FIELDS["dst"][0])) & ((1 << width) - 1)

    @property
    def dst_hand(self) -> int:
        """DFLOW form: the hand this instruction writes (a producer) or advances (``rpinc``,
        ``ssy`` with a reserved advance): its written-hand selector."""
        return self.hand_of("write")

    @property
    def names_written_hand(self) -> bool:
        """Whether the written-hand selector may be non-zero: a producer, ``rpinc``, or ``ssy``
        with a reserved advance."""
        return self.spec.produces or self.op is Opcode.RPINC or (self.op is Opcode.SSY and self.a != 0)

    def hand_sources(self) -> list[tuple[int, int]]:
        """DFLOW form: the source operands as ``(hand, distance)`` pairs, in operand order,
        leaving out what ``source_fields`` leaves out; in the original form every hand is 0 and
        the distances are ``source_fields()``."""
        out = []
        for name in SPECS[self.op].sources:
            if (name == "b" and self.bimm) or self.uniform & UNIFORM_FLAG[name]:
                continue
            value = getattr(self, name)
            if value:
                out.append((self.hand_of(name), value))
        return out

    def source_fields(self) -> list[int]:
        """Raw values of the source operand fields this instruction reads, in operand order,
        leaving out absent ones (field 0: ``rz`` in REG form, no operand in DFLOW form), an
        immediate in place of B and uniform operands (held once per warp: no register or ring
        read, no dependency). REG: register + 1; DFLOW: distance."""
        return [value for _, value in self.hand_sources()]

    def variant_uses(self, form: Form | None = None) -> dict[Variant, str]:
        """The DFLOW variants whose fields this instruction uses, each with what uses it (for
        the message that refuses it in a kernel that does not declare the variant). The dst
        field's hand selectors are seen only when ``form`` is DFLOW (in REG form it names a
        register)."""
        out = {}
        if form is Form.DFLOW and self.dst:
            out[Variant.HANDS] = f"a hand selector (dst field {self.dst})"
        if self.op is Opcode.SSY and self.a:
            out[Variant.RESERVED_SSY] = f"ssy with a reserved advance ({self.a})"
        if self.uniform:
            out[Variant.UNIFORM_OPERANDS] = "a uniform operand"
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
        # A non-producer's dst field is zero, except (DFLOW form, ``check_form``) the hand selectors
        # of the sources it reads, and the written-hand selector of rpinc and a reserving ssy.
        if self.dst & _WRITE_MASK and not spec.produces and not self.names_written_hand:
            raise EncodingError(f"{name} writes no value but dst={self.dst}")
        if self.dst >> HAND_FIELDS["write"][1] and self.names_written_hand and not spec.produces:
            raise EncodingError(f"{name}: dst={self.dst}, but only its written-hand selector "
                                f"(bits 17:16, .variant {Variant.HANDS.value}) may be set")
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
        for field, bit in UNIFORM_FLAG.items():
            if not self.uniform & bit:
                continue
            if field not in spec.sources or (field == "b" and self.bimm):
                raise EncodingError(f"{name}: uniform flag on field {field}, which it does not read as a source")
            if uniform_operand(getattr(self, field)) is None:
                raise EncodingError(f"{name}: uniform operand {field}={getattr(self, field)} names nothing "
                                    f"(0..{UNIFORM_PARAM_WORDS - 1}: parameter words, "
                                    f"{UNIFORM_PARAM_WORDS}..{UNIFORM_MAX}: uniform special registers)")

    def check_form(self, form: Form, hands: int | None = None) -> None:
        """The checks of fields whose meaning depends on the operand form (``check_fields`` is
        form-agnostic): in REG form, a dst field (a register) only on a producer; in DFLOW form, the
        dst field's hand selectors (``Variant.HANDS``). A source
        selector is legal only on a field the opcode reads as a ring source (present, not ``rz``,
        not uniform, not B when it is a 32-bit immediate); a written-hand selector only where
        ``names_written_hand``; with ``hands`` (the hands the kernel declares), only hands below it."""
        if not self.dst:
            return
        spec = self.spec
        name = spec.mnemonic
        if form is not Form.DFLOW:  # REG: the destination register, of producers only
            if not spec.produces:
                raise EncodingError(f"{name} writes no value but dst={self.dst}")
            return
        write = self.dst_hand
        if write and not self.names_written_hand:
            raise EncodingError(f"{name}: written-hand selector (hand {HAND_NAMES[write]}) on an instruction "
                                "that writes and advances no hand")
        for field in ("a", "b", "c"):
            hand = self.hand_of(field)
            if not hand:
                continue
            why = None
            if field not in spec.sources:
                why = "which it does not read as a source"
            elif field == "b" and self.bimm:
                why = "which is a 32-bit immediate"
            elif self.is_uniform(field):
                why = "a uniform operand (it reads no hand)"
            elif not getattr(self, field):
                why = "which is zero (rz: it reads no hand)"
            if why:
                raise EncodingError(f"{name}: hand selector {HAND_NAMES[hand]} on source {field.upper()}, {why}")
        if hands is not None:
            for what, hand in (("written", write), *((f"source {f.upper()}", self.hand_of(f)) for f in "abc")):
                if hand >= hands:
                    raise EncodingError(f"{name}: {what} hand {HAND_NAMES[hand]} is not declared (the kernel has "
                                        f"{hands} hand{'s' if hands > 1 else ''}: {' '.join(HAND_NAMES[:hands])})")

    def encode(self) -> int:
        for name in ("dst", "a", "b", "c"):
            value = getattr(self, name)
            if not 0 <= value <= OPERAND_MAX:
                raise EncodingError(f"operand field {name}={value} does not fit in 8 bits")
        if not 0 <= self.mod < 16:
            raise EncodingError(f"mod={self.mod} does not fit in 4 bits")
        if not 0 <= self.uniform < 1 << FIELDS["uniform"][1]:
            raise EncodingError(f"uniform flags {self.uniform} do not fit in {FIELDS['uniform'][1]} bits")
        if self.bimm and (self.b or self.c):
            raise EncodingError("an instruction with a 32-bit immediate has no B or C operand")
        self.check_fields()
        word = (int(self.op) | (int(self.bimm) << 8) | (self.uniform << FIELDS["uniform"][0]) | (self.mod << 12)
                | (self.dst << 16) | (self.a << 24))
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
    def decode(cls, word: int, form: Form | None = None) -> Instruction:
        """The instruction of a word; with ``form``, also the checks of ``check_form``."""
        if not 0 <= word < (1 << WORD_BITS):
            raise EncodingError(f"word {word:#x} is not a 64-bit value")
        try:
            op = Opcode(_get(word, "op"))
        except ValueError:
            raise EncodingError(f"unknown opcode {_get(word, 'op'):#04x} in word {word:#018x}") from None
        bimm = bool(_get(word, "bimm"))
        if bimm:
            imm = _get(word, "imm32")
            b = c = 0
        else:
            imm16 = _get(word, "imm16")
            imm = imm16 - (1 << 16) if imm16 & 0x8000 else imm16
            b, c = _get(word, "b"), _get(word, "c")
        ins = cls(op=op, dst=_get(word, "dst"), a=_get(word, "a"), b=b, c=c,
                  mod=_get(word, "mod"), bimm=bimm, imm=imm, uniform=_get(word, "uniform"))
        try:
            ins.check_fields()
            if form is not None:
                ins.check_form(form)
        except EncodingError as exc:
            raise EncodingError(f"word {word:#018x}: {exc}") from None
        return ins

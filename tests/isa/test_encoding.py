"""The 64-bit instruction word (dualflow/isa/encoding.py): field positions, round trips and the errors
of ``Instruction.encode`` / ``Instruction.decode`` (docs/isa.md, "Instruction word")."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualflow.common.errors import DualflowError
from dualflow.isa import FIELDS, SPECS, Instruction, Opcode
from dualflow.isa.encoding import EncodingError
from dualflow.isa.opcodes import ModKind, Syntax

ALL_OPS = list(SPECS)
MEMORY_OPS = [op for op, spec in SPECS.items() if spec.syntax in (Syntax.LOAD, Syntax.STORE)]
KNOWN_CODES = {int(op) for op in Opcode}
UNKNOWN_CODES = [code for code in range(256) if code not in KNOWN_CODES]


def legal_mods(op: Opcode) -> list[int]:
    """Mod values an opcode defines, written out independently of dualflow/isa/encoding.py."""
    kind = SPECS[op].mod
    if kind is ModKind.CMP:
        return list(range(6)) if op in (Opcode.ISETP, Opcode.USETP) else list(range(14))
    return {ModKind.NONE: [0], ModKind.COLOR: list(range(16)), ModKind.VOTE: [0, 1, 2],
            ModKind.SREG: list(range(15))}[kind]


def canonical(op: Opcode, *, dst=0, a=0, b=0, c=0, mod=0, bimm=False, imm=0) -> Instruction:
    """The instruction with every field the opcode does not use cleared (decode accepts only these)."""
    spec = SPECS[op]
    items = spec.syntax.value
    mods = legal_mods(op)
    needs_imm = any(i in items for i in ("target", "param", "count"))
    bimm = True if needs_imm else (bimm and "bi" in items)
    fields = dict(dst=dst if spec.produces else 0, a=a if ("a" in items or "mem" in items) else 0,
                  mod=mods[mod % len(mods)], bimm=bimm)
    if bimm:
        return Instruction(op, **fields, imm=imm & 0xFFFFFFFF)
    imm16 = ((imm + 0x8000) & 0xFFFF) - 0x8000  # any drawn value, wrapped to the signed 16-bit field
    return Instruction(op, **fields, b=b if ("b" in items or "bi" in items) else 0,
                       c=c if "c" in items else 0, imm=imm16 if "mem" in items else 0)


def field(word: int, name: str) -> int:
    lsb, width = FIELDS[name]
    return (word >> lsb) & ((1 << width) - 1)


def op_id(op) -> str:
    return op.name.lower()


# --------------------------------------------------------------------------------------------
# The layout table itself
# --------------------------------------------------------------------------------------------


def test_fields_table_matches_the_specification():
    assert FIELDS == {
        "op": (0, 8), "bimm": (8, 1), "uniform": (9, 3), "mod": (12, 4), "dst": (16, 8),
        "a": (24, 8), "b": (32, 8), "c": (40, 8), "imm16": (48, 16), "imm32": (32, 32),
    }


def test_fields_tile_the_64_bit_word_exactly_once_per_alternative():
    """Without the immediate alternative, the fields cover bits 0..63 with no overlap; imm32
    covers exactly the bits of b, c and imm16."""
    covered = []
    for name, (lsb, width) in FIELDS.items():
        if name != "imm32":
            covered.extend(range(lsb, lsb + width))
    assert sorted(covered) == list(range(64))
    lsb, width = FIELDS["imm32"]
    shared = set()
    for name in ("b", "c", "imm16"):
        shared |= set(range(FIELDS[name][0], FIELDS[name][0] + FIELDS[name][1]))
    assert set(range(lsb, lsb + width)) == shared


def test_specs_cover_every_opcode_with_its_number():
    assert set(SPECS) == set(Opcode)
    assert len(SPECS) == 51
    for op, spec in SPECS.items():
        assert spec.code == int(op)
        assert spec.mnemonic == op.name.lower()
        assert 0 <= spec.code <= 0xFF


# --------------------------------------------------------------------------------------------
# Hand-computed words
# --------------------------------------------------------------------------------------------

HAND_WORDS = [
    # iadd r3, r1, r2  (REG: field = register + 1)
    (Instruction(Opcode.IADD, dst=4, a=2, b=3), 0x0000_0003_0204_0010),
    # isetp.lt r4, r3, 100
    (Instruction(Opcode.ISETP, dst=5, a=4, mod=2, bimm=True, imm=100), 0x0000_0064_0405_211F),
    # ldg.c3 r5, [r3-4]
    (Instruction(Opcode.LDG, dst=6, a=4, mod=3, imm=-4), 0xFFFC_0000_0406_3040),
    # ffma r0, r1, r2, r3
    (Instruction(Opcode.FFMA, dst=1, a=2, b=3, c=4), 0x0000_0403_0201_0033),
    # mov r0, 0xffffffff
    (Instruction(Opcode.MOV, dst=1, bimm=True, imm=0xFFFFFFFF), 0xFFFF_FFFF_0001_0101),
    # stg.c15 [|7|+32767], |1|   (DFLOW: field = distance)
    (Instruction(Opcode.STG, a=7, b=1, mod=15, imm=32767), 0x7FFF_0001_0700_F041),
    # sts [rz-32768], rz
    (Instruction(Opcode.STS, imm=-32768), 0x8000_0000_0000_0043),
    # s2r r9, %nwarpid
    (Instruction(Opcode.S2R, dst=10, mod=14), 0x0000_0000_000A_E002),
    # rpinc 255
    (Instruction(Opcode.RPINC, bimm=True, imm=255), 0x0000_00FF_0000_0158),
    # exit
    (Instruction(Opcode.EXIT), 0x0000_0000_0000_0057),
    # selp with every operand field at its maximum
    (Instruction(Opcode.SELP, dst=255, a=255, b=255, c=255), 0x0000_FFFF_FFFF_0004),
    # imad |1|, c[5], %nwarpid   (uniform-operands: flags b and c, bits 10 and 11; 64 + 10 = 0x4a)
    (Instruction(Opcode.IMAD, a=1, b=5, c=74, uniform=6), 0x0000_4A05_0100_0C13),
    # ldg [c[0]+8]   (flag a, bit 9: parameter word 0)
    (Instruction(Opcode.LDG, a=0, imm=8, uniform=1), 0x0008_0000_0000_0240),
]


@pytest.mark.parametrize("ins, word", HAND_WORDS, ids=[f"{i.op.name.lower()}-{w:#x}" for i, w in HAND_WORDS])
def test_hand_computed_words(ins, word):
    assert ins.encode() == word
    assert Instruction.decode(word) == ins


# --------------------------------------------------------------------------------------------
# Every opcode: round trip and field positions
# --------------------------------------------------------------------------------------------

REGISTER_FIELDS = [
    dict(dst=0, a=0, b=0, c=0, mod=0, imm=0),
    dict(dst=1, a=2, b=3, c=4, mod=5, imm=6),
    dict(dst=255, a=254, b=253, c=252, mod=15, imm=0),
    dict(dst=0x5A, a=0xA5, b=0x0F, c=0xF0, mod=9, imm=-1),
]


def check_positions(ins: Instruction, word: int) -> None:
    assert field(word, "op") == int(ins.op)
    assert field(word, "bimm") == int(ins.bimm)
    assert field(word, "uniform") == ins.uniform
    assert field(word, "mod") == ins.mod
    assert field(word, "dst") == ins.dst
    assert field(word, "a") == ins.a
    if ins.bimm:
        assert field(word, "imm32") == ins.imm & 0xFFFFFFFF
    else:
        assert field(word, "b") == ins.b
        assert field(word, "c") == ins.c
        assert field(word, "imm16") == ins.imm & 0xFFFF


@pytest.mark.parametrize("fields", REGISTER_FIELDS, ids=lambda f: f"dst{f['dst']}-a{f['a']}-imm{f['imm']}")
@pytest.mark.parametrize("op", ALL_OPS, ids=op_id)
def test_register_style_round_trip(op, fields):
    ins = canonical(op, **fields)
    word = ins.encode()
    assert 0 <= word < 1 << 64
    check_positions(ins, word)
    assert Instruction.decode(word) == ins
    assert Instruction.decode(word).encode() == word


BIMM_OPS = [op for op in ALL_OPS if canonical(op, bimm=True).bimm]


@pytest.mark.parametrize("imm", [0, 1, 100, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF])
@pytest.mark.parametrize("op", BIMM_OPS, ids=op_id)
def test_bimm_round_trip(op, imm):
    ins = canonical(op, dst=7, a=3, mod=1, bimm=True, imm=imm)
    word = ins.encode()
    check_positions(ins, word)
    assert word >> 32 == imm
    decoded = Instruction.decode(word)
    assert decoded == ins
    assert (decoded.b, decoded.c, decoded.bimm, decoded.imm) == (0, 0, True, imm)


@pytest.mark.parametrize("imm, bits", [(-1, 0xFFFFFFFF), (-(1 << 31), 0x80000000), (-100, 0xFFFFFF9C)])
def test_bimm_negative_immediate_is_stored_as_its_32_bit_pattern(imm, bits):
    word = Instruction(Opcode.MOV, dst=1, bimm=True, imm=imm).encode()
    assert word >> 32 == bits
    assert Instruction.decode(word).imm == bits


@pytest.mark.parametrize("imm", [-32768, -32767, -4, -1, 0, 4, 32766, 32767])
@pytest.mark.parametrize("op", MEMORY_OPS, ids=op_id)
def test_memory_offset_round_trip(op, imm):
    ins = Instruction(op, dst=3 if SPECS[op].produces else 0, a=9, b=0 if SPECS[op].produces else 4,
                      mod=12, imm=imm)
    word = ins.encode()
    check_positions(ins, word)
    assert field(word, "imm16") == imm & 0xFFFF
    decoded = Instruction.decode(word)
    assert decoded == ins
    assert decoded.imm == imm  # signed on the way back


# --------------------------------------------------------------------------------------------
# Encoding errors
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["dst", "a", "b", "c"])
@pytest.mark.parametrize("value", [256, 1000, -1])
def test_encode_rejects_operand_field_out_of_range(name, value):
    with pytest.raises(EncodingError, match=rf"operand field {name}={value} does not fit in 8 bits"):
        Instruction(Opcode.IMAD, **{name: value}).encode()


@pytest.mark.parametrize("mod", [16, 255, -1])
def test_encode_rejects_mod_out_of_range(mod):
    with pytest.raises(EncodingError, match=rf"mod={mod} does not fit in 4 bits"):
        Instruction(Opcode.LDG, dst=1, a=1, mod=mod).encode()


@pytest.mark.parametrize("imm", [32768, -32769, 65535, 1 << 20, -(1 << 20)])
def test_encode_rejects_imm16_out_of_range(imm):
    with pytest.raises(EncodingError, match=rf"offset {imm} does not fit in a signed 16-bit field"):
        Instruction(Opcode.STG, a=1, b=2, imm=imm).encode()


@pytest.mark.parametrize("imm", [1 << 32, (1 << 32) + 5, -(1 << 31) - 1])
def test_encode_rejects_imm32_out_of_range(imm):
    with pytest.raises(EncodingError, match=rf"immediate {imm} does not fit in 32 bits"):
        Instruction(Opcode.MOV, dst=1, bimm=True, imm=imm).encode()


@pytest.mark.parametrize("b, c", [(1, 0), (0, 1), (255, 255)])
def test_encode_rejects_bimm_with_b_or_c(b, c):
    with pytest.raises(EncodingError, match="32-bit immediate has no B or C operand"):
        Instruction(Opcode.IADD, dst=1, a=1, b=b, c=c, bimm=True, imm=5).encode()


def test_encoding_error_is_a_dualflow_error():
    assert issubclass(EncodingError, DualflowError)


# --------------------------------------------------------------------------------------------
# Decoding errors
# --------------------------------------------------------------------------------------------

def test_unknown_codes_are_exactly_the_unassigned_bytes():
    assert len(UNKNOWN_CODES) == 256 - 51
    assert 0x06 in UNKNOWN_CODES and 0x59 in UNKNOWN_CODES and 0xFF in UNKNOWN_CODES


@pytest.mark.parametrize("code", UNKNOWN_CODES, ids=lambda c: f"{c:#04x}")
def test_decode_rejects_unknown_opcode(code):
    word = code | (5 << 16) | (3 << 24)
    with pytest.raises(EncodingError, match=rf"unknown opcode {code:#04x} in word {word:#018x}"):
        Instruction.decode(word)


@pytest.mark.parametrize("flags", range(1, 8))
@pytest.mark.parametrize("op", [Opcode.NOP, Opcode.IADD, Opcode.LDG, Opcode.RPINC, Opcode.SSY, Opcode.FFMA],
                         ids=op_id)
def test_decode_takes_uniform_flags_only_on_source_fields(op, flags):
    """A flag is legal on a field the opcode reads as a source (not B when it is an immediate):
    iadd with bimm reads only A, ldg only its base, ffma all three; nop, rpinc and ssy none
    (ssy's field A is its reserved advance, not a source)."""
    good = canonical(op, dst=1, a=2, b=3, c=4).encode()
    word = good | (flags << FIELDS["uniform"][0])
    readable = {Opcode.IADD: 0b011, Opcode.LDG: 0b001, Opcode.FFMA: 0b111}.get(op, 0)
    if flags & ~readable:
        with pytest.raises(EncodingError, match=rf"word {word:#018x}: {op.name.lower()}: uniform flag on field "):
            Instruction.decode(word)
    else:
        ins = Instruction.decode(word)
        assert ins.uniform == flags and ins.encode() == word


@pytest.mark.parametrize("value, ok", [(0, True), (63, True), (64, True), (74, True), (75, False), (255, False)])
def test_uniform_operand_values_in_range(value, ok):
    """0..63 name parameter words, 64..74 the eleven uniform special registers; nothing beyond."""
    ins = Instruction(Opcode.IADD, a=value, b=1, uniform=1)
    if ok:
        assert Instruction.decode(ins.encode()) == ins
        assert ins.source_fields() == [1]  # the uniform operand is no ring or register read
    else:
        with pytest.raises(EncodingError, match=rf"iadd: uniform operand a={value} names nothing \(0..63: "
                                                r"parameter words, 64..74: uniform special registers\)"):
            ins.encode()


def test_uniform_flag_on_an_immediate_b_is_rejected():
    word = Instruction(Opcode.IADD, a=1, bimm=True, imm=5).encode() | (0b010 << FIELDS["uniform"][0])
    with pytest.raises(EncodingError, match="iadd: uniform flag on field b, which it does not read as a source"):
        Instruction.decode(word)


@pytest.mark.parametrize("word", [-1, 1 << 64, (1 << 64) + 0x10])
def test_decode_rejects_values_that_are_not_64_bit_words(word):
    with pytest.raises(EncodingError, match="is not a 64-bit value"):
        Instruction.decode(word)


def test_decode_of_bimm_word_reads_bits_63_32_as_the_immediate():
    # b, c and imm16 bit positions are all part of the immediate when bimm = 1
    word = 0x1234_5678_0302_0110  # iadd, bimm, dst 2, a 3
    ins = Instruction.decode(word)
    assert ins == Instruction(Opcode.IADD, dst=2, a=3, b=0, c=0, mod=0, bimm=True, imm=0x12345678)


def test_decode_sign_extends_imm16():
    assert Instruction.decode(0x8000_0000_0102_0040).imm == -32768
    assert Instruction.decode(0x7FFF_0000_0102_0040).imm == 32767
    assert Instruction.decode(0xFFFF_0000_0102_0040).imm == -1


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

byte = st.integers(0, 255)


@st.composite
def instructions(draw):
    op = draw(st.sampled_from(ALL_OPS))
    common = dict(dst=draw(byte), a=draw(byte), mod=draw(st.integers(0, 15)))
    if draw(st.booleans()):
        ins = canonical(op, **common, bimm=True, imm=draw(st.integers(0, (1 << 32) - 1)))
    else:
        ins = canonical(op, **common, b=draw(byte), c=draw(byte), imm=draw(st.integers(-32768, 32767)))
    # uniform-operands: some of the fields read as sources name a parameter word or special register
    flags, values = 0, {}
    for bit, name in enumerate("abc"):
        if name in ins.spec.sources and not (name == "b" and ins.bimm) and draw(st.booleans()):
            flags |= 1 << bit
            values[name] = draw(st.integers(0, 74))
    return dataclasses.replace(ins, uniform=flags, **values)


@settings(max_examples=200, deadline=None, database=None)
@given(instructions())
def test_property_round_trip(ins):
    word = ins.encode()
    check_positions(ins, word)
    assert Instruction.decode(word) == ins


@st.composite
def valid_words(draw):
    code = draw(st.sampled_from(sorted(KNOWN_CODES)))
    rest = draw(st.integers(0, (1 << 56) - 1))
    word = code | (rest << 8)
    return word  # uniform flags too: decode refuses those on a field that is no source


@settings(max_examples=500, deadline=None, database=None)
@given(valid_words())
def test_property_every_accepted_word_reencodes_to_itself(word):
    """Decode rejects a word or gives an instruction that encodes back to exactly that word."""
    try:
        ins = Instruction.decode(word)
    except EncodingError:
        return
    assert ins.encode() == word


# --------------------------------------------------------------------------------------------
# Canonical fields: decode rejects what the opcode does not use
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ins, message", [
    (Instruction(Opcode.ISETP, dst=1, a=1, b=1, mod=6), "isetp: mod=6 is not a valid cmp value"),
    (Instruction(Opcode.FSETP, dst=1, a=1, b=1, mod=14), "fsetp: mod=14 is not a valid cmp value"),
    (Instruction(Opcode.VOTE, dst=1, a=1, mod=3), "vote: mod=3 is not a valid vote value"),
    (Instruction(Opcode.S2R, dst=1, mod=15), "s2r: mod=15 is not a valid sreg value"),
    (Instruction(Opcode.IADD, dst=1, a=1, b=1, mod=1), "iadd: mod=1 is not a valid none value"),
    (Instruction(Opcode.STG, dst=3, a=1, b=1), "stg writes no value but dst=3"),
    (Instruction(Opcode.MOV, dst=1, a=2, b=1), "mov has no source A but a=2"),
    (Instruction(Opcode.IADD, dst=1, a=1, b=1, c=9), "iadd has no source C but c=9"),
    (Instruction(Opcode.INOT, dst=1, a=1, b=4), "inot has no source B but b=4"),
    (Instruction(Opcode.LDG, dst=1, a=1, bimm=True, imm=4), "ldg takes no 32-bit immediate"),
    (Instruction(Opcode.BRA, imm=3), "bra needs its 32-bit immediate"),
    (Instruction(Opcode.IADD, dst=1, a=1, b=1, imm=8), "iadd has no memory offset but imm16=8"),
])
def test_fields_an_opcode_does_not_use_are_rejected(ins, message):
    with pytest.raises(EncodingError, match=message):
        ins.encode()
    word = (int(ins.op) | (int(ins.bimm) << 8) | (ins.mod << 12) | (ins.dst << 16) | (ins.a << 24)
            | (((ins.imm & 0xFFFFFFFF) << 32) if ins.bimm else
               (ins.b << 32) | (ins.c << 40) | ((ins.imm & 0xFFFF) << 48)))
    with pytest.raises(EncodingError, match=message):
        Instruction.decode(word)

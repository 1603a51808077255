"""The RTL decoder (dualflow/rtl/decode.py) against the Python decoder (dualflow/isa/encoding.py), exhaustively over
every opcode byte, every ``mod`` value and each field set on its own, with and without ``bimm``.
``ssy``'s field A is its reserved advance (``reserved-ssy``, a DFLOW variant): the decoder gives it
as ``advance``, not as source A, and a BASE core refuses it. A uniform-operand flag (bits 11:9,
``uniform-operands``) makes a word illegal in a core built without the variant; a core built with
it (``CoreParams.uniform_operands``) accepts the flags ``Instruction.check_fields`` accepts and
passes them on.
A DFLOW word's dst field holds the hand selectors of ``hands``: illegal in a core of one ring, legal
in a core with hands where ``Instruction.check_form`` accepts them for that many hands."""

from __future__ import annotations

import dataclasses
import random

import pytest
from amaranth.sim import Simulator

from dualflow.isa import FIELDS, SPECS, Form, Instruction, Opcode
from dualflow.isa.encoding import UNIFORM_MAX, EncodingError
from dualflow.isa.opcodes import LOADS, STORES
from dualflow.rtl.decode import SPACE_CODES, UNIT_CODES, Decoder


def _word(**fields: int) -> int:
    word = 0
    for name, value in fields.items():
        lsb, width = FIELDS[name]
        word |= (value & ((1 << width) - 1)) << lsb
    return word


def _vectors() -> list[int]:
    rng = random.Random(1)
    words = []
    for op in range(256):
        for mod in range(16):
            words.append(_word(op=op, mod=mod))
        for bimm in (0, 1):
            for name in ("dst", "a", "b", "c", "imm16", "uniform", "imm32"):
                value = rng.randrange(1, 1 << FIELDS[name][1])
                words.append(_word(op=op, bimm=bimm, **{name: value}))
            # every field at once, as a real three-operand or immediate instruction would
            words.append(_word(op=op, bimm=bimm, dst=rng.randrange(256), a=rng.randrange(256),
                               b=rng.randrange(256), c=rng.randrange(256), imm16=rng.randrange(1 << 16)))
    for op, spec in SPECS.items():  # legal words with random operands, 40 per opcode
        items = spec.syntax.value
        for _ in range(40):
            needs_imm = any(i in items for i in ("target", "param", "count"))
            bimm = needs_imm or ("bi" in items and rng.random() < 0.5)
            mem = "mem" in items
            try:
                ins = Instruction(
                    op=op, dst=rng.randrange(256) if spec.produces else 0,
                    a=rng.randrange(256) if ("a" in items or mem or "advance" in items) else 0,
                    b=rng.randrange(256) if ("b" in items or "bi" in items) and not bimm else 0,
                    c=rng.randrange(256) if "c" in items else 0, mod=rng.randrange(16),
                    bimm=bimm, imm=rng.randrange(1 << 32) if bimm else (rng.randrange(-32768, 32768) if mem else 0),
                )
                words.append(ins.encode())
                if ins.dst:  # legal in a DFLOW core of one ring only without a destination field
                    words.append(dataclasses.replace(ins, dst=0).encode())
                # hand selectors at random (DFLOW hands: legal or not as check_form says)
                words.append(ins.encode() & ~_word(dst=255) | _word(dst=rng.randrange(256)))
                words.append(ins.encode() & ~_word(dst=255) | _word(dst=rng.randrange(4)))
                # uniform flags on random fields, naming something (or, now and then, nothing)
                flags = rng.randrange(1, 8)
                top = UNIFORM_MAX if rng.random() < 0.9 else 255
                named = {f: rng.randrange(top + 1) for i, f in enumerate("abc") if flags >> i & 1}
                words.append(dataclasses.replace(ins, uniform=flags, **named).encode())
                words.append(dataclasses.replace(ins, uniform=flags, dst=0, **named).encode())
            except EncodingError:
                continue  # an undefined mod value drawn at random: covered by the mod sweep above
    return words


def _expected(word: int, form: Form, hands: int = 1, uniform: bool = False) -> dict | None:
    try:
        ins = Instruction.decode(word, form)
    except EncodingError:
        return None
    spec = SPECS[ins.op]
    if form not in spec.forms or (ins.uniform and not uniform):  # uniform-operands: only a core built with it
        return None
    if form is Form.DFLOW and ins.dst:  # hand selectors: only in a core with hands, as check_form says
        if hands == 1:
            return None
        try:
            ins.check_form(form, hands)
        except EncodingError:
            return None
    space = LOADS.get(ins.op) or STORES.get(ins.op) or "global"
    a, advance = ins.a, 0
    if "advance" in spec.syntax.value:  # ssy's reserved advance: a DFLOW variant, not a source
        if form is Form.REG and ins.a:
            return None
        a, advance = 0, ins.a
    return {"op": int(ins.op), "unit": UNIT_CODES[spec.unit], "produces": int(spec.produces), "mod": ins.mod,
            "dst": ins.dst, "a": a, "b": ins.b, "c": ins.c, "advance": advance, "imm": ins.imm & 0xFFFFFFFF,
            "bimm": int(ins.bimm),
            "is_load": int(ins.op in LOADS), "is_store": int(ins.op in STORES), "space": SPACE_CODES[space],
            "uniform": ins.uniform}


@pytest.mark.parametrize("form, hands, uniform", [
    (Form.REG, 1, False), (Form.DFLOW, 1, False), (Form.DFLOW, 2, False), (Form.DFLOW, 3, False),
    (Form.DFLOW, 4, False), (Form.DFLOW, 1, True), (Form.DFLOW, 3, True)])
def test_decoder_matches_python_decoder(form: Form, hands: int, uniform: bool):
    dut = Decoder(distance_operands=form is Form.DFLOW, hands=hands, uniform=uniform)
    words = _vectors()
    failures: list[str] = []
    checked = [0]
    uniform_legal = [0]

    async def bench(ctx):
        for word in words:
            ctx.set(dut.word, word)
            out = ctx.get(dut.out)
            want = _expected(word, form, hands, uniform)
            if want is None:
                if not out.illegal:
                    failures.append(f"{word:#018x}: Python rejects it, RTL does not flag illegal")
                continue
            if out.illegal:
                failures.append(f"{word:#018x}: RTL flags a legal word illegal")
                continue
            got = {"op": out.op.value, "unit": out.unit.value, "produces": out.produces, "mod": out.mod,
                   "dst": out.dst, "a": out.a, "b": out.b, "c": out.c,
                   "advance": out.advance if dut.distance_operands else 0, "imm": out.imm, "bimm": out.bimm,
                   "is_load": out.is_load, "is_store": out.is_store, "space": out.space.value,
                   "uniform": out.uniform if uniform else 0}
            uniform_legal[0] += bool(want["uniform"])
            diff = {k: (want[k], got[k]) for k in want if int(want[k]) != int(got[k])}
            if diff:
                failures.append(f"{word:#018x}: (python, rtl) differ in {diff}")
            checked[0] += 1

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    assert not failures, f"{len(failures)} of {len(words)} words differ, e.g.:\n" + "\n".join(failures[:10])
    assert checked[0] > 800  # many legal words were compared field by field
    assert (uniform_legal[0] > 100) is uniform  # and, in a core with the variant, many with uniform operands


def test_uniform_decoder_needs_dflow():
    from dualflow.common.errors import ConfigError

    with pytest.raises(ConfigError, match="uniform must be a bool, True only in DFLOW"):
        Decoder(distance_operands=False, uniform=True)


def test_every_opcode_decodes_legal():
    """One canonical word per opcode is legal (guards against an over-strict decoder)."""
    dut = Decoder(distance_operands=True)
    ops = list(Opcode)
    bad: list[str] = []

    async def bench(ctx):
        for op in ops:
            ins = Instruction(op=op, bimm=op in (Opcode.BRA, Opcode.BRNZ, Opcode.BRZ, Opcode.SSY, Opcode.LDC,
                                                  Opcode.RPINC), imm=1 if op is Opcode.RPINC else 0)
            ctx.set(dut.word, ins.encode())
            if ctx.get(dut.out.illegal):
                bad.append(op.name)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    assert not bad, bad

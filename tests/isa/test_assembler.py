"""Assembler and disassembler (dualflow/isa/assembler.py, dualflow/isa/disassembler.py) against docs/isa.md:
round trips of the samples and of random programs, the meaning of each operand syntax, and the
file:line:column of every error."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import REPO

from dualflow.common.errors import AsmError, DualflowError
from dualflow.isa import (
    DEFAULT_DMAX,
    DEFAULT_RING,
    SPECS,
    Cmp,
    Form,
    Instruction,
    Module,
    Opcode,
    SpecialReg,
    assemble,
    assemble_file,
    disassemble,
)
from dualflow.isa.opcodes import INT_CMPS, UNIFORM_SREGS, ModKind, UnitClass, Variant, VoteMode

SAMPLE_DIR = REPO / "dualflow" / "kernels" / "samples"
SAMPLES = sorted(SAMPLE_DIR.glob("*.s"))

REG = ".kernel k\n"
DFLOW = ".kernel k\n.form dflow\n"


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def words(module: Module) -> dict[str, list[int]]:
    return {k.name: k.words() for k in module}


def metadata(module: Module) -> dict[str, dict]:
    return {k.name: k.metadata() for k in module}


def one(src: str) -> Instruction:
    """The first instruction of a one-kernel source."""
    return assemble(src).only.code[0]


def asm_error(src: str, path: str = "t.s") -> AsmError:
    with pytest.raises(AsmError) as info:
        assemble(src, path)
    return info.value


# --------------------------------------------------------------------------------------------
# (a) Round trips of the sample programs
# --------------------------------------------------------------------------------------------

def test_sample_files_present():
    assert [p.name for p in SAMPLES] == [
        "divloop.dflow.s", "divloop.reg.s", "reduce.dflow.s", "reduce.reg.s", "vadd.dflow.s", "vadd.reg.s"]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_text_round_trip(path):
    module = assemble_file(path)
    assert module.path == str(path)
    text = disassemble(module)
    again = assemble(text, "disassembled.s")
    assert list(again.kernels) == list(module.kernels)
    assert words(again) == words(module)
    assert metadata(again) == metadata(module)
    # and a second lap is a fixed point of the text
    assert disassemble(again) == text


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_sample_binary_container_round_trip(path):
    module = assemble_file(path)
    data = module.to_bytes()
    assert data[:4] == b"DFLW"
    assert struct.unpack_from("<I", data, 4)[0] == 1
    back = Module.from_bytes(data, "x.bin")
    assert back.path == "x.bin"
    assert words(back) == words(module)
    assert metadata(back) == metadata(module)
    for k in back:
        assert k.code == module[k.name].code
    # the binary disassembles to text that reassembles to the same words
    assert words(assemble(disassemble(back))) == words(module)
    # the words are the last 8*n bytes, little-endian
    n = sum(len(k.code) for k in module)
    tail = struct.unpack(f"<{n}Q", data[-8 * n:])
    assert list(tail) == [w for k in module for w in k.words()]


SAMPLE_FACTS = {
    # file: (kernel, form, instructions, regs or (ring, dmax), params, shared)
    "vadd.reg.s": ("vadd", Form.REG, 19, 13, ["a", "b", "c", "n"], 0),
    "vadd.dflow.s": ("vadd", Form.DFLOW, 19, (32, 31), ["a", "b", "c", "n"], 0),
    "reduce.reg.s": ("reduce", Form.REG, 38, 18, ["in", "out", "n"], 512),
    "reduce.dflow.s": ("reduce", Form.DFLOW, 49, (32, 31), ["in", "out", "n"], 512),
    "divloop.reg.s": ("divloop", Form.REG, 26, 15, ["x", "out", "n"], 0),
    "divloop.dflow.s": ("divloop", Form.DFLOW, 32, (32, 31), ["x", "out", "n"], 0),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_FACTS))
def test_sample_metadata(name):
    kname, form, count, storage, params, shared = SAMPLE_FACTS[name]
    k = assemble_file(SAMPLE_DIR / name).only
    assert (k.name, k.form, len(k.code), k.params, k.shared_bytes, k.local_bytes) == (
        kname, form, count, params, shared, 0)
    if form is Form.REG:
        assert k.regs == storage
    else:
        assert (k.ring, k.dmax) == storage
        assert all(ins.dst == 0 for ins in k.code)


def test_sample_first_words_hand_checked():
    reg = assemble_file(SAMPLE_DIR / "vadd.reg.s").only
    # s2r r0, %tid.x ; imad r3, r1, r2, r0 ; ldc r4, n ; isetp.ge r5, r3, r4 ; brnz r5, DONE
    assert reg.code[0] == Instruction(Opcode.S2R, dst=1, mod=int(SpecialReg.TID_X))
    assert reg.code[3] == Instruction(Opcode.IMAD, dst=4, a=2, b=3, c=1)
    assert reg.code[4] == Instruction(Opcode.LDC, dst=5, bimm=True, imm=12)
    assert reg.code[5] == Instruction(Opcode.ISETP, dst=6, a=4, b=5, mod=int(Cmp.GE))
    assert reg.code[6] == Instruction(Opcode.BRNZ, a=6, bimm=True, imm=18)
    assert reg.labels == {18: "DONE"}
    dflow = assemble_file(SAMPLE_DIR / "vadd.dflow.s").only
    # imad |2|, |1|, |3| ; ldg [|1|] ; stg [|1|], |3|
    assert dflow.code[3] == Instruction(Opcode.IMAD, a=2, b=1, c=3)
    assert dflow.code[10] == Instruction(Opcode.LDG, a=1)
    assert dflow.code[17] == Instruction(Opcode.STG, a=1, b=3)


def test_multi_kernel_file_round_trip():
    src = "".join(p.read_text().replace(".kernel ", f".kernel {p.name.split('.')[1]}_") for p in SAMPLES)
    module = assemble(src, "all.s")
    assert len(module.kernels) == 6
    assert words(assemble(disassemble(module))) == words(module)
    back = Module.from_bytes(module.to_bytes())
    assert list(back.kernels) == list(module.kernels)
    assert words(back) == words(module)
    assert metadata(back) == metadata(module)


# --------------------------------------------------------------------------------------------
# (b) Random programs in both forms, generated from the SPECS table
# --------------------------------------------------------------------------------------------

PARAM_POOL = ["a", "b", "n", "out", "in_ptr", "x$1", "p.q", "_z"]
LABEL_PREFIXES = ["L", ".L", "loop_", "$x", "Exit", "a.b"]
SREGS = list(SpecialReg)


@st.composite
def source_operand(draw, form: Form, dmax: int, used: list[int]):
    """(text, field) of a source operand."""
    if draw(st.integers(0, 9)) == 0:
        return "rz", 0
    if form is Form.REG:
        reg = draw(st.integers(0, 254))
        used.append(reg)
        return f"r{reg}", reg + 1
    d = draw(st.integers(1, dmax))
    return draw(st.sampled_from([f"|{d}|", f"| {d} |", f"|{d} |"])), d


@st.composite
def immediate(draw, unit: UnitClass):
    """(text, 32-bit pattern) of an immediate, in every accepted spelling."""
    kinds = ["dec", "neg", "hex", "bits", "negbits"]
    if unit in (UnitClass.FP, UnitClass.SFU):
        kinds += ["float", "float", "sci"]
    kind = draw(st.sampled_from(kinds))
    fp = unit in (UnitClass.FP, UnitClass.SFU)
    if kind == "dec":
        v = draw(st.integers(0, (1 << 32) - 1))
        return str(v), f32(float(v)) if fp else v  # on FP operations a decimal integer is a float
    if kind == "neg":
        v = draw(st.integers(-(1 << 31), -1))
        return str(v), f32(float(v)) if fp else v & 0xFFFFFFFF
    if kind == "hex":
        return _hex_pair(draw, draw(st.integers(0, (1 << 32) - 1)))
    if kind in ("bits", "negbits"):
        v = draw(st.integers(0, (1 << 32) - 1))
        if kind == "negbits":
            return f"-0f{v:08x}", v ^ 0x80000000
        return f"0f{v:08X}" if draw(st.booleans()) else f"0f{v:08x}", v
    if kind == "float":
        x = draw(st.floats(width=32, allow_nan=False, allow_infinity=True))
        return repr(x), f32(x)
    mantissa = draw(st.integers(-99999, 99999))
    exp = draw(st.integers(-40, 38))
    text = f"{mantissa / 1000:.3f}e{exp}"
    value = float(text)
    if abs(value) > 3.4028234663852886e38:
        text, value = "1.5e-3", 1.5e-3
    return text, f32(value)


def _hex_pair(draw, v: int) -> tuple[str, int]:
    style = draw(st.sampled_from(["lower", "upper", "neg"]))
    if style == "lower":
        return f"{v:#x}", v
    if style == "upper":
        return f"0X{v:X}", v
    v = min(v, 1 << 31)
    return f"-{v:#x}", (-v) & 0xFFFFFFFF


@st.composite
def memory_operand(draw, form: Form, dmax: int, used: list[int]):
    """(text, a field, offset)."""
    off = draw(st.integers(-32768, 32767))
    base_text, a = draw(source_operand(form, dmax, used))
    style = draw(st.sampled_from(["plain", "signed", "spaced", "hex", "nobase"]))
    if style == "plain" or (off == 0 and style != "nobase"):
        if off == 0:
            return f"[{base_text}]", a, 0
        style = "signed"
    sign = "-" if off < 0 else "+"
    mag = abs(off)
    if style == "signed":
        return f"[{base_text}{sign}{mag}]", a, off
    if style == "spaced":
        return f"[ {base_text} {sign} {mag} ]", a, off
    if style == "hex":
        return f"[{base_text}{sign}{mag:#x}]", a, off
    # no base register: [off] or [-off]
    if a and form is Form.REG:
        used.pop()
    return (f"[{off}]" if off >= 0 else f"[-{mag}]"), 0, off


@st.composite
def uniform_source(draw, params: list[str]):
    """(text, field) of a uniform operand (``uniform-operands``): a parameter word by name or
    number, or a uniform special register."""
    if draw(st.booleans()):
        s = draw(st.sampled_from(UNIFORM_SREGS))
        return s.asm_name, 64 + UNIFORM_SREGS.index(s)
    i = draw(st.integers(0, len(params) - 1))
    return (f"c[{params[i]}]" if draw(st.booleans()) else f"c[{i}]"), i


def suffix_for(draw, op: Opcode) -> tuple[str, int]:
    spec = SPECS[op]
    if spec.mod is ModKind.CMP:
        choices = sorted(INT_CMPS) if op in (Opcode.ISETP, Opcode.USETP) else list(Cmp)
        c = draw(st.sampled_from(choices))
        return "." + c.name.lower(), int(c)
    if spec.mod is ModKind.VOTE:
        v = draw(st.sampled_from(list(VoteMode)))
        return "." + v.name.lower(), int(v)
    if spec.mod is ModKind.COLOR:
        color = draw(st.integers(-1, 15))
        return ("", 0) if color < 0 else (f".c{color}", color)
    return "", 0


@st.composite
def instruction_line(draw, form: Form, dmax: int, params: list[str], labels: dict[str, int],
                     used: list[int], variants: frozenset[Variant] = frozenset()):
    """(text, expected Instruction) of one random instruction line (in a kernel declaring ``variants``)."""
    ops = [op for op, spec in SPECS.items() if form in spec.forms]
    op = draw(st.sampled_from(ops))
    spec = SPECS[op]
    suffix, mod = suffix_for(draw, op)
    fields: dict = {"op": op, "mod": mod}
    texts: list[str] = []
    if spec.produces and form is Form.REG:
        if draw(st.integers(0, 9)) == 0:
            texts.append("rz")
            fields["dst"] = 0
        else:
            reg = draw(st.integers(0, 254))
            used.append(reg)
            texts.append(f"r{reg}")
            fields["dst"] = reg + 1
    uniform = Variant.UNIFORM_OPERANDS in variants

    def source(name: str):
        if uniform and draw(st.integers(0, 2)) == 0:
            fields["uniform"] = fields.get("uniform", 0) | {"a": 1, "b": 2, "c": 4}[name]
            return draw(uniform_source(params))
        return draw(source_operand(form, dmax, used))

    for item in spec.syntax.value:
        if item in ("a", "b", "c"):
            text, fields[item] = source(item)
        elif item == "bi":
            if draw(st.booleans()):
                text, fields["b"] = source("b")
            else:
                text, fields["imm"] = draw(immediate(spec.unit))
                fields["bimm"] = True
        elif item == "mem":
            text, fields["a"], fields["imm"] = draw(memory_operand(form, dmax, used))
            if uniform and text.startswith("[|") and draw(st.integers(0, 2)) == 0:  # the base a uniform operand
                base, fields["a"] = draw(uniform_source(params))
                text = "[" + base + text[text.index("|", 2) + 1:]
                fields["uniform"] = fields.get("uniform", 0) | 1
        elif item == "target":
            text = draw(st.sampled_from(sorted(labels)))
            fields["bimm"], fields["imm"] = True, labels[text]
        elif item == "sreg":
            s = draw(st.sampled_from(SREGS))
            text, fields["mod"] = s.asm_name, int(s)
        elif item == "param":
            i = draw(st.integers(0, len(params) - 1))
            text = params[i] if draw(st.booleans()) else f"[{4 * i}]"
            fields["bimm"], fields["imm"] = True, 4 * i
        elif item == "count":
            n = draw(st.integers(1, 255))
            text = str(n) if draw(st.booleans()) else hex(n)
            fields["bimm"], fields["imm"] = True, n
        elif item == "advance":
            if Variant.RESERVED_SSY not in variants or draw(st.booleans()):
                continue  # optional: none is 0
            fields["a"] = draw(st.integers(0, 255))
            text = str(fields["a"])
        else:  # pragma: no cover
            raise AssertionError(item)
        texts.append(text)
    sep = draw(st.sampled_from([", ", ",", " , "]))
    mnemonic = spec.mnemonic + suffix
    line = f"{mnemonic} {sep.join(texts)}" if texts else mnemonic
    return line, Instruction(**fields)


@st.composite
def kernel_source(draw, name: str):
    """(source text, expected kernel facts) of one random kernel in either form."""
    form = draw(st.sampled_from([Form.REG, Form.DFLOW]))
    n = draw(st.integers(1, 10))
    params = draw(st.lists(st.sampled_from(PARAM_POOL), min_size=1, max_size=4, unique=True))
    dmax = draw(st.integers(1, 255)) if form is Form.DFLOW else DEFAULT_DMAX
    ring = dmax + draw(st.integers(1, 40)) if form is Form.DFLOW else DEFAULT_RING
    # labels: pc -> names (pc 0 always labelled, so every target has somewhere to go)
    at: dict[int, list[str]] = {0: [f"{name}_top"]}
    counter = 0
    for pc in range(n):
        for _ in range(draw(st.integers(0, 2))):
            prefix = draw(st.sampled_from(LABEL_PREFIXES))
            at.setdefault(pc, []).append(f"{prefix}{name}{counter}")
            counter += 1
    labels = {lab: pc for pc, names in at.items() for lab in names}
    used: list[int] = []
    lines = [f".kernel {name}"]
    if form is Form.DFLOW or draw(st.booleans()):
        lines.append(f".form {form.value}")
    lines.append(".param " + " ".join(params))
    shared = 4 * draw(st.integers(0, 64))
    local = 4 * draw(st.integers(0, 64))
    if shared:
        lines.append(f".shared {shared}")
    if local:
        lines.append(f".local {local}")
    variants: frozenset[Variant] = frozenset()
    if form is Form.DFLOW:
        lines += [f".ring {ring}", f".dmax {dmax}"]
        variants = frozenset(draw(st.sets(st.sampled_from(list(Variant)))))
        if variants:
            lines.append(".variant " + " ".join(v.value for v in variants))
    expected = []
    comment = st.sampled_from(["", "  ; c", " // c, d", "\t# x: y"])
    for pc in range(n):
        text, ins = draw(instruction_line(form, dmax, params, labels, used, variants))
        expected.append(ins)
        names = at.get(pc, [])
        own_line = draw(st.integers(0, len(names)))
        for lab in names[:own_line]:
            lines.append(f"{lab}:{draw(comment)}")
        inline = "".join(f"{lab}: " for lab in names[own_line:])
        lines.append(f"    {inline}{text}{draw(comment)}")
    regs = max(used, default=-1) + 1
    if form is Form.REG and draw(st.booleans()):
        regs += draw(st.integers(0, 255 - regs))
        lines.insert(2, f".regs {regs}")
    facts = dict(form=form, params=params, shared=shared, local=local, regs=regs, ring=ring, dmax=dmax,
                 code=expected, labels=labels, variants=variants)
    return "\n".join(lines) + "\n", facts


@st.composite
def module_source(draw):
    count = draw(st.integers(1, 2))
    parts = [draw(kernel_source(f"k{i}")) for i in range(count)]
    return "".join(text for text, _ in parts), [facts for _, facts in parts]


@settings(max_examples=200, deadline=None, database=None)
@given(module_source())
def test_property_random_programs_assemble_and_round_trip(case):
    src, facts = case
    module = assemble(src, "random.s")
    assert list(module.kernels) == [f"k{i}" for i in range(len(facts))]
    for k, fact in zip(module, facts):
        assert k.code == fact["code"], src
        assert k.form is fact["form"]
        assert k.params == fact["params"]
        assert (k.shared_bytes, k.local_bytes) == (fact["shared"], fact["local"])
        if k.form is Form.REG:
            assert k.regs == fact["regs"]
        else:
            assert (k.ring, k.dmax, k.variants) == (fact["ring"], fact["dmax"], fact["variants"])
        for pc, name in k.labels.items():
            assert fact["labels"][name] == pc
        assert set(k.labels) == set(fact["labels"].values())
    text = disassemble(module)
    again = assemble(text, "again.s")
    assert words(again) == words(module), text
    assert metadata(again) == metadata(module)
    back = Module.from_bytes(module.to_bytes())
    assert words(back) == words(module)
    assert metadata(back) == metadata(module)


@settings(max_examples=200, deadline=None, database=None)
@given(st.floats(width=32, allow_nan=False))
def test_property_float_literals_are_exact_for_every_float32(x):
    k = assemble(f"{REG}fadd r0, r1, {x!r}\n").only
    assert k.code[0].imm == f32(x)
    assert words(assemble(disassemble(assemble(f"{REG}fadd r0, r1, {x!r}\n")))) == {"k": k.words()}


# --------------------------------------------------------------------------------------------
# (c) Meaning of each syntax
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, expected", [
    ("isetp.lt r4, r3, 100", Instruction(Opcode.ISETP, dst=5, a=4, mod=int(Cmp.LT), bimm=True, imm=100)),
    ("isetp.ge r4, r3, r9", Instruction(Opcode.ISETP, dst=5, a=4, b=10, mod=int(Cmp.GE))),
    ("usetp.ne rz, r0, -1",
     Instruction(Opcode.USETP, dst=0, a=1, mod=int(Cmp.NE), bimm=True, imm=0xFFFFFFFF)),
    ("fsetp.nan r1, r2, r3", Instruction(Opcode.FSETP, dst=2, a=3, b=4, mod=int(Cmp.NAN))),
    ("fsetp.geu r1, r2, 0.5",
     Instruction(Opcode.FSETP, dst=2, a=3, mod=int(Cmp.GEU), bimm=True, imm=0x3F000000)),
    ("iadd r3, r1, r2", Instruction(Opcode.IADD, dst=4, a=2, b=3)),
    ("iadd r3, rz, rz", Instruction(Opcode.IADD, dst=4)),
    ("fadd r1, r2, 0.5", Instruction(Opcode.FADD, dst=2, a=3, bimm=True, imm=0x3F000000)),
    ("fmul r1, r2, 0f3f800000", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x3F800000)),
    ("fmul r1, r2, 0F3F800000", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x3F800000)),
    ("fmul r1, r2, -0f3f800000", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0xBF800000)),
    ("fmul r1, r2, -2.0", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0xC0000000)),
    ("fmul r1, r2, 1e-3", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x3A83126F)),
    ("fmul r1, r2, 0.1", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x3DCCCCCD)),
    ("fmul r1, r2, -0.0", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x80000000)),
    ("fmul r1, r2, 3.4028235e38", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x7F7FFFFF)),
    ("fmul r1, r2, inf", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0x7F800000)),
    ("fmul r1, r2, -inf", Instruction(Opcode.FMUL, dst=2, a=3, bimm=True, imm=0xFF800000)),
    ("mov r0, -1", Instruction(Opcode.MOV, dst=1, bimm=True, imm=0xFFFFFFFF)),
    ("mov r0, 0xffffffff", Instruction(Opcode.MOV, dst=1, bimm=True, imm=0xFFFFFFFF)),
    ("mov r0, -2147483648", Instruction(Opcode.MOV, dst=1, bimm=True, imm=0x80000000)),
    ("mov r0, 4294967295", Instruction(Opcode.MOV, dst=1, bimm=True, imm=0xFFFFFFFF)),
    ("mov r0, 0", Instruction(Opcode.MOV, dst=1, bimm=True, imm=0)),
    ("mov r0, rz", Instruction(Opcode.MOV, dst=1, b=0, bimm=False)),
    ("mov r0, r7", Instruction(Opcode.MOV, dst=1, b=8)),
    ("ldg r1, [r2-4]", Instruction(Opcode.LDG, dst=2, a=3, imm=-4)),
    ("ldg r1, [r2+4]", Instruction(Opcode.LDG, dst=2, a=3, imm=4)),
    ("ldg r1, [ r2 - 0x10 ]", Instruction(Opcode.LDG, dst=2, a=3, imm=-16)),
    ("ldg r1, [r2]", Instruction(Opcode.LDG, dst=2, a=3)),
    ("ldg r1, [rz]", Instruction(Opcode.LDG, dst=2, a=0, imm=0)),
    ("ldg r1, [16]", Instruction(Opcode.LDG, dst=2, a=0, imm=16)),
    ("ldg r1, [-4]", Instruction(Opcode.LDG, dst=2, a=0, imm=-4)),
    ("ldg r1, [rz+32767]", Instruction(Opcode.LDG, dst=2, a=0, imm=32767)),
    ("ldg r1, [r0-32768]", Instruction(Opcode.LDG, dst=2, a=1, imm=-32768)),
    ("ldg.c3 r1, [r2]", Instruction(Opcode.LDG, dst=2, a=3, mod=3)),
    ("ldl.c0 r1, [r2]", Instruction(Opcode.LDL, dst=2, a=3, mod=0)),
    ("sts.c15 [r9+8], r4", Instruction(Opcode.STS, a=10, b=5, mod=15, imm=8)),
    ("stl [r1], rz", Instruction(Opcode.STL, a=2, b=0)),
    ("selp r1, r2, r3, r4", Instruction(Opcode.SELP, dst=2, a=3, b=4, c=5)),
    ("ffma r0, r1, r2, r3", Instruction(Opcode.FFMA, dst=1, a=2, b=3, c=4)),
    ("vote.any r1, r2", Instruction(Opcode.VOTE, dst=2, a=3, mod=0)),
    ("vote.all r1, r2", Instruction(Opcode.VOTE, dst=2, a=3, mod=1)),
    ("vote.ballot r1, r2", Instruction(Opcode.VOTE, dst=2, a=3, mod=2)),
    ("s2r r7, %ctaid.y", Instruction(Opcode.S2R, dst=8, mod=int(SpecialReg.CTAID_Y))),
    ("inot r254, r253", Instruction(Opcode.INOT, dst=255, a=254)),
    ("nop", Instruction(Opcode.NOP)),
    ("bar", Instruction(Opcode.BAR)),
    ("membar", Instruction(Opcode.MEMBAR)),
    ("sync", Instruction(Opcode.SYNC)),
    ("exit", Instruction(Opcode.EXIT)),
])
def test_reg_form_operands(line, expected):
    assert one(f"{REG}    {line}\n") == expected


@pytest.mark.parametrize("line, expected", [
    ("iadd |2|, |1|", Instruction(Opcode.IADD, a=2, b=1)),
    ("iadd | 31 |, rz", Instruction(Opcode.IADD, a=31, b=0)),
    ("iadd |3|, -7", Instruction(Opcode.IADD, a=3, bimm=True, imm=0xFFFFFFF9)),
    ("mov |1|", Instruction(Opcode.MOV, b=1)),
    ("mov 0.5", Instruction(Opcode.MOV, bimm=True, imm=0x3F000000)),
    ("ldg [|1|+8]", Instruction(Opcode.LDG, a=1, imm=8)),
    ("ldg [|4|-8]", Instruction(Opcode.LDG, a=4, imm=-8)),
    ("lds [rz]", Instruction(Opcode.LDS, a=0)),
    ("stg.c2 [|7|], |1|", Instruction(Opcode.STG, a=7, b=1, mod=2)),
    ("imad |2|, |1|, |3|", Instruction(Opcode.IMAD, a=2, b=1, c=3)),
    ("s2r %laneid", Instruction(Opcode.S2R, mod=int(SpecialReg.LANEID))),
    ("isetp.le |1|, |2|", Instruction(Opcode.ISETP, a=1, b=2, mod=int(Cmp.LE))),
    ("rpinc 5", Instruction(Opcode.RPINC, bimm=True, imm=5)),
    ("rpinc 255", Instruction(Opcode.RPINC, bimm=True, imm=255)),
    ("rpinc 0x1", Instruction(Opcode.RPINC, bimm=True, imm=1)),
])
def test_dflow_form_operands(line, expected):
    assert one(f"{DFLOW}    {line}\n") == expected


@pytest.mark.parametrize("sreg", list(SpecialReg), ids=lambda s: s.asm_name)
def test_every_special_register(sreg):
    assert one(f"{REG} s2r r0, {sreg.asm_name}\n") == Instruction(Opcode.S2R, dst=1, mod=int(sreg))
    assert one(f"{DFLOW} s2r {sreg.asm_name}\n") == Instruction(Opcode.S2R, mod=int(sreg))


def test_special_register_names():
    assert [s.asm_name for s in SpecialReg] == [
        "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
        "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid", "%nwarpid"]


def test_ldc_by_name_and_by_offset_give_byte_offsets():
    k = assemble(".kernel k\n.param x out n\n ldc r1, n\n ldc r2, [4]\n ldc r3, x\n ldc r4, [0]\n"
                 " ldc r5, [8]\n").only
    assert [(i.op, i.dst, i.bimm, i.imm) for i in k.code] == [
        (Opcode.LDC, 2, True, 8), (Opcode.LDC, 3, True, 4), (Opcode.LDC, 4, True, 0),
        (Opcode.LDC, 5, True, 0), (Opcode.LDC, 6, True, 8)]
    assert k.params == ["x", "out", "n"]
    assert k.param_offset("n") == 8


def test_params_accumulate_over_several_directives():
    k = assemble(".kernel k\n.param a\n.param b c\n ldc r0, c\n").only
    assert k.params == ["a", "b", "c"]
    assert k.code[0].imm == 8


@pytest.mark.parametrize("body, regs", [
    (" iadd r7, r2, r3\n stg [r9], r1\n", 10),
    (" exit\n", 0),
    (" iadd rz, rz, rz\n", 0),
    (" mov r0, 5\n", 1),
    (" ldg r1, [r200+4]\n", 201),
    (" selp r1, r2, r3, r254\n", 255),
    (" brnz r41, L\nL: exit\n", 42),
])
def test_regs_inferred_as_highest_register_plus_one(body, regs):
    assert assemble(REG + body).only.regs == regs


def test_explicit_regs_is_kept():
    assert assemble(".kernel k\n.regs 40\n iadd r3, r1, r2\n").only.regs == 40
    assert assemble(".kernel k\n.regs 4\n iadd r3, r1, r2\n").only.regs == 4


def test_dflow_defaults_and_directives():
    k = assemble(DFLOW + " exit\n").only
    assert (k.form, k.ring, k.dmax, k.shared_bytes, k.local_bytes, k.params) == (
        Form.DFLOW, DEFAULT_RING, DEFAULT_DMAX, 0, 0, [])
    assert (DEFAULT_RING, DEFAULT_DMAX) == (32, 31)
    k = assemble(".kernel k\n.form DFLOW\n.ring 300\n.dmax 255\n.shared 1024\n.local 0x10\n"
                 " mov |255|\n").only
    assert (k.form, k.ring, k.dmax, k.shared_bytes, k.local_bytes) == (Form.DFLOW, 300, 255, 1024, 16)
    assert k.code[0] == Instruction(Opcode.MOV, b=255)


def test_default_form_is_reg():
    assert assemble(".kernel k\n iadd r1, r2, r3\n").only.form is Form.REG


def test_labels_on_their_own_line_and_several_on_one_instruction():
    src = """
.kernel k
TOP:
    bra MID              ; pc 0
A: B:   C: bra A         ; pc 1: three labels on one instruction
MID:
LAST:   brz r1, LAST     ; pc 2: two labels (one on its own line)
    ssy C                ; pc 3
    bra B                ; pc 4
    bra TOP              ; pc 5
end_of_code: exit
"""
    k = assemble(src).only
    assert [(i.op, i.imm) for i in k.code] == [
        (Opcode.BRA, 2), (Opcode.BRA, 1), (Opcode.BRZ, 2), (Opcode.SSY, 1), (Opcode.BRA, 1),
        (Opcode.BRA, 0), (Opcode.EXIT, 0)]
    assert all(i.bimm for i in k.code[:6])
    assert k.code[2].a == 2
    assert set(k.labels) == {0, 1, 2, 6}
    assert k.labels[0] == "TOP" and k.labels[6] == "end_of_code"
    assert k.labels[1] in {"A", "B", "C"} and k.labels[2] in {"MID", "LAST"}
    assert words(assemble(disassemble(assemble(src)))) == {"k": k.words()}


def test_label_names_with_dot_and_dollar():
    k = assemble(".kernel k\n.L1: $x.y: bra .L1\n bra $x.y\n").only
    assert [i.imm for i in k.code] == [0, 0]


def test_labels_are_per_kernel():
    m = assemble(".kernel a\nL: bra L\n.kernel b\n exit\nL: bra L\n")
    assert m["a"].code[0].imm == 0
    assert m["b"].code[1].imm == 1


@pytest.mark.parametrize("comment", ["; note", "// note", "# note", ";", "//", "#", "; iadd r1, r2, r3",
                                     "# .kernel other", "// L: exit"])
def test_comments(comment):
    src = (f"{comment}\n.kernel k {comment}\n.param a {comment}\n{comment}\n  L: {comment}\n"
           f"    iadd r3, r1, r2 {comment}\n    bra L{comment}\n")
    k = assemble(src).only
    assert k.params == ["a"]
    assert k.code == [Instruction(Opcode.IADD, dst=4, a=2, b=3), Instruction(Opcode.BRA, bimm=True, imm=0)]
    assert k.labels == {0: "L"}


def test_blank_and_comment_only_lines_keep_line_numbers():
    src = "\n; c\n\n.kernel k\n// c\n\n# c\n    exit\n  frob\n"
    err = asm_error(src)
    assert (err.line, err.col) == (9, 3)


def test_mnemonic_suffix_and_sreg_case_insensitive():
    k = assemble(".kernel k\n ISETP.LT r4, r3, 100\n S2R r0, %TID.X\n").only
    assert k.code[0] == Instruction(Opcode.ISETP, dst=5, a=4, mod=int(Cmp.LT), bimm=True, imm=100)
    assert k.code[1] == Instruction(Opcode.S2R, dst=1, mod=0)


def test_locations_recorded_per_pc():
    k = assemble(".kernel k\n\n iadd r1, r2, r3\nL:\n exit\n", "loc.s").only
    assert {pc: (loc.file, loc.line) for pc, loc in k.locations.items()} == {0: ("loc.s", 3), 1: ("loc.s", 5)}
    assert str(k.locations[1]) == "loc.s:5"


def test_disassembler_text_for_a_known_kernel():
    k = assemble(".kernel k\n.param p q\n.shared 8\n"
                 "L: ldc r0, q\n fmul r1, r0, 0.5\n ldg.c2 r2, [r1-4]\n iadd r3, r2, -5\n"
                 " mov r3, 0x12345678\n isetp.ne r4, r3, rz\n brnz r4, L\n exit\n")
    text = disassemble(k)
    body = [line.split(";")[0].rstrip() for line in text.splitlines()]
    assert body == [
        ".kernel k", ".form reg", ".param p q", ".shared 8", ".regs 5", "L:",
        "    ldc r0, q", "    fmul r1, r0, 0.5", "    ldg.c2 r2, [r1-4]", "    iadd r3, r2, -5",
        "    mov r3, 0x12345678", "    isetp.ne r4, r3, rz", "    brnz r4, L", "    exit"]


# --------------------------------------------------------------------------------------------
# (d) Every error path: file, line, column and message
# --------------------------------------------------------------------------------------------

ERRORS = [
    # id, source, line, col, phrase
    ("unknown-opcode", ".kernel k\n    foo r1, r2\n", 2, 5, "unknown opcode 'foo'"),
    ("unknown-opcode-after-label", ".kernel k\nL1: baz\n exit\n", 2, 5, "unknown opcode 'baz'"),
    ("unknown-opcode-like-suffix", ".kernel k\n iadd2 r1, r2, r3\n", 2, 2, "unknown opcode 'iadd2'"),
    ("unknown-directive", ".kernel k\n  .bogus 3\n exit\n", 2, 3, "unknown directive .bogus"),
    ("unknown-directive-before-kernel", ".bogus\n", 1, 1, "unknown directive .bogus"),
    ("bad-register", ".kernel k\n iadd r1, x2, r3\n", 2, 11, "bad register 'x2'"),
    ("bad-register-empty", ".kernel k\n iadd r1, , r3\n", 2, 11, "bad register ''"),
    ("bad-register-uppercase", ".kernel k\n inot r1, R2\n", 2, 11, "bad register 'R2'"),
    ("bad-immediate", ".kernel k\n iadd r1, r2, r3x\n", 2, 15, "bad immediate 'r3x'"),
    ("bad-immediate-float", ".kernel k\n fadd r1, r2, 1.5.5\n", 2, 15, "bad immediate '1.5.5'"),
    ("bad-destination", ".kernel k\n iadd x1, r2, r3\n", 2, 7, "bad destination register 'x1'"),
    ("bad-destination-distance", ".kernel k\n iadd |1|, r2, r3\n", 2, 7, "bad destination register '|1|'"),
    ("bad-memory-operand", ".kernel k\n ldg r1, r2\n", 2, 10,
     "bad memory operand 'r2': expected [base+offset]"),
    ("bad-memory-unclosed", ".kernel k\n ldg r1, [r2+4\n", 2, 2, "ldg takes 2 operand(s) (dst, mem), got 1"),
    ("bad-memory-base", ".kernel k\n ldg r1, [foo+4]\n", 2, 10, "bad base 'foo' in memory operand"),
    ("bad-memory-offset", ".kernel k\n ldg r1, [r2+x]\n", 2, 10, "bad offset 'x'"),
    ("bad-memory-offset-float", ".kernel k\n stg [r2+1.5], r1\n", 2, 6, "bad offset '1.5'"),
    ("bad-distance", ".kernel k\n.form dflow\n iadd |x|, |1|\n", 3, 7, "bad distance operand '|x|'"),
    ("bad-distance-negative", ".kernel k\n.form dflow\n inot |-1|\n", 3, 7, "bad distance operand '|-1|'"),
    ("too-few-operands", ".kernel k\n iadd r1, r2\n", 2, 2, "iadd takes 3 operand(s) (dst, a, bi), got 2"),
    ("too-few-operands-store", ".kernel k\n stg [r1]\n", 2, 2, "stg takes 2 operand(s) (mem, b), got 1"),
    ("too-many-operands", ".kernel k\n iadd r1, r2, r3, r4\n", 2, 19, "iadd takes 3 operand(s)"),
    ("too-many-operands-trailing-comma", ".kernel k\n inot r1, r2,\n", 2, 14,
     "inot takes 2 operand(s) (dst, a), got 3"),
    ("operands-for-exit", ".kernel k\n exit r1\n", 2, 7, "exit takes 0 operand(s) (no operands), got 1"),
    ("no-operands-for-bra", ".kernel k\n bra\n", 2, 2, "bra takes 1 operand(s) (target), got 0"),
    ("dflow-too-many", ".kernel k\n.form dflow\n iadd |1|, |2|, |3|\n", 3, 17,
     "iadd takes 2 operand(s) (a, bi), got 3"),
    ("dflow-with-destination", ".kernel k\n.form dflow\n inot r1, |2|\n", 3, 11,
     "inot takes 1 operand(s) (a), got 2"),
    ("register-in-dflow", ".kernel k\n.form dflow\n iadd |1|, r2\n", 3, 12,
     "register operand r2 in a DFLOW-form kernel"),
    ("register-in-dflow-a", ".kernel k\n.form dflow\n selp |1|, |2|, r0\n", 3, 17,
     "register operand r0 in a DFLOW-form kernel"),
    ("register-in-dflow-memory-base", ".kernel k\n.form dflow\n ldg [r1]\n", 3, 7,
     "register operand r1 in a DFLOW-form kernel"),
    ("distance-in-reg", ".kernel k\n iadd r1, |2|, r3\n", 2, 11, "distance operand |2| in a REG-form kernel"),
    ("distance-in-reg-bi", ".kernel k\n iadd r1, r2, |3|\n", 2, 15,
     "distance operand |3| in a REG-form kernel"),
    ("distance-in-reg-memory-base", ".kernel k\n ldg r1, [|3|+4]\n", 2, 11,
     "distance operand |3| in a REG-form kernel"),
    ("distance-zero", ".kernel k\n.form dflow\n iadd |0|, |1|\n", 3, 7, "distance 0 outside 1..31 (.dmax)"),
    ("distance-above-default-dmax", ".kernel k\n.form dflow\n mov |32|\n", 3, 6,
     "distance 32 outside 1..31 (.dmax)"),
    ("distance-above-dmax", ".kernel k\n.form dflow\n.dmax 7\n mov |8|\n", 4, 6,
     "distance 8 outside 1..7 (.dmax)"),
    ("distance-above-dmax-memory", ".kernel k\n.form dflow\n.dmax 2\n sts [|3|], |1|\n", 4, 7,
     "distance 3 outside 1..2 (.dmax)"),
    ("undefined-label", ".kernel k\n bra NOWHERE\n", 2, 6, "undefined label 'NOWHERE'"),
    ("undefined-label-brnz", ".kernel k\n brnz r1, MISSING\n exit\n", 2, 11, "undefined label 'MISSING'"),
    ("undefined-label-case", ".kernel k\nloop: bra LOOP\n", 2, 11, "undefined label 'LOOP'"),
    ("undefined-label-other-kernel", ".kernel a\nL: exit\n.kernel b\n bra L\n", 4, 6, "undefined label 'L'"),
    ("duplicate-label", ".kernel k\nA:\n exit\n  A: exit\n", 4, 3, "duplicate label 'A'"),
    ("duplicate-label-same-line", ".kernel k\nA: A: exit\n", 2, 4, "duplicate label 'A'"),
    ("label-before-kernel", "L:\n.kernel k\n exit\n", 1, 1, "label 'L' before any .kernel"),
    ("immediate-too-large", ".kernel k\n iadd r1, r2, 4294967296\n", 2, 15,
     "immediate 4294967296 does not fit in 32 bits"),
    ("immediate-too-negative", ".kernel k\n mov r1, -2147483649\n", 2, 10,
     "immediate -2147483649 does not fit in 32 bits"),
    ("immediate-hex-too-large", ".kernel k\n.form dflow\n mov 0x100000000\n", 3, 6,
     "immediate 0x100000000 does not fit in 32 bits"),
    ("float-overflows", ".kernel k\n fadd r1, r2, 1e39\n", 2, 15, "float literal 1e39 overflows float32"),
    ("offset-too-large", ".kernel k\n ldg r1, [r2+32768]\n", 2, 10,
     "offset 32768 outside the signed 16-bit range"),
    ("offset-too-small", ".kernel k\n stg [r2-32769], r1\n", 2, 6,
     "offset -32769 outside the signed 16-bit range"),
    ("offset-too-large-no-base", ".kernel k\n.form dflow\n ldl [65536]\n", 3, 6,
     "offset 65536 outside the signed 16-bit range"),
    ("unknown-parameter", ".kernel k\n.param a\n ldc r1, b\n", 3, 10, "unknown parameter 'b' (declared: a)"),
    ("unknown-parameter-none", ".kernel k\n ldc r1, a\n", 2, 10, "unknown parameter 'a' (declared: none)"),
    ("unknown-parameter-register", ".kernel k\n.param a\n ldc r1, [r1]\n", 3, 10, "unknown parameter '[r1]'"),
    ("parameter-offset-undeclared", ".kernel k\n.param a\n ldc r1, [4]\n", 3, 10,
     "parameter offset 4 is not one of the 1 declared 4-byte parameters"),
    ("parameter-offset-misaligned", ".kernel k\n.param a b\n.form dflow\n ldc [2]\n", 4, 6,
     "parameter offset 2 is not one of the 2 declared 4-byte parameters"),
    ("unknown-special-register", ".kernel k\n s2r r1, %tid.w\n", 2, 10, "unknown special register '%tid.w'"),
    ("unknown-special-register-bare", ".kernel k\n.form dflow\n s2r tid.x\n", 3, 6,
     "unknown special register 'tid.x'"),
    ("missing-compare-suffix", ".kernel k\n isetp r1, r2, r3\n", 2, 2,
     "isetp needs a suffix: one of eq, ne, lt"),
    ("missing-compare-suffix-fsetp", ".kernel k\n\tfsetp r1, r2, r3\n", 2, 2, "fsetp needs a suffix"),
    ("missing-vote-suffix", ".kernel k\n vote r1, r2\n", 2, 2,
     "vote needs a suffix: one of any, all, ballot"),
    ("unordered-compare-isetp", ".kernel k\n isetp.ltu r1, r2, r3\n", 2, 2,
     "isetp: unordered comparison .ltu is for floats only"),
    ("unordered-compare-usetp-nan", ".kernel k\n usetp.nan r1, r2, r3\n", 2, 2,
     "usetp: unordered comparison .nan is for floats only"),
    ("bad-compare-suffix", ".kernel k\n fsetp.lx r1, r2, r3\n", 2, 2, "bad suffix for fsetp"),
    ("two-suffixes", ".kernel k\n fsetp.lt.ge r1, r2, r3\n", 2, 2, "bad suffix for fsetp"),
    ("bad-color", ".kernel k\n ldg.c16 r1, [r2]\n", 2, 2, "bad suffix for ldg"),
    ("suffix-on-plain-op", ".kernel k\n iadd.lt r1, r2, r3\n", 2, 2, "iadd takes no .suffix"),
    ("suffix-on-s2r", ".kernel k\n s2r.x r1, %tid.x\n", 2, 2, "s2r takes no .suffix"),
    ("rpinc-in-reg", ".kernel k\n rpinc 3\n", 2, 2, "rpinc is not legal in REG form"),
    ("rpinc-zero", ".kernel k\n.form dflow\n rpinc 0\n", 3, 8, "count 0 outside 1..255"),
    ("rpinc-too-large", ".kernel k\n.form dflow\n rpinc 256\n", 3, 8, "count 256 outside 1..255"),
    ("rpinc-negative", ".kernel k\n.form dflow\n rpinc -1\n", 3, 8, "count 4294967295 outside 1..255"),
    ("directive-after-instruction", ".kernel k\n exit\n.regs 4\n", 3, 1,
     ".regs after the first instruction of kernel 'k'"),
    ("form-after-instruction", ".kernel k\nL: exit\n  .form dflow\n", 3, 3,
     ".form after the first instruction"),
    ("dmax-after-instruction", ".kernel k\n.form dflow\n exit\n.dmax 4\n", 4, 1,
     ".dmax after the first instruction"),
    ("shared-after-instruction", ".kernel a\n exit\n.kernel b\n exit\n.shared 4\n", 5, 1,
     ".shared after the first instruction of kernel 'b'"),
    ("instruction-before-kernel", "  exit\n.kernel k\n exit\n", 1, 3, "instruction before any .kernel"),
    ("directive-before-kernel", "; c\n.form reg\n.kernel k\n exit\n", 2, 1, ".form before any .kernel"),
    ("ring-equal-dmax", ".kernel k\n.form dflow\n.ring 8\n.dmax 8\n exit\n", 4, 1,
     ".ring 8 must exceed .dmax 8"),
    ("ring-below-dmax", ".kernel k\n.form dflow\n.ring 4\n exit\n", 3, 1, ".ring 4 must exceed .dmax 31"),
    ("default-ring-below-dmax", "; x\n.kernel k\n.form dflow\n.dmax 40\n exit\n", 4, 1,
     ".ring 32 must exceed .dmax 40"),
    ("ring-zero", ".kernel k\n.form dflow\n.ring 0\n.dmax 1\n exit\n", 4, 1, ".ring 0 must exceed .dmax 1"),
    ("dmax-zero", ".kernel k\n.form dflow\n.dmax 0\n", 3, 1, ".dmax 0: must be in 1..255"),
    ("dmax-too-large", ".kernel k\n.form dflow\n.dmax 256\n", 3, 1, ".dmax 256: must be in 1..255"),
    ("form-bad-value", ".kernel k\n.form simd\n exit\n", 2, 1, ".form must be 'reg' or 'dflow'"),
    ("form-no-value", ".kernel k\n .form\n exit\n", 2, 2, ".form must be 'reg' or 'dflow'"),
    ("form-two-values", ".kernel k\n.form reg dflow\n exit\n", 2, 1, ".form must be 'reg' or 'dflow'"),
    ("duplicate-kernel", ".kernel k\n exit\n.kernel k\n exit\n", 3, 1, "duplicate kernel 'k'"),
    ("kernel-without-instructions", ".kernel a\n.kernel b\n exit\n", 1, 1, "kernel 'a' has no instructions"),
    ("last-kernel-without-instructions", ".kernel a\n exit\n\n.kernel b\nL:\n", 4, 1,
     "kernel 'b' has no instructions"),
    ("label-at-end", ".kernel k\n exit\nEND:\n", 3, 1,
     "label 'END' at the end of kernel 'k' marks no instruction"),
    ("regs-too-small", ".kernel k\n.regs 3\n iadd r3, r1, r2\n", 2, 1,
     "kernel 'k' uses r3 but declares .regs 3"),
    ("regs-too-small-source", ".kernel a\n exit\n.kernel k\n.regs 1\n stg [r0], r1\n", 4, 1,
     "kernel 'k' uses r1 but declares .regs 1"),
    ("regs-above-max", ".kernel k\n.regs 256\n", 2, 1, ".regs 256: at most 255"),
    ("register-r255-source", ".kernel k\n iadd r1, r2, r255\n", 2, 15, "register r255 out of range r0..r254"),
    ("register-r255-a", ".kernel k\n stg [r1], r255\n", 2, 12, "register r255 out of range r0..r254"),
    ("register-r255-memory-base", ".kernel k\n ldg r1, [r255]\n", 2, 11,
     "register r255 out of range r0..r254"),
    ("register-r255-destination", ".kernel k\n iadd r255, r1, r2\n", 2, 7, "bad destination register 'r255'"),
    ("register-r1000", ".kernel k\n inot r1, r1000\n", 2, 11, "register r1000 out of range r0..r254"),
    ("shared-not-multiple-of-4", ".kernel k\n.shared 6\n", 2, 1, ".shared 6: must be a multiple of 4 bytes"),
    ("local-negative", ".kernel k\n.local -4\n", 2, 1, ".local: must not be negative"),
    ("shared-bad-number", ".kernel k\n.shared lots\n", 2, 1, ".shared: bad number 'lots'"),
    ("ring-no-number", ".kernel k\n.ring\n", 2, 1, ".ring needs one number"),
    ("param-duplicate", ".kernel k\n.param a b\n.param a\n", 3, 1, ".param: bad or duplicate name 'a'"),
    ("param-bad-name", ".kernel k\n.param 1x\n", 2, 1, ".param: bad or duplicate name '1x'"),
    ("param-no-name", ".kernel k\n.param\n", 2, 1, ".param needs at least one name"),
    ("kernel-no-name", ".kernel\n", 1, 1, ".kernel needs one name"),
    ("kernel-two-names", ".kernel a b\n", 1, 1, ".kernel needs one name"),
    ("empty-file", "", 1, 1, "no .kernel in file"),
    ("only-comments", "; nothing\n// here\n", 1, 1, "no .kernel in file"),
]


@pytest.mark.parametrize("src, line, col, phrase", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_location_and_message(src, line, col, phrase):
    err = asm_error(src, "prog.s")
    assert (err.file, err.line, err.col) == ("prog.s", line, col), err.message
    assert phrase in err.message
    assert str(err) == f"prog.s:{line}:{col}: error: {err.message}"
    assert isinstance(err, DualflowError)


def test_error_ids_unique():
    assert len({e[0] for e in ERRORS}) == len(ERRORS)


def test_error_in_second_kernel_names_its_line():
    src = ".kernel a\n iadd r1, r2, r3\n.kernel b\n.form dflow\n iadd |1|, |1|\n iadd r1, |1|\n"
    err = asm_error(src)
    assert (err.line, err.col) == (6, 7)
    assert "bad destination" not in err.message and "register operand r1" in err.message


def test_assemble_file_reports_the_path(tmp_path):
    path = tmp_path / "bad.s"
    path.write_text(".kernel k\n\n    exit\n    frob r1\n")
    with pytest.raises(AsmError) as info:
        assemble_file(path)
    assert (info.value.file, info.value.line, info.value.col) == (str(path), 4, 5)
    assert info.value.message == "unknown opcode 'frob'"


def test_assemble_file_missing(tmp_path):
    path = tmp_path / "missing.s"
    with pytest.raises(DualflowError) as info:
        assemble_file(path)
    assert str(info.value) == f"cannot read {path}: No such file or directory"


def test_module_lookup_errors():
    m = assemble(".kernel a\n exit\n.kernel b\n exit\n", "two.s")
    with pytest.raises(KeyError, match="two.s: no kernel named 'c' \\(have: a, b\\)"):
        m["c"]
    with pytest.raises(DualflowError, match="two.s: expected exactly one kernel, found 2"):
        _ = m.only


@pytest.mark.parametrize("data, phrase", [
    (b"XXXX\x01\x00\x00\x00\x02\x00\x00\x00[]", "bad magic"),
    (b"DFLW\x02\x00\x00\x00\x02\x00\x00\x00[]", "binary version 2, expected 1"),
    (b"DFLW\x01\x00\x00\x00\x02\x00\x00\x00[]", "expected a non-empty list of kernels"),
    (assemble(".kernel k\n exit\n").to_bytes() + b"\x00", "1 trailing bytes"),
])
def test_container_errors(data, phrase):
    with pytest.raises(DualflowError, match=phrase):
        Module.from_bytes(data, "c.bin")


# --------------------------------------------------------------------------------------------
# Bugs found while writing these tests
# --------------------------------------------------------------------------------------------

def test_tab_between_mnemonic_and_operands():
    k = assemble(".kernel k\n\tiadd\tr1, r2, r3\n\texit\n").only
    assert k.code[0] == Instruction(Opcode.IADD, dst=2, a=3, b=4)


def test_param_after_first_instruction_is_an_error():
    err = asm_error(".kernel k\n exit\n.param a\n")
    assert (err.line, err.col) == (3, 1)
    assert ".param after the first instruction" in err.message


@pytest.mark.parametrize("literal", ["1e400", "-1e400"])
def test_float_literal_overflowing_double_is_rejected_like_float32_overflow(literal):
    err = asm_error(f".kernel k\n fadd r1, r2, {literal}\n")
    assert (err.line, err.col) == (2, 15)
    assert "overflows float32" in err.message


def test_label_at_end_points_at_the_label():
    err = asm_error(".kernel k\n exit\n\n  END:\n")
    assert (err.line, err.col) == (4, 3)


def test_duplicate_kernel_column_of_indented_directive():
    err = asm_error(".kernel k\n exit\n    .kernel k\n exit\n")
    assert (err.line, err.col) == (3, 5)


@pytest.mark.parametrize("text, bits", [("fmul r1, r2, 2", 0x40000000), ("fadd r1, r2, -1", 0xBF800000),
                                        ("fadd r1, r2, 0x1", 0x00000001), ("iadd r1, r2, 2", 2),
                                        ("fsetp.lt r1, r2, 0", 0)])
def test_decimal_integer_on_fp_operation_is_a_float(text, bits):
    ins = assemble(f".kernel k\n    {text}\n    exit\n").only.code[0]
    assert ins.bimm and ins.imm == bits

"""The ``uniform-operands`` variant of the DFLOW form (docs/isa.md, "Variants"): a source field
with its uniform flag set names a kernel parameter word (``c[w]``) or a special register that is
the same in every lane of a warp (``%ctaid.x``) instead of a ring distance. It reads no ring slot,
so it creates no dependency and no illegal read."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from programs import launch_out

from dualflow.common.errors import AsmError, KernelFault
from dualflow.isa import Form, Instruction, Kernel, Module, Opcode, SpecialReg, Variant, assemble, disassemble
from dualflow.isa.kernel import KernelError
from dualflow.isa.opcodes import UNIFORM_PARAM_WORDS, UNIFORM_SREGS, uniform_field, uniform_operand
from dualflow.models.timing.program import decode_kernel

UNIFORM = frozenset({Variant.UNIFORM_OPERANDS})

#: Every lane stores (its global index) + 1000 * %warpid + %nwarpid + n, its address computed
#: from %ctaid.x, %ntid.x and the parameter word of ``out`` without reading them into the ring.
STORE_INDEX = """.kernel k
.form dflow
.param out n
.variant uniform-operands
    s2r %tid.x
    imad %ctaid.x, %ntid.x, |1|      ; global thread index
    ishl |1|, 2
    iadd c[out], |1|                 ; address
    imad c[1], %warpid, |3|          ; n * warp + index (n = 1000)
    iadd |1|, %nwarpid
    stg [|3|], |1|
    exit
"""


def test_functional_model_reads_parameter_words_and_uniform_special_registers():
    grid, block = 3, 64
    out = launch_out(assemble(STORE_INDEX).only, grid, block, grid * block, extra_params=(1000,))[2]
    index = np.arange(grid * block)
    warp = (index % block) // 32
    assert np.array_equal(out, (index + 1000 * warp + 2).astype(np.uint32))


def test_uniform_operands_are_no_ring_reads():
    """The first instruction reads |1| of nothing: an illegal read; a uniform operand in its
    place reads no slot, and the timing models see no source."""
    bad = assemble(".kernel k\n.form dflow\n.param out\n    iadd |1|, 4\n    stg [|1|], |1|\n    exit\n").only
    with pytest.raises(KernelFault, match="illegal DFLOW read"):
        launch_out(bad, 1, 32, 32)
    good = assemble(".kernel k\n.form dflow\n.param out\n.variant uniform-operands\n    s2r %laneid\n"
                    "    ishl |1|, 2\n    iadd c[out], |1|\n    stg [|1|], %ctaid.x\n    exit\n").only
    assert (launch_out(good, 1, 32, 32)[2] == 0).all()
    static = decode_kernel(good)
    assert [s.sources for s in static] == [(), (1,), (1,), (1,), ()]


def test_parameter_words_of_each_launch():
    """A parameter word is the launch's: a kernel launched twice with different values."""
    k = assemble(".kernel k\n.form dflow\n.param out v\n.variant uniform-operands\n    mov c[v]\n"
                 "    stg [c[out]], |1|\n    exit\n").only
    for v in (7, 0xFFFFFFFF):
        assert launch_out(k, 1, 32, 1, extra_params=(v,))[2][0] == v


def test_the_list_of_uniform_operands():
    """Parameter words 0..63, then the eleven special registers that no lane of a warp sees
    differently; the per-lane ones (%tid.*, %laneid) have no uniform field."""
    assert UNIFORM_PARAM_WORDS == 64
    assert {s.asm_name for s in UNIFORM_SREGS} == {
        "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
        "%warpid", "%nwarpid"}
    for s in SpecialReg:
        field = uniform_field(s)
        assert (field is None) == (s in (SpecialReg.TID_X, SpecialReg.TID_Y, SpecialReg.TID_Z, SpecialReg.LANEID))
        if field is not None:
            assert uniform_operand(field) is s
    assert [uniform_operand(w) for w in (0, 63)] == [0, 63] and uniform_field(64) is None
    assert uniform_operand(64 + len(UNIFORM_SREGS)) is None


def test_assembly_round_trip_and_binary():
    k = assemble(STORE_INDEX).only
    assert k.variants == UNIFORM
    imad = k.code[1]
    assert (imad.uniform, imad.a, imad.b) == (0b011, 64 + UNIFORM_SREGS.index(SpecialReg.CTAID_X), 64)
    text = disassemble(Module({"k": k}))
    assert ".variant uniform-operands" in text and "iadd c[out], |1|" in text and "imad c[n], %warpid, |3|" in text
    assert assemble(text).only.words() == k.words()
    back = Module.from_bytes(Module({"k": k}).to_bytes()).only
    assert back.variants == k.variants and back.words() == k.words()


@pytest.mark.parametrize("operand, text", [
    ("[c[out]+8]", "ldg [c[out]+8]"), ("[c[0]-4]", "ldg [c[out]-4]"), ("[%ctaid.y]", "ldg [%ctaid.y]"),
    ("[ c[ n ] + 4 ]", "ldg [c[n]+4]"),
])
def test_memory_bases(operand, text):
    k = assemble(f".kernel k\n.form dflow\n.param out n\n.variant uniform-operands\n    ldg {operand}\n    exit\n").only
    assert disassemble(Module({"k": k})).splitlines()[6].split(";")[0].strip() == text


def test_parameter_words_without_names_print_as_numbers():
    from dualflow.isa.disassembler import format_instruction

    ins = Instruction(Opcode.IADD, a=5, b=1, uniform=1)
    assert format_instruction(ins, Form.DFLOW) == "iadd c[5], |1|"


HEAD = ".kernel k\n.form dflow\n.param out n\n.variant uniform-operands\n"


@pytest.mark.parametrize("source, message", [
    (".kernel k\n.form dflow\n.param out\n    iadd c[out], 1\n    exit\n",
     "4:10: error: a uniform operand needs .variant uniform-operands"),
    (".kernel k\n.form dflow\n.param out\n    mov %ctaid.x\n    exit\n",
     "4:9: error: a uniform operand needs .variant uniform-operands"),
    (".kernel k\n.param out\n    iadd r1, c[out], 1\n    exit\n",
     "3:14: error: uniform operand c[out] in a REG-form kernel (uniform operands are of the DFLOW form"),
    (HEAD + "    iadd c[2], 1\n    exit\n",
     "5:10: error: c[2]: parameter word 2 is not one of the 2 declared parameters"),
    (HEAD + "    iadd c[m], 1\n    exit\n", "unknown parameter 'm' in a uniform operand (declared: out, n)"),
    (HEAD + "    iadd c[-1], 1\n    exit\n", "unknown parameter '-1' in a uniform operand"),
    (HEAD + "    iadd %tid.x, 1\n    exit\n", "5:10: error: %tid.x differs between the lanes of a warp: not a uniform"),
    (HEAD + "    iadd %laneid, 1\n    exit\n", "%laneid differs between the lanes of a warp"),
    (HEAD + "    iadd %foo, 1\n    exit\n", "unknown special register '%foo'"),
    (HEAD + "    ssy J, c[0]\nJ:\n    exit\n", "bad immediate 'c[0]'"),
])
def test_assembler_errors(source, message):
    with pytest.raises(AsmError) as info:
        assemble(source, "u.s")
    assert message in str(info.value)


def test_more_than_64_parameters():
    names = " ".join(f"p{i}" for i in range(70))
    src = f".kernel k\n.form dflow\n.param {names}\n.variant uniform-operands\n"
    assert assemble(src + "    mov c[p63]\n    exit\n").only.code[0].b == 63
    with pytest.raises(AsmError, match="c\\[64\\]: uniform operands name parameter words 0..63 \\(read this one "
                                       "with ldc\\)"):
        assemble(src + "    mov c[p64]\n    exit\n")


def test_kernel_and_loader_refuse_what_the_kernel_does_not_declare():
    code = [Instruction(Opcode.MOV, b=0, uniform=0b010), Instruction(Opcode.EXIT)]
    with pytest.raises(KernelError, match="pc 0: a uniform operand needs .variant uniform-operands"):
        Kernel("k", Form.DFLOW, code, params=["p"])
    with pytest.raises(KernelError, match=r"a uniform operand needs .variant uniform-operands \(a DFLOW-form "):
        Kernel("k", Form.REG, code, params=["p"])
    with pytest.raises(KernelError, match="pc 0: uniform operand c\\[0\\] is not one of the 0 declared parameter"):
        Kernel("k", Form.DFLOW, code, variants=UNIFORM)
    k = Kernel("k", Form.DFLOW, code, params=["p"], variants=UNIFORM)
    data = Module({"k": k}).to_bytes()
    assert Module.from_bytes(data).only.code == code
    header = json.loads(data[12:12 + struct.unpack_from("<I", data, 8)[0]])
    del header[0]["variants"]  # the same words in a header that declares no variant
    text = json.dumps(header).encode()
    undeclared = data[:8] + struct.pack("<I", len(text)) + text + struct.pack("<2Q", *k.words())
    with pytest.raises(KernelError, match="x.bin: kernel 'k', pc 0: a uniform operand needs .variant uniform-operands"):
        Module.from_bytes(undeclared, "x.bin")


def test_a_uniform_operand_beyond_dmax_is_no_distance():
    """Field values above .dmax are parameter words or special registers, not distances."""
    k = assemble(".kernel k\n.form dflow\n.dmax 12\n.ring 13\n.param out\n.variant uniform-operands\n"
                 "    mov %nwarpid\n    stg [c[out]], |1|\n    exit\n").only
    assert k.code[0].b == 74 and launch_out(k, 1, 64, 1)[2][0] == 2

"""The ``reserved-ssy`` variant of the DFLOW form (docs/isa.md, "Variants"): ``ssy L, k`` reserves
an advance of k for its region, so a warp that runs only a shorter path reaches the join at the
same RP as one that runs the longest, without ``rpinc``."""

from __future__ import annotations

import numpy as np
import pytest
from programs import launch_out

from dualflow.common.errors import AsmError, KernelFault
from dualflow.isa import Form, Instruction, Kernel, Module, Opcode, Variant, assemble, disassemble
from dualflow.isa.kernel import KernelError


def _region(advance: str, pad: str = "") -> Kernel:
    """Block 0 runs the two-instruction path, block 1 (uniformly) the empty one; after the join
    every lane stores 7, produced before the region: 3 positions back when the join's RP is the
    ssy's + 2."""
    return assemble(f""".kernel k
.form dflow
.param out
.variant reserved-ssy
    s2r %ctaid.x                 ; 0
    mov 7                        ; 1
    s2r %tid.x                   ; 2
    ssy JOIN{advance}
    brnz |3|, SHORT
    mov 1
    mov 2
    sync
SHORT:
{pad}    sync
JOIN:
    ishl |3|, 2                  ; the tid (3 back)
    ldc out
    iadd |1|, |2|
    stg [|1|], |7|               ; the 7 (7 back)
    exit
""").only


def test_the_reserved_advance_replaces_the_pad():
    padded = launch_out(_region("", "    rpinc 2\n"), 2, 32, 32)[2]
    reserved = launch_out(_region(", 2"), 2, 32, 32)[2]
    assert (padded == 7).all() and (reserved == 7).all()


def test_without_either_the_short_path_reads_what_it_never_wrote():
    with pytest.raises(KernelFault, match="illegal DFLOW read"):
        launch_out(_region(""), 2, 32, 32)


def test_assembly_round_trip_and_binary():
    k = _region(", 2")
    ssy = next(ins for ins in k.code if ins.op is Opcode.SSY)
    assert ssy.a == 2 and k.variants == frozenset({Variant.RESERVED_SSY})
    text = disassemble(Module({"k": k}))
    assert ".variant reserved-ssy" in text and "ssy JOIN, 2" in text
    assert assemble(text).only.words() == k.words()
    back = Module.from_bytes(Module({"k": k}).to_bytes()).only
    assert back.variants == k.variants and back.words() == k.words()


def test_original_form_binaries_carry_no_variants_key():
    k = _region("", "    rpinc 2\n")
    plain = Kernel(k.name, k.form, k.code, params=k.params)
    assert "variants" not in plain.metadata()


@pytest.mark.parametrize("source, message", [
    (".kernel k\n.form dflow\n    ssy J, 2\nJ:\n    exit\n",
     "3:12: error: a reserved advance needs .variant reserved-ssy"),
    (".kernel k\n.form dflow\n.variant reserved-ssy\n    ssy J, 256\nJ:\n    exit\n",
     "reserved advance 256 outside 0..255"),
    (".kernel k\n.variant reserved-ssy\n    exit\n", ".variant is for DFLOW-form kernels"),
    (".kernel k\n.form dflow\n.variant feet\n    exit\n",
     ".variant needs distinct names among reserved-ssy, uniform-operands, hands, not 'feet'"),
])
def test_assembler_errors(source, message):
    with pytest.raises(AsmError) as info:
        assemble(source, "v.s")
    assert message in str(info.value)


def test_kernel_refuses_an_advance_it_does_not_declare():
    code = [Instruction(Opcode.SSY, a=2, bimm=True, imm=1), Instruction(Opcode.EXIT)]
    with pytest.raises(KernelError, match="needs .variant reserved-ssy"):
        Kernel("k", Form.DFLOW, code)
    assert Kernel("k", Form.DFLOW, code, variants=frozenset({Variant.RESERVED_SSY})).code[0].a == 2
    with pytest.raises(KernelError, match="of the DFLOW form"):
        Kernel("k", Form.REG, [Instruction(Opcode.EXIT)], variants=frozenset({Variant.RESERVED_SSY}))


def test_decode_accepts_the_advance_only_on_ssy():
    word = Instruction(Opcode.SSY, a=5, bimm=True, imm=0).encode()
    assert Instruction.decode(word).a == 5
    bra = Instruction(Opcode.BRA, bimm=True, imm=0).encode() | (5 << 24)
    with pytest.raises(Exception, match="has no source A"):
        Instruction.decode(bra)


def test_warps_of_both_paths_in_one_launch():
    out = launch_out(_region(", 2"), 4, 64, 64)[2]
    assert np.array_equal(out, np.full(64, 7, np.uint32))

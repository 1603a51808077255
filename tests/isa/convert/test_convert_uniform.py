"""The converter's ``uniform-operands`` pass (dualflow/isa/convert/uniform.py): reads of registers that hold
a kernel parameter word or a warp-uniform special register become uniform operands, definitions
read no other way are dropped, and the code still computes what the REG form computes, in the
functional model and identically on both timing engines."""

from __future__ import annotations

import pytest
from engines import assert_same, devices
from programs import launch_out
from test_convert_reserve import _with, assert_engines_agree

from dualflow.isa import Form, Opcode, Variant, assemble
from dualflow.isa.convert import convert_kernel, convert_module
from dualflow.isa.opcodes import SPECS, UNIFORM_PARAM_WORDS
from dualflow.kernels.registry import HAND_WRITTEN, WORKLOADS
from dualflow.kernels.workload import run_workload
from dualflow.machine.presets import preset

UNIFORM = frozenset({Variant.UNIFORM_OPERANDS})
BOTH = UNIFORM | {Variant.RESERVED_SSY}


@pytest.mark.parametrize("variants", [UNIFORM, BOTH], ids=["uniform", "both"])
@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))  # the converter's training set
def test_every_workload_converts_and_checks_with_the_variant(name, variants):
    reg = WORKLOADS[name]().module(Form.REG)
    module, reports = convert_module(reg, variants=variants)
    assert run_workload(_with(name, module), "tiny", Form.DFLOW).verdict  # a wrong output raises
    for k in module:
        report = reports[k.name]
        assert Variant.UNIFORM_OPERANDS in k.variants and any(ins.uniform for ins in k.code)
        assert len(report.causes) == len(k.code)
        # what is removed is an ldc or s2r of the REG kernel, and none of it is translated
        assert report.removed and all(reg[k.name].code[pc].op in (Opcode.LDC, Opcode.S2R) for pc in report.removed)
        assert not set(report.removed) & {pc for c, pc in zip(report.causes, report.source_pc) if c == "orig"}
        assert (Variant.RESERVED_SSY in k.variants) <= (Variant.RESERVED_SSY in variants)


def test_vadd_keeps_no_parameter_or_block_index_in_the_ring():
    """vadd reads its three pointers, n and %ctaid.x / %ntid.x only as uniform operands: every ldc
    and those s2r go, only %tid.x is still read into the ring."""
    reg = WORKLOADS["vadd"]().module(Form.REG)["vadd"]
    k, report = convert_kernel(reg, variants=UNIFORM)
    ops = [ins.op for ins in k.code]
    assert Opcode.LDC not in ops and ops.count(Opcode.S2R) == 1
    assert sorted(reg.code[pc].op.name for pc in report.removed).count("LDC") == 4


#: r1 is the parameter word `a` on one path and `b` on the other: its read after the join is no
#: single uniform value and keeps the ring. r2 is `a` on both paths: a uniform operand. r3 is a
#: special register read into the ring on one path only (per lane it is %ntid.x or 7).
MIXED = """.kernel k
.param out a b
    s2r r0, %tid.x
    ishl r9, r0, 2
    ldc r8, out
    iadd r9, r9, r8
    ldc r2, a
    mov r3, 7
    ssy J
    brz r0, ELSE
    ldc r1, a
    s2r r3, %ntid.x
    sync
ELSE:
    ldc r1, b
    ldc r2, a
    sync
J:
    iadd r4, r1, r2
    iadd r4, r4, r3
    stg [r9], r4
    exit
"""


def test_reads_with_several_reaching_values_keep_the_ring():
    reg = assemble(MIXED).only
    k, report = convert_kernel(reg, variants=UNIFORM)
    adds = [ins for ins in k.code if ins.op is Opcode.IADD]
    first, second = adds[-2:]
    assert first.uniform == 0b010 and first.b == 1  # r1 from the ring, r2 as c[a]
    assert second.uniform == 0
    # r1's ldc's stay (read into the ring), the ldc of r2 go (only read as c[a]); out is c[out]
    assert sorted(reg.code[pc].op.name + str(reg.code[pc].imm) for pc in report.removed) == [
        "LDC0", "LDC4", "LDC4"]
    ref = launch_out(reg, 1, 32, 32, extra_params=(11, 22))[2]
    got = launch_out(k, 1, 32, 32, extra_params=(11, 22))[2]
    assert (ref == got).all() and ref[0] == 22 + 11 + 7 and set(ref[1:].tolist()) == {11 + 11 + 32}


def test_parameter_words_past_the_encodable_ones_keep_ldc():
    """A uniform operand names parameter words 0..63: the 65th parameter is still read with ldc."""
    names = [f"p{i}" for i in range(UNIFORM_PARAM_WORDS + 1)]
    src = (f".kernel k\n.param {' '.join(names)}\n    ldc r1, p{UNIFORM_PARAM_WORDS}\n    ldc r2, p1\n"
           "    iadd r3, r1, r2\n    ldc r4, p0\n    stg [r4], r3\n    exit\n")
    reg = assemble(src).only
    k, report = convert_kernel(reg, variants=UNIFORM)
    assert [ins.op for ins in k.code] == [Opcode.LDC, Opcode.IADD, Opcode.STG, Opcode.EXIT]
    assert k.code[1].uniform == 0b010 and k.code[2].uniform == 0b001 and report.removed == [1, 3]


def test_a_uniform_branch_condition():
    """``brnz`` on a special register: the condition is a uniform operand, its s2r is gone."""
    src = """.kernel k
.param out
    s2r r0, %ctaid.x
    s2r r5, %tid.x
    s2r r7, %ntid.x
    imad r5, r0, r7, r5
    ishl r5, r5, 2
    ldc r6, out
    iadd r5, r5, r6
    mov r1, 1
    ssy J
    brnz r0, SKIP
    mov r1, 2
    sync
SKIP:
    sync
J:
    stg [r5], r1
    exit
"""
    reg = assemble(src).only
    k, _ = convert_kernel(reg, variants=UNIFORM)
    (branch,) = [ins for ins in k.code if SPECS[ins.op].conditional]
    assert branch.uniform == 0b001 and branch.a == 64 + 3  # %ctaid.x
    ref, got = (launch_out(x, 2, 32, 64)[2] for x in (reg, k))
    assert (ref == got).all() and set(ref[:32].tolist()) == {2} and set(ref[32:].tolist()) == {1}
    # a branch without ring operands goes straight to the branch unit, in both engines alike
    devs = devices(preset("paper-rtx3080").replace(mode="dflow"))
    for dev in devs.values():
        out = dev.alloc(4 * 64)
        dev.launch(k, grid=2, block=32, params=[out])
    assert_same(devs["reference"], devs["compiled"])


def test_convert_kernel_without_the_variant_is_unchanged():
    k = WORKLOADS["vadd"]().module(Form.REG)["vadd"]
    plain, report = convert_kernel(k)
    assert not any(ins.uniform for ins in plain.code) and not plain.variants and report.removed == []


@pytest.mark.parametrize("variants", [UNIFORM, BOTH], ids=["uniform", "both"])
@pytest.mark.parametrize("name", ["bfs", "hotspot", "nw", "reduce", "gaussian"])
def test_both_timing_engines_agree_on_the_variant(name, variants):
    """Uniform operands are left out of ``source_fields``: both engines see no dependency and no
    bank read for them, and agree cycle for cycle."""
    assert_engines_agree(name, convert_module(WORKLOADS[name]().module(Form.REG), variants=variants)[0])

"""The opcode properties of the instruction-set table and the table ``dualflow isa`` prints."""

import pytest

from dualflow.isa import SPECS, Opcode
from dualflow.isa.opcodes import INT_CMPS, BranchIf, Cmp, Form, OpSpec, Syntax, UnitClass
from dualflow.isa.table import format_table


def ops(prop: str) -> set[Opcode]:
    return {op for op, spec in SPECS.items() if getattr(spec, prop)}


def test_control_properties():
    assert ops("redirects") == {Opcode.BRA, Opcode.BRNZ, Opcode.BRZ, Opcode.SYNC, Opcode.EXIT}
    assert ops("jumps") == {Opcode.BRA, Opcode.BRNZ, Opcode.BRZ}
    assert ops("has_target") == {Opcode.BRA, Opcode.BRNZ, Opcode.BRZ, Opcode.SSY}
    assert ops("conditional") == {Opcode.BRNZ, Opcode.BRZ}
    assert set(SPECS) - ops("falls_through") == {Opcode.BRA, Opcode.SYNC, Opcode.EXIT}
    assert SPECS[Opcode.BRNZ].branch_if is BranchIf.NONZERO and SPECS[Opcode.BRZ].branch_if is BranchIf.ZERO
    assert ops("issue_only") == {Opcode.NOP, Opcode.RPINC, Opcode.SSY, Opcode.BAR, Opcode.MEMBAR}


def test_address_merging_is_integer_arithmetic():
    merging = ops("merges_address")
    assert Opcode.IADD in merging and Opcode.MOV in merging and Opcode.ISHR not in merging
    assert all(SPECS[op].unit is UnitClass.INT and SPECS[op].produces for op in merging)


def test_compare_conditions():
    assert SPECS[Opcode.ISETP].conditions == SPECS[Opcode.USETP].conditions == INT_CMPS
    assert SPECS[Opcode.FSETP].conditions == frozenset(Cmp)
    assert SPECS[Opcode.IADD].conditions == frozenset()
    assert list(SPECS[Opcode.ISETP].suffixes.values()) == ["eq", "ne", "lt", "le", "gt", "ge"]
    assert "equ" in SPECS[Opcode.FSETP].suffixes.values()


def test_a_conditional_branch_must_redirect():
    with pytest.raises(ValueError, match="conditional branch"):
        OpSpec(code=0xFF, mnemonic="brx", syntax=Syntax.A_TARGET, unit=UnitClass.CTRL, produces=False,
               forms=frozenset(Form), branch_if=BranchIf.ZERO)


def test_table_lists_int_compare_suffixes_and_flags():
    rows = {line.split()[1]: line for line in format_table().splitlines()[1:len(SPECS) + 1]}
    assert rows["isetp"].endswith("eq ne lt le gt ge") and rows["usetp"].endswith("eq ne lt le gt ge")
    assert rows["fsetp"].endswith("num nan")
    assert rows["brnz"].split()[-2:] == ["R", "nz"] and rows["brz"].split()[-2:] == ["R", "z"]
    assert rows["rpinc"].split()[-1] == "I" and rows["iadd"].split()[-1] == "M"

"""Modes are described by their capabilities, and a layer refuses a mode it does not build."""

from __future__ import annotations

import ast

import pytest
from dummy_mode import DUMMY, refused
from paths import REPO

from dualflow.common.errors import ConfigError
from dualflow.isa import Form, assemble
from dualflow.machine.config import GpuConfig
from dualflow.machine.footprint import entries_per_warp
from dualflow.machine.mode import CAPABILITIES, Dispatch, Mode, RegisterFile, ScoreboardKind, check_implemented


def test_every_mode_has_a_row_of_capabilities():
    assert set(CAPABILITIES) == set(Mode)
    for mode in Mode:
        caps = CAPABILITIES[mode]
        assert (mode.label, mode.form, mode.register_file, mode.dispatch, mode.scoreboard) == (
            caps.label, caps.form, caps.register_file, caps.dispatch, caps.scoreboard)
        assert mode.ring == (caps.register_file is RegisterFile.RING)
        assert mode.out_of_order == (caps.dispatch is Dispatch.OUT_OF_ORDER)


def test_the_two_machines_capabilities():
    assert (Mode.BASE.form, Mode.BASE.ring, Mode.BASE.out_of_order, Mode.BASE.scoreboard) == (
        Form.REG, False, False, ScoreboardKind.REGISTERS)
    assert (Mode.DFLOW.form, Mode.DFLOW.ring, Mode.DFLOW.out_of_order, Mode.DFLOW.scoreboard) == (
        Form.DFLOW, True, True, ScoreboardKind.SLOTS)
    assert Mode.of_form(Form.REG) is Mode.BASE and Mode.of_form(Form.DFLOW) is Mode.DFLOW


def test_no_boolean_stands_for_a_mode():
    assert not hasattr(Mode.DFLOW, "dflow")  # code asks a capability, never "is it D-FLOW"


def test_check_implemented_takes_members_and_names():
    assert check_implemented(Mode.DFLOW, (Mode.BASE, Mode.DFLOW), "a layer") is Mode.DFLOW
    assert check_implemented("base", (Mode.BASE,), "a layer") is Mode.BASE
    with pytest.raises(ConfigError, match="a layer's mode must be one of base, dflow, not 'simd'"):
        check_implemented("simd", tuple(Mode), "a layer")


def test_check_implemented_refuses_a_mode_outside_the_layer():
    with pytest.raises(ConfigError, match=r"a layer does not implement mode 'dflow' \(it implements base\)"):
        check_implemented(Mode.DFLOW, (Mode.BASE,), "a layer")
    with pytest.raises(ConfigError, match=refused("a layer")):
        check_implemented(DUMMY, tuple(Mode), "a layer")
    with pytest.raises(ConfigError, match=refused("a layer")):
        check_implemented(object.__new__(type("Stand-in", (), {"value": "gpu-cc"})), tuple(Mode), "a layer")


def test_the_machine_description_refuses_a_mode_it_does_not_know():
    with pytest.raises(ConfigError, match="GpuConfig.mode must be one of base, dflow, not <FutureMode.GPU_CC"):
        GpuConfig(mode=DUMMY)


def test_the_register_file_footprint_follows_the_register_file():
    k = assemble(".kernel t\n.form reg\n.param out\nmov r1, 1\nexit\n").only
    assert entries_per_warp(k, Mode.BASE) == max(k.regs, 1)
    with pytest.raises(ConfigError, match="mode must be one of base, dflow, not <FutureMode.GPU_CC"):
        entries_per_warp(k, DUMMY)


def _mode_questions(tree: ast.AST) -> list[int]:
    """Lines that ask which mode a machine is (``x.dflow``, ``m is Mode.DFLOW``, ``m == Mode.BASE``)."""
    def names_a_mode(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Mode"

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "dflow":
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(names_a_mode(n) for n in (node.left, *node.comparators)):
            lines.append(node.lineno)
    return lines


def test_code_asks_capabilities_not_which_mode():
    root = REPO / "dualflow"
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name == "machine/mode.py":
            continue
        found += [f"{name}:{line}" for line in _mode_questions(ast.parse(path.read_text(), name))]
    assert not found, f"ask the mode's capability instead: {found}"

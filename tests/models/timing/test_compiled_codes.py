"""Every value of an enum the timing engines branch on has a branch in both engines.

The compiled engine compares a setting against the codes generated from its enum
(dualflow/models/timing/compiled/codes.py); the reference names the enum's members. A new value
(a scheduler policy, a window policy, a stall reason) without a branch would otherwise run as
another value: these tests read the engines' sources and name the value that has no branch.
The checkers are shown to catch a missing branch in a planted source. The capabilities of a
mode (register file, dispatch order) need a compiled branch for the modes the compiled engine
builds (``engine.MODES``); any other mode is refused when the engine is made."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from dualflow.common.errors import ConfigError
from dualflow.machine.config import GpuConfig
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset
from dualflow.machine.schedulers import Scheduler
from dualflow.machine.window import DflowWindow, IssueOrder, SendAhead
from dualflow.models.timing import sm as reference_sm
from dualflow.models.timing.compiled import codes, engine, issue
from dualflow.models.timing.compiled.codes import CODED, STALLS, Codes
from dualflow.models.timing.compiled.core import ST_IS_MEM, ST_IS_STORE, ST_WIDTH
from dualflow.models.timing.compiled.declare import settings_values
from dualflow.models.timing.compiled.layout import SETTINGS, Settings, settings_ref
from dualflow.models.timing.stats import STALL_REASONS

COMPILED = Path(engine.__file__).parent
REFERENCE = COMPILED.parent
#: The enums of the machine description's policies, which both engines branch on.
POLICIES = (Scheduler, DflowWindow, IssueOrder, SendAhead)


def sources(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(folder.glob("*.py"))}


def compared(texts: dict[str, str]) -> set[str]:
    """Names that are an operand of ``==`` or ``!=`` somewhere in ``texts``."""
    out = set()
    for text in texts.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
                out |= {n.id for n in [node.left, *node.comparators] if isinstance(n, ast.Name)}
    return out


def missing_compiled_branches(table: Codes, texts: dict[str, str], values=None) -> list[str]:
    """The constants of ``table`` (of ``values``, default all) no comparison in ``texts`` uses."""
    have = compared(texts)
    constants = table.constants()
    wanted = table.values if values is None else values
    return [name for name, value in zip(constants, table.values) if value in wanted and name not in have]


def missing_reference_branches(enum_type, texts: dict[str, str]) -> list[str]:
    """Members of ``enum_type`` that ``texts`` never name (``Enum.MEMBER``)."""
    named = set()
    for text in texts.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == enum_type.__name__:
                named.add(node.attr)
    return [m.name for m in enum_type if m.name not in named]


def _compiled() -> dict[str, str]:
    texts = sources(COMPILED)
    del texts["codes.py"]  # where the constants are made, not read
    return texts


def _reference() -> dict[str, str]:
    return sources(REFERENCE)  # the reference engine's modules (compiled/ and memory/ are folders of their own)


def _codes_of(enum_type) -> Codes:
    return codes.BY_ENUM[enum_type]


@pytest.mark.parametrize("enum_type", POLICIES, ids=lambda e: e.__name__)
def test_every_policy_value_has_a_compiled_branch(enum_type):
    assert missing_compiled_branches(_codes_of(enum_type), _compiled()) == []


@pytest.mark.parametrize("enum_type", POLICIES, ids=lambda e: e.__name__)
def test_every_policy_value_has_a_reference_branch(enum_type):
    assert missing_reference_branches(enum_type, _reference()) == []


@pytest.mark.parametrize("capability", ["register_file", "dispatch"])
def test_every_capability_of_a_mode_the_compiled_engine_builds_has_a_branch(capability):
    used = {getattr(mode, capability) for mode in engine.MODES}
    table = _codes_of(type(next(iter(used))))
    assert missing_compiled_branches(table, _compiled(), used) == []
    assert {s.name for s in SETTINGS} >= {"register_file", "dispatch"}


def test_every_stall_reason_is_charged_by_both_engines():
    compiled_names = {n.id for text in _compiled().values() for n in ast.walk(ast.parse(text))
                      if isinstance(n, ast.Name)}
    assert [name for name in STALLS.constants() if name not in compiled_names] == []
    strings = {n.value for n in ast.walk(ast.parse(Path(reference_sm.__file__).read_text()))
               if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert [reason for reason in STALL_REASONS if reason not in strings] == []


def test_codes_are_the_values_places_and_stall_codes_their_precedence():
    for table in CODED:
        assert list(table.constants().values()) == list(range(len(table.values)))
        for value in table.values:
            assert getattr(codes, f"{table.prefix}_{table.names[table.code(value)]}") == table.code(value)
    assert {r: STALLS.code(r) for r in STALL_REASONS} == reference_sm._RANK
    with pytest.raises(ConfigError, match="no SCHEDULER code"):
        _codes_of(Scheduler).code("round-robin")


# ------------------------------------------------------------------ the checkers catch a planted defect
_LRR_MISSING = "def order(s):\n    if s.scheduler == SCHEDULER_GTO:\n        return 1\n    return 2\n"


def test_the_compiled_check_catches_a_value_without_a_branch():
    assert missing_compiled_branches(_codes_of(Scheduler), {"x.py": _LRR_MISSING}) == ["SCHEDULER_LRR"]
    both = _LRR_MISSING.replace("return 2", "return 2 if s.scheduler != SCHEDULER_LRR else 3")
    assert missing_compiled_branches(_codes_of(Scheduler), {"x.py": both}) == []
    # a constant merely mentioned (not compared) is no branch
    assert missing_compiled_branches(_codes_of(Scheduler), {"x.py": _LRR_MISSING + "X = SCHEDULER_LRR\n"}) \
        == ["SCHEDULER_LRR"]


def test_the_reference_check_catches_a_member_never_named():
    text = "ready = order is IssueOrder.READY_FIRST\n"
    assert missing_reference_branches(IssueOrder, {"x.py": text}) == ["OLDEST_FIRST"]


# ------------------------------------------------------------------ settings carry codes; unknown codes fail
def _settings(**changes) -> Settings:
    values = settings_values(SETTINGS, preset("paper-rtx3080"), record_issue=0)
    return Settings(**values)._replace(**changes)


def test_settings_hold_the_codes_of_the_configuration():
    config = preset("paper-rtx3080").replace(mode="dflow", **{"sm.scheduler": "lrr", "sm.dflow_window": "per-warp"})
    s = Settings(**settings_values(SETTINGS, config, record_issue=1))
    assert s.scheduler == codes.SCHEDULER_LRR and s.window == codes.WINDOW_PER_WARP
    assert s.register_file == codes.REGISTER_FILE_RING and s.dispatch == codes.DISPATCH_OUT_OF_ORDER
    assert s.record_issue == 1 and s.ring == 1 and s.num_sms == config.num_sms
    base = Settings(**settings_values(SETTINGS, GpuConfig(), record_issue=0))
    assert base.register_file == codes.REGISTER_FILE_NAMED and base.dispatch == codes.DISPATCH_IN_ORDER


def test_an_unknown_code_is_an_error_in_compiled_code():
    table = np.zeros((2, ST_WIDTH), np.int64)
    table[1, ST_IS_MEM], table[1, ST_IS_STORE] = 1, 0  # pc 1 is a load
    assert issue.may_send_ahead_of(settings_ref(_settings(send_ahead=codes.SEND_AHEAD_LOADS)), table, 1)
    assert not issue.may_send_ahead_of(settings_ref(_settings(send_ahead=codes.SEND_AHEAD_LOADS)), table, 0)
    assert issue.ready_first(settings_ref(_settings(issue_order=codes.ISSUE_ORDER_READY_FIRST)))
    unknown = len(SendAhead)
    with pytest.raises(ValueError, match="SEND_AHEAD"):
        issue.may_send_ahead_of(settings_ref(_settings(send_ahead=unknown)), table, 1)
    with pytest.raises(ValueError, match="ISSUE_ORDER"):
        issue.ready_first(settings_ref(_settings(issue_order=len(IssueOrder))))


def test_the_compiled_engine_refuses_a_mode_it_does_not_build(monkeypatch):
    monkeypatch.setattr(engine, "MODES", (Mode.BASE,))
    with pytest.raises(ConfigError, match="compiled timing engine does not implement mode 'dflow'"):
        engine.CompiledGpu(preset("paper-rtx3080").replace(mode="dflow"))

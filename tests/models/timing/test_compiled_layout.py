"""The compiled engine's one declaration of its settings, SM state and counters
(dualflow/models/timing/compiled/layout.py) and what is derived from it (declare.py): each
configuration setting reads a field of every preset, the generated constructors take the
declared fields in order, and every per-SM statistic is fed by exactly one declared counter."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from dualflow.machine.config import GpuConfig
from dualflow.machine.presets import PRESETS, preset
from dualflow.models.timing.compiled import core, layout
from dualflow.models.timing.compiled.declare import CONFIG, ENGINE, encode, settings_values
from dualflow.models.timing.compiled.layout import COUNTERS, SETTINGS, SM_STATE, Settings, SmState
from dualflow.models.timing.stats import TimingStats


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_configuration_setting_reads_the_machine_description(name):
    config = preset(name)
    values = settings_values(SETTINGS, config, record_issue=0)
    assert list(values) == list(Settings._fields)
    for s in SETTINGS:
        if s.source == CONFIG:
            assert isinstance(values[s.name], int), s.name
    assert values["max_warps"] == config.sm.max_warps and values["parts"] == config.sm.partitions


def test_settings_values_want_exactly_the_engine_options():
    with pytest.raises(TypeError, match="record_issue"):
        settings_values(SETTINGS, GpuConfig())
    with pytest.raises(TypeError, match="ring"):
        settings_values(SETTINGS, GpuConfig(), record_issue=0, ring=3)  # a launch quantity is not an option
    assert [s.name for s in SETTINGS if s.source == ENGINE] == ["record_issue"]
    assert encode(True) == 1 and encode(7) == 7


@pytest.mark.parametrize("make, fields", [
    (layout._settings_ref, Settings._fields), (layout._sm_state_ref, SmState._fields),
    (core._code_ref, core.Code._fields), (core._streams_ref, core.Streams._fields),
])
def test_generated_constructors_take_the_declared_fields_in_order(make, fields):
    assert tuple(inspect.signature(make.py_func).parameters) == tuple(fields)
    assert inspect.getsource(make.py_func).startswith(f"def {make.py_func.__name__}(")  # a file numba can cache


def test_every_per_sm_statistic_is_fed_by_one_declared_counter():
    sources = {stat.source for stat in TimingStats.declarations().values()
               if stat.kind == "counter" and stat.source is not None}
    fed = [path for a in COUNTERS for path in (a.feeds if isinstance(a.feeds, tuple) else (a.feeds,))]
    assert sorted(fed) == sorted(sources)
    for a in COUNTERS:
        keys = TimingStats.declarations()[a.name].keys if a.name in TimingStats.declarations() else None
        assert keys is None or tuple(keys) == tuple(a.keys), a.name


def test_every_state_array_has_one_reset_rule():
    names = [a.name for a in SM_STATE]
    assert len(set(names)) == len(names)
    assert sorted(layout.RESET_WHOLE + layout.RESET_ROWS + layout.NOT_RESET_ARRAYS + layout.CARRIED_ARRAYS) \
        == sorted(names)


def test_generated_functions_load_from_numbas_cache_in_a_new_process():
    """numba rebuilds a cached function's globals by importing its module: generated functions
    live in the module that made them, so a second process loads them from the disk cache."""
    code = ("from dualflow.models.timing.compiled import layout\n"
            "from dualflow.machine.config import GpuConfig\n"
            "from dualflow.models.timing.compiled.declare import settings_values\n"
            "s = layout.Settings(**settings_values(layout.SETTINGS, GpuConfig(), record_issue=0))\n"
            "assert layout.settings_ref(s) is not None\n"
            "print(sum(layout._settings_ref.stats.cache_hits.values()))\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr[-2000:]
    assert runs[1].stdout.strip() == "1"

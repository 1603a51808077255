"""Every model behaves exactly as pinned in tests/data/behaviour_lock.json (see
tests/behaviour_lock.py): the functional model's traces and statistics, the timing model's cycles
and statistics on three presets, and the RTL core's cycles and retirement order on every directed
program. A refactoring must pass this unchanged; a deliberate change of behaviour regenerates the
file (``python tests/behaviour_lock.py --write``) and says why in its commit."""

from __future__ import annotations

import behaviour_lock as lock
import pytest

PINNED = lock.load()


def _entries(part: str) -> list[str]:
    return sorted(PINNED[part])


def test_lock_covers_every_workload_and_program():
    """The pinned file names every hand-written workload and directed program, so a new one cannot
    slip past the lock unpinned."""
    workloads = lock.workload_names()
    assert sorted(PINNED["functional"]) == sorted(lock.key(w, f) for w in workloads for f in ("reg", "dflow"))
    assert sorted(PINNED["timing"]) == sorted(
        lock.key(p, w, m) for p in lock.PRESETS for w in workloads for m in ("base", "dflow"))
    assert sorted(PINNED["rtl"]) == sorted(
        lock.key(m, n) for m in ("base", "dflow") for n in lock.rtl_program_names())


@pytest.mark.parametrize("name", _entries("functional"))
def test_functional_model_unchanged(name: str):
    workload, form = name.split("/")
    assert lock.functional_entry(workload, form) == PINNED["functional"][name]


@pytest.mark.parametrize("name", _entries("timing"))
def test_timing_model_unchanged(name: str):
    preset, workload, mode = name.split("/")
    assert lock.timing_entry(workload, mode, preset) == PINNED["timing"][name]


@pytest.mark.parametrize("name", _entries("timing"))
def test_compiled_timing_engine_matches_the_lock(name: str):
    """The compiled timing engine gives the reference engine's pinned fingerprints."""
    preset, workload, mode = name.split("/")
    assert lock.timing_entry(workload, mode, preset, engine="compiled") == PINNED["timing"][name]


@pytest.mark.parametrize("mode", ["base", "dflow"])
def test_rtl_core_unchanged(mode: str):
    got = lock.rtl_entries(mode)
    want = {name.split("/", 1)[1]: entry for name, entry in PINNED["rtl"].items() if name.startswith(mode + "/")}
    differ = [f"{name}: pinned {want.get(name)}, now {got.get(name)}" for name in sorted(want.keys() | got.keys())
              if want.get(name) != got.get(name)]
    assert not differ, "\n".join(differ)

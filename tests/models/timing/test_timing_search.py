"""The search for D-FLOW timing-model deadlocks (dualflow/testbench/randprog/timing_programs.py):
random programs on the D-FLOW timing model, both engines, each on a window configuration drawn
from its seed, against the functional model. A short campaign here; 10,000 programs in the slow
suite (benchmarks/timing_search.py runs campaigns and prints the counts per configuration)."""

from __future__ import annotations

import pytest

from dualflow.machine.window import DflowWindow, IssueOrder, SendAhead
from dualflow.testbench.randprog.timing_programs import (
    COLLECTOR_UNITS,
    PRESETS,
    WindowConfig,
    check_seed,
    run_search,
    unit_counts,
    window_config,
)


def test_the_configurations_cover_every_choice():
    drawn = [window_config(seed) for seed in range(1, 401)]
    assert {c.preset for c in drawn} == set(PRESETS)
    assert {c.collector_units for c in drawn} == set(COLLECTOR_UNITS)
    assert {c.window for c in drawn} == set(DflowWindow)
    assert {c.send_ahead for c in drawn} == set(SendAhead)
    assert {c.issue_order for c in drawn} == set(IssueOrder)
    assert all(c.collector_units in unit_counts(c.preset) for c in drawn)  # sub-cores: a multiple of 4
    assert window_config(7) == window_config(7)


def test_the_seed_the_old_ring_guard_deadlocked_on():
    """Seed 45 deadlocked both engines while the ring guard protected only position p - R (the
    search found it in its first 400 programs); the per-slot guard runs it."""
    result = check_seed(45, WindowConfig("paper-rtx3080", 8, DflowWindow.PER_WARP, SendAhead.ANY,
                                         IssueOrder.READY_FIRST))
    assert result.outcome == "ok", result.summary()
    assert result.cycles > 0


def test_short_campaign():
    tally = run_search(range(1, 25))
    assert tally.total == 24 and tally.outcomes["ok"] == 24, "\n".join(r.summary() for r in tally.failures)


@pytest.mark.slow
def test_campaign_of_ten_thousand_programs():
    tally = run_search(range(1, 10_001), jobs=2)
    assert tally.total == 10_000
    assert not tally.failures, "\n".join(r.summary() for r in tally.failures[:20]) + "\n" + tally.report()


def test_a_converter_defect_is_recorded_and_the_campaign_goes_on(monkeypatch):
    """A converter error (planted here) is recorded as the seed's outcome instead of ending the
    campaign: the search found one that way, seed 2863 below."""
    from dualflow.isa.convert import ConvertError
    from dualflow.testbench.randprog import timing_programs

    def broken(*args, **kwargs):
        raise ConvertError("internal: planted")

    monkeypatch.setattr(timing_programs, "convert_kernel", broken)
    tally = run_search([7, 8])
    assert tally.total == 2 and tally.outcomes["error"] == 2
    assert all(r.message == "converter: internal: planted" for r in tally.failures)


def test_seed_2863_converts_and_runs():
    """Found by the 10,000-program search: with hands and uniform operands, hand s's Dmax was 13
    and a loop's exit block, whose branch reads r23, ended in a tail that itself puts r23 within
    reach of the branch; the converter looked for a padding slot to relay r23 through instead,
    found none and stopped ("internal: no tail meets the join's frame")."""
    result = check_seed(2863)
    assert result.outcome == "ok", result.summary()

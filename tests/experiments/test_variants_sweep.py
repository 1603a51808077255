"""``benchmarks/variants.py --sweep``: the register-file capacity sweep. A smaller ring budget lets
the timing model hold more warps per SM; "matches BASE at" is the smallest budget with a speedup
of at least 1; bad input is a usage error."""

from __future__ import annotations

import benchmark_scripts
import pytest

from dualflow.experiments.design_points import VARIANT
from dualflow.kernels.workload import CheckFailed
from dualflow.machine.presets import preset


def _script():
    return benchmark_scripts.load("variants")


def test_matches_at_is_the_smallest_budget_at_least_as_fast_as_base():
    matches_at = _script().matches_at
    assert matches_at({16: 0.9, 24: 1.0, 32: 1.2}) == 24  # equal to BASE counts
    assert matches_at({48: 1.1, 16: 1.05, 24: 0.98}) == 16  # not monotone, given in any order
    assert matches_at({16: 0.999, 32: 0.5}) is None
    assert matches_at({}) is None


def test_smaller_budget_more_resident_warps():
    # vadd small (32 blocks of 4 warps; 13 registers per thread in BASE) on one SM of 16,384
    # registers: a ring of 32 entries admits 4 blocks (16 warps), one of 13 entries 9 blocks (36
    # warps), as BASE's 13 registers per thread do. The mean resident warps stay below those limits
    # (the last blocks run with fewer beside them).
    script = _script()
    config = preset("paper-rtx3080").replace(num_sms=1, **{"sm.registers": 16384})
    results = script.sweep(["vadd"], "small", config, ("original",), (32, 12, 13))
    assert list(results) == [("vadd", None, 0), ("vadd", "original", 32), ("vadd", "original", 12),
                             ("vadd", "original", 13)]
    assert "refuses" in results["vadd", "original", 12]  # a ring of 12 is not above the smallest Dmax
    small, large, base = results["vadd", "original", 13], results["vadd", "original", 32], results["vadd", None, 0]
    assert large.warps <= 16 < small.warps <= 36 and small.occupancy > large.occupancy
    assert small.cycles < large.cycles
    assert script.base_entries(script.WORKLOADS["vadd"]().module(script.Form.REG)) == 13
    assert 16 < base.warps <= 36 and abs(base.warps - small.warps) < 1  # the same footprint as ring 13


@pytest.mark.parametrize("argv, message", [
    (["--sweep", "16,32", "nosuch"], "unknown workload nosuch"),
    (["--sweep", "16,x", "vadd"], "expected comma-separated integers"),
    (["--sweep", "0,32", "vadd"], "each value must be in 1..2048"),
    (["--sweep", "16", "--size", "huge", "vadd"], "size 'huge' unknown to vadd"),
    (["--sweep", "16", "--set", "sm.nope=3", "vadd"], "no field 'nope'"),
    (["--sweep", "16", "--capacity", "vadd"], "not allowed with"),
])
def test_bad_input_is_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        _script().main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_wrong_result_names_its_run_and_exits_1(monkeypatch, capsys):
    script = _script()

    def differs(*args, **kwargs):
        raise CheckFailed("c[3] differs")

    monkeypatch.setattr(script, "run_workload", differs)
    assert script.main(["--sweep", "16", "--columns", "all", "vadd"]) == 1
    err = capsys.readouterr().err
    assert "error: vadd BASE: CheckFailed: c[3] differs" in err and "Traceback" not in err


def test_variant_ring_runs_each_workload_at_its_capacity_ring_and_at_the_chosen_one(capsys):
    # kmeans spills at 32 entries on paper-rtx3080 and the design point grows its ring; nn does not
    script = _script()
    assert script.main(["--size", "tiny", "--variant-ring", "nn", "kmeans"]) == 0
    out = capsys.readouterr().out.splitlines()
    # columns: workload, set, capacity ring, speedup, occupancy, chosen ring, speedup, occupancy, BASE's
    rows = {line.split()[0]: line.split() for line in out if line.split() and line.split()[0] in ("nn", "kmeans")}
    sm = preset("paper-rtx3080").sm
    assert rows["nn"][1:3] == ["training", "32"] and rows["nn"][5] == "32"
    assert rows["nn"][3:5] == rows["nn"][6:8]  # one ring: the same run
    assert rows["kmeans"][1:3] == ["held-back", "32"]
    assert int(rows["kmeans"][5]) == VARIANT.conversion_for("kmeans", sm).ring > 32
    assert any(line.strip().startswith("held-back at the chosen ring: ") for line in out)

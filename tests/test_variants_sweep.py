"""``benchmarks/variants.py --sweep``: the register-file capacity sweep. A smaller ring budget lets
the timing model hold more warps per SM; "matches BASE at" is the smallest budget with a speedup
of at least 1; bad input is a usage error."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from dualflow.machine.presets import preset


def _script():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "variants.py"
    spec = importlib.util.spec_from_file_location("variants", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["variants"] = module
    spec.loader.exec_module(module)
    return module


def test_matches_at_is_the_smallest_budget_at_least_as_fast_as_base():
    matches_at = _script().matches_at
    assert matches_at({16: 0.9, 24: 1.0, 32: 1.2}) == 24  # equal to BASE counts
    assert matches_at({48: 1.1, 16: 1.05, 24: 0.98}) == 16  # not monotone, given in any order
    assert matches_at({16: 0.999, 32: 0.5}) is None
    assert matches_at({}) is None


def test_smaller_budget_more_resident_warps():
    # vadd small (32 blocks of 4 warps) on one SM of 16,384 registers: a ring of 32 entries lets
    # 4 blocks in (16 warps), a ring of 16 lets 8 (32 warps); BASE holds its own registers per thread
    script = _script()
    config = preset("paper-rtx3080").replace(num_sms=1, **{"sm.registers": 16384})
    results = script.sweep(["vadd"], "small", config, ("original",), (16, 32, 12))
    assert "refuses" in results["vadd", "original", 12]  # ring 12 is not above the smallest Dmax
    small, large = results["vadd", "original", 16], results["vadd", "original", 32]
    assert 16 < small.warps <= 32 and 8 < large.warps <= 16
    assert small.occupancy > large.occupancy
    assert small.cycles < large.cycles
    base = results["vadd", None, 0]
    entries = script.base_entries(script.WORKLOADS["vadd"]().module(script.Form.REG))
    most = 16384 // (entries * 32 * 4) * 4  # whole blocks of 4 warps at BASE's registers per thread
    assert most - 4 < base.warps <= most


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

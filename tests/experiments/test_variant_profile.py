"""benchmarks/variant_profile.py and benchmarks/latency_headroom.py: BASE against the variant form
statistic by statistic, and BASE against BASE with more room per SM."""

from __future__ import annotations

import benchmark_scripts

from dualflow.experiments.design_points import VARIANT
from dualflow.experiments.simulate import simulate
from dualflow.machine.presets import preset


def test_the_profile_prints_both_runs_statistics_side_by_side(capsys):
    assert benchmark_scripts.load("variant_profile").main(["--size", "tiny", "gemm"]) == 0
    out = capsys.readouterr().out
    config = preset("paper-rtx3080")
    base = simulate("gemm", config.replace(mode="base"), size="tiny").total
    variant = simulate("gemm", config.replace(mode="dflow"), size="tiny",
                       conversion=VARIANT.conversion_for("gemm", config.sm)).total
    assert f"speedup {base.cycles / variant.cycles:.3f} at ring 32" in out
    cycles = next(line.split() for line in out.splitlines() if line.split()[:1] == ["cycles"])
    assert cycles[1:] == [f"{base.cycles:,}", f"{variant.cycles:,}"]
    issued = next(line.split() for line in out.splitlines() if line.split()[:2] == ["stall", "issued"])
    assert float(issued[2]) == round(base.stalls["issued"] / sum(base.stalls.values()), 3)


def test_headroom_doubles_every_limit_on_resident_warps_and_nothing_else(capsys):
    script = benchmark_scripts.load("latency_headroom")
    config = preset("paper-rtx3080")
    roomy = script.roomier(config, 2)
    for name in script.ROOM:
        assert getattr(roomy.sm, name) == 2 * getattr(config.sm, name)
    assert roomy.replace(**{f"sm.{name}": getattr(config.sm, name) for name in script.ROOM}) == config
    # vadd small on one SM: 32 blocks of 4 warps, more than 64 warps' worth, so the room admits more
    assert script.main(["--size", "small", "vadd"]) == 0
    row = next(line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("vadd"))
    base, room = int(row[2].replace(",", "")), int(row[4].replace(",", ""))
    assert float(row[6]) == round(base / room, 3)

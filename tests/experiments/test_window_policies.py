"""benchmarks/window_policies.py: the variant form and the per-set geomeans."""

from __future__ import annotations

import benchmark_scripts

from dualflow.experiments.design_points import VARIANT
from dualflow.experiments.simulate import simulate
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset


def test_the_table_runs_the_variant_form_and_gives_each_set_its_geomean(capsys, monkeypatch):
    policies = benchmark_scripts.load("window_policies")
    monkeypatch.setattr(policies, "POLICIES", {"reserve-5": {**policies._RESERVE, "sm.dflow_reserve": 5}})
    policies.workload_table("tiny", "paper-rtx3080", ["vadd-cu", "gemm"], form="variant", jobs=1)
    head, columns, row = capsys.readouterr().out.splitlines()
    assert "variant form" in head and columns.split()[-2:] == ["training", "held-back"]
    cells = row.split()
    vadd, gemm = float(cells[1]), float(cells[3])  # training's vadd-cu, held-back's gemm
    assert [float(c) for c in cells[-2:]] == [vadd, gemm]
    cfg = preset("paper-rtx3080").replace(**policies.POLICIES["reserve-5"])
    base = simulate("gemm", cfg.replace(mode=Mode.BASE), size="tiny").cycles
    dflow = simulate("gemm", cfg.replace(mode=Mode.DFLOW), size="tiny",
                     conversion=VARIANT.conversion_for("gemm", cfg.sm)).cycles
    assert cells[4] == f"{base}/{dflow}" and round(base / dflow, 3) == gemm

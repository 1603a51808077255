"""The experiments' design points: one table, a named baseline, and the tables of ``dualflow
reproduce`` named from it exactly as before the table existed (their columns are the published
format: test_byte_identical.py and the reproduce outputs compare them byte for byte)."""

import pytest
from dummy_mode import refused, with_mode

from dualflow.common.errors import ConfigError
from dualflow.experiments import reproduce
from dualflow.experiments.design_points import (
    BASELINE,
    COMPARED,
    DESIGN_POINTS,
    DFLOW,
    FURTHER,
    STUDY_POINTS,
    VARIANT,
    capacity_ring,
    variant_ring,
)
from dualflow.experiments.simulate import simulate
from dualflow.isa import Form
from dualflow.isa.convert import DEFAULT_VARIANTS, base_capacity_ring
from dualflow.isa.convert.options import DEFAULT_CONVERSION
from dualflow.kernels.registry import get_workload
from dualflow.machine import preset
from dualflow.machine.footprint import entries_at_full_occupancy


def test_every_point_is_named_once_and_its_runs_tell_it_apart():
    assert len({p.name for p in DESIGN_POINTS}) == len(DESIGN_POINTS)
    assert len({(p.experiment, p.mode) for p in DESIGN_POINTS}) == len(DESIGN_POINTS)  # runs.csv names the point
    assert {BASELINE, COMPARED, *FURTHER, *STUDY_POINTS} <= set(DESIGN_POINTS)
    assert BASELINE not in (COMPARED, *FURTHER)


def test_a_point_converts_each_workload_its_own_way():
    sm = preset("paper-rtx3080").sm
    assert DFLOW.conversion_for("nn", sm) is DEFAULT_CONVERSION
    variant = VARIANT.conversion_for("nn", sm)
    assert variant.variants == DEFAULT_VARIANTS and variant.given
    # nn's 19 registers leave BASE's warps to the thread limit: the ring is the file's share at 64 warps
    assert base_capacity_ring(get_workload("nn")().module(Form.REG)) == 19
    assert variant.ring == entries_at_full_occupancy(sm) == 65536 // 2048


def test_the_variant_ring_is_base_registers_where_they_limit_its_warps():
    hotspot = get_workload("hotspot")().module(Form.REG)
    sm = preset("paper-rtx3080").sm
    assert capacity_ring(hotspot, sm) == base_capacity_ring(hotspot) == 37  # above 32: registers limit BASE
    assert capacity_ring(hotspot, preset("ampere-rtx3070").sm) == 65536 // 1536  # 42 on 1,536 threads


def test_the_variant_ring_grows_past_capacity_only_where_the_capacity_ring_spills():
    sm = preset("paper-rtx3080").sm
    nn = get_workload("nn")().module(Form.REG)
    assert variant_ring(nn, sm, VARIANT.conversion) == capacity_ring(nn, sm)  # nothing spilled: nothing to trade
    kmeans = get_workload("kmeans")().module(Form.REG)
    least, chosen = capacity_ring(kmeans, sm), variant_ring(kmeans, sm, VARIANT.conversion)
    assert least == 32 and least < chosen <= 2 * least  # its cluster loop's invariant reloaded at 32 entries
    assert VARIANT.conversion_for("kmeans", sm).ring == chosen


def test_the_plan_runs_every_point_then_the_study_in_the_table_order():
    jobs = reproduce.plan("tiny", 1, ("paper-rtx3080",), ("nn",), (8,), None)
    assert [(j.experiment, j.mode.value, j.point) for j in jobs] == [
        ("paper", "base", BASELINE), ("paper", "dflow", DFLOW), ("variant", "dflow", VARIANT),
        ("warps", "base", BASELINE), ("warps", "dflow", DFLOW)]
    assert list(jobs[0].columns()) == ["experiment", "workload", "mode", "size", "seed", "preset", "warps", "num_sms"]
    assert jobs[2].tag == "paper-rtx3080/variant-nn-dflow-w64"


def _row(job, cycles, instructions):
    return {**job.columns(), "cycles": cycles, "achieved_occupancy": 0.5, "active_sm_fraction": 0.25,
            "warp_instructions": instructions, "wi_int": instructions // 2, "rf_entries_per_thread": 8}


def test_figure9_10_columns_are_named_by_the_points():
    jobs = [j for j in reproduce.plan("tiny", 1, ("paper-rtx3080",), ("nn",), (8,), None) if j.experiment != "warps"]
    rows = [_row(j, c, n) for j, c, n in zip(jobs, (100, 80, 50), (40, 44, 42))]
    (entry,) = reproduce.figure9_10(rows)
    assert list(entry) == [
        "preset", "workload", "base_cycles", "dflow_cycles", "speedup", "base_occupancy", "dflow_occupancy",
        "base_active_sms", "dflow_active_sms", "base_warp_instructions", "dflow_warp_instructions",
        "instruction_ratio", "int_ratio", "int_base", "variant_cycles", "variant_speedup", "variant_occupancy",
        "variant_instruction_ratio", "base_rf_entries", "variant_rf_entries"]
    assert (entry["speedup"], entry["variant_speedup"], entry["instruction_ratio"]) == (1.25, 2.0, 1.1)


def test_a_deadlocked_run_is_left_out_of_the_figures_and_named():
    jobs = [j for j in reproduce.plan("tiny", 1, ("paper-rtx3080",), ("nn", "bfs"), (8,), None)
            if j.experiment != "warps"]
    rows = [_row(j, 100, 40) for j in jobs]
    stuck = next(r for r in rows if r["workload"] == "bfs" and r["experiment"] == "paper" and r["mode"] == "dflow")
    stuck.update(cycles=None, warp_instructions=None,
                 check="deadlock: timing model deadlock on SM 3 at cycle 9: warp 0 at pc 7 can never proceed")
    fig = reproduce.figure9_10(rows)
    assert [e["workload"] for e in fig] == ["nn"]
    meta = {"size": "tiny", "seed": 1, "presets": ["paper-rtx3080"], "runs": len(rows), "wall_seconds": 1.0}
    text = reproduce.summary_text(fig, [], meta, rows)
    assert "the timing model deadlocked (1" in text
    assert "paper-rtx3080/paper-bfs-dflow-w64: timing model deadlock on SM 3 at cycle 9" in text


def test_simulate_refuses_a_mode_before_running_it():
    with pytest.raises(ConfigError, match=refused("the timing model")):
        simulate("nn", with_mode(preset("paper-rtx3080")), size="tiny", engine="reference")

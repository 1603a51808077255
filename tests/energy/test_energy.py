"""The whole-GPU energy model (energy/): the total is the sum of its parts, a smaller
register file leaks less, every figure names its source, and a GPU without a technology is a
clear error. A tiny run on the reference engine (well under a second)."""

import pytest

from dualflow.cli import main
from dualflow.common.errors import ConfigError
from dualflow.energy import EVENT_COUNTS, energy_table, gpu_energy
from dualflow.experiments.simulate import simulate
from dualflow.machine import preset


@pytest.fixture(scope="module")
def run():
    config = preset("paper-rtx3080").replace(num_sms=2)
    return config, simulate("gaussian", config, size="tiny", engine="reference")


def test_total_is_the_sum_of_its_parts(run):
    config, result = run
    report = gpu_energy(result.total, config)
    modelled = [c for c in report.components if c.joules is not None]
    assert report.total_joules == pytest.approx(sum(c.joules for c in modelled))
    for c in modelled:
        if c.count is not None:  # an event: count x energy per event
            assert c.joules == pytest.approx(c.count * report.table.events[c.name].pj * 1e-12)
        else:  # a static power x the run's time
            assert c.joules == pytest.approx(report.table.static[c.name].watts * report.seconds)
    assert report.seconds == pytest.approx(result.total.cycles / (config.core_clock_mhz * 1e6))
    assert report.edp == pytest.approx(report.total_joules * report.seconds)
    assert 0 < report.rf_share < 1
    assert report.rf_joules > 0 and sum(result.total.rf_reads) > 0


def test_every_event_has_a_count_and_every_figure_a_source(run):
    config, _ = run
    table = energy_table(config)
    assert set(table.events) == set(EVENT_COUNTS)
    for e in [*table.events.values(), *table.static.values()]:
        assert e.source
    assert "scaled" in table.events["rf_read"].source and "CACTI" in table.events["rf_read"].source


def test_a_smaller_register_file_leaks_less_and_reads_cheaper(run):
    config, _ = run
    full, half = energy_table(config), energy_table(config, config.sm.registers // 2)
    assert half.static["rf_leakage"].watts < full.static["rf_leakage"].watts
    assert half.events["rf_read"].pj <= full.events["rf_read"].pj
    assert half.rf_area_mm2 < full.rf_area_mm2
    fewer = energy_table(config.replace(**{"sm.registers": 16384}))  # the machine's own capacity
    assert fewer.static["rf_leakage"].watts < half.static["rf_leakage"].watts


def test_a_gpu_without_a_technology_is_a_clear_error(capsys):
    with pytest.raises(ConfigError, match="no energy technology for GPU 'fermi-gtx480'.*paper-rtx3080"):
        energy_table(preset("fermi-gtx480"))
    assert main(["energy", "gaussian", "--size", "tiny", "--preset", "fermi-gtx480"]) == 1
    err = capsys.readouterr().err
    assert "no energy technology" in err and "Traceback" not in err


def test_reproduce_writes_the_energy_tables(tmp_path, capsys):
    import csv
    import json

    out = tmp_path / "res"
    assert main(["reproduce", "nn", "--size", "tiny", "--warps", "16,64", "-j", "1", "-o", str(out)]) == 0
    assert "Energy of the whole GPU" in capsys.readouterr().out
    (row,) = csv.DictReader((out / "energy.csv").read_text().splitlines())
    assert float(row["chip_energy_ratio"]) == pytest.approx(
        float(row["dflow_chip_energy_j"]) / float(row["base_chip_energy_j"]), rel=1e-3)
    assert 0 < float(row["base_rf_dynamic_share"]) < 1
    assert (out / "energy.png").stat().st_size > 1000
    points = json.loads((out / "warps_study.json").read_text())
    by_warps = {(p["mode"], p["warps"]): p for p in points}
    # fewer resident warps need a smaller register file: less area
    assert by_warps[("base", 16)]["rf_area_mm2"] < by_warps[("base", 64)]["rf_area_mm2"]
    for e in json.loads((out / "warps_study_equal_rf.json").read_text()):
        assert e["dflow_rf_kib"] is None or e["dflow_rf_kib"] <= e["base_rf_kib"]
    run = json.loads((out / "runs" / "paper-rtx3080" / "paper-nn-base-w64.json").read_text())
    assert run["energy"]["total_joules"] == pytest.approx(float(row["base_energy_j"]))


def test_the_sram_basis_is_named_and_checked(run):
    config, _ = run
    at22, at180 = energy_table(config), energy_table(config, sram_node=180)
    assert "22 nm); dynamic energy scaled from node HP20 at 0.8 V" in at22.events["rf_read"].source
    assert "180 nm); dynamic energy scaled from node 180 at 1.5 V" in at180.events["rf_read"].source
    # the documented gap: 180 nm leakage scaled nine nodes is far below CACTI's own 22 nm leakage
    assert at180.static["rf_leakage"].watts < at22.static["rf_leakage"].watts / 100
    with pytest.raises(ConfigError, match="modelled at 22 or 180 nm, not 90"):
        energy_table(config, sram_node=90)


def test_energy_command_prints_and_writes_the_report(tmp_path, capsys):
    import json

    path = tmp_path / "e.json"
    assert main(["energy", "nn", "--size", "tiny", "--mode", "dflow", "--json", str(path)]) == 0
    text = capsys.readouterr().out
    assert "total" in text and "register file:" in text and "not modelled" in text
    energy = json.loads(path.read_text())["energy"]
    parts = [c["joules"] for c in energy["components"].values() if c["joules"] is not None]
    assert energy["total_joules"] == pytest.approx(sum(parts))
    assert energy["edp_joule_seconds"] == pytest.approx(energy["total_joules"] * energy["seconds"])


def test_rtl_figures_scale_to_the_presets_node_labelled_as_scaled():
    from dualflow.energy import rtl_scaler, technology
    from dualflow.synth import scaling

    s = rtl_scaler(180, 1.8, "paper-rtx3080")
    tech = technology("paper-rtx3080")
    assert s.energy(2.0).value == pytest.approx(scaling.scale_energy(2.0, "180", 1.8, tech.node, tech.vdd).value)
    assert s.leakage(1.0).value < 1.0 and s.delay(10.0).value < 10.0 and s.area(1.0).value == pytest.approx(
        scaling.AREA[180][scaling.node_nm(tech.node)])
    assert "scaled" in s.energy(1.0).label and "scaled, not measured" in s.heading
    with pytest.raises(ConfigError, match="node is unknown"):
        rtl_scaler(None, 1.8, "paper-rtx3080")
    with pytest.raises(ConfigError, match="not in the scaling model"):
        rtl_scaler(40, 1.8, "paper-rtx3080")
    with pytest.raises(ConfigError, match="no energy technology"):
        rtl_scaler(180, 1.8, "fermi-gtx480")

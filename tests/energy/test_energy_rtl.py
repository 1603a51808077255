"""Core-logic energies from the RTL power runs (dualflow/energy/rtl_events.py): the derivation on a small
synthetic run checked by hand, mode-specific figures, the committed data file's provenance, and
clear errors for a missing or malformed data file. Golden-model counts of vadd tiny (well under
a second); no gate-level simulation."""

import json
from pathlib import Path

import benchmark_scripts
import pytest

from dualflow.common.errors import ConfigError, DualflowError
from dualflow.energy import energy_table
from dualflow.energy.rtl_events import (
    BLOCK_EVENTS,
    DATA_FILE,
    load_rtl_runs,
    predict_blocks,
    rtl_figures,
    run_from_power,
)
from dualflow.machine import preset
from dualflow.synth import scaling

PARAMS = {"mode": "base", "warp_size": 8, "warps": 16, "register_banks": 4}
#: Golden counts of a made-up run: 100 warp-instructions, 10 of them CTRL, 40 SFU lanes.
COUNTS = {"warp_instructions": 100, "launches": 1,
          "by_class": {"ctrl": {"warp": 10, "thread": 80}, "sfu": {"warp": 5, "thread": 40},
                       "int": {"warp": 50, "thread": 400}, "fp": {"warp": 0, "thread": 0},
                       "mem": {"warp": 35, "thread": 280}}}


def _entry(mode: str, nj: float, cycles: int = 50, rf_reads: int = 200) -> dict:
    """A `dualflow power --json` entry: every block nj nJ internal, nj nJ switching, 2 nj nJ clock,
    1 uW leakage; the rf block's macros read rf_reads and written 60 times."""
    blocks = {b: {"energy_j": {"internal": nj * 1e-9, "switching": nj * 1e-9, "clock": 2 * nj * 1e-9},
                  "leakage_w": 1e-6, "macro_reads": 0, "macro_writes": 0} for b in BLOCK_EVENTS}
    blocks["rf"].update(macro_reads=rf_reads, macro_writes=60)
    return {"params": {**PARAMS, "mode": mode}, "matched": True, "library": "osu018_stdcells", "voltage_v": 1.8,
            "clock_mhz": 100.0, "cycles": cycles, "bench_cycles": cycles - 1, "blocks": blocks}


def _data(tmp_path: Path, runs: list[dict]) -> Path:
    path = tmp_path / "rtl.json"
    path.write_text(json.dumps({"runs": runs}))
    return path


def _run(mode: str, nj: float, counts=COUNTS, **kw) -> dict:
    w = {"name": "made-up", "size": "tiny", "seed": 1, "values": {}, "max_block_threads": None, "commit": None}
    return run_from_power(_entry(mode, nj, **kw), counts, w, where="test")


def _hp10(joules: float) -> float:
    return scaling.scale_energy(joules, "180", 1.8, "HP10", 0.83).value * 1e12


def test_per_event_energies_by_hand(tmp_path):
    path = _data(tmp_path, [_run("base", 1.0)])
    config = preset("paper-rtx3080")  # 32 lanes, 4 schedulers, 64 warps per SM
    f = rtl_figures(config, path=path)
    # collector + rf: 2 blocks x 2 nJ over 200 bank reads of 8 lanes; a GPU operand is 32 lanes: x4
    assert f.events["collector"].value == pytest.approx(_hp10(4e-9 / 200 * 4))
    assert f.events["writeback"].value == pytest.approx(_hp10(2e-9 / 60 * 4))
    # 8 front-end blocks x 2 nJ over 100 warp-instructions, not widened
    assert f.events["decode"].value == pytest.approx(_hp10(16e-9 / 100))
    assert f.events["ctrl_op"].value == pytest.approx(_hp10(2e-9 / 10))
    assert f.events["sfu_op"].value == pytest.approx(_hp10(2e-9 / 40))
    assert f.events["fp_op"].value is None and "no measured run" in f.events["fp_op"].source
    # clock per SM cycle: 4 sub-cores; 7 lane-wide blocks x4 lanes, 4 per-warp blocks x1 (16 warps each), 5 others
    per_core_cycle = 2e-9 * (7 * 4 + 4 * 1 + 5 * 1) * 4 / 50
    assert f.clock_pj_per_sm_cycle.value == pytest.approx(_hp10(per_core_cycle))
    leak = scaling.scale_leakage(1e-6 * (7 * 4 + 4 + 5) * 4, "180", 1.8, "HP10", 0.83).value
    assert f.leakage_w_per_sm.value == pytest.approx(leak)
    assert "scaled" in f.events["collector"].source and "made-up tiny base" in f.events["collector"].source
    table = energy_table(config, rtl_data=path, clock_gating="ungated")
    assert table.static["logic_leakage"].watts == pytest.approx(leak * config.num_sms)
    assert table.events["logic_clock"].pj == pytest.approx(f.clock_pj_per_sm_cycle.value)
    gated = energy_table(config, rtl_data=path)  # the default
    assert gated.clock_gating == "gated"
    assert gated.events["logic_clock"].pj == 0.0 and "clock gated (a lower bound)" in gated.events["logic_clock"].source
    with pytest.raises(ConfigError, match="clock gating is gated or ungated"):
        energy_table(config, rtl_data=path, clock_gating="none")


def test_mode_specific_figures_and_fallback(tmp_path):
    no_sfu = {**COUNTS, "by_class": {**COUNTS["by_class"], "sfu": {"warp": 0, "thread": 0}}}
    path = _data(tmp_path, [_run("base", 1.0), _run("dflow", 3.0, counts=no_sfu)])
    base = energy_table(preset("paper-rtx3080"), rtl_data=path)
    dflow = energy_table(preset("paper-rtx3080").replace(mode="dflow"), rtl_data=path)
    assert dflow.events["decode"].pj == pytest.approx(3 * base.events["decode"].pj)
    assert "made-up tiny dflow" in dflow.events["decode"].source
    # D-FLOW's run has no SFU op: its figure is BASE's, and says so
    assert dflow.events["sfu_op"].pj == pytest.approx(base.events["sfu_op"].pj)
    assert "no dflow run has any" in dflow.events["sfu_op"].source
    with pytest.raises(ConfigError, match="no run of mode dflow"):
        energy_table(preset("paper-rtx3080").replace(mode="dflow"), rtl_data=_data(tmp_path, [_run("base", 1.0)]))


def test_prediction_of_a_proportional_run_is_exact(tmp_path):
    runs = [_run("base", 1.0), _run("base", 2.0, cycles=100, rf_reads=400)]
    counts2 = {**COUNTS, "warp_instructions": 200, "by_class": {k: {"warp": 2 * v["warp"], "thread": 2 * v["thread"]}
                                                                for k, v in COUNTS["by_class"].items()}}
    runs[1]["counts"].update(counts2)
    runs[1]["counts"]["rf_bank_writes"] = 120
    fit, check = load_rtl_runs(_data(tmp_path, runs))
    pred = predict_blocks([fit], check)
    for block, p in pred.items():
        if p["event"] == "fp_op":  # no FP op in the fit: no prediction
            assert p["data_pred"] is None
            continue
        assert p["data_pred"] == pytest.approx(p["data"]), block
        assert p["clock_pred"] == pytest.approx(p["clock"]), block


def test_missing_or_malformed_data_is_a_clear_error(tmp_path):
    config = preset("paper-rtx3080")
    with pytest.raises(ConfigError, match=r"nope.json: No such file.*rtl_energy_data.py"):
        energy_table(config, rtl_data=tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match="bad.json: not JSON"):
        energy_table(config, rtl_data=bad)
    bad.write_text(json.dumps({"runs": [{"mode": "base"}]}))
    with pytest.raises(ConfigError, match="bad.json: malformed"):
        energy_table(config, rtl_data=bad)
    run = _run("base", 1.0)
    run["blocks"]["newunit"] = run["blocks"]["alu"]
    with pytest.raises(ConfigError, match="block\\(s\\) newunit not charged to any event"):
        energy_table(config, rtl_data=_data(tmp_path, [run]))
    unmatched = {**_run("base", 1.0), "matched": False}
    with pytest.raises(ConfigError, match="did not match the golden model"):
        energy_table(config, rtl_data=_data(tmp_path, [unmatched]))


def test_the_committed_data_names_its_runs():
    data = json.loads(DATA_FILE.read_text())
    assert data["generated_by"].startswith("python benchmarks/rtl_energy_data.py")
    assert len(data["commit"]) >= 40
    modes = set()
    for run in data["runs"]:
        assert run["matched"] and run["library"] == "osu018_stdcells"
        assert len(run["file"]["sha256"]) == 64 and run["workload"]["name"]
        assert run["params"]["warp_size"] == 8 and run["cycles"] > 0
        modes.add(run["mode"])
    assert modes == {"base", "dflow"}
    for mode in ("base", "dflow"):
        table = energy_table(preset("paper-rtx3080").replace(mode=mode))
        table_ungated = energy_table(preset("paper-rtx3080").replace(mode=mode), clock_gating="ungated")
        assert table_ungated.events["logic_clock"].pj > 0
        for event in ("collector", "decode", "ctrl_op", "sfu_op", "writeback"):
            assert table.events[event].pj > 0, (mode, event)
        assert table.static["logic_leakage"].watts > 0


def _script():
    return benchmark_scripts.load("rtl_energy_data")


def test_data_file_from_power_json_with_golden_counts(tmp_path, capsys):
    power = tmp_path / "power.json"
    entry = _entry("base", 1.0)
    entry["params"] = {**entry["params"], "regs": 32}
    power.write_text(json.dumps({"base": entry}))  # no workload record: taken as vadd tiny, seed 1
    out = tmp_path / "data.json"
    assert _script().main(["--run", f"vadd={power}", "-o", str(out)]) == 0
    (run,) = json.loads(out.read_text())["runs"]
    # vadd tiny on 8 lanes: 216 warp-instructions (the gate-level run's 216 records), 8 FP of 64 lanes
    assert run["counts"]["warp_instructions"] == 216 and run["counts"]["by_class"]["fp"] == {"warp": 8, "thread": 64}
    assert run["counts"]["rf_bank_reads"] == 200 and run["workload"]["name"] == "vadd"
    assert "nothing to check" in capsys.readouterr().out
    recorded = tmp_path / "nn.json"
    recorded.write_text(json.dumps({"base": {**entry, "workload": {"name": "nn"}}}))
    with pytest.raises(DualflowError, match="records workload 'nn', not 'vadd'"):
        _script().main(["--run", f"vadd={recorded}", "-o", str(out)])


def test_power_workload_overrides_parse():
    import argparse

    from dualflow.cli.power import _workload_value

    assert _workload_value("canes=60") == ("canes", 60)
    for bad in ("canes", "=3", "canes=x"):
        with pytest.raises(argparse.ArgumentTypeError, match="NAME=INTEGER"):
            _workload_value(bad)


@pytest.mark.slow
def test_an_fp_sfu_power_run_feeds_the_data_file(tmp_path):
    """nn (61 records, one 128-thread block: the 8-lane, 16-warp core of the vadd runs) at gate level
    in D-FLOW, then the data file from its JSON: sfu_op gets a measured figure (about 40 minutes
    here: mapping and a gate-level run)."""
    from dualflow.cli import main

    power = tmp_path / "nn.json"
    assert main(["power", "--workload", "nn", "--set", "canes=60", "--max-block-threads", "128", "--warp-size", "8",
                 "--mode", "dflow", "--json", str(power)]) == 0
    saved = json.loads(power.read_text())["dflow"]
    assert saved["workload"]["values"] == {"canes": 60} and saved["params"]["warps"] == 16
    out = tmp_path / "data.json"
    assert _script().main(["--run", f"nn={power}", "-o", str(out)]) == 0
    (run,) = load_rtl_runs(out)
    assert run.count("sfu_op") == 61 and run.data_j("sfu") > 0
    assert rtl_figures(preset("paper-rtx3080").replace(mode="dflow"), path=out).events["sfu_op"].value > 0


def test_energy_table_command_names_the_clock_and_the_mode(capsys):
    from dualflow.cli import main

    assert main(["energy", "--table", "--mode", "dflow", "--clock-gating", "ungated"]) == 0
    text = capsys.readouterr().out
    assert "core logic from the RTL runs of dflow, clock ungated" in text
    row = next(line for line in text.splitlines() if line.startswith("| logic_clock |"))
    assert float(row.split("|")[3]) > 0
    with pytest.raises(SystemExit) as exit_:
        main(["energy", "--table", "--clock-gating", "none"])
    assert exit_.value.code == 2 and "invalid choice: 'none'" in capsys.readouterr().err

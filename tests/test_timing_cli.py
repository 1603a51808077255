"""`dualflow sim` and `dualflow reproduce` from the command line: outputs, files, and bad input."""

from __future__ import annotations

import csv
import json

import pytest

from dualflow.cli import main


def test_sim_prints_summary_and_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["sim", "nn", "--size", "tiny", "--mode", "dflow", "--set", "num_sms=2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "nn (tiny) on paper-rtx3080, dflow" in text and "cycles" in text and "IPC" in text
    result = json.loads(out.read_text())
    assert result["mode"] == "dflow"
    assert result["config"]["num_sms"] == 2  # the effective configuration travels with the result
    assert result["timing"]["cycles"]["unit"] == "cycles"
    assert result["timing"]["cycles"]["value"] > 0
    assert "l1" in result["timing"]["memory"]


@pytest.mark.parametrize("args, message", [
    (["sim", "nn", "--size", "tiny", "--set", "sm.max_threads"], "key=value"),
    (["sim", "nn", "--size", "tiny", "--set", "sm.nope=3"], "no field 'nope'"),
    (["sim", "nn", "--size", "huge"], "unknown size"),
    (["sim", "nosuch", "--size", "tiny"], "unknown workload"),
    (["sim", "nn", "--size", "tiny", "--set", "sm.max_threads=128"], "does not fit an SM"),
    (["reproduce", "nn", "--size", "tiny", "--warps", "0,8"], "--warps"),
    (["reproduce", "nn", "--size", "huge"], "no size 'huge'"),
])
def test_bad_input_is_one_clear_line(args, message, capsys, tmp_path):
    assert main(args + (["-o", str(tmp_path / "x")] if args[0] == "reproduce" else [])) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_reproduce_writes_tables_and_plots(tmp_path, capsys):
    out = tmp_path / "res"
    # gaussian's Fan1 blocks have 16 warps: its 8-warp points cannot exist and are reported, not run
    assert main(["reproduce", "nn", "gaussian", "--size", "tiny", "--warps", "8,64", "-j", "1", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Figures 9 and 10" in text and "Warps-per-SM study" in text
    for name in ("figure9_10", "warps_study", "warps_study_match", "runs"):
        assert (out / f"{name}.csv").exists() and (out / f"{name}.json").exists()
    assert (out / "figure9_10.png").stat().st_size > 1000
    assert (out / "warps_study.png").stat().st_size > 1000
    fig = list(csv.DictReader((out / "figure9_10.csv").read_text().splitlines()))
    assert [r["workload"] for r in fig] == ["nn", "gaussian"]
    for r in fig:
        assert float(r["speedup"]) == pytest.approx(int(r["base_cycles"]) / int(r["dflow_cycles"]), rel=1e-3)
    points = json.loads((out / "warps_study.json").read_text())
    assert {(p["workload"], p["mode"], p["warps"]) for p in points} == {
        (w, m, n) for w in ("nn", "gaussian") for m in ("base", "dflow") for n in (8, 64)} - {
        ("gaussian", "base", 8), ("gaussian", "dflow", 8)}
    runs_table = list(csv.DictReader((out / "runs.csv").read_text().splitlines()))
    infeasible = [r for r in runs_table if r["check"].startswith("infeasible")]
    assert {(r["workload"], r["warps"]) for r in infeasible} == {("gaussian", "8")}
    runs = sorted((out / "runs").glob("*.json"))
    assert len(runs) == 12
    one = json.loads(runs[0].read_text())
    assert "config" in one and "timing" in one


def test_reproduce_help_states_the_defaults_the_code_uses(capsys):
    from dualflow.experiments.reproduce import PAPER_FOUR, WARPS

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert f"(default {','.join(map(str, WARPS))})" in text
    assert f"(default: {' '.join(PAPER_FOUR)})" in text

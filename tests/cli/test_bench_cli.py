"""`dualflow bench list` and `dualflow bench run`."""

import json

from dualflow.cli import main
from dualflow.kernels.registry import WORKLOADS


def test_bench_list_names_every_workload(capsys):
    assert main(["bench", "list"]) == 0
    out = capsys.readouterr().out
    width = max(map(len, WORKLOADS)) + 1
    for name, wl in WORKLOADS.items():
        assert f"{name:<{width}} {wl.description}" in out


def test_bench_run_prints_check_and_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "run", "reduce", "--size", "tiny", "--form", "dflow", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "reduce (dflow, size tiny: n=64; seed 1)" in text and "check: ok:" in text
    data = json.loads(out.read_text())
    assert data["workload"] == "reduce" and data["form"] == "dflow" and data["check"]["result"] == "ok"
    assert data["kernels"]["reduce"]["launches"] == 1
    assert data["total"]["warp_instructions"]["value"] == data["kernels"]["reduce"]["warp_instructions"]["value"]


def test_bench_run_unknown_workload_is_a_clean_error(capsys):
    assert main(["bench", "run", "nosuch"]) == 1
    err = capsys.readouterr().err
    assert "unknown workload 'nosuch'" in err and "Traceback" not in err

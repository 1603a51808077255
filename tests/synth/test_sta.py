"""Static timing with OpenSTA (dualflow/synth/: boundary.py, macro_liberty.py, sta.py): tiny designs
mapped in seconds (a register -> adder -> register path grows with the adder, a path out of a memory
macro carries its access time from dualflow/synth/sram.py, the achievable period is arrival + setup), bad
input; slow: the whole core in both modes through `dualflow synth --liberty osu018 --timing`."""

import dataclasses
import json

import pytest
from amaranth import Module, Signal, signed
from amaranth.back import rtlil
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from test_asic_area import TwoMemories

from dualflow.cli import main
from dualflow.common.errors import DualflowError
from dualflow.rtl.params import CoreParams
from dualflow.synth import sta as sta_module
from dualflow.synth.asic import map_design
from dualflow.synth.boundary import Boundary
from dualflow.synth.core_timing import CoreTiming, compare_timing_table, time_core
from dualflow.synth.liberty import find_liberty, read_library
from dualflow.synth.macro_liberty import DRIVER_CELL, macro_liberty, read_macro_ports
from dualflow.synth.sram import macro
from dualflow.synth.sta import run_sta


@pytest.fixture(scope="module")
def osu018():
    return read_library(find_liberty("osu018"))  # `make test` installs it and OpenSTA: missing is a failure


class Accumulator(wiring.Component):
    """A register that adds its input every cycle: register -> ripple-carry adder -> register
    (signed: Yosys declares signed wires, which Debian's OpenSTA does not parse)."""

    def __init__(self, width: int):
        super().__init__({"inc": In(width), "acc": Out(width)})
        self.width = width

    def elaborate(self, platform):
        m = Module()
        total = Signal(signed(self.width))
        m.d.sync += total.eq(total + self.inc)
        m.d.comb += self.acc.eq(total)
        return m


def _timed(design, top, library, tmp_path, **sta_options):
    report = map_design(top, rtlil.convert(design, name=top, emit_src=False), library, out_dir=tmp_path,
                        delay_target_ps=500)
    return report, run_sta(tmp_path, top, report.memories, library, 180, **sta_options)


def test_the_register_to_register_path_grows_with_the_adder(osu018, tmp_path):
    timings = {w: _timed(Accumulator(w), "acc", osu018, tmp_path / str(w))[1] for w in (4, 16)}
    for w, t in timings.items():
        path = t.worst
        # from one of the accumulator's flip-flops to another, through the adder's cells
        assert "flip-flop" in path.startpoint and "flip-flop" in path.endpoint, path.summary()
        assert path.points[0].cell == path.points[-1].cell == "DFFPOSX1"
        assert path.setup_ns > 0  # the flip-flop's library setup time
        # the achievable period is the path's arrival plus the endpoint's setup: the period minus the slack
        assert t.achievable_period_ns == pytest.approx(path.arrival_ns + path.setup_ns, abs=1e-3)
        assert t.achievable_period_ns == pytest.approx(t.period_ns - path.slack_ns, abs=1e-3)
        assert t.frequency_mhz == pytest.approx(1000 / t.achievable_period_ns)
        # the arrival is the sum of the delays along the path
        assert path.arrival_ns == pytest.approx(sum(p.delay_ns for p in path.points), abs=1e-3 * len(path.points))
        assert t.endpoints >= w and t.wns_ns == t.tns_ns == 0.0  # met at 10 ns
        # one path per endpoint: the worst block needs the achievable period
        assert max(t.block_periods.values()) == pytest.approx(t.achievable_period_ns, abs=1e-3)
    assert " signed " in (tmp_path / "16" / "mapped.v").read_text()
    assert timings[16].worst.arrival_ns > timings[4].worst.arrival_ns + 0.5
    assert len(timings[16].worst.points) > len(timings[4].worst.points)


def test_the_achievable_period_does_not_depend_on_the_constraint(osu018, tmp_path):
    report, loose = _timed(Accumulator(16), "acc", osu018, tmp_path)
    tight = run_sta(tmp_path, "acc", report.memories, osu018, 180, period_ns=1.0)
    assert tight.worst.slack_ns < 0 and tight.wns_ns == tight.worst.slack_ns and tight.tns_ns < tight.wns_ns
    assert tight.achievable_period_ns == pytest.approx(loose.achievable_period_ns, abs=1e-3)


def test_a_path_out_of_a_memory_macro_carries_its_access_time(osu018, tmp_path):
    report, t = _timed(TwoMemories(), "two", osu018, tmp_path)
    # the worst path starts at a macro's read data: its clock-to-data is the SRAM model's access time plus
    # the output driver's delay (positive, at most the driver cell's largest table entry; the ideal clock's
    # zero slew lies below the table, so OpenSTA extrapolates under its smallest entry)
    start = t.worst.macros[-1]
    assert start is t.worst.points[1] and start.pin.split("/")[0] in {"rows", "halves"}
    mem = next(m for m in report.memories if m.macro == start.cell)
    access = macro(mem.words, mem.bits, mem.read_ports, mem.write_ports, node_nm=180).access_time_ns
    driver = next(g for g in osu018.root.children("cell") if g.args == [DRIVER_CELL])
    rise = [float(x) for table in driver.children("pin")[1].children("timing")[0].groups
            if table.kind in ("cell_rise", "cell_fall") for row in table.attributes["values"] for x in row.split(",")]
    assert access < start.delay_ns <= access + max(rise) + 1e-3
    assert t.worst.arrival_ns > access
    # the macros' cycle time bounds the clock: the largest min_period of a clock pin is a macro's
    cycles = {m.macro: macro(m.words, m.bits, m.read_ports, m.write_ports, node_nm=180).cycle_time_ns
              for m in report.memories}
    assert t.min_period_ns == pytest.approx(max(cycles.values()), abs=1e-3)
    assert t.min_period_pin.endswith("_CLK")
    # the worst path into each block ends in that block; the worst of them is the critical path
    assert set(t.block_paths) == {"(top)", "counter", "(outputs)"}
    for block, path in t.block_paths.items():
        end = path.points[-1]
        assert (end.cell == "port") if block == "(outputs)" else (end.block == block and end.cell != "port")
        assert path.slack_ns >= t.worst.slack_ns
    assert min(p.slack_ns for p in t.block_paths.values()) == t.worst.slack_ns


def test_macro_models_take_every_figure_from_the_sram_model_and_the_library(osu018, tmp_path):
    report = map_design("two", rtlil.convert(TwoMemories(), name="two", emit_src=False), osu018, out_dir=tmp_path)
    ports = read_macro_ports((tmp_path / "macros.v").read_text())
    assert [(p.name, p.direction, p.width) for p in ports["sram_4x8_1r1w_m4"]] == [
        ("R0_CLK", "input", 1), ("R0_EN", "input", 1), ("R0_ADDR", "input", 2), ("R0_DATA", "output", 8),
        ("W0_CLK", "input", 1), ("W0_EN", "input", 2), ("W0_ADDR", "input", 2), ("W0_DATA", "input", 8)]
    text = macro_liberty(report.memories, ports, osu018, 180)
    fig = macro(16, 8, 1, 1, node_nm=180)
    cell = text[text.index("cell (sram_16x8_1r1w)"):]
    assert f"area : {fig.area_um2:.6g};" in cell and f"min_period : {fig.cycle_time_ns:.6g};" in cell
    assert f"cell_leakage_power : {fig.leakage_uw * 1000:.6g};" in cell  # the library's leakage unit is nW
    assert text.count("cell (") == 2 and text.count("setup_rising") == 2 * 5  # EN, ADDR of R0; EN, ADDR, DATA of W0
    with pytest.raises(DualflowError, match="ports R0_DATA have no clock"):
        read_macro_ports("module sram_x(R0_DATA);\n  output [3:0] R0_DATA;\nendmodule\n")


def test_boundary_is_the_driving_cells_fanout_of_four(osu018):
    b = Boundary.of(osu018)
    inv = next(g for g in osu018.root.children("cell") if g.args == ["INVX1"])
    cap = float(next(p for p in inv.children("pin") if p.args == ["A"]).attribute("capacitance"))
    assert (b.driving_cell, b.driving_pin, b.input_pin) == ("INVX1", "Y", "A")
    assert b.load_pf == pytest.approx(4 * cap)
    assert b.abc_constraints() == f"set_driving_cell INVX1\nset_load {4 * cap * 1000:.3f}\n"


def test_bad_netlist_liberty_and_missing_opensta_are_clear_errors(osu018, tmp_path, monkeypatch):
    report = map_design("two", rtlil.convert(TwoMemories(), name="two", emit_src=False), osu018, out_dir=tmp_path)
    # a cell the libraries do not have
    good = (tmp_path / "mapped.v").read_text()
    (tmp_path / "mapped.v").write_text(good.replace("XNOR2X1", "XNOR9X9", 1))
    with pytest.raises(DualflowError, match=r"OpenSTA failed \(reading the netlist\): cell XNOR9X9 has no timing"):
        run_sta(tmp_path, "two", report.memories, osu018, 180)
    (tmp_path / "mapped.v").write_text(good)
    with pytest.raises(DualflowError, match="mapped.v: no module nosuchtop"):
        run_sta(tmp_path, "nosuchtop", report.memories, osu018, 180)
    # a Liberty file OpenSTA cannot read (our own parser read it before it was cut)
    cut = tmp_path / "cut.lib"
    cut.write_text(osu018.path.read_text()[:5000])
    with pytest.raises(DualflowError, match=r"OpenSTA failed \(reading the cell library\): Error: cells.lib"):
        run_sta(tmp_path, "two", report.memories, dataclasses.replace(osu018, path=cut), 180)
    with pytest.raises(DualflowError, match="cannot read the mapped netlist"):
        run_sta(tmp_path / "nowhere", "two", report.memories, osu018, 180)
    monkeypatch.setattr(sta_module.shutil, "which", lambda name: None)
    with pytest.raises(DualflowError, match=r"OpenSTA \(`sta`\) is not installed: run `make sta`"):
        run_sta(tmp_path, "two", report.memories, osu018, 180)


def test_the_timing_table_sets_the_modes_side_by_side(osu018, tmp_path):
    timed = {}
    for mode, width in (("base", 4), ("dflow", 16)):
        netlist, timing = _timed(Accumulator(width), "acc", osu018, tmp_path / mode)
        timed[mode] = CoreTiming(timing, netlist, 500)
    rows = compare_timing_table(timed["base"], timed["dflow"]).splitlines()
    assert rows[1].startswith("critical path BASE : ") and timed["base"].timing.worst.summary() in rows[1]
    a, b = (timed[m].timing.achievable_period_ns for m in ("base", "dflow"))
    period = next(r for r in rows if r.startswith("achievable period"))
    assert period.split()[-3:] == [f"{a:.2f}", f"{b:.2f}", f"{100 * (b - a) / a:+.1f}%"]
    assert timed["dflow"].to_dict()["netlist"] == "timing-driven mapping (abc -D 500 -constr)"


def test_timing_needs_a_library_of_known_node_and_the_cli_needs_liberty(osu018, capsys):
    with pytest.raises(DualflowError, match="the node of .* is unknown: use a known library"):
        time_core(CoreParams(), osu018, None)
    assert main(["synth", "--timing"]) != 0
    err = capsys.readouterr().err
    assert "--timing needs --liberty" in err and "Traceback" not in err


def test_cli_prints_and_writes_the_timing(osu018, tmp_path, capsys, monkeypatch):
    """`dualflow synth --liberty osu018 --timing`, with a tiny design standing in for the core."""
    import dualflow.cli.asic as cli_asic
    import dualflow.synth.core_timing as core_timing

    netlist, timing = _timed(Accumulator(8), "acc", osu018, tmp_path / "acc")
    monkeypatch.setattr(cli_asic, "map_core", lambda params, library, node_nm: netlist)
    monkeypatch.setattr(core_timing, "time_core", lambda params, library, node_nm, delay_target_ps:
                        CoreTiming(timing, netlist, delay_target_ps))
    out = tmp_path / "synth.json"
    assert main(["synth", "--mode", "dflow", "--liberty", "osu018", "--timing", "--delay-target", "1234",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"critical path: {timing.worst.summary()}" in text
    assert f"achievable clock {timing.achievable_period_ns:.2f} ns ({timing.frequency_mhz:.1f} MHz)" in text
    data = json.loads(out.read_text())["dflow"]
    assert data["total"] == netlist.to_dict()["total"]
    assert data["timing"]["delay_target_ps"] == 1234 and data["timing"]["worst"]["blocks"] == ["(top)"]
    assert data["timing"]["achievable_period_ns"] == timing.achievable_period_ns
    # the same figures scaled to the paper's GPU node, labelled as scaled
    from dualflow.energy import rtl_scaler

    scaler = rtl_scaler(180, osu018.units.nominal_voltage, "paper-rtx3080")
    assert scaler.heading in text and data["scaled"]["heading"] == scaler.heading
    assert data["scaled"]["period_ns"] == pytest.approx(scaler.delay(timing.achievable_period_ns).value)
    assert data["scaled"]["logic_mm2"] == pytest.approx(scaler.area(netlist.total()["area"] / 1e6).value)


@pytest.mark.slow
def test_core_timing_both_modes(tmp_path, capsys):
    out = tmp_path / "synth.json"
    assert main(["synth", "--warp-size", "4", "--warps", "2", "--alu-latency", "1", "--liberty", "osu018", "--timing",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "critical path" in text and "MHz" in text
    data = json.loads(out.read_text())
    for mode in ("base", "dflow"):
        timing = data[mode]["timing"]
        assert 1.0 < timing["achievable_period_ns"] < 50.0
        assert timing["worst"]["blocks"] and timing["endpoints"] > 1000
        assert timing["achievable_period_ns"] >= timing["min_period_ns"] > 0

"""Power from gate-level activity (dualflow/synth/: liberty.py power data, gate_netlist.py, macro_models.py,
gate_sim.py, activity.py, power.py): a tiny design (a counter and a small memory) mapped to
the OSU 0.18 um cells and simulated at gate level under Icarus for a few cycles; toggles, clock cycles and
memory accesses counted from its VCD against what the stimulus makes; one cell's energy by hand from the
Liberty; leakage the sum of the cells'. Slow: a workload on the whole core, both modes, traces matched."""

import json
import subprocess

import pytest
from amaranth import Module
from amaranth.back import rtlil
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from dualflow.cli import main
from dualflow.common.errors import DualflowError
from dualflow.synth.activity import read_activity
from dualflow.synth.asic import map_design
from dualflow.synth.gate_netlist import macro_geometry
from dualflow.synth.gate_sim import gate_level
from dualflow.synth.liberty import find_liberty, parse_liberty, read_library
from dualflow.synth.power import power_of_vcd
from dualflow.synth.sram import macro

CLOCK_NS = 10


@pytest.fixture(scope="module")
def osu018():
    return read_library(find_liberty("osu018"))  # `make test` installs it: missing is a failure


def test_liberty_pins_power_tables_and_units(osu018):
    u = osu018.units
    assert (u.time_s, u.capacitance_f, u.voltage_v, u.leakage_w, u.nominal_voltage) == (1e-9, 1e-12, 1.0, 1e-9, 1.8)
    assert u.energy_j == 1e-12  # pF x V^2
    dff = osu018.cells["DFFPOSX1"]
    clk, q = dff.pins["CLK"], dff.pins["Q"]
    assert clk.clock and clk.direction == "input" and clk.capacitance == 0.0279235
    assert dff.outputs() == ["Q"] and not dff.pins["D"].clock
    rise, fall = clk.power[""]  # passive: per transition of CLK, by its transition time
    assert rise.transition == (0.06, 0.24, 0.48, 0.9, 1.2, 1.8) and rise.load == ()
    assert rise.lookup(0.06) == 0.006865 and fall.lookup(0.24) == 0.129769
    assert rise.lookup(0.15) == pytest.approx((0.006865 + 0.006943) / 2)  # halfway between two indices
    # the output table is stored (load x transition) in the file: row 1 is the load 0.005 pF
    q_rise, _ = q.power["CLK"]
    assert q_rise.load == (0.005, 0.0125, 0.025, 0.075, 0.15)
    assert q_rise.lookup(0.06, 0.005) == 0.040752 and q_rise.lookup(0.06, 0.0125) == 0.041217
    assert set(osu018.cells["AOI21X1"].pins["Y"].power) == {"A", "B", "C"}


def test_a_table_whose_values_do_not_fit_its_indices_is_an_error(tmp_path):
    text = ("library (x) { power_lut_template (t) { variable_1 : input_transition_time; index_1 (\"1, 2\"); }\n"
            "cell (C) { area : 1; pin (A) { direction : input; capacitance : 0.1;\n"
            "internal_power () { rise_power (t) { values (\"1, 2, 3\"); } } } } }")
    (tmp_path / "x.lib").write_text(text)
    parse_liberty(text)
    with pytest.raises(DualflowError, match="pin A: a power table's values do not match its indices"):
        read_library(tmp_path / "x.lib")


class Tiny(wiring.Component):
    """An 8-bit counter (counts while ``step``) and a 16 x 8 memory with a read enable and a write."""

    def __init__(self):
        super().__init__({"count": Out(8), "rdata": Out(8), "step": In(1), "re": In(1), "we": In(1), "addr": In(4),
                          "data": In(8)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=8, depth=16, init=[])
        w, r = mem.write_port(), mem.read_port(transparent_for=())
        m.d.sync += self.count.eq(self.count + self.step)
        m.d.comb += [w.addr.eq(self.addr), w.data.eq(self.data), w.en.eq(self.we), r.addr.eq(self.addr),
                     r.en.eq(self.re), self.rdata.eq(r.data)]
        return m


#: The stimulus, one line per cycle (applied after the falling edge): step, re, we, addr, data.
STIMULUS = [(1, 0, 1, 3, 0x5A), (1, 0, 1, 4, 0xC3), (1, 1, 0, 3, 0), (1, 1, 0, 4, 0), (1, 0, 0, 0, 0),
            (0, 1, 0, 3, 0), (1, 0, 0, 0, 0), (1, 0, 0, 0, 0), (1, 0, 0, 0, 0), (1, 0, 0, 0, 0)]


def bench(top: str) -> str:
    drive = "\n".join(f"    step = {s}; re = {r}; we = {w}; addr = {a}; data = {d}; @(negedge clk); "
                      f"$display(\"rdata %0d\", rdata);" for s, r, w, a, d in STIMULUS)
    return f"""`timescale 1ns/1ps
module tb;
  reg clk = 0, rst = 1, step = 0, re = 0, we = 0; reg [3:0] addr = 0; reg [7:0] data = 0;
  wire [7:0] count, rdata;
  {top} dut(.clk(clk), .rst(rst), .step(step), .re(re), .we(we), .addr(addr), .data(data), .count(count),
            .rdata(rdata));
  always #{CLOCK_NS // 2} clk = ~clk;
  initial begin
    @(negedge clk); @(negedge clk); rst = 0;
{drive}
    step = 0; re = 0; we = 0;
    @(negedge clk); $finish;
  end
endmodule
"""


@pytest.fixture(scope="module")
def tiny_run(osu018, tmp_path_factory):
    """The tiny design mapped, simulated gate level, its VCD read over the stimulus' cycles."""
    out = tmp_path_factory.mktemp("tiny")
    map_design("tiny", rtlil.convert(Tiny(), name="tiny", emit_src=False), osu018, out_dir=out / "netlist")
    gate = gate_level(out / "netlist", osu018, "tiny", out / "sim", root="tb.dut")
    (out / "tb.v").write_text(bench("tiny"))
    subprocess.run(["iverilog", "-g2012", "-o", str(out / "sim.vvp"), "-s", "tb", "-s", "power_dump",
                    str(out / "tb.v"), *map(str, gate.sources)], check=True, capture_output=True)
    sim = subprocess.run(["vvp", "-n", str(out / "sim.vvp")], check=True, capture_output=True, text=True)
    reads = [int(line.split()[1]) for line in sim.stdout.splitlines() if line.startswith("rdata")]
    # the stimulus' cycles (VCD time in ps): from the falling edge that ends reset to the one after the last line
    window = (2 * CLOCK_NS * 1000, (2 + len(STIMULUS)) * CLOCK_NS * 1000)
    return gate, window, reads


def test_the_mapped_netlist_runs_with_its_memory_model(tiny_run):
    gate, _window, reads = tiny_run
    assert [c.type for c in gate.flat.cells if macro_geometry(c.type)] == ["sram_16x8_1r1w"]
    # the registered read returns, one cycle later, what the first two cycles wrote; it holds while re is 0
    assert reads[:7] == [0, 0, 0x5A, 0xC3, 0xC3, 0x5A, 0x5A]


def test_toggles_cycles_and_enables_come_from_the_vcd(tiny_run):
    gate, window, _reads = tiny_run
    a = read_activity(gate.vcd, "tb.dut", window=window, enables=[[("", "re", 0)], [("", "we", 0)]])
    assert a.cycles == len(STIMULUS) and a.windows == [window]
    assert a.enabled == [sum(r for _, r, *_ in STIMULUS), sum(w for _, _, w, *_ in STIMULUS)] == [3, 2]
    steps = sum(s for s, *_ in STIMULUS)  # the counter goes 0 -> 9: bit i toggles floor(9 / 2^i) times
    for bit in range(8):
        assert a.toggles(("", "count", bit)) == steps // (1 << bit)
    assert a.rises[("", "count", 3)] == 1 and ("", "count", 3) not in a.falls
    assert a.toggles(("", "clk", 0)) == 2 * len(STIMULUS)
    assert a.toggles(("", "no_such_net", 0)) is None


def test_power_is_the_liberty_figures_times_the_activity(tiny_run, osu018):
    gate, window, _reads = tiny_run
    flat = gate.flat
    report = power_of_vcd(gate.vcd, flat, osu018, root="tb.dut", node_nm=180, clock_mhz=100, window=window)
    assert report.cycles == len(STIMULUS) and report.default_nets == 0 and report.default_energy == 0
    (top,) = report.blocks.values()
    lib_cells = [c for c in flat.cells if c.type in osu018.cells]
    assert top.leakage_w == pytest.approx(sum(osu018.cells[c.type].leakage for c in lib_cells) * 1e-9)
    assert top.cells == len(lib_cells) and top.macros == 1
    fig = macro(16, 8, 1, 1, node_nm=180)
    assert (top.reads, top.writes) == (3, 2) and top.macro_leakage_w == pytest.approx(fig.leakage_uw * 1e-6)
    assert top.energy["macro_read"] == pytest.approx(3 * fig.read_energy_pj * 1e-12)
    assert top.energy["macro_write"] == pytest.approx(2 * fig.write_energy_pj * 1e-12)
    # one cell by hand: the flip-flop of count[0] toggles every step (5 rises, 4 falls from 0 to 9)
    per_cell = power_of_vcd(gate.vcd, flat, osu018, root="tb.dut", node_nm=180, clock_mhz=100, window=window,
                            per_cell=True)
    assert per_cell.blocks["(top)"].energy == pytest.approx(top.energy)
    net = {n: i for i, names in enumerate(flat.names) for n in names}[("", "count", 0)]
    (ff,) = [c for c in flat.cells if c.type == "DFFPOSX1" and c.pins["Q"] == [net]]
    load = sum(osu018.cells[c.type].pins[p].capacitance for c in lib_cells for p, nets in c.pins.items()
               if net in nets and osu018.cells[c.type].pins[p].direction == "input")
    assert load > 0
    dff = osu018.cells["DFFPOSX1"].pins
    q_rise, q_fall = dff["Q"].power["CLK"]
    clk_rise, clk_fall = dff["CLK"].power[""]
    d_rise, d_fall = dff["D"].power[""]
    act = read_activity(gate.vcd, "tb.dut", window=window)
    d = flat.names[ff.pins["D"][0]][0]
    internal = (5 * q_rise.lookup(0.1, load) + 4 * q_fall.lookup(0.1, load)
                + act.rises.get(d, 0) * d_rise.lookup(0.1) + act.falls.get(d, 0) * d_fall.lookup(0.1)) * 1e-12
    clock = len(STIMULUS) * (clk_rise.lookup(0.1) + clk_fall.lookup(0.1)) * 1e-12
    switching = 9 * 0.5 * load * 1e-12 * 1.8 ** 2
    mine = per_cell.cells[ff.path]
    assert mine["internal"] == pytest.approx(internal) and mine["clock"] == pytest.approx(clock)
    assert mine["switching"] == pytest.approx(switching)
    assert act.toggles(d) > 0


def test_bad_input_is_a_clear_error(tmp_path, osu018, capsys):
    with pytest.raises(DualflowError, match="no such file"):
        gate_level(tmp_path, osu018, "x", tmp_path / "sim")
    (tmp_path / "bad.vcd").write_text("$timescale 1ps $end\n$scope module t $end\n")
    with pytest.raises(DualflowError, match="no \\$enddefinitions"):
        read_activity(tmp_path / "bad.vcd", "t")
    assert main(["power", "--workload", "nope"]) == 1
    assert "unknown workload 'nope'" in capsys.readouterr().err
    assert main(["power", "--workload", "vadd", "--netlist", str(tmp_path)]) == 1
    assert "--netlist is the netlist of one core" in capsys.readouterr().err
    assert main(["cosim", "prog.s", "--netlist", str(tmp_path)]) == 1
    assert "--netlist is an option of --workload" in capsys.readouterr().err
    assert main(["cosim", "--workload", "vadd", "--netlist", str(tmp_path)]) == 1
    assert "mapped.v: no such file" in capsys.readouterr().err


@pytest.mark.slow
def test_a_workload_on_the_whole_core_both_modes(tmp_path, capsys):
    """The full flow: map both cores, run vadd tiny at gate level (traces must match), power per block."""
    out = tmp_path / "power.json"
    assert main(["power", "--workload", "vadd", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "trace matches the golden model" in text and "DOES NOT MATCH" not in text
    figures = json.loads(out.read_text())
    for mode in ("base", "dflow"):
        f = figures[mode]
        assert f["matched"] and f["cycles"] > 0 and f["default_activity_share"] < 0.01
        assert f["total"]["energy_j"]["clock"] > 0 and f["total"]["macro_reads"] > 0
        assert {"rf", "fetch"} <= set(f["blocks"])


def test_the_table_gives_each_block_and_mode(tiny_run, osu018):
    from dualflow.cli.power import _table
    from dualflow.testbench.gate_power import RunPower

    gate, window, _reads = tiny_run
    report = power_of_vcd(gate.vcd, gate.flat, osu018, root="tb.dut", node_nm=180, clock_mhz=50, window=window)
    runs = {m: RunPower(m, report, m == "base", "", 12, 0.0, 0, {}) for m in ("base", "dflow")}
    text = _table(runs)
    top = report.blocks["(top)"]
    leakage = f"{top.leakage_w * 1e6:,.1f}"
    row = next(line for line in text.splitlines() if line.startswith("(top)"))
    assert row.split()[7:9] == [leakage, leakage]  # BASE and DFLOW leakage, uW
    internal_uw = top.energy["internal"] / (len(STIMULUS) / 50e6) * 1e6
    assert row.split()[1] == f"{internal_uw:,.1f}"
    assert "sram_16x8_1r1w" in text and "10 cycles in the window (12 by the bench)" in text
    assert "DFLOW: " in text and "DOES NOT MATCH" in text and "DFLOW / BASE energy: 1.000" in text


def test_a_saved_run_prints_the_same_table(tiny_run, osu018, tmp_path, capsys):
    from dualflow.cli.power import _table
    from dualflow.testbench.gate_power import RunPower

    gate, window, _reads = tiny_run
    report = power_of_vcd(gate.vcd, gate.flat, osu018, root="tb.dut", node_nm=180, clock_mhz=100, window=window)
    run = RunPower("dflow", report, True, "", 11, 1.0, 0, {"mode": "dflow"})
    saved = {"dflow": {"params": run.params, "matched": True, "bench_cycles": 11, "sim_seconds": 1.0,
                       **report.to_dict()}}
    (tmp_path / "dflow.json").write_text(json.dumps(saved))
    assert main(["power", "--from-json", str(tmp_path / "dflow.json")]) == 0
    text = capsys.readouterr().out
    assert text.startswith(_table({"dflow": run}) + "\n")
    # then the run scaled to the GPU's node, labelled so, by the scaling model
    from dualflow.energy import rtl_scaler

    scaled = text.splitlines()[-1]
    scaler = rtl_scaler(180, report.voltage, "paper-rtx3080")
    assert scaler.heading in text and scaled.startswith("DFLOW  dynamic energy of the run")
    assert f"{scaler.energy(report.total().dynamic).value * 1e9:,.3f} nJ" in scaled
    assert main(["power"]) == 1 and "give --workload NAME" in capsys.readouterr().err

"""Area in a standard-cell library (dualflow/synth/: liberty.py, macros.py, asic.py): the OSU 0.18 um
Liberty that ``make tech`` unpacks, a tiny design mapped in seconds (area = the Liberty areas of its
cells, memories as macros, not flip-flops), bad input; slow: the whole core in both modes."""

import pytest
from amaranth import Module
from amaranth.back import rtlil
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from dualflow.cli import main
from dualflow.common.errors import DualflowError
from dualflow.synth import liberty
from dualflow.synth.asic import compare_area_table, map_design, verification_features
from dualflow.synth.cacti_build import cacti_binary
from dualflow.synth.liberty import find_liberty, parse_liberty, read_library
from dualflow.synth.sram import macro


@pytest.fixture(scope="module")
def osu018():
    return read_library(find_liberty("osu018"))  # `make test` installs it: missing is a failure


class Counter(wiring.Component):
    step: In(1)
    count: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.count.eq(self.count + self.step)
        return m


class TwoMemories(wiring.Component):
    """A row-written 16 x 8 memory, a 4 x 8 memory written in 4-bit halves, and a counter submodule."""

    addr: In(4)
    data: In(8)
    we: In(2)
    rdata: Out(8)
    count: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.submodules.counter = counter = Counter()
        m.submodules.rows = rows = memory.Memory(shape=8, depth=16, init=[])
        m.submodules.halves = halves = memory.Memory(shape=8, depth=4, init=[])
        w, r = rows.write_port(), rows.read_port()
        hw, hr = halves.write_port(granularity=4), halves.read_port()
        m.d.comb += [w.addr.eq(self.addr), w.data.eq(self.data), w.en.eq(self.we[0]), r.addr.eq(self.addr + 1),
                     hw.addr.eq(self.addr[:2]), hw.data.eq(self.data), hw.en.eq(self.we), hr.addr.eq(self.addr[2:]),
                     counter.step.eq(self.we[0]), self.count.eq(counter.count),
                     self.rdata.eq(r.data ^ hr.data ^ counter.count)]
        return m


def test_the_library_has_the_osu018_cells(osu018):
    assert len(osu018.cells) == 32
    # areas in um^2: the LEF footprints of the same package (AND2X1 3.2 x 10 um, DFFPOSX1 9.6 x 10 um)
    assert osu018.cells["AND2X1"].area == 32 and osu018.cells["DFFPOSX1"].area == 96
    assert osu018.cells["DFFPOSX1"].sequential and not osu018.cells["NAND2X1"].sequential
    assert osu018.cells["INVX1"].leakage > 0
    assert osu018.footprints["AND2X1"] == 32 and osu018.footprints["OAI21X1"] == 32  # LEF SIZE 3.2 BY 10.0
    differ = {c for c, cell in osu018.cells.items() if osu018.footprints[c] != cell.area}
    assert differ == {"OAI21X1", "NAND3X1", "LATCH"}


def test_tiny_design_area_is_its_cells_liberty_area_and_memories_are_macros(osu018, tmp_path):
    report = map_design("two", rtlil.convert(TwoMemories(), name="two", emit_src=False), osu018,
                        out_dir=tmp_path / "netlist")
    # the mapped netlist is kept: one module per block, library cells and macro instances only;
    # the macros' ports apart, as black boxes
    def modules(text):
        return {line.split()[1].split("(")[0].lstrip("\\") for line in text.splitlines() if line.startswith("module ")}

    mapped, boxes = ((tmp_path / "netlist" / name).read_text() for name in ("mapped.v", "macros.v"))
    assert modules(mapped) == {"two", "two.counter"} and modules(boxes) == {"sram_16x8_1r1w", "sram_4x8_1r1w_m4"}
    assert "DFFPOSX1 " in mapped and "sram_16x8_1r1w " in mapped and "$_" not in mapped
    top, counter = report.modules
    assert (top.name, counter.name, counter.block) == ("(top)", "counter", "counter")
    for module in (top, counter):
        assert module.cells and module.area == sum(osu018.cells[c].area * n for c, n in module.cells.items())
    # Yosys's own `stat -liberty` agrees (its figure for a module includes the submodules)
    assert counter.yosys_area == pytest.approx(counter.area)
    assert top.yosys_area == pytest.approx(top.area + counter.area)
    # the storage (16 x 8 + 4 x 8 bits) is two macros; the only flip-flops are the counter's 8
    assert not any(osu018.cells[c].sequential for c in top.cells) and top.flop_area == 0
    assert sum(n for c, n in counter.cells.items() if osu018.cells[c].sequential) == 8
    assert counter.flop_area == 8 * 96
    assert top.macros == {"sram_16x8_1r1w": 1, "sram_4x8_1r1w_m4": 1} and not counter.macros
    assert [(m.name, m.words, m.bits, m.read_ports, m.write_ports, m.write_mask) for m in report.memories] == [
        ("halves", 4, 8, 1, 1, 4), ("rows", 16, 8, 1, 1, 8)]
    cells = sum(top.cells.values()) + sum(counter.cells.values())
    # the LEF footprints differ from the Liberty areas for OAI21X1 (32 vs 23) and NAND3X1 (32 vs 36) only
    for module in (top, counter):
        assert module.footprint - module.area == 9 * module.cells.get("OAI21X1", 0) - 4 * module.cells.get("NAND3X1", 0)
    assert report.total() == {"area": top.area + counter.area, "flop_area": 768.0, "cells": cells,
                              "memory_bits": 160, "footprint": top.footprint + counter.footprint,
                              "memory_area": None}
    assert set(report.blocks()) == {"(top)", "counter"}


@pytest.mark.skipif(not cacti_binary().exists(), reason="CACTI is not built (make cacti)")
def test_memories_at_a_known_node_get_the_sram_models_area(osu018):
    """At 180 nm each macro's area is dualflow/synth/sram.py's, and the table adds memories and logic."""
    report = map_design("two", rtlil.convert(TwoMemories(), name="two", emit_src=False), osu018, node_nm=180)
    figures = {m.name: macro(m.words, m.bits, m.read_ports, m.write_ports, node_nm=180) for m in report.memories}
    assert all("extrapolated" in f.source for f in figures.values())  # 4 and 16 rows: under CACTI's 32
    total = report.total()
    assert total["memory_area"] == pytest.approx(sum(f.area_um2 for f in figures.values())) and total["memory_area"] > 0
    rows = compare_area_table(report, report).splitlines()
    assert f"{total['area'] + total['memory_area']:,.0f}" in next(r for r in rows if r.startswith("core um^2"))
    assert f"{figures['rows'].area_um2:,.0f}*" in next(r for r in rows if " rows " in r)


def test_a_library_without_a_needed_cell_is_an_error(osu018):
    with pytest.raises(DualflowError, match="no cell FOO in Liberty library osu018_stdcells"):
        osu018.area_of({"FOO": 1, "INVX1": 2})


def test_missing_and_malformed_liberty_are_clear_errors(tmp_path, monkeypatch):
    monkeypatch.setitem(liberty.LIBRARIES, "nolib", ("no-such-package", "no/such/cells.lib", "tech"))
    with pytest.raises(DualflowError, match=r"Liberty library nolib is not installed: run `make tech`"):
        find_liberty("nolib")
    with pytest.raises(DualflowError, match="neither a known library .* nor an existing file"):
        find_liberty(str(tmp_path / "missing.lib"))
    bad = tmp_path / "bad.lib"
    bad.write_text("library (x) {\n  cell (A) {\n    area : 3 ;\n")
    with pytest.raises(DualflowError, match=r"bad.lib:3: malformed Liberty: unexpected end of file"):
        read_library(bad)
    bad.write_text("library (x) {\n  cell (A) {\n    area : big ;\n  }\n}\n")
    with pytest.raises(DualflowError, match="cell A: area 'big' is not a number"):
        read_library(bad)
    assert parse_liberty("library (y) { /* c */ a : \"1\" ; t (p, q) ; g (h) { } }").attributes == {
        "a": ["1"], "t": ["p", "q"]}


def test_cli_names_a_bad_liberty_without_traceback(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["synth", "--liberty", "nowhere.lib", "--json", "out.json"]) == 1
    err = capsys.readouterr().err
    assert "Liberty 'nowhere.lib': neither a known library" in err and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


@pytest.mark.slow
def test_core_area_both_modes(osu018):
    from dualflow.rtl.params import CoreParams
    from dualflow.synth.asic import compare_area_table, map_core

    reports = {m: map_core(CoreParams(mode=m, warp_size=4, warps=2, alu_latency=1), osu018) for m in ("base", "dflow")}
    for report in reports.values():
        assert {"alu", "collector", "ctrl", "fpu", "lsu", "rf", "scoreboard", "sfu", "wb"} <= set(report.blocks())
        top = next(m for m in report.modules if m.name == "(top)")
        assert top.yosys_area == pytest.approx(report.total()["area"])  # Yosys: the top with its submodules
        geometry = sorted((m.block, m.words, m.bits) for m in report.memories)
        assert [g for g in geometry if g[0].startswith("rf.")] == [(f"rf.bank{i}", 16, 128) for i in range(4)]
        assert ("fetch", 1024, 64) in geometry and geometry.count(("lsu", 256, 32)) == 4
        # the register-file banks are macros: the rf block keeps only its arbiter and glue flip-flops
        assert report.blocks()["rf"]["flop_area"] < 2 * 32 * 4 * 32 * 96 / 10
    base, dflow = (reports[m].total()["area"] for m in ("base", "dflow"))
    assert 1e6 < base < dflow  # um^2
    assert "DFLOW core-logic overhead" in compare_area_table(reports["base"], reports["dflow"])


def test_the_table_says_which_verification_features_the_core_has():
    from dualflow.rtl.params import CoreParams

    assert verification_features(CoreParams().to_dict()) == (
        "core with the retirement-trace port and DFLOW's illegal-read trap (verification features)")
    assert verification_features(CoreParams(read_check=False).to_dict()) == (
        "core with the retirement-trace port (verification features)")
    assert verification_features(CoreParams(read_check=False, trace=False).to_dict()).startswith("core without")

"""`dualflow convert` and `dualflow overhead`, and the overhead measurement."""

import csv
import io
import json

from dualflow.cli import main
from dualflow.isa import Form, Variant, assemble_file
from dualflow.isa.convert import VARIANTS, convert_module
from dualflow.kernels.overhead import CAUSES, measure
from dualflow.kernels.registry import WORKLOADS


def test_convert_writes_dflow_that_reassembles(tmp_path, capsys):
    out = tmp_path / "divloop.dflow.s"
    assert main(["convert", "dualflow/kernels/samples/divloop.reg.s", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "divloop: 26 -> " in text and "spill" in text
    module = assemble_file(out)
    assert module.only.form is Form.DFLOW


def test_convert_rejects_dflow_input_cleanly(capsys):
    assert main(["convert", "dualflow/kernels/samples/vadd.dflow.s"]) == 1
    err = capsys.readouterr().err
    assert "already in DFLOW form" in err and "Traceback" not in err


def test_measure_counts_are_consistent():
    rows = measure("reduce", "tiny")
    (row,) = rows
    added = sum(row.added[c] for c in CAUSES)
    assert row.dynamic_dflow["total"] == row.dynamic_reg["total"] + added  # nops aside, every orig maps 1:1
    duplicated = row.static_dflow - row.static_reg - sum(row.added_static.values())
    # copies of the lone `sync` of a join onto a split edge, and the bodies of unrolled loops
    _, reports = convert_module(WORKLOADS["reduce"]().module(Form.REG))
    assert duplicated == reports["reduce"].duplicated
    assert row.distances[0] == 0 and row.distances.sum() > 0


def test_overhead_command_writes_tables_and_plot(tmp_path, capsys):
    assert main(["overhead", "vadd", "divloop", "--size", "tiny", "-o", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "overhead.json").read_text())
    assert set(data["workloads"]) == {"vadd", "divloop"}
    assert data["workloads"]["vadd"]["dynamic_ratio"] == 1.0
    assert (tmp_path / "distance_cdf.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "divloop" in (tmp_path / "overhead.csv").read_text()
    # Per loop: the added instructions of each kernel sum to its total, by cause.
    rows = list(csv.DictReader(io.StringIO((tmp_path / "loops.csv").read_text())))
    assert {r["workload"] for r in rows} == {"vadd", "divloop"}
    for name, w in data["workloads"].items():
        mine = [r for r in rows if r["workload"] == name]
        assert sum(int(r["added"]) for r in mine) == sum(w["added"].values())
        for cause in CAUSES:
            assert sum(int(r[cause]) for r in mine) == w["added"][cause]


def test_overhead_command_prints_loops(capsys):
    assert main(["overhead", "divloop", "--size", "tiny", "--loops"]) == 0
    out = capsys.readouterr().out
    assert "added instructions per loop" in out and "divloop divloop" in out


def test_overhead_and_convert_with_a_variant(tmp_path, capsys):
    """``--variant reserved-ssy``: reduce's pads go, its ratio falls, and the converted file
    declares the variant and reserves the advances."""
    ratios = {}
    for variant in ([], ["--variant", "reserved-ssy"]):
        assert main(["overhead", "reduce", "--size", "tiny", *variant]) == 0
        out = capsys.readouterr().out
        assert f"variants {'reserved-ssy' if variant else 'none'}," in out
        ratios[bool(variant)] = float(next(line for line in out.splitlines() if line.startswith("reduce")).split()[6])
    assert ratios[True] < ratios[False]
    dst = tmp_path / "reduce.dflow.s"
    assert main(["convert", "dualflow/kernels/samples/reduce.reg.s", "--variant", "reserved-ssy", "-o", str(dst)]) == 0
    text = dst.read_text()
    assert ".variant reserved-ssy" in text and "rpinc" not in text and "ssy NEXT, 5" in text


def test_overhead_and_convert_with_uniform_operands_and_both_variants(tmp_path, capsys):
    """``--variant uniform-operands`` (alone and with reserved-ssy): vadd's parameters and block
    index are read as uniform operands, their ldc and s2r removed (the ``removed`` column), the
    ratio falls below 1; the converted file declares the variants and reassembles."""
    rows = {}
    both = ["--variant", "reserved-ssy", "--variant", "uniform-operands"]
    for variant in ([], ["--variant", "uniform-operands"], both):
        assert main(["overhead", "vadd", "reduce", "--size", "tiny", *variant]) == 0
        out = capsys.readouterr().out
        assert f"variants {', '.join(variant[1::2]) or 'none'}," in out
        assert out.split("\n")[1].split()[-2:] == ["removed", "sunk"]
        table = out.split("\n\n")[0]  # the instruction counts (the distance CDF follows)
        rows[len(variant)] = {line.split()[0]: line.split() for line in table.splitlines()
                              if line.startswith(("vadd", "reduce"))}
    ratio = 7  # the column of DFLOW / REG
    removed = -2  # the column of REG instructions with no translation
    assert float(rows[0]["vadd"][ratio]) == 1.0 and float(rows[0]["vadd"][removed]) == 0.0
    assert float(rows[2]["vadd"][ratio]) < 0.75 and float(rows[2]["vadd"][removed]) > 0.25
    assert float(rows[4]["reduce"][ratio]) < float(rows[2]["reduce"][ratio]) < float(rows[0]["reduce"][ratio])
    dst = tmp_path / "vadd.dflow.s"
    assert main(["convert", "dualflow/kernels/samples/vadd.reg.s", "--variant", "uniform-operands", "--variant",
                 "reserved-ssy", "-o", str(dst)]) == 0
    text = dst.read_text()
    assert ".variant uniform-operands" in text and "ldc" not in text and "c[" in text
    module = assemble_file(dst)
    assert module.only.variants == frozenset({Variant.UNIFORM_OPERANDS})


def test_measure_counts_removed_instructions():
    """With uniform-operands: DFLOW = REG + added - removed (the ldc and s2r read only as uniform
    operands), warp-instruction for warp-instruction."""
    (row,) = measure("reduce", "tiny", variants=frozenset({Variant.UNIFORM_OPERANDS}))
    assert row.removed > 0
    assert row.dynamic_dflow["total"] == row.dynamic_reg["total"] + sum(row.added.values()) - row.removed


def test_measure_counts_the_sunk_readers_runs_beyond_the_reg_count():
    """divloop with all variants: the join's ``i2f`` runs on the exit path once per group of lanes
    leaving the loop (``sunk``); DFLOW = REG + added - removed + sunk, and nothing is added."""
    (row,) = measure("divloop", "tiny", variants=VARIANTS)
    assert row.sunk > 0 and not any(row.added.values())
    assert row.dynamic_dflow["total"] == row.dynamic_reg["total"] - row.removed + row.sunk


# SKIP's sync closes the region of `ssy J` when reached inside it, and none from J: no copy of
# SKIP per stack of open regions can give it one place to reconverge.
UNSTRUCTURED = """\
.kernel bad
    s2r r0, %laneid
    iand r1, r0, 1
    ssy J
    brz r1, SKIP
    sync
SKIP:
    sync
J:
    brz r1, SKIP
    exit
"""


def test_unconvertible_kernel_names_construct_and_location(tmp_path, capsys):
    src = tmp_path / "bad.s"
    src.write_text(UNSTRUCTURED)
    out = tmp_path / "bad.dflow.s"
    assert main(["convert", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "kernel 'bad', pc 5" in err and f"{src}:8" in err and "unstructured reconvergence" in err
    assert "Traceback" not in err and not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad.s"]


def test_sync_without_ssy_is_refused(tmp_path, capsys):
    src = tmp_path / "nossy.s"
    src.write_text(".kernel k\n    s2r r0, %laneid\n    sync\n")
    assert main(["convert", str(src)]) == 1
    assert "sync with no open ssy" in capsys.readouterr().err


def test_malformed_input_gets_the_assembler_error(tmp_path, capsys):
    src = tmp_path / "typo.s"
    src.write_text(".kernel k\n    iadd r1, r2\n    exit\n")
    assert main(["convert", str(src)]) == 1
    assert f"{src}:2:5: error: iadd takes 3 operand(s)" in capsys.readouterr().err


def test_loop_breakdown_accounts_for_every_executed_instruction():
    from dualflow.isa.convert.breakdown import OUTSIDE, format_breakdown, loop_breakdown
    from dualflow.kernels.workload import run_workload, with_dflow_form

    wl = WORKLOADS["reduce"]
    reg = wl().module(Form.REG)
    dflow, reports = convert_module(reg)

    Converted = with_dflow_form(wl, dflow)

    stats = run_workload(Converted, "tiny", Form.DFLOW).by_kernel["reduce"]
    rows = loop_breakdown(reports["reduce"], stats.per_pc)
    assert {r.name for r in rows} == {"LOOP", OUTSIDE}
    assert sum(r.orig + sum(r.added.values()) for r in rows) == stats.warp_instructions
    loop = next(r for r in rows if r.name == "LOOP")
    assert loop.depth == 1 and loop.copies == 2 and loop.added
    assert format_breakdown(rows, CAUSES)[1].split()[0] in {"LOOP", "(outside"}


def test_overhead_at_bases_capacity_names_each_ring_and_reports_the_sets(capsys):
    """``--capacity PRESET``: each workload converted for the ring reproduce's variant form has
    (vadd 32 entries on paper-rtx3080's 32 per thread; hotspot more than its 37 registers, at
    which hands alone spill its step loop's invariants); the training and held-back sets are
    summarised apart."""
    assert main(["overhead", "vadd", "hotspot", "conv2d", "--size", "tiny", "--capacity", "paper-rtx3080",
                 "--variant", "hands"]) == 0
    out = capsys.readouterr().out
    assert "ring budget per workload on paper-rtx3080: vadd 32, hotspot 45, conv2d 32" in out
    assert "training set (2):" in out and "held-back set (1):" in out
    assert main(["overhead", "vadd", "--capacity", "paper-rtx3080", "--rings", "8,4"]) == 1
    assert "give --capacity or --rings, not both" in capsys.readouterr().err

"""dualflow/testbench/trace_compare.py: identical traces match; each kind of difference is detected and
reported with every differing field in one message; inactive lanes are ignored; the JSON report
is written."""

from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest

from dualflow.isa import assemble
from dualflow.models.device import Device
from dualflow.models.trace import Trace
from dualflow.testbench.trace_compare import compare_traces, write_report

SOURCE = """
.kernel k
.form reg
.param out
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, out
    iadd r2, r2, r1
    isetp.lt r3, r0, 5
    ssy JOIN
    brz r3, JOIN
    iadd r4, r0, 100
    stg [r2], r4
    sync
JOIN:
    exit
"""


@pytest.fixture(scope="module")
def golden() -> tuple[Trace, object]:
    kernel = assemble(SOURCE)["k"]
    dev = Device()
    out = dev.alloc(4 * 16)
    trace = dev.launch(kernel, grid=1, block=16, params=[out], trace=True).trace
    return trace, kernel


def _with(trace: Trace, index: int, **changes) -> Trace:
    other = copy.deepcopy(trace)
    other.records[index] = dataclasses.replace(other.records[index], **changes)
    return other


def _index(trace: Trace, op: str) -> int:
    return next(i for i, r in enumerate(trace.records) if r.op == op)


def test_identical_traces_match(golden):
    trace, kernel = golden
    result = compare_traces(trace, copy.deepcopy(trace), kernel=kernel)
    assert result.ok
    assert result.matched == len(trace.records) > 0
    assert f"{result.matched} of {len(trace.records)} model records matched" in result.summary()


def test_interleaving_between_warps_does_not_matter(golden):
    trace, kernel = golden
    shuffled = copy.deepcopy(trace)
    rng = np.random.default_rng(3)
    shuffled.records = [shuffled.records[i] for i in rng.permutation(len(shuffled.records))]
    assert compare_traces(trace, shuffled, kernel=kernel).ok


@pytest.mark.parametrize("field_name,op", [("pc", "iadd"), ("op", "iadd"), ("mask", "stg"), ("dst", "iadd")])
def test_scalar_field_mismatch_detected(golden, field_name, op):
    trace, kernel = golden
    i = _index(trace, op)
    bad = getattr(trace.records[i], field_name)
    bad = bad + "x" if isinstance(bad, str) else bad ^ 1
    result = compare_traces(trace, _with(trace, i, **{field_name: bad}), kernel=kernel)
    assert not result.ok and len(result.mismatches) == 1
    m = result.mismatches[0]
    assert m.fields == [field_name]
    assert "[MODEL]" in m.message and "[RTL]" in m.message
    assert "`" in m.message  # disassembly of the instruction


@pytest.mark.parametrize("field_name,op", [("values", "iadd"), ("addrs", "stg"), ("data", "stg")])
def test_lane_field_mismatch_detected_and_lane_named(golden, field_name, op):
    trace, kernel = golden
    i = _index(trace, op)
    rec = trace.records[i]
    lanes = list(getattr(rec, field_name))
    lanes[2] ^= 0x40
    result = compare_traces(trace, _with(trace, i, **{field_name: tuple(lanes)}), kernel=kernel)
    assert [m.fields for m in result.mismatches] == [[field_name]]
    assert f"{field_name}=[2:{getattr(rec, field_name)[2]:#x}]" in result.mismatches[0].message


def test_every_differing_field_in_one_message(golden):
    trace, kernel = golden
    i = _index(trace, "stg")
    rec = trace.records[i]
    data = list(rec.data)
    data[0] += 1
    result = compare_traces(trace, _with(trace, i, pc=rec.pc + 1, data=tuple(data)), kernel=kernel)
    assert len(result.mismatches) == 1 and result.mismatches[0].fields == ["pc", "data"]


def test_inactive_lanes_are_ignored(golden):
    trace, kernel = golden
    i = _index(trace, "stg")  # runs with lanes 0..4 only
    rec = trace.records[i]
    assert rec.mask == 0x1F
    data = list(rec.data)
    data[9] = 0xDEAD
    assert compare_traces(trace, _with(trace, i, data=tuple(data)), kernel=kernel).ok


def test_missing_and_extra_records(golden):
    trace, kernel = golden
    short = copy.deepcopy(trace)
    dropped = short.records.pop()
    result = compare_traces(trace, short, kernel=kernel)
    assert not result.ok and result.mismatches[-1].fields == ["missing"]
    assert result.mismatches[-1].seq == dropped.seq
    result = compare_traces(short, trace, kernel=kernel)
    assert not result.ok and result.mismatches[-1].fields == ["extra"]


def test_rp_compared_modulo_rtl_width():
    kernel = assemble(".kernel d\n.form dflow\n s2r %tid.x\n iadd |1|, 1\n exit\n")["d"]
    trace = Device().launch(kernel, grid=1, block=8, trace=True).trace
    i = 1
    wrapped = _with(trace, i, rp=trace.records[i].rp + (1 << 16))
    assert not compare_traces(trace, wrapped, kernel=kernel).ok
    assert compare_traces(trace, wrapped, kernel=kernel, rp_bits=16).ok
    off = _with(trace, i, rp=trace.records[i].rp + 1)
    assert compare_traces(trace, off, kernel=kernel, rp_bits=16).mismatches[0].fields == ["rp"]


def test_printing_is_capped_and_report_written(golden, tmp_path):
    trace, kernel = golden
    bad = copy.deepcopy(trace)
    bad.records = [dataclasses.replace(r, pc=r.pc + 1) for r in bad.records]
    result = compare_traces(trace, bad, kernel=kernel, max_print=3)
    text = result.summary()
    assert text.count("[MODEL]") == 3
    assert f"and {len(trace.records) - 3} more" in text
    assert "0 of" in text.splitlines()[-1]
    path = tmp_path / "report.json"
    write_report(result, path, extra={"seed": 5})
    body = json.loads(path.read_text())
    assert body["seed"] == 5 and body["ok"] is False
    assert body["mismatch_count"] == len(trace.records) == len(body["mismatches"])

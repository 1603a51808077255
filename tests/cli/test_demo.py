"""The main job (`dualflow demo`) runs, checks and reports; its JSON is complete."""

import json

from dualflow.cli import main


def test_demo_prints_and_writes_json(tmp_path, capsys):
    out = tmp_path / "demo.json"
    assert main(["demo", "--n", "200", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("vadd", "reduce", "divloop"):
        assert f"{name:<9} reg    ok" in text and f"{name:<9} dflow  ok" in text
    data = json.loads(out.read_text())
    assert [(r["sample"], r["form"]) for r in data["results"]] == [
        (s, f) for s in ("vadd", "reduce", "divloop") for f in ("reg", "dflow")]
    assert all(r["stats"]["warp_instructions"]["value"] > 0 for r in data["results"])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_trace_command_writes_readable_trace(tmp_path, capsys):
    from dualflow.models import Trace

    out = tmp_path / "t.jsonl"
    assert main(["trace", "reduce", "--form", "dflow", "--n", "130", "-o", str(out)]) == 0
    trace = Trace.read(out)
    assert trace.kernel == "reduce" and trace.form == "dflow" and trace.warp_size == 32
    per_warp = trace.by_warp()
    assert sorted(per_warp) == [(b, w) for b in range(2) for w in range(4)]
    for recs in per_warp.values():
        assert [r.seq for r in recs] == list(range(len(recs)))

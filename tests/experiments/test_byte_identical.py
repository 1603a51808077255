"""Results are byte-identical for the same inputs (issue 17, item 6): ``dualflow reproduce`` and
``dualflow sim --json`` run under two PYTHONHASHSEED values (set iteration order, and with it any
key order that depends on it, differs between them) write the same bytes.

The one thing allowed to differ is the wall-clock time of a run, ``wall_seconds`` (in the JSON
files, a column of the CSV tables, and the "in N s" of summary.txt): the comparison blanks that
value where it stands and compares everything else byte for byte, key order and PNG plots
included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from paths import REPO

ROOT = REPO
#: The value of a ``"wall_seconds": 1.234`` JSON entry, of the wall_seconds CSV column
#: (found by its header), and of summary.txt's "... simulations in 3 s".
WALL_JSON = re.compile(rb'("wall_seconds": )[-+0-9.eE]+')
WALL_SUMMARY = re.compile(rb"(simulations in )[0-9]+( s)")


def blank_wall_times(name: str, data: bytes) -> bytes:
    if name.endswith(".json"):
        return WALL_JSON.sub(rb"\1_", data)
    if name.endswith(".txt"):
        return WALL_SUMMARY.sub(rb"\1_\2", data)
    if name.endswith(".csv") and data:
        lines = data.split(b"\n")
        header = lines[0].split(b",")
        if b"wall_seconds" in header:
            col = header.index(b"wall_seconds")
            assert col == len(header) - 1  # the last column: no quoted commas after it
            lines = [line.rsplit(b",", 1)[0] if i and line else line for i, line in enumerate(lines)]
        return b"\n".join(lines)
    return data


def run(argv: list[str], hashseed: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    proc = subprocess.run([sys.executable, "-m", "dualflow", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_same(a: dict[str, bytes], b: dict[str, bytes]) -> None:
    assert sorted(a) == sorted(b)
    differ = [name for name in a if blank_wall_times(name, a[name]) != blank_wall_times(name, b[name])]
    assert not differ, f"differ between PYTHONHASHSEED values: {differ}"


def test_reproduce_output_is_byte_identical_across_hash_seeds(tmp_path):
    out = {}
    for seed in ("1", "2"):
        out[seed] = tmp_path / f"h{seed}"
        run(["reproduce", "gaussian", "nn", "--size", "tiny", "--warps", "16", "-j", "2", "-o", str(out[seed])], seed)
    a, b = files(out["1"]), files(out["2"])
    assert any(name.startswith("runs/") for name in a) and any(name.endswith(".png") for name in a)
    assert_same(a, b)


def test_sim_json_is_byte_identical_across_hash_seeds(tmp_path):
    for seed in ("1", "2"):
        run(["sim", "hotspot", "--size", "tiny", "--mode", "dflow", "--json", str(tmp_path / f"s{seed}.json")], seed)
    a = blank_wall_times("s.json", (tmp_path / "s1.json").read_bytes())
    assert a == blank_wall_times("s.json", (tmp_path / "s2.json").read_bytes())
    assert b'"wall_seconds": _' in a

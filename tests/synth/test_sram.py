"""SRAM macro figures (dualflow/synth/sram.py): CACTI 7 on a valid array, the fallback under 32 rows, growth
with the rows, bad geometries. CACTI runs take about 0.1 s each; `make test` builds CACTI first."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from dualflow.common.errors import ConfigError, DualflowError
from dualflow.synth import cacti, cacti_build, sram

needs_cacti = pytest.mark.skipif(not cacti_build.cacti_binary().exists(),
                                 reason="CACTI is not built: run `make cacti` (make test does)")


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Every test models its arrays anew (no results cached by an earlier run)."""
    monkeypatch.setattr(sram, "cache_dir", lambda: tmp_path / "sram")


@needs_cacti
def test_cacti_runs_on_a_valid_array():
    f = sram.macro(64, 32, 1, 1)
    assert f.source == cacti.VERSION  # CACTI itself, no fallback
    assert (f.words, f.bits, f.read_ports, f.write_ports, f.node_nm) == (64, 32, 1, 1, 180)
    # a 2-port cell at 180 nm is several um^2: 2,048 bits need well over 2,048 * 5 um^2 with periphery
    assert 2048 * 5 < f.area_um2 < 2048 * 100
    for value in (f.read_energy_pj, f.write_energy_pj, f.leakage_uw, f.access_time_ns, f.cycle_time_ns):
        assert value > 0


@needs_cacti
def test_cached_result_equals_a_fresh_one(tmp_path, monkeypatch):
    first = sram.macro(32, 64, 1, 1)
    assert list((tmp_path / "sram").glob("32x64-1r1w-180nm-*.json"))
    assert sram.macro(32, 64, 1, 1) == first  # read back from the cache
    monkeypatch.setattr(sram, "cache_dir", lambda: tmp_path / "other")
    assert sram.macro(32, 64, 1, 1) == first  # CACTI again: deterministic


@needs_cacti
def test_fallback_under_32_rows():
    with pytest.raises(cacti.CactiNoOrganisation):
        cacti.run(words=16, bits=32, read_ports=1, write_ports=1)
    small, at32 = sram.macro(16, 32, 1, 1), sram.macro(32, 32, 1, 1)
    assert "extrapolated linearly to 16 rows" in small.source
    for name in ("area_um2", "read_energy_pj", "write_energy_pj", "leakage_uw", "access_time_ns"):
        lo, hi = getattr(at32, name) * 16 / 32, getattr(at32, name)
        assert lo <= getattr(small, name) < hi, name


@needs_cacti
def test_more_words_cost_more_area_energy_and_leakage():
    figures = [sram.macro(words, 32, 1, 1) for words in (8, 16, 32, 64, 128)]
    for name in ("area_um2", "read_energy_pj", "write_energy_pj", "leakage_uw"):
        values = [getattr(f, name) for f in figures]
        assert values == sorted(values) and len(set(values)) == len(values), (name, values)


@needs_cacti
def test_odd_word_widths_are_padded():
    f = sram.macro(32, 12, 1, 1)
    assert f.source.endswith("word padded from 12 to 16 bits") and f.bits == 12
    padded = sram.macro(32, 16, 1, 1)
    assert dataclasses.replace(f, bits=16, source=padded.source) == padded


@pytest.mark.parametrize("args, where", [
    ((0, 32, 1, 1), "words"), ((16, 0, 1, 1), "bits"), ((16, 32, 0, 1), "read_ports"),
    ((16, 32, 1, -1), "write_ports"), ((16, 32, 1, 9), "write_ports"), ((16.0, 32, 1, 1), "words"),
    ((True, 32, 1, 1), "words"),
])
def test_bad_geometry_is_a_clear_error(args, where):
    with pytest.raises(ConfigError, match=f"SRAM macro {where} must be"):
        sram.macro(*args)


def test_unknown_node_is_a_clear_error():
    with pytest.raises(ConfigError, match="node_nm must be one of 180, 90"):
        sram.macro(64, 32, node_nm=130)


def test_extrapolation_keeps_between_proportional_and_the_32_row_value():
    at32, at64 = {"a": 10.0, "b": 10.0, "c": 10.0}, {"a": 14.0, "b": 40.0, "c": 9.0}
    out = sram.extrapolate_rows(at32, at64, 16)
    assert out["a"] == pytest.approx(8.0)  # on the line: 10 - 4/32 * 16
    assert out["b"] == pytest.approx(5.0)  # the line would go under proportional (10 * 16/32)
    assert out["c"] == pytest.approx(10.0)  # a falling line would make fewer rows cost more


def test_cacti_config_and_csv():
    text = cacti.config_text(words=16, bits=128, read_ports=1, write_ports=1, node_nm=180)
    assert "-size (bytes) 256\n" in text and "-block size (bytes) 16\n" in text
    assert "-exclusive read port 1\n-exclusive write port 1\n" in text and "-read-write port 0\n" in text
    assert "-technology (u) 0.180\n" in text and '-Force cache config - "false"' in text
    forced = cacti.config_text(words=64, bits=128, read_ports=1, write_ports=1, node_nm=180,
                               organisation=(2, 2, 1, 2, 1, 1))
    assert '-Force cache config - "true"\n-Ndwl 2\n-Ndbl 2\n-Nspd 1\n-Ndcm 2\n-Ndsam1 1\n-Ndsam2 1\n' in forced
    with pytest.raises(DualflowError, match="whole bytes"):
        cacti.config_text(words=16, bits=12, read_ports=1, write_ports=1, node_nm=180)
    with pytest.raises(DualflowError, match="lacks the columns"):
        cacti.parse_csv("Tech node (nm), Area (mm2)\n180, 1.0\n", "here")
    with pytest.raises(DualflowError, match="no result row"):
        cacti.parse_csv("", "here")


def test_node_check_patch_fails_loudly_on_other_source(tmp_path):
    (tmp_path / "io.cc").write_text("if (F_sz_um > 0.065)\n")
    with pytest.raises(DualflowError, match="expected exactly one"):
        cacti_build._patch_node_check(tmp_path)
    (tmp_path / "io.cc").write_text("else if (F_sz_um > 0.091)\n")
    cacti_build._patch_node_check(tmp_path)
    assert (tmp_path / "io.cc").read_text() == "else if (F_sz_um > 0.181)\n"


@needs_cacti
def test_table_script_prints_the_core_memories():
    out = subprocess.run([sys.executable, "-m", "dualflow.synth.sram_table", "--lanes", "4", "--warps", "2"],
                         capture_output=True, text=True, check=True).stdout
    assert "| register-file bank | 4 | 16 x 128 |" in out and "| instruction memory | 1 | 1024 x 64 |" in out
    assert "| register-file bank | 8 | 256 x 1024 |" in out  # paper-rtx3080: 65,536 registers in 8 banks
    bad = subprocess.run([sys.executable, "-m", "dualflow.synth.sram_table", "--node", "130"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "error: SRAM macro node_nm must be" in bad.stderr and "Traceback" not in bad.stderr


def test_cacti_not_built_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(cacti_build, "installed_cacti_dir", lambda: tmp_path)
    with pytest.raises(DualflowError, match=r"CACTI is not built .*run `make cacti`"):
        cacti_build.require_cacti()

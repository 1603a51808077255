"""The energy side of ``dualflow reproduce``: each run's whole-GPU energy (energy/) as
columns of its row, and the tables built from them: figures 9/10 with energy, EDP and
register-file area, and the register file's share of the GPU's energy per workload; each
comparing the compared design point with the baseline (``design_points.py``)."""

from __future__ import annotations

from typing import Any

from dualflow.common.errors import ConfigError
from dualflow.experiments.design_points import BASELINE, COMPARED

#: The report's figures a run's row carries: column -> ``EnergyReport`` attribute.
_REPORT = {"energy_j": "total_joules", "chip_energy_j": "chip_joules", "rf_energy_j": "rf_joules",
           "rf_share": "rf_share", "rf_chip_share": "rf_chip_share", "rf_dynamic_share": "rf_dynamic_share",
           "average_w": "average_watts", "edp_js": "edp", "chip_edp_js": "chip_edp"}
#: The columns ``energy_columns`` adds to a run's row (None when the preset has no technology).
COLUMNS = (*_REPORT, "rf_area_mm2", "rf_registers")


def energy_columns(result, config, rf_registers: int) -> tuple[dict[str, Any], dict | None]:
    """The row's energy columns and the full energy report (None, and empty columns, when the
    GPU has no technology in dualflow/energy/technology.py)."""
    from dualflow.energy import gpu_energy

    if not _has_technology(config):
        return dict.fromkeys(COLUMNS), None
    report = gpu_energy(result.total, config, rf_registers=rf_registers)
    row = {column: getattr(report, name) for column, name in _REPORT.items()}
    row.update(rf_area_mm2=round(report.table.rf_area_mm2, 4), rf_registers=rf_registers)
    return row, report.to_dict()


def check_priced(config) -> None:
    """Build ``config``'s energy table once, so that what pricing needs (CACTI, the RTL power
    data) fails before the simulations, not after them; nothing when the GPU has no technology."""
    from dualflow.energy import energy_table

    if _has_technology(config):
        energy_table(config)


def _has_technology(config) -> bool:
    """Has the GPU a technology in dualflow/energy/technology.py (else it is not priced)?"""
    from dualflow.energy import technology

    try:
        technology(config.name)
    except ConfigError:
        return False
    return True


def _ratio(a, b):
    return None if a is None or b is None or not b else round(a / b, 4)


def energy_figure(rows: list[dict]) -> list[dict]:
    """Per workload of figure 9's runs: the baseline's and the compared point's energy (whole
    board and chip), EDP, their ratios (compared / baseline: D-FLOW / BASE), the register file's
    shares and its area per SM."""
    def by_workload(point) -> dict[str, dict]:
        return {r["workload"]: r for r in rows if r["experiment"] == point.experiment and r["mode"] == point.mode}

    base, compared = by_workload(BASELINE), by_workload(COMPARED)
    bn, cn = BASELINE.name, COMPARED.name
    out = []
    for name in base:
        b, d = base[name], compared[name]
        if b["cycles"] is None or d["cycles"] is None:
            continue  # a deadlocked run (reproduce.unfinished)
        entry: dict[str, Any] = {"workload": name}
        for key in ("energy_j", "chip_energy_j", "edp_js", "chip_edp_js"):
            entry[f"{bn}_{key}"], entry[f"{cn}_{key}"] = b[key], d[key]
            entry[key.removesuffix("_j").removesuffix("_js") + "_ratio"] = _ratio(d[key], b[key])
        for key in ("rf_chip_share", "rf_dynamic_share", "average_w"):
            entry[f"{bn}_{key}"], entry[f"{cn}_{key}"] = b[key], d[key]
        entry["rf_area_mm2"] = b["rf_area_mm2"]
        out.append(entry)
    return out


def equal_rf(points: list[dict]) -> list[dict]:
    """Per workload and baseline (BASE) point of the warps study: the compared (D-FLOW) point with
    the largest register file not above the baseline's (equal or fewer bytes), and compared /
    baseline of time, chip energy and chip EDP there. Points without energy (no technology) give
    None ratios."""
    bn, cn = BASELINE.name, COMPARED.name
    out = []
    for name in dict.fromkeys(p["workload"] for p in points):
        mine = [p for p in points if p["workload"] == name]
        compared = sorted((p for p in mine if p["mode"] == COMPARED.mode), key=lambda p: (p["rf_kib"], p["warps"]))
        for b in sorted((p for p in mine if p["mode"] == BASELINE.mode), key=lambda p: p["warps"]):
            fits = [d for d in compared if d["rf_kib"] <= b["rf_kib"]]
            d = fits[-1] if fits else None
            out.append({"workload": name, f"{bn}_warps": b["warps"], f"{bn}_rf_kib": b["rf_kib"],
                        f"{cn}_warps": d["warps"] if d else None, f"{cn}_rf_kib": d["rf_kib"] if d else None,
                        "speedup": _ratio(b["cycles"], d["cycles"]) if d else None,
                        "chip_energy_ratio": _ratio(d["chip_energy_j"], b["chip_energy_j"]) if d else None,
                        "chip_edp_ratio": _ratio(d["chip_edp_js"], b["chip_edp_js"]) if d else None})
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summary_lines(fig: list[dict], matches: list[dict], equal: list[dict]) -> list[str]:
    b, c = BASELINE, COMPARED  # names key the columns; labels (and their abbreviations) head them
    bn, cn, B, C = b.name, c.name, b.abbreviation, c.abbreviation
    if not fig or fig[0][f"{bn}_energy_j"] is None:
        return ["", "Energy: no technology for this preset (dualflow/energy/technology.py); not computed"]
    lines = ["", f"Energy of the whole GPU (docs/energy.md; modelled parts only): {c.label} / {b.label}, and the "
             "register file's share of the chip's energy and of the dynamic energy",
             f"{'workload':<12}{b.label + ' uJ':>10}{c.label + ' uJ':>11}{'energy':>8}{'chip':>7}{'EDP':>7}"
             f"{'RF/chip ' + B:>10}{'RF/chip ' + C:>10}{'RF/dyn ' + B:>9}{'RF/dyn ' + C:>9}"]
    for r in fig:
        lines.append(f"{r['workload']:<12}{r[bn + '_energy_j'] * 1e6:>10.2f}{r[cn + '_energy_j'] * 1e6:>11.2f}"
                     f"{r['energy_ratio']:>8.3f}{r['chip_energy_ratio']:>7.3f}{r['edp_ratio']:>7.3f}"
                     f"{_pct(r[bn + '_rf_chip_share']):>10}{_pct(r[cn + '_rf_chip_share']):>10}"
                     f"{_pct(r[bn + '_rf_dynamic_share']):>9}{_pct(r[cn + '_rf_dynamic_share']):>9}")
    if not matches and not equal:  # no workload of the warps study was run
        return lines
    lines += ["", f"Warps study: {b.label} with its full register file against {c.label} where it first matches it "
              "(chip energy: the board's constant power left out, the study runs on a slice of the GPU)",
              f"{'workload':<12}{b.label + ' RF mm2':>12}{b.label + ' uJ':>10}{C + ' RF mm2':>10}{C + ' uJ':>10}"
              f"{f'EDP {C}/{B}':>9}"]
    for m in matches:
        head = f"{m['workload']:<12}{m[bn + '_rf_area_mm2']:>12.3f}{m[bn + '_chip_energy_j'] * 1e6:>10.2f}"
        if m.get(f"{cn}_match_chip_energy_j") is None:
            lines.append(f"{head}{'-':>10}{'-':>10}{'-':>9}")
        else:
            lines.append(f"{head}{m[cn + '_match_rf_area_mm2']:>10.3f}{m[cn + '_match_chip_energy_j'] * 1e6:>10.2f}"
                         f"{m[cn + '_match_chip_edp_js'] / m[bn + '_chip_edp_js']:>9.3f}")
    lines += ["", f"Warps study at equal register-file bytes: each {b.label} point against the {c.label} point with "
              f"the largest register file not above it ({c.label} / {b.label})",
              f"{'workload':<12}{b.label + ' warps':>11}{'RF KiB':>8}{C + ' warps':>8}{C + ' RF KiB':>9}{'speedup':>9}"
              f"{'chip E':>8}{'chip EDP':>9}"]
    for e in equal:
        if e[f"{cn}_warps"] is None:
            lines.append(f"{e['workload']:<12}{e[bn + '_warps']:>11}{e[bn + '_rf_kib']:>8.0f}{'-':>8}")
            continue
        lines.append(f"{e['workload']:<12}{e[bn + '_warps']:>11}{e[bn + '_rf_kib']:>8.0f}{e[cn + '_warps']:>8}"
                     f"{e[cn + '_rf_kib']:>9.0f}{e['speedup']:>9.3f}{e['chip_energy_ratio']:>8.3f}"
                     f"{e['chip_edp_ratio']:>9.3f}")
    return lines

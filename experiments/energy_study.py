"""The energy side of ``dualflow reproduce``: each run's whole-GPU energy (models/energy) as
columns of its row, and the tables built from them: figures 9/10 with energy, EDP and
register-file area, and the register file's share of the GPU's energy per workload."""

from __future__ import annotations

from typing import Any

from dualflow.errors import ConfigError
from dualflow.machine.mode import Mode

#: The columns ``energy_columns`` adds to a run's row (None when the preset has no technology).
COLUMNS = ("energy_j", "rf_energy_j", "rf_share", "rf_dynamic_share", "average_w", "edp_js", "rf_area_mm2",
           "rf_registers")


def energy_columns(result, config, rf_registers: int) -> tuple[dict[str, Any], dict | None]:
    """The row's energy columns and the full energy report (None, and empty columns, when the
    GPU has no technology in models/energy/technology.py)."""
    from dualflow.models.energy import gpu_energy, technology

    try:
        technology(config.name)
    except ConfigError:
        return dict.fromkeys(COLUMNS), None
    report = gpu_energy(result.total, config, rf_registers=rf_registers)
    row = {"energy_j": report.total_joules, "rf_energy_j": report.rf_joules, "rf_share": round(report.rf_share, 4),
           "rf_dynamic_share": round(report.rf_dynamic_share, 4),
           "average_w": round(report.average_watts, 4), "edp_js": report.edp,
           "rf_area_mm2": round(report.table.rf_area_mm2, 4), "rf_registers": rf_registers}
    return row, report.to_dict()


def _ratio(a, b):
    return None if a is None or b is None or not b else round(a / b, 4)


def energy_figure(rows: list[dict]) -> list[dict]:
    """Per workload of the paper experiment: BASE and D-FLOW energy, EDP, their ratios (D-FLOW /
    BASE), the register file's share of each and its area per SM."""
    paper = {(r["workload"], r["mode"]): r for r in rows if r["experiment"] == "paper"}
    out = []
    for name in dict.fromkeys(r["workload"] for r in rows if r["experiment"] == "paper"):
        b, d = paper[(name, Mode.BASE)], paper[(name, Mode.DFLOW)]
        out.append({"workload": name, "base_energy_j": b["energy_j"], "dflow_energy_j": d["energy_j"],
                    "energy_ratio": _ratio(d["energy_j"], b["energy_j"]),
                    "base_edp_js": b["edp_js"], "dflow_edp_js": d["edp_js"],
                    "edp_ratio": _ratio(d["edp_js"], b["edp_js"]),
                    "base_rf_share": b["rf_share"], "dflow_rf_share": d["rf_share"],
                    "base_rf_dynamic_share": b["rf_dynamic_share"], "dflow_rf_dynamic_share": d["rf_dynamic_share"],
                    "base_average_w": b["average_w"], "dflow_average_w": d["average_w"],
                    "rf_area_mm2": b["rf_area_mm2"]})
    return out


def summary_lines(fig: list[dict], matches: list[dict]) -> list[str]:
    if not fig or fig[0]["base_energy_j"] is None:
        return ["", "Energy: no technology for this preset (models/energy/technology.py); not computed"]
    lines = ["", "Energy of the whole GPU (docs/energy.md; modelled parts only), D-FLOW / BASE",
             f"{'workload':<12}{'BASE uJ':>11}{'D-FLOW uJ':>11}{'energy':>8}{'EDP':>8}{'RF share B':>11}"
             f"{'RF share D':>11}{'RF dyn B':>10}{'RF dyn D':>10}"]
    for r in fig:
        lines.append(f"{r['workload']:<12}{r['base_energy_j'] * 1e6:>11.3f}{r['dflow_energy_j'] * 1e6:>11.3f}"
                     f"{r['energy_ratio']:>8.3f}{r['edp_ratio']:>8.3f}{100 * r['base_rf_share']:>10.1f}%"
                     f"{100 * r['dflow_rf_share']:>10.1f}%{100 * r['base_rf_dynamic_share']:>9.1f}%"
                     f"{100 * r['dflow_rf_dynamic_share']:>9.1f}%")
    lines += ["", "Warps study: BASE with its full register file against D-FLOW where it first matches it",
              f"{'workload':<12}{'BASE RF mm2':>12}{'BASE uJ':>10}{'D RF mm2':>10}{'D uJ':>10}{'EDP D/B':>9}"]
    for m in matches:
        if m.get("dflow_match_energy_j") is None:
            lines.append(f"{m['workload']:<12}{m['base_rf_area_mm2']:>12.3f}{m['base_energy_j'] * 1e6:>10.3f}"
                         f"{'-':>10}{'-':>10}{'-':>9}")
            continue
        lines.append(f"{m['workload']:<12}{m['base_rf_area_mm2']:>12.3f}{m['base_energy_j'] * 1e6:>10.3f}"
                     f"{m['dflow_match_rf_area_mm2']:>10.3f}{m['dflow_match_energy_j'] * 1e6:>10.3f}"
                     f"{m['dflow_match_edp_js'] / m['base_edp_js']:>9.3f}")
    return lines

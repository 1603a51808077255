"""PNG plots of ``dualflow reproduce`` (matplotlib, no display needed), written atomically. Each
draws the design points of ``design_points.py`` in their styles against the baseline."""

from __future__ import annotations

import io
from pathlib import Path

from dualflow.common.atomic_write import atomic_write
from dualflow.experiments.design_points import BASELINE, COMPARED, STUDY_POINTS


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    plt = _pyplot()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def plot_figure9_10(rows: list[dict], path: Path) -> None:
    """Left: speedup of the compared point over the baseline (figure 9: D-FLOW over BASE). Right:
    its executed warp-instructions relative to the baseline's, stacked by unit class (figure 10)."""
    plt = _pyplot()
    names = [r["workload"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    a.bar(names, [r["speedup"] for r in rows], color="tab:blue")
    a.axhline(1.0, color="black", lw=0.8)
    a.set_ylabel(f"speedup ({BASELINE.label} cycles / {COMPARED.label} cycles)")
    a.set_title(f"Figure 9: {COMPARED.label} performance")
    classes = sorted({k[:-len("_ratio")] for r in rows for k in r if k.endswith("_ratio") and k != "instruction_ratio"})
    x = range(len(rows))
    width = 0.38
    base = f"_{BASELINE.name}"  # the baseline's share of its own total, beside the compared point's ratio
    for offset, suffix in ((-width / 2, base), (width / 2, "_ratio")):
        bottom = [0.0] * len(rows)
        for i, cls in enumerate(classes):
            vals = [r.get(cls + suffix, 0.0) for r in rows]
            b.bar([xi + offset for xi in x], vals, width, bottom=bottom, color=f"C{i}",
                  label=cls if suffix == base else None, edgecolor="black" if suffix == "_ratio" else None,
                  linewidth=0.5)
            bottom = [p + v for p, v in zip(bottom, vals)]
    b.set_xticks(list(x), [f"{n}\n{BASELINE.abbreviation} | {COMPARED.abbreviation}" for n in names])
    b.set_ylabel(f"warp-instructions / {BASELINE.label} total")
    b.set_title("Figure 10: executed instructions by class")
    b.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _save(fig, path)


def plot_warps_study(points: list[dict], path: Path) -> None:
    """Per workload, performance (1 / cycles, normalized to the baseline at the most warps) of each
    point of the study against warps per SM (left) and against the register-file capacity those
    warps need (right)."""
    plt = _pyplot()
    names = list(dict.fromkeys(p["workload"] for p in points))
    fig, axes = plt.subplots(2, len(names), figsize=(3.4 * len(names), 6.4), dpi=120, squeeze=False)
    for col, name in enumerate(names):
        mine = [p for p in points if p["workload"] == name]
        base_full = max((p for p in mine if p["mode"] == BASELINE.mode), key=lambda p: p["warps"])["cycles"]
        for point in STUDY_POINTS:
            pts = sorted((p for p in mine if p["mode"] == point.mode), key=lambda p: p["warps"])
            perf = [base_full / p["cycles"] for p in pts]
            style = {"color": point.style.colour}
            axes[0][col].plot([p["warps"] for p in pts], perf, point.style.line, label=point.label, **style)
            axes[1][col].plot([p["rf_kib"] for p in pts], perf, point.style.line, **style)
        axes[0][col].set_title(name)
        axes[0][col].set_xlabel("warps per SM")
        axes[1][col].set_xlabel("register file per SM (KiB)")
        for row in (0, 1):
            axes[row][col].axhline(1.0, color="gray", lw=0.6)
            axes[row][col].grid(alpha=0.3)
        if col == 0:
            axes[0][col].set_ylabel(f"performance vs {BASELINE.label} at full size")
            axes[1][col].set_ylabel(f"performance vs {BASELINE.label} at full size")
            axes[0][col].legend(fontsize=8)
    _save(fig, path)


def plot_energy(rows: list[dict], path: Path) -> None:
    """Left: the compared point's whole-GPU energy and EDP relative to the baseline per workload
    (D-FLOW / BASE). Right: the register file's share of the GPU's energy on each
    (``energy_study.energy_figure`` rows)."""
    plt = _pyplot()
    names = [r["workload"] for r in rows]
    x = range(len(rows))
    width = 0.38
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4), dpi=120)
    a.bar([i - width / 2 for i in x], [r["chip_energy_ratio"] for r in rows], width, label="chip energy")
    a.bar([i + width / 2 for i in x], [r["edp_ratio"] for r in rows], width, label="energy-delay product (whole GPU)")
    a.axhline(1.0, color="black", lw=0.8)
    a.set_xticks(list(x), names)
    a.set_ylabel(f"{COMPARED.label} / {BASELINE.label}")
    a.set_title("Whole-GPU energy (modelled parts)")
    a.legend(fontsize=8)
    for offset, point in ((-width / 2, BASELINE), (width / 2, COMPARED)):
        b.bar([i + offset for i in x], [100 * r[f"{point.name}_rf_chip_share"] for r in rows], width,
              label=point.label, color=point.style.colour)
    b.set_xticks(list(x), names)
    b.set_ylabel("register file, % of the chip's energy")
    b.set_title("Register-file share")
    b.legend(fontsize=8)
    _save(fig, path)

"""The DFLOW form's instruction overhead and operand distances, per workload and kernel.

Runs each workload in REG form and in converted DFLOW form, checks both, and measures: static
and dynamic warp-instruction counts of both forms by unit class (the seed paper's figure 10),
the converter's added instructions by cause (relays at joins and against Dmax, padding,
recomputation, spills and reloads, branches of split edges), the REG instructions that have no
translation (``removed``: with ``uniform-operands``, the ``ldc`` and ``s2r`` whose values are read
as uniform operands), the translations that run more often than their REG instruction
(``sunk``: a join's reader of a lane-dependent loop's result moved into the exit paths runs once
per group of lanes leaving instead of once per warp; dualflow/isa/convert/sink.py), and the distribution
of operand distances, static and dynamic (its figure 8, as a CDF); and, per loop, where the
added instructions ran (``dualflow/isa/convert/breakdown.py``).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dualflow.common.atomic_write import atomic_folder, atomic_write
from dualflow.isa import Form, Kernel, UnitClass, Variant
from dualflow.isa.convert import ConversionReport, convert_module
from dualflow.isa.convert.breakdown import LoopCost, loop_breakdown

from .registry import WORKLOADS
from .workload import run_workload, with_dflow_form

CAUSES = ("relay-join", "relay-dmax", "pad", "remat", "spill", "reload", "branch")
CLASSES = tuple(u.value for u in UnitClass)
#: Distances at which the CDF table is printed.
CDF_POINTS = (1, 2, 3, 4, 5, 8, 12, 16, 24, 31)


@dataclass
class KernelOverhead:
    workload: str
    kernel: str
    static_reg: int
    static_dflow: int
    dynamic_reg: dict[str, int]  # unit class -> warp-instructions (and "total")
    dynamic_dflow: dict[str, int]
    added: dict[str, int]  # cause -> dynamic warp-instructions
    added_static: dict[str, int]
    distances: np.ndarray = field(repr=False)  # dynamic operand count per distance 1..dmax
    static_distances: np.ndarray = field(repr=False)
    loops: list[LoopCost] = field(default_factory=list, repr=False)  # where the added instructions ran
    removed: int = 0  # dynamic REG warp-instructions with no translation (uniform-operands)
    sunk: int = 0  # dynamic warp-instructions translations run beyond their REG instruction's count
    rings: tuple[int, ...] = ()  # the converted kernel's rings (one per hand; their sum: its capacity)

    @property
    def ratio(self) -> float:
        return self.dynamic_dflow["total"] / max(1, self.dynamic_reg["total"])


def _class_counts(stats) -> dict[str, int]:
    out = {c: stats.by_class.get(c, {}).get("warp", 0) for c in CLASSES}
    out["total"] = stats.warp_instructions
    return out


def _operand_distances(kernel: Kernel, weights: np.ndarray | None) -> np.ndarray:
    hist = np.zeros(kernel.dmax + 1, dtype=np.int64)
    for pc, ins in enumerate(kernel.code):
        w = 1 if weights is None else int(weights[pc])
        if not w:
            continue
        for d in ins.source_fields():  # distances: no immediate, no uniform operand
            hist[d] += w
    return hist


def measure(name: str, size: str = "small", dmax: int = 31, ring: int = 32, seed: int = 1,
            variants: frozenset[Variant] = frozenset(), rings: tuple[int, ...] | None = None) -> list[KernelOverhead]:
    """Run one workload in both forms (DFLOW converted with ``dmax``/``ring`` and ``variants``;
    ``rings``: the hands' rings, with ``Variant.HANDS``) and measure."""
    wl_cls = WORKLOADS[name]
    reg_module = wl_cls().module(Form.REG)
    dflow_module, reports = convert_module(reg_module, dmax=dmax, ring=ring, variants=variants, rings=rings)

    Converted = with_dflow_form(wl_cls, dflow_module)
    reg = run_workload(Converted, size, Form.REG, seed=seed)
    dfl = run_workload(Converted, size, Form.DFLOW, seed=seed)
    out = []
    for kname, stats in dfl.by_kernel.items():
        rep: ConversionReport = reports[kname]
        added = dict.fromkeys(CAUSES, 0)
        for pc, count in enumerate(stats.per_pc):
            cause = rep.causes[pc]
            if cause != "orig":
                added[cause] += int(count)
        kernel = dflow_module[kname]
        reg_per_pc = reg.by_kernel[kname].per_pc
        translated: dict[int, int] = {}
        for pc, count in enumerate(stats.per_pc):
            if rep.causes[pc] == "orig" and rep.source_pc[pc] is not None:
                translated[rep.source_pc[pc]] = translated.get(rep.source_pc[pc], 0) + int(count)
        out.append(KernelOverhead(
            workload=name, kernel=kname, static_reg=rep.static_reg, static_dflow=len(kernel.code),
            dynamic_reg=_class_counts(reg.by_kernel[kname]), dynamic_dflow=_class_counts(stats),
            added=added, added_static={c: rep.static_overhead().get(c, 0) for c in CAUSES},
            distances=_operand_distances(kernel, stats.per_pc),
            static_distances=_operand_distances(kernel, None), loops=loop_breakdown(rep, stats.per_pc),
            removed=sum(int(reg_per_pc[pc]) for pc in rep.removed), rings=tuple(kernel.rings),
            sunk=sum(max(0, count - int(reg_per_pc[pc])) for pc, count in translated.items())))
    return out


def cdf(hist: np.ndarray) -> np.ndarray:
    total = hist.sum()
    return np.cumsum(hist) / total if total else np.zeros(len(hist))


def summarize(rows: list[KernelOverhead]) -> dict[str, dict]:
    """Per workload: totals over its kernels."""
    out: dict[str, dict] = {}
    for r in rows:
        w = out.setdefault(r.workload, {"static_reg": 0, "static_dflow": 0, "dynamic_reg": dict.fromkeys(
            CLASSES + ("total",), 0), "dynamic_dflow": dict.fromkeys(CLASSES + ("total",), 0),
            "added": dict.fromkeys(CAUSES, 0), "removed": 0, "sunk": 0, "distances": np.zeros_like(r.distances)})
        w["static_reg"] += r.static_reg
        w["static_dflow"] += r.static_dflow
        for k in w["dynamic_reg"]:
            w["dynamic_reg"][k] += r.dynamic_reg[k]
            w["dynamic_dflow"][k] += r.dynamic_dflow[k]
        for c in CAUSES:
            w["added"][c] += r.added[c]
        w["removed"] += r.removed
        w["sunk"] += r.sunk
        if len(w["distances"]) == len(r.distances):
            w["distances"] = w["distances"] + r.distances
    return out


def tables(rows: list[KernelOverhead]) -> dict[str, str]:
    """CSV texts: per-kernel overhead, per-class dynamic counts, distance CDF."""
    tabs = {}
    buf = io.StringIO()
    wr = csv.writer(buf)
    wr.writerow(["workload", "kernel", "static_reg", "static_dflow", "static_ratio", "dynamic_reg", "dynamic_dflow",
                 "dynamic_ratio", *[f"added_{c}" for c in CAUSES], "removed", "sunk"])
    for r in rows:
        wr.writerow([r.workload, r.kernel, r.static_reg, r.static_dflow, f"{r.static_dflow / r.static_reg:.4f}",
                     r.dynamic_reg["total"], r.dynamic_dflow["total"], f"{r.ratio:.4f}",
                     *[r.added[c] for c in CAUSES], r.removed, r.sunk])
    tabs["overhead.csv"] = buf.getvalue()
    buf = io.StringIO()
    wr = csv.writer(buf)
    wr.writerow(["workload", "class", "reg", "dflow", "ratio"])
    for name, w in summarize(rows).items():
        for c in CLASSES + ("total",):
            a, b = w["dynamic_reg"][c], w["dynamic_dflow"][c]
            wr.writerow([name, c, a, b, f"{b / a:.4f}" if a else ""])
    tabs["by_class.csv"] = buf.getvalue()
    buf = io.StringIO()
    wr = csv.writer(buf)
    wr.writerow(["workload", *[f"d<={d}" for d in CDF_POINTS]])
    for name, w in summarize(rows).items():
        c = cdf(w["distances"])
        wr.writerow([name, *[f"{c[min(d, len(c) - 1)]:.4f}" for d in CDF_POINTS]])
    tabs["distance_cdf.csv"] = buf.getvalue()
    buf = io.StringIO()
    wr = csv.writer(buf)
    wr.writerow(["workload", "kernel", "loop", "depth", "copies", "reg_executed", "added", *CAUSES])
    for r in rows:
        for loop in r.loops:
            wr.writerow([r.workload, r.kernel, loop.name, loop.depth, loop.copies, loop.orig,
                         sum(loop.added.values()), *[loop.added.get(c, 0) for c in CAUSES]])
    tabs["loops.csv"] = buf.getvalue()
    return tabs


def plot_cdf(rows: list[KernelOverhead], path: Path, dmax: int) -> None:
    """PNG: CDF of dynamic operand distances, one curve per workload (the paper's figure 8)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for name, w in summarize(rows).items():
        c = cdf(w["distances"])
        ax.step(np.arange(len(c)), c, where="post", label=name)
    ax.set_xlim(1, dmax)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("operand distance (producers back)")
    ax.set_ylabel("fraction of executed source operands")
    ax.set_title(f"DFLOW operand distances, converted kernels (Dmax {dmax})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())


#: The file every ``write_results`` folder holds: an existing folder is replaced only if it has one.
MARKER = "overhead.json"


def write_results(rows: list[KernelOverhead], folder: Path, config: dict) -> list[Path]:
    """Write the tables, the summary and the CDF plot into ``folder``, replacing its whole content at
    once (``atomic_folder``); returns the paths written."""
    folder = Path(folder)
    names = []
    with atomic_folder(folder, MARKER) as tmp:
        for name, text in tables(rows).items():
            atomic_write(tmp / name, text)
            names.append(name)
        summary = {name: {**{k: v for k, v in w.items() if k != "distances"},
                          "dynamic_ratio": w["dynamic_dflow"]["total"] / max(1, w["dynamic_reg"]["total"]),
                          "distance_cdf": {str(d): float(cdf(w["distances"])[min(d, len(w["distances"]) - 1)])
                                           for d in CDF_POINTS}}
                   for name, w in summarize(rows).items()}
        atomic_write(tmp / MARKER, json.dumps({"config": config, "workloads": summary}, indent=1))
        names.append(MARKER)
        plot_cdf(rows, tmp / "distance_cdf.png", config["dmax"])
        names.append("distance_cdf.png")
    return [folder / name for name in names]

"""Little's-law validation of the performance model on microbenchmarks (docs/validation.md).

Every case of ``dualflow.experiments.validation`` (ALU chains at ILP 1/2/4, FP and INT; pointer
chases that hit in L1, in L2 and go to DRAM; DRAM streaming; load-use with register reuse;
shared-memory strides 1/2/4/32) runs on one SM of each preset with W = 1 .. 64 resident warps, in
both modes. Printed: the steady-state rate against W (IPC, or bytes/cycle for streaming), then one
table of predicted (from the configuration) against measured one-warp latency, plateau and knee.
The knee is where the one-warp slope meets the plateau, measured and predicted alike.

    python benchmarks/timing_validation.py [--preset NAME ...] [--case NAME ...] [--png FILE]
"""

from __future__ import annotations

import argparse
import io
import sys

from dualflow.common.atomic_write import atomic_write
from dualflow.experiments.validation import CASE, CASES, PRESETS, WARPS, Row, deviation, row
from dualflow.machine.mode import Mode

#: Relative difference above which a row is flagged (docs/validation.md explains each).
FLAG = 0.10


def curves_table(rows: list[Row]) -> str:
    lines = [f"{'case':<12}{'mode':<6}{'preset':<15}{'unit':<6}" + "".join(f"{w:>7}" for w in WARPS)]
    for r in rows:
        unit = "B/cyc" if r.case.bandwidth else "IPC"
        lines.append(f"{r.case.name:<12}{r.mode:<6}{r.preset:<15}{unit:<6}"
                     + "".join(f"{v:>7.2f}" for v in r.rates))
    return "\n".join(lines)


def summary_table(rows: list[Row]) -> str:
    head = (f"{'case':<12}{'mode':<6}{'preset':<15}{'pred lat':>9}{'meas lat':>9}{'pred plat':>10}"
            f"{'meas plat':>10}{'pred knee':>10}{'meas knee':>10}  bound (predicted)")
    lines = [head]
    for r in rows:
        p = r.predicted
        plateau, knee, reached = r.plateau_knee
        pairs = [("L", r.latency, p.latency)]
        if reached:  # an unbent curve bounds plateau and knee from below: flagged only if above the prediction
            pairs += [("P", plateau, p.plateau), ("K", knee, p.knee)]
        else:
            pairs += [(mark, m, q) for mark, m, q in (("P", plateau, p.plateau), ("K", knee, p.knee)) if m > q]
        flags = "".join(mark for mark, m, q in pairs if abs(deviation(m, q)) > FLAG)
        more = " " if reached else "+"
        lines.append(f"{r.case.name:<12}{r.mode:<6}{r.preset:<15}{p.latency:>9.1f}{r.latency:>9.1f}"
                     f"{p.plateau:>10.2f}{plateau:>9.2f}{more}{p.knee:>10.1f}{knee:>9.1f}{more}  {p.bound}"
                     + (f"  [{flags}]" if flags else ""))
    return "\n".join(lines)


def plot(rows: list[Row], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(dict.fromkeys(r.case.name for r in rows))
    presets = list(dict.fromkeys(r.preset for r in rows))
    cols = 4
    nrows = -(-len(cases) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3 * nrows), dpi=70, squeeze=False)
    styles = {(m, p): s for (m, p), s in zip(((m, p) for p in presets for m in Mode), ("o-", "s--", "^-", "v--"))}
    for ax, name in zip(axes.flat, cases):
        for r in rows:
            if r.case.name != name:
                continue
            label = f"{r.mode.label} {r.preset}"
            line, = ax.plot(WARPS[:len(r.rates)], r.rates, styles[(r.mode, r.preset)], ms=3, label=label)
            ax.axvline(r.predicted.knee, color=line.get_color(), alpha=0.3, lw=1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("warps per SM", fontsize=8)
        ax.set_ylabel("bytes/cycle" if CASE[name].bandwidth else "IPC (one SM)", fontsize=8)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(cases):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.suptitle("Steady-state rate against resident warps; vertical lines: predicted knees", fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", action="append", choices=PRESETS, help="preset (repeatable; default both)")
    parser.add_argument("--case", action="append", choices=list(CASE), help="case (repeatable; default all)")
    parser.add_argument("--png", help="also plot the curves into this PNG file")
    args = parser.parse_args(argv)
    presets = args.preset or list(PRESETS)
    cases = [CASE[n] for n in args.case] if args.case else list(CASES)
    rows = []
    for case in cases:
        for name in presets:
            for mode in Mode:
                rows.append(row(case, name, mode))
                print(f"measured {case.name} {mode} {name}", file=sys.stderr, flush=True)
    print("Steady-state rate of one SM against resident warps (difference of two trip counts)")
    print(curves_table(rows))
    print()
    print("Little's law: latency = one warp's cycles per iteration; plateau = IPC (bytes/cycle for stream-*);")
    print("knee = warps where the one-warp slope meets the plateau; +: the curve is still on the slope at its "
          f"last point\n(plateau and knee are lower bounds). [L/P/K]: measured differs by more than {FLAG:.0%}")
    print(summary_table(rows))
    if args.png:
        plot(rows, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())

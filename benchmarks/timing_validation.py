"""Validation of the performance model on microbenchmarks (docs/timing-model.md, "Validation").

One SM of the ``paper-rtx3080`` preset runs W warps (one block, two above 32 warps) (W = 1 .. 64); each thread runs
a loop. Printed: IPC of the SM against W, for both modes, and what Little's law predicts:

- ``fma-ilp1``: one dependent FFMA chain per thread. A link costs latency + 2 cycles (operand
  read, dispatch), so a scheduler needs that many warps in flight to issue every cycle: IPC
  grows linearly with W and flattens at the issue limit (4 schedulers) once
  W >= 4 x (latency + 2).
- ``fma-ilp4``: four independent chains per thread: the warps needed drop by four.
- ``load-use``: each iteration loads two words and adds each to an accumulator, the second load
  reusing the first's register (what a register-starved compiler emits). BASE issues in order,
  so the second load waits for the first add, which waits for the first load: two memory
  latencies per iteration. D-FLOW puts the waiting add in a collector unit and issues the
  second load at once.

    python benchmarks/timing_validation.py [--iterations N] [--png FILE]
"""

from __future__ import annotations

import argparse
import io
import sys

import numpy as np

from dualflow.atomic_write import atomic_write
from dualflow.isa import assemble
from dualflow.isa.convert import convert_kernel
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset
from dualflow.models.timing.device import TimingDevice

WARPS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)


def program(name: str, iterations: int) -> str:
    head = f""".kernel {name.replace('-', '_')}
.form reg
.param buf
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    ishl r2, r0, 2
    ldc r3, buf
    iadd r3, r3, r2
    mov r4, {iterations}
    mov r10, 1.0
    mov r11, 2.0
    mov r12, 3.0
    mov r13, 4.0
LOOP:
"""
    if name == "fma-ilp1":
        body = "".join("    ffma r10, r10, r10, r11\n" for _ in range(8))
    elif name == "fma-ilp4":
        body = "".join(f"    ffma r1{i % 4}, r1{i % 4}, r11, r12\n" for i in range(8))
    elif name == "load-use":
        body = ("    ldg r5, [r3]\n    iadd r20, r20, r5\n    ldg r5, [r3+4096]\n    iadd r21, r21, r5\n"
                "    iadd r3, r3, 128\n")
    else:
        raise ValueError(name)
    tail = """    isub r4, r4, 1
    brnz r4, LOOP
    iadd r10, r10, r20
    iadd r10, r10, r21
    stg [r3], r10
    exit
"""
    return head + body + tail


def measure(name: str, mode: Mode, warps: int, iterations: int) -> tuple[float, int]:
    kernel = assemble(program(name, iterations)).only
    if mode.dflow:
        kernel = convert_kernel(kernel)[0]
    warp_size = preset("paper-rtx3080").sm.warp_size
    config = preset("paper-rtx3080").replace(**{"mode": mode, "num_sms": 1, "sm.max_threads": warp_size * 64})
    dev = TimingDevice(config)
    buf = dev.upload(np.zeros(warp_size * 64 + 4096 + warp_size * iterations * 2 + 1024, dtype=np.uint32))
    blocks = 1 if warps <= 32 else 2  # a block holds at most 1024 threads
    dev.launch(kernel, grid=blocks, block=warp_size * warps // blocks, params=[buf])
    t = dev.timing[-1]
    return t.total_warp_instructions / t.cycles, t.cycles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=16)
    parser.add_argument("--png", help="also plot the curves into this PNG file")
    args = parser.parse_args(argv)
    fma = preset("paper-rtx3080").sm.fp_unit.latency
    print(f"IPC of one SM against resident warps (paper-rtx3080, FP latency {fma}; Little's law: "
          f"fma-ilp1 saturates at 4 x ({fma} + 2) = {4 * (fma + 2)} warps, fma-ilp4 at a quarter of that)")
    curves: dict[tuple[str, Mode], list[float]] = {}
    print(f"{'benchmark':<10}{'mode':<7}" + "".join(f"{w:>7}" for w in WARPS))
    for name in ("fma-ilp1", "fma-ilp4", "load-use"):
        for mode in Mode:
            ipcs = [measure(name, mode, w, args.iterations)[0] for w in WARPS]
            curves[(name, mode)] = ipcs
            print(f"{name:<10}{mode:<7}" + "".join(f"{v:>7.2f}" for v in ipcs), flush=True)
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), dpi=120)
        for ax, name in zip(axes, ("fma-ilp1", "fma-ilp4", "load-use")):
            for mode, style in zip(Mode, ("o-", "s--")):
                ax.plot(WARPS, curves[(name, mode)], style, label=mode.label)
            ax.set_title(name)
            ax.set_xlabel("warps per SM")
            ax.set_ylabel("IPC (warp-instructions/cycle, one SM)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        atomic_write(args.png, buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())

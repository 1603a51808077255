"""Hand-written kernels against their CUDA C twins compiled by the front end, side by side.

For each of the ten hand-written workloads and its twin (dualflow/kernels/cuda/twins), at one size:
dynamic REG-form warp instructions (the functional model's statistics of the BASE run), registers
per thread of each kernel (hand-written: ``.regs``, the highest register used + 1; compiled: the
front end's report), and cycles on the timing model in BASE and D-FLOW mode (the design points of
dualflow/experiments/design_points.py: REG form on BASE; on D-FLOW the converter's DFLOW form, or a
sample's hand-written one), with the D-FLOW/BASE speedup. Every run is checked against its
reference. Prints a markdown table. Usage:
    python benchmarks/frontend_twins.py [--size small] [--preset paper-rtx3080] [NAME ...]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from dualflow.experiments.design_points import BASE, DFLOW, DesignPoint
from dualflow.frontend import CompileOptions, compile_file
from dualflow.isa import Form
from dualflow.isa.convert.options import DEFAULT_CONVERSION
from dualflow.kernels.compiled import CompiledWorkload
from dualflow.kernels.cuda.twins import ORIGINALS, TWINS
from dualflow.kernels.mode_form import kernel_form
from dualflow.kernels.workload import Workload, WorkloadRun, run_workload
from dualflow.machine.config import GpuConfig
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.presets import preset
from dualflow.models.statistic import merge_launches
from dualflow.models.timing.device import TimingDevice


@dataclass
class Side:
    """One workload (hand-written or compiled) measured at one size."""

    warp_instructions: int  # REG form, functional model
    registers: dict[str, int]  # per kernel, registers per thread
    base_cycles: int
    dflow_cycles: int
    seconds: float

    @property
    def speedup(self) -> float:
        return self.base_cycles / self.dflow_cycles


def registers(workload: type[Workload]) -> dict[str, int]:
    """Registers per thread of each kernel: the front end's report for a compiled workload, the
    REG form's ``.regs`` (highest register used + 1) for a hand-written one."""
    if issubclass(workload, CompiledWorkload):
        reports = compile_file(workload.cuda_source, CompileOptions(flags=workload.cuda_flags)).reports
        return {name: r.registers for name, r in reports.items()}
    return {k.name: k.regs for k in workload().reg_module()}


def timed(workload: type[Workload], point: DesignPoint, config: GpuConfig, size: str) -> tuple[WorkloadRun, int]:
    """A checked run of ``workload`` on the timing model of ``config`` in ``point``'s mode, as
    ``dualflow sim`` runs one (experiments/simulate.py); returns the run and its cycles."""
    config = config.replace(mode=point.mode)
    device = TimingDevice(config, FunctionalConfig(warp_size=config.sm.warp_size))
    form = kernel_form(config.mode)
    run = run_workload(workload, size, form, device=device,
                       conversion=point.conversion if form is Form.DFLOW else DEFAULT_CONVERSION)
    total, _ = merge_launches(device.timing)
    return run, total.cycles


def measure(workload: type[Workload], config: GpuConfig, size: str) -> Side:
    start = time.perf_counter()
    base_run, base_cycles = timed(workload, BASE, config, size)
    _, dflow_cycles = timed(workload, DFLOW, config, size)
    return Side(base_run.total.warp_instructions, registers(workload), base_cycles, dflow_cycles,
                time.perf_counter() - start)


def row(name: str, hand: Side, cu: Side) -> str:
    regs = "/".join(str(v) for v in hand.registers.values()), "/".join(str(cu.registers[k]) for k in hand.registers)
    cells = [name, f"{hand.warp_instructions:,}", f"{cu.warp_instructions:,}",
             f"{cu.warp_instructions / hand.warp_instructions:.2f}", regs[0], regs[1],
             f"{hand.base_cycles:,}", f"{cu.base_cycles:,}", f"{hand.dflow_cycles:,}", f"{cu.dflow_cycles:,}",
             f"{hand.speedup:.3f}", f"{cu.speedup:.3f}"]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| workload | REG warp-instr hand | compiled | compiled/hand | regs hand | regs compiled "
          "| BASE cycles hand | BASE cycles compiled | D-FLOW cycles hand | D-FLOW cycles compiled "
          "| D-FLOW/BASE speedup hand | speedup compiled |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="hand-written workloads (default: all ten)")
    parser.add_argument("--size", default="small")
    parser.add_argument("--preset", default="paper-rtx3080")
    args = parser.parse_args()
    twins = {ORIGINALS[t].name: t for t in TWINS}
    names = args.names or list(twins)
    unknown = [n for n in names if n not in twins]
    if unknown:
        parser.error(f"no twin of {', '.join(unknown)} (have: {', '.join(twins)})")
    config = preset(args.preset)
    print(f"size {args.size}, preset {args.preset}; regs: per kernel in the workload's kernel order; "
          "D-FLOW: converter defaults (samples hand-written: their .dflow.s; twins: converted)\n")
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    for name in names:
        twin = twins[name]
        hand = measure(ORIGINALS[twin], config, args.size)
        cu = measure(TWINS[twin], config, args.size)
        print(row(name, hand, cu), flush=True)
    print()


if __name__ == "__main__":
    main()

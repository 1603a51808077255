"""Whole workloads on the RTL core: every launch of a workload's host driver, replayed on the core.

The host driver (``dualflow.kernels``) runs once on a recording functional device, and the
workload's own check against its reference must pass. Each launch becomes a co-simulation case
(``dualflow/testbench/cosim.py``) that starts from the global-memory image that launch saw, so the launches
are independent and run in one simulator process; the RTL's trace and final memory are compared
with the golden model's, launch by launch. Every launch of every workload runs (FP32 and SFU
instructions included).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from dualflow.common.errors import ConfigError
from dualflow.isa import Form, Kernel, Variant
from dualflow.isa.convert.options import ConversionOptions
from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import RegisterFile
from dualflow.models.device import Device
from dualflow.models.memory import GlobalMemory
from dualflow.rtl.params import CoreParams

from .cosim import CaseResult, CosimCase, dim3

__all__ = ["WorkloadCases", "core_for", "workload_cases", "summary"]


class _RecordingDevice(Device):
    """A functional device that keeps, per launch, the kernel, shapes, parameters and a copy of
    global memory as the launch found it."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.replays: list[tuple[Kernel, Any, Any, list[int], GlobalMemory]] = []

    def launch(self, kernel, grid, block, params=(), *, trace=None):
        self.replays.append((kernel, grid, block, list(params), copy.deepcopy(self.memory)))
        return super().launch(kernel, grid, block, params, trace=trace)


@dataclass
class WorkloadCases:
    """A workload's launches as co-simulation cases.

    Attributes
    ----------
    workload, size, form: what ran. verdict: the workload's own check of the golden run.
    cases: one per launch, in launch order.
    """

    workload: str
    size: str
    form: Form
    verdict: str
    cases: list[CosimCase]


def workload_cases(name: str, params: CoreParams, *, size: str = "tiny", seed: int = 1,
                   values: dict[str, Any] | None = None, max_cycles: int = 100000,
                   max_instructions: int | None = None, latency: tuple[int, int] = (1, 40),
                   max_block_threads: int | None = None,
                   variants: frozenset[Variant] = frozenset()) -> WorkloadCases:
    """Run workload ``name`` on the functional model in the core's form and turn its launches into
    cases. ``values`` override the size's parameters (e.g. ``{"nodes": 16}`` for bfs), ``seed``
    generates the inputs and seeds each case's memory model (``seed + launch index``).
    ``max_instructions``: the golden model's budget per launch (``CosimCase.max_instructions``).
    ``max_block_threads``: the device's largest block (``FunctionalConfig.max_threads_per_block``),
    for a workload that sizes its blocks by it (nn), so that it fits a smaller core. ``variants``:
    the DFLOW variants the converter may use (``run_workload``).

    The DFLOW form is converted for the project's default ring; the core must have that ring and
    Dmax (``check_case`` says so otherwise)."""
    form = params.mode.form
    known = get_workload(name).sizes.get(size, {})
    unknown = sorted(set(values or {}) - set(known))
    if unknown:
        raise ConfigError(f"workload {name}: no parameter {', '.join(unknown)} (have: {', '.join(known) or 'none'})")
    limits = {} if max_block_threads is None else {"max_threads_per_block": max_block_threads}
    # the golden run at the core's warp size: a kernel that needs wider warps (warp-synchronous
    # code) refuses here, rather than race on the core
    dev = _RecordingDevice(FunctionalConfig(warp_size=params.warp_size, max_warp_instructions=max_instructions,
                                            **limits))
    run = run_workload(get_workload(name), size, form, seed=seed, params=values, device=dev,
                       conversion=ConversionOptions(variants if form is Form.DFLOW else frozenset()))
    cases: list[CosimCase] = []
    for index, (kernel, grid, block, launch_params, memory) in enumerate(dev.replays):
        cases.append(CosimCase(f"{name}-{index}-{kernel.name}", kernel, block,
                               _restore(memory, launch_params), seed=seed + index, max_cycles=max_cycles,
                               max_instructions=max_instructions,
                               min_latency=latency[0], max_latency=latency[1], grid=grid))
    return WorkloadCases(run.workload, run.size, form, run.verdict, cases)


def core_for(wc: WorkloadCases, params: CoreParams, *, keep: Collection[str] = ()) -> CoreParams:
    """``params`` grown to run every launch of ``wc``: ``warps`` raised to the fewest (a power of
    two) that hold the largest block, ``shared_bytes`` to the power of two that holds the largest
    ``.shared``, and in BASE ``regs`` to the kernels' largest register count.
    Nothing is lowered; the fields named in ``keep`` (the ones a user gave) are left as they are,
    for ``check_case`` to refuse if they do not fit."""
    threads = max((math.prod(dim3(c.block)) for c in wc.cases), default=1)
    shared = max((c.kernel.shared_bytes for c in wc.cases), default=0)
    grown = {}
    if "shared_bytes" not in keep and shared > params.shared_bytes:
        grown["shared_bytes"] = 1 << math.ceil(math.log2(shared))
    if "warps" not in keep:
        grown["warps"] = max(params.warps, 1 << max(1, math.ceil(math.log2(-(-threads // params.warp_size)))))
    if params.mode.register_file is RegisterFile.NAMED and "regs" not in keep:
        grown["regs"] = max([params.regs] + [c.kernel.regs for c in wc.cases])
    return dataclasses.replace(params, **grown)


def _restore(memory: GlobalMemory, launch_params: Sequence[int]):
    """A case set-up that gives the device the launch's memory image and returns its parameters."""

    def setup(dev: Device) -> list[int]:
        dev.memory = copy.deepcopy(memory)
        return list(launch_params)

    return setup


def summary(wc: WorkloadCases, results: Sequence[CaseResult]) -> str:
    """One line per launch (the failing ones in full), then the totals."""
    lines = []
    for r in results:
        matched = f"{r.compare.matched} records matched" if r.compare is not None else "memory matched (no trace port)"
        lines.append(r.summary() if not r.ok else f"PASS {r.name}: {matched}, "
                     f"{r.blocks} block{'s' if r.blocks > 1 else ''}, {r.cycles} cycles, "
                     f"{r.bank_conflicts} register bank conflicts")
    passed = sum(r.ok for r in results)
    records = sum(r.compare.matched for r in results if r.compare is not None)
    cycles = sum(r.cycles for r in results)
    lines.append(f"{wc.workload} {wc.size} {wc.form.value}: {passed} of {len(results)} launches match the golden "
                 f"model ({records} records, {cycles} core cycles); golden check: {wc.verdict}")
    return "\n".join(lines)

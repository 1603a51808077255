"""What a workload is, and how one is run and checked.

A workload is a module of REG-form kernels (``source``) plus a Python host driver that follows
the original program's host code: it generates inputs from a seed, allocates and copies, launches
the kernels in the original order and shapes, copies results back; a numpy reference of the
same algorithm then checks the output. The DFLOW form of the module is either written by hand
(``dflow_source``) or produced by the REG-to-DFLOW converter.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dualflow.common.errors import ConfigError, DualflowError
from dualflow.isa import Form, Module, assemble_file
from dualflow.isa.convert.options import DEFAULT_CONVERSION, ConversionOptions
from dualflow.models import Device, FunctionalConfig, LaunchStats, Trace
from dualflow.models.statistic import merge_launches


class CheckFailed(DualflowError):
    """A workload's output differs from its numpy reference beyond the documented tolerance."""


class Workload(ABC):
    """One benchmark: kernels, host driver, input generator, reference and check.

    Class attributes
    ----------------
    name: short name used on the command line.
    description: one line: what it computes and what it exercises.
    source: REG-form assembly module holding every kernel of the workload.
    dflow_source: hand-written DFLOW-form module, or None to use the converter.
    sizes: size name ("tiny", "small", "paper") -> keyword parameters of ``generate``/``execute``.
    tolerance: one line documenting what ``check`` accepts.
    origin: where the kernels come from: "hand-written" (assembly in our ISA) or "compiled"
        (CUDA C through the front end, ``kernels/compiled.py``).
    suite: the benchmark suite the algorithm comes from ("rodinia", "polybench", "sdk", "samples").
    """

    name: ClassVar[str]
    description: ClassVar[str]
    source: ClassVar[Path]
    dflow_source: ClassVar[Path | None] = None
    sizes: ClassVar[dict[str, dict[str, Any]]]
    tolerance: ClassVar[str] = "bit-exact"
    origin: ClassVar[str] = "hand-written"
    suite: ClassVar[str] = "samples"

    @abstractmethod
    def generate(self, rng: np.random.Generator, **params) -> dict[str, Any]:
        """Inputs, from the seeded generator and the size parameters."""

    @abstractmethod
    def execute(self, dev: Device, module: Module, inputs: dict[str, Any], **params) -> dict[str, np.ndarray]:
        """The host driver: copy in, launch in the original order and shapes, copy out."""

    @abstractmethod
    def reference(self, inputs: dict[str, Any], **params) -> dict[str, np.ndarray]:
        """The expected outputs, computed with numpy from the same inputs."""

    @abstractmethod
    def check(self, outputs: dict[str, np.ndarray], expected: dict[str, np.ndarray], **params) -> str:
        """Compare; return a one-line verdict, or raise ``CheckFailed`` naming what differs."""

    def reg_module(self) -> Module:
        """The workload's kernels in REG form, as written."""
        return assemble_file(self.source)

    def module(self, form: Form, conversion: ConversionOptions = DEFAULT_CONVERSION) -> Module:
        """The workload's kernels in the requested operand form (DFLOW: converted with the
        ``conversion`` options, unless none is given and the workload has a hand-written DFLOW form)."""
        reg = self.reg_module()
        if form is Form.REG:
            return reg
        if self.dflow_source is not None and not conversion.given:
            return assemble_file(self.dflow_source)
        return convert_module(reg, conversion)


def with_dflow_form(workload: type[Workload], dflow: Module) -> type[Workload]:
    """``workload`` with ``dflow`` as its DFLOW form (a conversion made elsewhere: another Dmax,
    ring or variant); its REG form is its own."""

    class Given(workload):
        def module(self, form: Form, conversion: ConversionOptions = DEFAULT_CONVERSION) -> Module:
            return dflow if form is Form.DFLOW else super().module(form)

    return Given


def convert_module(module: Module, conversion: ConversionOptions) -> Module:
    """DFLOW form of a REG-form module, through the converter with the ``conversion`` options."""
    from dualflow.isa.convert import convert_module as convert

    return convert(module, **conversion.keywords())[0]


@dataclass
class WorkloadRun:
    """The outcome of one checked run."""

    workload: str
    size: str
    form: Form
    seed: int
    params: dict[str, Any]
    verdict: str
    total: LaunchStats
    by_kernel: dict[str, LaunchStats]
    outputs: dict[str, np.ndarray] = field(repr=False)
    traces: list[Trace] | None = field(default=None, repr=False)
    launches: list = field(default_factory=list, repr=False)  # LaunchRecord per launch, in order

    def to_dict(self) -> dict:
        return {
            "workload": self.workload, "size": self.size, "form": self.form.value, "seed": self.seed,
            "params": self.params, "check": {"result": "ok", "verdict": self.verdict},
            "total": self.total.to_dict(),
            "kernels": {name: s.to_dict() for name, s in self.by_kernel.items()},
        }


def run_workload(workload: Workload | type[Workload], size: str = "small", form: Form = Form.REG,
                 seed: int = 1, params: dict[str, Any] | None = None,
                 config: FunctionalConfig | None = None, trace: bool = False,
                 device: Device | None = None, conversion: ConversionOptions = DEFAULT_CONVERSION) -> WorkloadRun:
    """Generate inputs, run the host driver on a fresh device, check against the reference.

    ``device``: run on this fresh device instead (the timing model's ``TimingDevice``);
    ``conversion``: the converter's options for the DFLOW form (``Workload.module``)."""
    wl = workload() if isinstance(workload, type) else workload
    if size not in wl.sizes:
        raise ConfigError(f"workload {wl.name}: unknown size {size!r} (have: {', '.join(wl.sizes)})")
    full = dict(wl.sizes[size], **(params or {}))
    module = wl.module(form, conversion)
    dev = device if device is not None else Device(config, trace=trace)
    inputs = wl.generate(np.random.default_rng(seed), **full)
    outputs = wl.execute(dev, module, inputs, **full)
    verdict = wl.check(outputs, wl.reference(inputs, **full), **full)
    if not dev.history:
        raise DualflowError(f"workload {wl.name}: the host driver launched no kernel")
    total, by_kernel = merge_launches(dev.history)
    return WorkloadRun(wl.name, size, form, seed, full, verdict, total, by_kernel, outputs,
                       dev.traces if trace else None, dev.launches)

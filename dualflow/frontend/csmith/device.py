"""The GPU side of the differential test: compile the kernel through the front end and run it on
the machines the caller names, returning the per-thread checksums.

A machine is a ``Target``: a name, the operand form its kernels take (REG, or DFLOW made by the
REG-to-DFLOW converter with its default options, as ``Workload.module(Form.DFLOW)`` makes it for a
compiled workload) and a factory of fresh devices with the CUDA-runtime-like API of the functional
model's ``Device`` (``upload``, ``alloc``, ``launch``, ``copy_out``). The factories come from above:
this package is part of the front end, which builds on the ISA only (``dualflow/layers.py``), so
the models are chosen by the caller (``benchmarks/csmith_campaign.py``, ``targets``: the functional
model in both forms, the timing model in BASE and D-FLOW modes).

A launch is one thread per seed, ``block`` threads per block; ``csmith_kernel(seeds, out)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dualflow.common.errors import ConfigError, DualflowError, KernelFault
from dualflow.isa import Form, Module

from .errors import StageError
from .ptx_census import CLANG_FLAGS
from .transform import INCLUDE_DIR, KERNEL_NAME

__all__ = ["Target", "DeviceProgram", "compile_kernel", "run_target", "refusal_kind"]


@dataclass(frozen=True)
class Target:
    """A machine to run the kernel on: ``name`` (in reports), the ``form`` of the kernels it runs,
    and ``new_device``, which makes a fresh device (global memory empty, no launch yet)."""

    name: str
    form: Form
    new_device: Callable[[], Any] = field(compare=False)


@dataclass
class DeviceProgram:
    """A kernel compiled by the front end: its REG form, its report, and its DFLOW form once made."""

    reg: Module
    registers: int
    local_bytes: int
    reg_instructions: int
    _dflow: Module | None = field(default=None, repr=False)

    def module(self, form: Form) -> Module:
        """The kernel in ``form``: REG as compiled, DFLOW converted on first use (a converter failure
        is a ``StageError``)."""
        if form is Form.REG:
            return self.reg
        if self._dflow is None:
            from dualflow.isa.convert import ConvertError, convert_module
            from dualflow.isa.convert.options import DEFAULT_CONVERSION

            try:
                self._dflow = convert_module(self.reg, **DEFAULT_CONVERSION.keywords())[0]
            except ConvertError as e:
                raise StageError("converter error", f"REG-to-DFLOW conversion failed: {e}") from e
        return self._dflow


def compile_kernel(cu: Path, *, opt_level: str = "-O2", flags: tuple[str, ...] = ()) -> DeviceProgram:
    """Compile the generated ``.cu`` through the front end with per-thread globals. A construct the
    front end refuses is a ``StageError`` whose reason starts with "frontend:" and names it."""
    from dualflow.frontend import CompileOptions, FrontendError, compile_file

    options = CompileOptions(flags=(*CLANG_FLAGS, "-I", str(INCLUDE_DIR), *flags), opt_level=opt_level,
                             kernel=KERNEL_NAME, private_globals=True)
    try:
        compiled = compile_file(cu, options)
    except FrontendError as e:
        raise StageError(f"frontend: {refusal_kind(str(e))}", str(e)) from e
    report = compiled.reports[KERNEL_NAME]
    return DeviceProgram(compiled.module, report.registers, report.local_bytes, report.reg_instructions)


def refusal_kind(message: str) -> str:
    """A short name for what the front end refused, for counting. Its messages read
    ``FILE:LINE: CONSTRUCT: what is wrong`` (``kernel.ptx:144: bfe.u32: PTX instruction not
    supported by the front end``): the construct and the reason; otherwise the message's start."""
    m = re.search(r":\d+: (?P<construct>[^:\n]+): (?P<why>[^\n]*)", message)
    if m and not m["construct"].startswith("kernel "):
        return f"{m['construct'].strip()}: {m['why'].strip()[:80]}"
    if m:  # about the kernel as a whole (its control flow): the reason, without its labels
        return _first_words(m["why"])
    return _first_words(message) or "no message"


def _launch(dev, module: Module, seeds: np.ndarray, block: int) -> np.ndarray:
    kernel = module[KERNEL_NAME]
    if len(seeds) % block:
        raise ConfigError(f"{len(seeds)} threads are not a whole number of blocks of {block}")
    seeds_addr = dev.upload(seeds)
    out = dev.alloc(4 * len(seeds))
    dev.launch(kernel, grid=len(seeds) // block, block=block, params=[seeds_addr, out])
    return dev.copy_out(out, len(seeds), np.uint32)


def run_target(target: Target, program: DeviceProgram, seeds: np.ndarray, *, block: int = 32) -> np.ndarray:
    """The per-thread checksums of ``program`` on ``target``; a fault or a runaway launch is a
    ``StageError`` ("fault", "runaway")."""
    seeds = np.asarray(seeds, dtype=np.uint32)
    module = program.module(target.form)
    try:
        return _launch(target.new_device(), module, seeds, block)
    except KernelFault as e:
        kind = "runaway" if "budget" in str(e) else "fault"
        raise StageError(kind, f"{target.name}: {e}") from e
    except DualflowError as e:  # a model that cannot go on (the timing model's deadlock check, ...)
        raise StageError(_first_words(str(e)), f"{target.name}: {e}") from e


def _first_words(message: str) -> str:
    """A message without its particulars (numbers, labels, names in quotes), for counting."""
    text = re.sub(r"'[^']*'|\b\w*\d\w*\b", "#", message.splitlines()[0] if message else "")
    return re.sub(r"(#[\s:,#]*)+", "# ", text).strip()[:90]

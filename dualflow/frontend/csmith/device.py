"""The GPU side of the differential test: compile the kernel through the front end and run it on
each model of the machine, returning the per-thread checksums.

Targets, cheapest first (``TARGETS``):

- ``reg``: the functional model on the front end's REG-form module;
- ``dflow``: the functional model on its DFLOW form, made by the REG-to-DFLOW converter with the
  default conversion options (what ``Workload.module(Form.DFLOW)`` gives a compiled workload);
- ``timing-base`` / ``timing-dflow``: the cycle-level model (``TimingDevice``) in BASE mode on the
  REG form and in D-FLOW mode on the DFLOW form, on a one-SM ``paper-rtx3080`` (the timing model
  executes as it times, so its results are checked like the functional model's).

A launch is one thread per seed, ``block`` threads per block; ``csmith_kernel(seeds, out)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dualflow.common.errors import ConfigError, KernelFault
from dualflow.isa import Module
from dualflow.machine.functional import FunctionalConfig

from .errors import StageError
from .ptx_census import CLANG_FLAGS
from .transform import INCLUDE_DIR, KERNEL_NAME

__all__ = ["TARGETS", "DeviceProgram", "compile_kernel", "run_target", "TIMING_PRESET", "DEFAULT_BUDGET"]

#: Every target, in the order a program is run on them.
TARGETS = ("reg", "dflow", "timing-base", "timing-dflow")
#: The timing model's machine: the paper's GPU cut to one SM (a launch of a few warps uses one).
TIMING_PRESET = "paper-rtx3080"
#: Warp instructions a launch may retire before it counts as runaway: generous, since a Csmith
#: program's loops and software division run long, but finite, so a miscompiled endless loop ends.
DEFAULT_BUDGET = 20_000_000


@dataclass
class DeviceProgram:
    """A kernel compiled by the front end: its REG form, its report, and its DFLOW form once made."""

    reg: Module
    registers: int
    local_bytes: int
    reg_instructions: int
    _dflow: Module | None = field(default=None, repr=False)

    def dflow(self) -> Module:
        """The DFLOW form (converted on first use); a converter failure is a ``StageError``."""
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
    import re

    m = re.search(r":\d+: (?P<construct>[^:\n]+): (?P<why>[^\n]*)", message)
    if m:
        return f"{m['construct'].strip()}: {m['why'].strip()[:80]}"
    return message.strip().splitlines()[0][:100] if message.strip() else "no message"


def _launch(dev, module: Module, seeds: np.ndarray, block: int) -> np.ndarray:
    kernel = module[KERNEL_NAME]
    if len(seeds) % block:
        raise ConfigError(f"{len(seeds)} threads are not a whole number of blocks of {block}")
    seeds_addr = dev.upload(seeds)
    out = dev.alloc(4 * len(seeds))
    dev.launch(kernel, grid=len(seeds) // block, block=block, params=[seeds_addr, out])
    return dev.copy_out(out, len(seeds), np.uint32)


def run_target(target: str, program: DeviceProgram, seeds: np.ndarray, *, block: int = 32,
               budget: int = DEFAULT_BUDGET, engine: str = "compiled") -> np.ndarray:
    """The per-thread checksums of ``program`` on ``target``; a fault or a runaway launch is a
    ``StageError`` ("fault", "runaway")."""
    from dualflow.models import Device

    functional = FunctionalConfig(max_warp_instructions=budget, max_local_bytes=1 << 16)
    seeds = np.asarray(seeds, dtype=np.uint32)
    try:
        if target == "reg":
            return _launch(Device(functional), program.reg, seeds, block)
        if target == "dflow":
            return _launch(Device(functional), program.dflow(), seeds, block)
        if target in ("timing-base", "timing-dflow"):
            from dualflow.machine.presets import preset
            from dualflow.models.timing.device import TimingDevice

            mode = target.split("-")[1]
            config = preset(TIMING_PRESET).replace(num_sms=1, mode=mode)
            module = program.reg if mode == "base" else program.dflow()
            return _launch(TimingDevice(config, functional, engine=engine), module, seeds, block)
    except KernelFault as e:
        kind = "runaway" if "budget" in str(e) or "runaway" in str(e) else "fault"
        raise StageError(kind, f"{target}: {e}") from e
    raise ConfigError(f"unknown target {target!r} (have: {', '.join(TARGETS)})")

"""The front end's entry points: options, the per-kernel report, and the stage pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError
from dualflow.isa import Module


class FrontendError(DualflowError):
    """A kernel the front end cannot compile; the message names the file and line (CUDA or PTX)."""


@dataclass(frozen=True)
class CompileOptions:
    """How a kernel is compiled.

    flags: extra clang flags (``-ffp-contract=off``, ``-DN=64``, ...).
    opt_level: clang's optimization level.
    max_registers: registers per thread the allocator may use (nvcc's ``-maxrregcount``);
        values that do not fit are spilled to local memory.
    kernel: compile only this kernel (default: every ``.entry`` of the file).
    """

    flags: tuple[str, ...] = ()
    opt_level: str = "-O2"
    max_registers: int = 255
    kernel: str | None = None


@dataclass(frozen=True)
class KernelReport:
    """What ``-Xptxas -v`` would say about one kernel, and the sizes of each stage."""

    name: str
    ptx_instructions: int
    reg_instructions: int
    registers: int
    spilled_values: int
    spill_stores: int
    spill_loads: int
    shared_bytes: int
    local_bytes: int


@dataclass
class Compiled:
    """A compiled file: the REG-form module, its assembly text and a report per kernel."""

    module: Module
    assembly: str
    reports: dict[str, KernelReport] = field(default_factory=dict)


def compile_file(path: Path | str, options: CompileOptions = CompileOptions()) -> Compiled:
    raise NotImplementedError("front end under construction")


def compile_ptx(text: str, path: str = "<ptx>", options: CompileOptions = CompileOptions()) -> Compiled:
    raise NotImplementedError("front end under construction")

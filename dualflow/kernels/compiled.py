"""Workloads whose kernels are CUDA C, compiled by the front end (``dualflow.frontend``).

A compiled workload is a ``Workload`` whose REG form comes from ``cuda_source`` through clang,
PTX and the front end's register allocator instead of hand-written assembly; its host driver,
numpy reference and check are ordinary Python as for every workload.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from dualflow.isa import Module

from .workload import Workload


class CompiledWorkload(Workload):
    """A workload compiled from CUDA C.

    cuda_source: the ``.cu`` file holding every kernel the host driver launches (``extern "C"``
        kernels, so the launch names are the C names).
    cuda_flags: extra clang flags, e.g. ``("-ffp-contract=off",)`` when the reference is bit-exact
        in the source's operation order (clang, like nvcc, fuses a*b+c into an FMA by default).
    """

    origin = "compiled"
    cuda_source: ClassVar[Path]
    cuda_flags: ClassVar[tuple[str, ...]] = ()

    @property
    def source(self) -> Path:  # type: ignore[override]
        return self.cuda_source

    def reg_module(self) -> Module:
        from dualflow.frontend import CompileOptions, compile_file

        return compile_file(self.cuda_source, CompileOptions(flags=self.cuda_flags)).module

"""The CUDA front end: CUDA C -> PTX (the machine's clang) -> REG-form assembly of our ISA.

``compile_file`` takes a ``.cu`` or ``.ptx`` file and returns the REG-form module with a report
per kernel (PTX instructions, REG instructions, registers per thread, spills). The stages, one
module each: ``clang`` (CUDA C to PTX, cached), ``ptx`` (the PTX parser), ``lower`` (PTX
instructions to ours over virtual registers), ``reconverge`` (ssy/sync at immediate
post-dominators), ``regalloc`` (virtual registers onto the REG form's, spilling to local
memory), ``emit`` (assembly text with PTX line comments). docs/frontend.md describes them.
"""

from __future__ import annotations

from .driver import Compiled, CompileOptions, FrontendError, KernelReport, compile_file, compile_ptx

__all__ = ["CompileOptions", "Compiled", "KernelReport", "FrontendError", "compile_file", "compile_ptx"]

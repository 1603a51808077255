"""The front end's entry points: options, the per-kernel report, and the stage pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError
from dualflow.isa import Module, assemble
from dualflow.isa.encoding import MAX_REGS

from .clang import cuda_to_ptx
from .emit import emit_kernel
from .errors import FrontendError
from .ir import Op
from .lower import lower_entry
from .ptx import parse_ptx
from .reconverge import reconverge
from .regalloc import allocate
from .simplify import simplify


@dataclass(frozen=True)
class CompileOptions:
    """How a kernel is compiled.

    flags: extra clang flags (``-ffp-contract=off``, ``-DN=64``, ...).
    opt_level: clang's optimization level.
    max_registers: registers per thread the allocator may use (nvcc's ``-maxrregcount``);
        values that do not fit are spilled to local memory.
    kernel: compile only this kernel (default: every ``.entry`` of the file).
    private_globals: each thread gets its own copy of the module's global variables in local
        memory, initialized at kernel entry (the Csmith harness: every thread runs a whole
        program); without it a module-scope variable is refused.
    """

    flags: tuple[str, ...] = ()
    opt_level: str = "-O2"
    max_registers: int = MAX_REGS
    kernel: str | None = None
    private_globals: bool = False


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


#: The options of a plain compile.
DEFAULT_OPTIONS = CompileOptions()


def compile_ptx(text: str, path: str = "<ptx>", options: CompileOptions = DEFAULT_OPTIONS,
                source: str | None = None, param_names: dict[str, list[str]] | None = None) -> Compiled:
    """REG-form module of PTX text: parse, lower, allocate registers, reconverge, assemble.
    ``param_names``: the source's names of each kernel's parameters (else PTX's)."""
    module = parse_ptx(text, path)
    entries = module.entries
    if options.kernel is not None:
        entries = [e for e in entries if e.name == options.kernel]
        if not entries:
            have = ", ".join(e.name for e in module.entries) or "none"
            raise FrontendError(f"{path}: no kernel {options.kernel!r} (have: {have})")
    if not entries:
        raise FrontendError(f"{path}: no kernel (.entry) in the file: declare kernels __global__")
    texts, reports = [], {}
    for entry in entries:
        fn = simplify(lower_entry(module, entry, options.private_globals))
        names = (param_names or {}).get(entry.name)
        if names and len(names) == len(fn.params) and all(names) and len(set(names)) == len(names):
            fn.params = names
        alloc = allocate(fn, options.max_registers)
        reconverge(fn, path)
        texts.append(emit_kernel(fn, alloc.registers, source or path))
        count = sum(1 for item in fn.items if isinstance(item, Op))
        reports[entry.name] = KernelReport(entry.name, fn.ptx_instructions, count, alloc.registers,
                                           alloc.spilled_values, alloc.spill_stores, alloc.spill_loads,
                                           fn.shared_bytes, fn.local_bytes)
    assembly = "\n".join(texts)
    try:
        reg = assemble(assembly, f"<compiled {source or path}>")
    except DualflowError as exc:  # a front-end defect: say so rather than blame the kernel
        raise FrontendError(f"{path}: the front end wrote assembly the assembler refuses: {exc}") from None
    return Compiled(reg, assembly, reports)


def compile_file(path: Path | str, options: CompileOptions = DEFAULT_OPTIONS) -> Compiled:
    """REG-form module of a ``.cu`` (through clang) or ``.ptx`` file."""
    path = Path(path)
    if path.suffix == ".ptx":
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise FrontendError(f"cannot read {path}: {exc}") from None
    elif path.suffix in (".cu", ".cuh", ".c", ".cc", ".cpp"):
        text, names = cuda_to_ptx(path, options.flags, options.opt_level)
    else:
        raise FrontendError(f"{path}: the front end compiles .cu (CUDA C) and .ptx files")
    if path.suffix == ".ptx":
        return compile_ptx(text, str(path), options)
    return compile_ptx(text, path.with_suffix(".ptx").name, options, source=str(path), param_names=names)

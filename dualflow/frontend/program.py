"""A program file as the commands take it: assembly (``.s``), CUDA C (``.cu``) or PTX (``.ptx``)."""

from __future__ import annotations

from pathlib import Path

from dualflow.isa import Module

from .driver import DEFAULT_OPTIONS, CompileOptions, compile_file

#: Suffixes of the program files ``dualflow sim``, ``convert`` and ``cosim`` take.
PROGRAM_SUFFIXES = (".s", ".cu", ".ptx")


def is_program(target: str) -> bool:
    """Whether a command-line target names a program file rather than a workload."""
    return Path(target).suffix in PROGRAM_SUFFIXES


def load_program(path: str | Path, options: CompileOptions = DEFAULT_OPTIONS) -> Module:
    """The module of a program file: assembled, or compiled through the front end."""
    from dualflow.isa import assemble_file

    p = Path(path)
    if p.suffix in (".cu", ".ptx"):
        return compile_file(p, options).module
    return assemble_file(p)

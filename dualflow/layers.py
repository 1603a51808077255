"""The layering of the ``dualflow`` packages: which package may import which.

Each part of the namespace (``dualflow.X``, a package or a module directly under ``dualflow/``)
names the parts it builds on directly; it may import those and, transitively, everything they
build on, and nothing else. So no part imports one above it and there is no import cycle between
parts. ``tests/project/test_layers.py`` reads this table and checks every import of every module against
it, function-local imports included.

Bottom to top: the common utilities (``common``: errors, atomic file writes, build folders); the
instruction set (with the CUDA front end above it); the machine description; the models
(functional, then timing); the workloads; the experiments that run workloads on the models.
Beside them: the RTL core on the machine description, its synthesis and
its testbenches (which use the models and the workloads as golden references). The GPU energy
model joins the two sides: the timing model's statistics times energies from synthesis's SRAM model
and technology scaling; the experiments use it. The command line sits on top of everything.
"""

from __future__ import annotations

from collections.abc import Mapping

#: part -> the parts it builds on directly.
BUILDS_ON: Mapping[str, tuple[str, ...]] = {
    "__init__": (),  # the namespace's own ``dualflow/__init__.py``
    "layers": (),
    "common": (),  # errors, atomic file writes, build folders, the checkout's commit
    "isa": ("common",),
    "frontend": ("isa",),  # CUDA C -> PTX -> the REG form
    "machine": ("isa",),
    "models": ("machine",),
    "kernels": ("models", "frontend"),  # frontend: the compiled suite's kernels
    "energy": ("models", "synth"),  # the timing model's statistics times per-event energies (CACTI, scaling)
    "experiments": ("kernels", "energy"),
    "rtl": ("machine",),
    "synth": ("rtl",),
    "testbench": ("rtl", "kernels", "synth"),  # synth: gate-level runs of a netlist
    "cli": ("experiments", "synth", "testbench"),
    "__main__": ("cli",),
}


def below(part: str, table: Mapping[str, tuple[str, ...]] = BUILDS_ON) -> frozenset[str]:
    """Every part that ``part`` may import (what it builds on, transitively)."""
    seen: set[str] = set()
    stack = list(table[part])
    while stack:
        p = stack.pop()
        if p not in seen:
            seen.add(p)
            stack.extend(table[p])
    return frozenset(seen)

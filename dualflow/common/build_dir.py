"""Where generated files go: simulation builds, lint output, downloaded and built technology data
(cell libraries, CACTI). ``$DUALFLOW_BUILD_DIR`` or ``build/`` in the working directory, never the
installed package (read-only or shared when installed from a wheel)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["BUILD_DIR_ENV", "BUILD_BASE", "TECH_DIR", "tech_dirs"]

#: Environment variable naming the folder of generated builds (default ``build`` in the working directory).
BUILD_DIR_ENV = "DUALFLOW_BUILD_DIR"
#: Folder of every generated build, made absolute when this module is imported, so that a later
#: change of working directory does not move it.
BUILD_BASE = Path(os.environ.get(BUILD_DIR_ENV) or "build").resolve()
#: Technology data and tools fetched or built for synthesis (``make tech``, ``make cacti``).
TECH_DIR = BUILD_BASE / "tech"


def tech_dirs() -> tuple[Path, ...]:
    """Where installed technology data is looked for: ``TECH_DIR``, then ``build/tech`` of this
    source checkout (so a command run from another folder finds what `make` installed here)."""
    checkout = Path(__file__).resolve().parents[2] / "build" / "tech"
    return tuple(dict.fromkeys((TECH_DIR, checkout)))

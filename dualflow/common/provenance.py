"""Which source a figure was made from: the git commit of this checkout, for data files and run
records that must say where they came from."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["source_commit"]

_CHECKOUT = Path(__file__).resolve().parents[2]


def source_commit() -> str:
    """The checkout's commit (40 hex digits, ``+dirty`` when tracked files differ from it), or
    ``unknown`` outside a git checkout (an installed wheel)."""
    try:
        head = subprocess.run(["git", "-C", str(_CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(_CHECKOUT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")

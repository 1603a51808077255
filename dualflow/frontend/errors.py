"""The front end's error: a kernel it cannot compile, named by file and line (CUDA or PTX)."""

from __future__ import annotations

from dualflow.common.errors import DualflowError


class FrontendError(DualflowError):
    """A kernel the front end cannot compile; the message names the file and line."""

"""The one error of the Csmith pipeline: a stage that failed, with a short reason for counting."""

from __future__ import annotations

from dualflow.common.errors import DualflowError

__all__ = ["StageError"]


class StageError(DualflowError):
    """A stage (csmith, transform, g++, host run, clang, front end, a model) failed on a program.

    ``reason`` is a short tag ("host timeout", "gcc error", ...) by which a campaign counts the
    programs it skips; the message says what happened, naming the file.
    """

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason

"""A device that checks and records a host driver's launches without running them: the launch
shapes of any size in a moment (what it copies back is whatever memory held)."""

from __future__ import annotations

import numpy as np

from dualflow.models import Device


class LaunchRecorder(Device):
    def __init__(self):
        super().__init__()
        self.shapes: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []

    def launch(self, kernel, grid, block, params=(), *, trace=None):
        self._begin_launch(kernel, grid, block, params)
        self.shapes.append((kernel.name, tuple(np.atleast_1d(grid)), tuple(np.atleast_1d(block))))


def threads(grid, block) -> int:
    return int(np.prod(np.atleast_1d(grid)) * np.prod(np.atleast_1d(block)))

"""The compiled suite: workloads written in CUDA C and compiled by the front end, each with its
host driver and numpy reference (docs/workloads.md, "The compiled suite").

- ``twins/``: the ten hand-written workloads written again in CUDA C (``NAME-cu``), with the same
  kernel names and parameters, so the hand-written host drivers and checks run them unchanged;
- ``polybench/``: Polybench/GPU linear algebra and stencils;
- ``rodinia/``: more of Rodinia (backprop, kmeans, srad, streamcluster);
- ``sdk/``: classic CUDA SDK samples (tiled matrix multiply, reduction, bitonic sort, transpose, scan).
"""

from __future__ import annotations

from ..workload import Workload
from .polybench import POLYBENCH
from .rodinia import RODINIA_CUDA
from .sdk import SDK
from .twins import TWINS

#: name -> workload class, in the order `dualflow bench list` prints them.
COMPILED: dict[str, type[Workload]] = {**TWINS, **POLYBENCH, **RODINIA_CUDA, **SDK}
#: The compiled workloads not written after a hand-written one: the held-back set (registry.HELD_BACK).
HELD_BACK_COMPILED: dict[str, type[Workload]] = {**POLYBENCH, **RODINIA_CUDA, **SDK}

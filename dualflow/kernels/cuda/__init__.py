"""The compiled suite: workloads written in CUDA C and compiled by the front end, each with its
host driver and numpy reference (docs/workloads.md, "The compiled suite").

- ``polybench/``: Polybench/GPU linear algebra and stencils;
"""

from __future__ import annotations

from ..workload import Workload
from .polybench import POLYBENCH

#: name -> workload class, in the order `dualflow bench list` prints them.
COMPILED: dict[str, type[Workload]] = {**POLYBENCH}

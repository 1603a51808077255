"""Rodinia 3.1 workloads, ported to the Dualflow REG form with their host drivers.

The paper's four (gaussian, lud, pathfinder, nn) and three that bring what those lack:
data-dependent branches and loop trip counts and irregular accesses (bfs, hotspot, nw).
"""

from __future__ import annotations

from ..workload import Workload
from .bfs import Bfs
from .gaussian import Gaussian
from .hotspot import Hotspot
from .lud import Lud
from .nn import Nn
from .nw import Nw
from .pathfinder import Pathfinder

#: name -> workload class, in the order `dualflow bench list` prints them.
RODINIA: dict[str, type[Workload]] = {w.name: w for w in (Gaussian, Lud, Pathfinder, Nn, Bfs, Hotspot, Nw)}
#: The benchmarks of the seed paper's evaluation.
PAPER_FOUR = ("gaussian", "lud", "pathfinder", "nn")

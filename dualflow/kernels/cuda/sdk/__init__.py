"""CUDA SDK-style kernels compiled from CUDA C by the front end: the classic patterns of shared
memory and barriers (tiled matrix multiply, block reduction, bitonic sort, transpose, scan), each
with a host driver and a numpy reference. Our own code of what the samples compute."""

from __future__ import annotations

from dualflow.kernels.workload import Workload

from .bitonic import Bitonic
from .matmul_tiled import MatmulTiled
from .reduction import Reduction
from .scan import Scan
from .transpose import Transpose

#: name -> workload class
SDK: dict[str, type[Workload]] = {w.name: w for w in (MatmulTiled, Reduction, Bitonic, Transpose, Scan)}

"""Polybench/GPU workloads (Grauer-Gray et al., InPar 2012) written in CUDA C and compiled by the front
end: seven linear-algebra kernels and three stencils, with host drivers in Polybench's launch order
and shapes and exact numpy checks. Each module's docstring states its deviations from the original.
"""

from __future__ import annotations

from ...workload import Workload
from .atax import Atax
from .bicg import Bicg
from .conv2d import Conv2d
from .fdtd2d import Fdtd2d
from .gemm import Gemm
from .gesummv import Gesummv
from .jacobi2d import Jacobi2d
from .mm2 import Mm2
from .mvt import Mvt
from .syrk import Syrk

#: name -> workload class, in the order `dualflow bench list` prints them.
POLYBENCH: dict[str, type[Workload]] = {
    w.name: w for w in (Gemm, Mm2, Atax, Bicg, Mvt, Gesummv, Syrk, Conv2d, Fdtd2d, Jacobi2d)
}

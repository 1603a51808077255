"""Polybench FDTD-2D: a 2-D finite-difference time-domain simulation, three kernels per time step
(``fdtd2d.cu``).

Per step t, as Polybench/GPU launches them on 32 x 8 blocks, one thread per grid point:
``fdtd_step1_kernel`` updates ey from hz (row 0 set to fict[t]), ``fdtd_step2_kernel`` ex from hz,
``fdtd_step3_kernel`` hz from ex and ey. Deviations: seeded uniform inputs in [-1, 1) instead of
its (i*(j+1)+1)/NX formulas (fict[t] = t as in the original); "paper" size is 512 x 512 for 10
steps (its standard size is 2048 x 2048 for 500), which fills the GPU (262,144 threads per launch)
in about 2.7e8 thread-instructions.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_2D, SOURCE_DIR, PolybenchWorkload, grid_2d

HALF = np.float32(0.5)
SEVEN_TENTHS = np.float32(0.7)


class Fdtd2d(PolybenchWorkload):
    name = "fdtd-2d"
    description = ("2-D FDTD electromagnetic stencil, three kernels per time step on 32x8 blocks: neighbour loads "
                   "along rows and columns, boundary branches (a divergent first row), FP32 subtract-multiply")
    cuda_source = SOURCE_DIR / "fdtd2d.cu"
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        "tiny": {"nx": 12, "ny": 40, "tmax": 3},  # 2 x 2 blocks, 9 launches
        "small": {"nx": 128, "ny": 128, "tmax": 8},
        "paper": {"nx": 512, "ny": 512, "tmax": 10},
    }
    tolerance = "bit-exact: FP32 reference in the kernels' operation order, compiled without FP contraction"
    outputs = ("ex", "ey", "hz")

    def generate(self, rng, nx, ny, tmax):
        def field():
            return (2 * rng.random((nx, ny), dtype=np.float32) - 1).astype(np.float32)

        return {"fict": np.arange(tmax, dtype=np.float32), "ex": field(), "ey": field(), "hz": field()}

    def execute(self, dev, module, inputs, nx, ny, tmax):
        fict, ex, ey, hz = (dev.upload(inputs[key]) for key in ("fict", "ex", "ey", "hz"))
        grid = grid_2d(ny, nx)
        for t in range(tmax):
            dev.launch(module["fdtd_step1_kernel"], grid=grid, block=BLOCK_2D, params=[nx, ny, fict, ey, hz, t])
            dev.launch(module["fdtd_step2_kernel"], grid=grid, block=BLOCK_2D, params=[nx, ny, ex, hz])
            dev.launch(module["fdtd_step3_kernel"], grid=grid, block=BLOCK_2D, params=[nx, ny, ex, ey, hz])
        return {key: dev.copy_out(addr, nx * ny, np.float32).reshape(nx, ny)
                for key, addr in (("ex", ex), ("ey", ey), ("hz", hz))}

    def reference(self, inputs, nx, ny, tmax):
        ex, ey, hz = (inputs[key].copy() for key in ("ex", "ey", "hz"))
        for t in range(tmax):
            ey[0, :] = inputs["fict"][t]
            ey[1:, :] = ey[1:, :] - HALF * (hz[1:, :] - hz[:-1, :])
            ex[:, 1:] = ex[:, 1:] - HALF * (hz[:, 1:] - hz[:, :-1])
            hz[:-1, :-1] = hz[:-1, :-1] - SEVEN_TENTHS * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
        return {"ex": ex, "ey": ey, "hz": hz}

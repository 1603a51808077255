"""Polybench JACOBI-2D: Jacobi relaxation of an n x n grid, two kernels per time step
(``jacobi2d.cu``).

Per step, as Polybench/GPU launches them on 32 x 8 blocks, one thread per grid point:
``jacobi2d_kernel1`` writes B = 0.2 times the 5-point sum of A at interior points, then
``jacobi2d_kernel2`` copies B's interior back into A. Deviations: seeded uniform inputs in [0, 1)
instead of its (i*(j+2)+10)/N formulas; "paper" size is 448 x 448 (its standard size is 1000 x
1000) for its 20 steps, which fills the GPU (200,704 threads per launch) in about 2.7e8
thread-instructions.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_2D, SOURCE_DIR, PolybenchWorkload, grid_2d

FIFTH = np.float32(0.2)


class Jacobi2d(PolybenchWorkload):
    name = "jacobi-2d"
    description = ("2-D 5-point Jacobi stencil, two kernels per time step (relax into B, copy back) on 32x8 blocks: "
                   "neighbour loads, boundary branches, FP32 adds and a multiply")
    cuda_source = SOURCE_DIR / "jacobi2d.cu"
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        "tiny": {"n": 20, "tsteps": 3},  # 1 x 3 blocks, 6 launches
        "small": {"n": 128, "tsteps": 10},
        "paper": {"n": 448, "tsteps": 20},
    }
    tolerance = "bit-exact: FP32 reference in the kernels' operation order, compiled without FP contraction"
    outputs = ("a", "b")

    def generate(self, rng, n, tsteps):
        return {"a": rng.random((n, n), dtype=np.float32), "b": rng.random((n, n), dtype=np.float32)}

    def execute(self, dev, module, inputs, n, tsteps):
        a, b = dev.upload(inputs["a"]), dev.upload(inputs["b"])
        grid = grid_2d(n, n)
        for _ in range(tsteps):
            dev.launch(module["jacobi2d_kernel1"], grid=grid, block=BLOCK_2D, params=[n, a, b])
            dev.launch(module["jacobi2d_kernel2"], grid=grid, block=BLOCK_2D, params=[n, a, b])
        return {"a": dev.copy_out(a, n * n, np.float32).reshape(n, n),
                "b": dev.copy_out(b, n * n, np.float32).reshape(n, n)}

    def reference(self, inputs, n, tsteps):
        a, b = inputs["a"].copy(), inputs["b"].copy()
        inner = (slice(1, n - 1), slice(1, n - 1))
        for _ in range(tsteps):  # centre, left, right, below, above: the kernel's order
            b[inner] = FIFTH * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
            a[inner] = b[inner]
        return {"a": a, "b": b}

"""Polybench ATAX: y = A^T (A x), two kernels, one thread per output element (``atax.cu``).

``atax_kernel1`` forms tmp = A x (a row per thread), then ``atax_kernel2`` y = A^T tmp (a column
per thread), on blocks of 256 threads, as Polybench/GPU launches them.

Deviations: a batch of ``problems`` independent problems along the grid's and block's y
(``grid_batched``: 256-thread blocks of 128 elements x 2 problems). One thread per output element
of a single n x n problem gives n threads looping n times: a launch that fills the GPU (over
100,000 threads) would run more than 1e10 thread-instructions. 1152 problems of 128 x 128 fill it in both
launches (147,456 threads) with each thread's loop as the original's at n = 128, in about 2.5e8
thread-instructions; one problem is the original. Seeded dyadic inputs (``exact.py``) instead of
its i*j/N and i*pi formulas, so that the check is exact.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_BATCHED, SOURCE_DIR, PolybenchWorkload, grid_batched
from .exact import STEP, dyadic, require_exact


class Atax(PolybenchWorkload):
    name = "atax"
    description = ("y = A^T (A x) in two kernels, a thread per output element on 256-thread blocks, a batch of "
                   "independent problems along grid y: an FMA loop down a row (strided) then down a column "
                   "(coalesced), accumulating through memory")
    cuda_source = SOURCE_DIR / "atax.cu"
    sizes = {
        "tiny": {"nx": 40, "ny": 72, "problems": 3},  # 1 x 2 blocks per launch, partly idle
        "small": {"nx": 256, "ny": 256, "problems": 8},
        "paper": {"nx": 128, "ny": 128, "problems": 1152},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("tmp", "y")

    def generate(self, rng, nx, ny, problems):
        return {"a": dyadic(rng, (problems, nx, ny)), "x": dyadic(rng, (problems, ny))}

    def execute(self, dev, module, inputs, nx, ny, problems):
        a, x = dev.upload(inputs["a"]), dev.upload(inputs["x"])
        tmp, y = dev.alloc(4 * problems * nx), dev.alloc(4 * problems * ny)
        dev.launch(module["atax_kernel1"], grid=grid_batched(nx, problems), block=BLOCK_BATCHED,
                   params=[nx, ny, problems, a, x, tmp])
        dev.launch(module["atax_kernel2"], grid=grid_batched(ny, problems), block=BLOCK_BATCHED,
                   params=[nx, ny, problems, a, y, tmp])
        return {"tmp": dev.copy_out(tmp, problems * nx, np.float32).reshape(problems, nx),
                "y": dev.copy_out(y, problems * ny, np.float32).reshape(problems, ny)}

    def reference(self, inputs, nx, ny, problems):
        a, x = inputs["a"].astype(np.float64), inputs["x"].astype(np.float64)
        require_exact(np.einsum("pij,pj->pi", np.abs(a), np.abs(x)), STEP * STEP, f"{self.name} tmp")
        tmp = np.einsum("pij,pj->pi", a, x)
        require_exact(np.einsum("pij,pi->pj", np.abs(a), np.abs(tmp)), STEP ** 3, f"{self.name} y")
        return {"tmp": tmp.astype(np.float32), "y": np.einsum("pij,pi->pj", a, tmp).astype(np.float32)}

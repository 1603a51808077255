"""Polybench MVT: x1 += A y1 and x2 += A^T y2, two kernels (``mvt.cu``).

``mvt_kernel1`` adds a row of A times y1 to each x1[i], ``mvt_kernel2`` a column of A times y2 to
each x2[i], one thread per element on blocks of 256 threads, as Polybench/GPU launches them.

Deviations: a batch of ``problems`` independent problems along the grid's and block's y, so that
a launch fills the GPU (1152 problems of 128 x 128: 147,456 threads) while each thread's loop
stays the original's at n = 128 (see ``atax.py``); one problem is the original. Seeded dyadic
inputs (``exact.py``) so that the check is exact.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_BATCHED, SOURCE_DIR, PolybenchWorkload, grid_batched
from .exact import STEP, dyadic, require_exact


class Mvt(PolybenchWorkload):
    name = "mvt"
    description = ("x1 += A*y1 and x2 += A^T*y2 in two kernels, a thread per element on 256-thread blocks, a batch "
                   "of independent problems along grid y: an FMA loop along a row (strided) then down a column "
                   "(coalesced), accumulating through memory")
    cuda_source = SOURCE_DIR / "mvt.cu"
    sizes = {
        "tiny": {"n": 72, "problems": 3},  # 1 x 2 blocks per launch, partly idle
        "small": {"n": 256, "problems": 8},
        "paper": {"n": 128, "problems": 1152},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("x1", "x2")

    def generate(self, rng, n, problems):
        return {"a": dyadic(rng, (problems, n, n)), "x1": dyadic(rng, (problems, n)), "x2": dyadic(rng, (problems, n)),
                "y1": dyadic(rng, (problems, n)), "y2": dyadic(rng, (problems, n))}

    def execute(self, dev, module, inputs, n, problems):
        a, x1, x2, y1, y2 = (dev.upload(inputs[key]) for key in ("a", "x1", "x2", "y1", "y2"))
        grid = grid_batched(n, problems)
        dev.launch(module["mvt_kernel1"], grid=grid, block=BLOCK_BATCHED, params=[n, problems, a, x1, y1])
        dev.launch(module["mvt_kernel2"], grid=grid, block=BLOCK_BATCHED, params=[n, problems, a, x2, y2])
        return {"x1": dev.copy_out(x1, problems * n, np.float32).reshape(problems, n),
                "x2": dev.copy_out(x2, problems * n, np.float32).reshape(problems, n)}

    def reference(self, inputs, n, problems):
        a, x1, x2, y1, y2 = (inputs[key].astype(np.float64) for key in ("a", "x1", "x2", "y1", "y2"))
        abs_a = np.abs(a)
        require_exact(np.abs(x1) + np.einsum("pij,pj->pi", abs_a, np.abs(y1)), STEP * STEP, f"{self.name} x1")
        require_exact(np.abs(x2) + np.einsum("pji,pj->pi", abs_a, np.abs(y2)), STEP * STEP, f"{self.name} x2")
        return {"x1": (x1 + np.einsum("pij,pj->pi", a, y1)).astype(np.float32),
                "x2": (x2 + np.einsum("pji,pj->pi", a, y2)).astype(np.float32)}

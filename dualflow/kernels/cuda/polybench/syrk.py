"""Polybench SYRK: C = alpha A A^T + beta C, one thread per element of C (``syrk.cu``).

Deviations from Polybench/GPU: seeded dyadic inputs (``exact.py``) and alpha, beta = 3/2, 5/4 (it
uses 32412, 2123) so that the check is exact; at "paper" size A is 512 x 64 (its standard size
is 1024 x 1024), which fills the GPU (262,144 threads) and keeps the run to about 1.5e8
thread-instructions.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_2D, SOURCE_DIR, PolybenchWorkload, grid_2d
from .exact import STEP, dyadic, require_exact

ALPHA = 1.5
BETA = 1.25
#: alpha * a * a is a multiple of 1/2 * 1/8 * 1/8, beta * c of 1/4 * 1/8
TERM_STEP = 0.5 * STEP * STEP


class Syrk(PolybenchWorkload):
    name = "syrk"
    description = ("symmetric rank-k update C = alpha*A*A^T + beta*C, a thread per element of C (both triangles) "
                   "on 32x8 blocks: an FMA loop over k, one row of A broadcast, the other strided across the warp")
    cuda_source = SOURCE_DIR / "syrk.cu"
    sizes = {
        "tiny": {"n": 40, "m": 12},  # 2 x 5 blocks, the last column of blocks partly outside C
        "small": {"n": 128, "m": 64},
        "paper": {"n": 512, "m": 64},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("c",)

    def generate(self, rng, n, m):
        return {"a": dyadic(rng, (n, m)), "c": dyadic(rng, (n, n))}

    def execute(self, dev, module, inputs, n, m):
        a, c = dev.upload(inputs["a"]), dev.upload(inputs["c"])
        dev.launch(module["syrk_kernel"], grid=grid_2d(n, n), block=BLOCK_2D, params=[n, m, ALPHA, BETA, a, c])
        return {"c": dev.copy_out(c, n * n, np.float32).reshape(n, n)}

    def reference(self, inputs, n, m):
        a, c = inputs["a"].astype(np.float64), inputs["c"].astype(np.float64)
        require_exact(BETA * np.abs(c) + ALPHA * (np.abs(a) @ np.abs(a).T), TERM_STEP, self.name)
        return {"c": (BETA * c + ALPHA * (a @ a.T)).astype(np.float32)}

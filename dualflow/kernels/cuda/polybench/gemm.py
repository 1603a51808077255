"""Polybench GEMM: C = alpha A B + beta C, one thread per element of C (``gemm.cu``).

Deviations from Polybench/GPU: seeded dyadic inputs (``exact.py``) instead of its i*j/N formulas,
and alpha, beta = 3/2, 5/4 instead of 32412, 2123, so that the check is exact; at "paper" size
nk is shorter than ni and nj (512 x 512 x 64 instead of 512 cubed), which keeps one thread per
element of C, fills the GPU (262,144 threads) and keeps the run to about 1.5e8 thread-instructions.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_2D, SOURCE_DIR, PolybenchWorkload, grid_2d
from .exact import STEP, dyadic, require_exact

ALPHA = 1.5
BETA = 1.25
#: every term's step: alpha * a * b is a multiple of 1/2 * 1/8 * 1/8, beta * c of 1/4 * 1/8
TERM_STEP = 0.5 * STEP * STEP


class Gemm(PolybenchWorkload):
    name = "gemm"
    description = ("matrix multiply C = alpha*A*B + beta*C, a thread per element of C on 32x8 blocks: an FMA loop "
                   "of nk steps, a row of A broadcast and a column of B coalesced per warp")
    cuda_source = SOURCE_DIR / "gemm.cu"
    sizes = {
        "tiny": {"ni": 12, "nj": 40, "nk": 10},  # 2 x 2 blocks, both partly outside C
        "small": {"ni": 128, "nj": 128, "nk": 64},
        "paper": {"ni": 512, "nj": 512, "nk": 64},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("c",)

    def generate(self, rng, ni, nj, nk):
        return {"a": dyadic(rng, (ni, nk)), "b": dyadic(rng, (nk, nj)), "c": dyadic(rng, (ni, nj))}

    def execute(self, dev, module, inputs, ni, nj, nk):
        a, b, c = (dev.upload(inputs[key]) for key in ("a", "b", "c"))
        dev.launch(module["gemm_kernel"], grid=grid_2d(nj, ni), block=BLOCK_2D,
                   params=[ni, nj, nk, ALPHA, BETA, a, b, c])
        return {"c": dev.copy_out(c, ni * nj, np.float32).reshape(ni, nj)}

    def reference(self, inputs, ni, nj, nk):
        a, b, c = (inputs[key].astype(np.float64) for key in ("a", "b", "c"))
        require_exact(BETA * np.abs(c) + ALPHA * (np.abs(a) @ np.abs(b)), TERM_STEP, self.name)
        return {"c": (BETA * c + ALPHA * (a @ b)).astype(np.float32)}

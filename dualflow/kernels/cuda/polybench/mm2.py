"""Polybench 2MM: D = alpha A B C + beta D as two matrix products (``2mm.cu``).

tmp = alpha A B (``mm2_kernel1``), then D = beta D + tmp C (``mm2_kernel2``), each a thread per
output element on 32 x 8 blocks, as Polybench/GPU launches them. Deviations: the kernels keep
Polybench's alpha and beta (Polybench/GPU drops them), with alpha, beta = 3/2, 5/4; seeded dyadic
inputs (``exact.py``) so that the check is exact; at "paper" size the inner extents nk and nj are
shorter than ni and nl (512 x 64 x 64 x 512), which fills the GPU in the second product (262,144
threads) and keeps the run to about 1.5e8 thread-instructions.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_2D, SOURCE_DIR, PolybenchWorkload, grid_2d
from .exact import STEP, dyadic, require_exact

ALPHA = 1.5
BETA = 1.25
#: alpha * a * b is a multiple of 1/2 * 1/8 * 1/8
TMP_STEP = 0.5 * STEP * STEP
#: tmp * c is a multiple of TMP_STEP / 8, beta * d of 1/4 * 1/8
D_STEP = TMP_STEP * STEP


class Mm2(PolybenchWorkload):
    name = "2mm"
    description = ("two chained matrix products tmp = alpha*A*B, D = beta*D + tmp*C, two kernels with a thread per "
                   "output element on 32x8 blocks: FMA loops, a row broadcast and a column coalesced per warp")
    cuda_source = SOURCE_DIR / "2mm.cu"
    sizes = {
        "tiny": {"ni": 12, "nj": 24, "nk": 10, "nl": 40},  # 2 x 1 blocks, then 2 x 2
        "small": {"ni": 128, "nj": 64, "nk": 64, "nl": 128},
        "paper": {"ni": 512, "nj": 64, "nk": 64, "nl": 512},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("tmp", "d")

    def generate(self, rng, ni, nj, nk, nl):
        return {"a": dyadic(rng, (ni, nk)), "b": dyadic(rng, (nk, nj)), "c": dyadic(rng, (nj, nl)),
                "d": dyadic(rng, (ni, nl))}

    def execute(self, dev, module, inputs, ni, nj, nk, nl):
        a, b, c, d = (dev.upload(inputs[key]) for key in ("a", "b", "c", "d"))
        tmp = dev.alloc(4 * ni * nj)
        dev.launch(module["mm2_kernel1"], grid=grid_2d(nj, ni), block=BLOCK_2D, params=[ni, nj, nk, ALPHA, a, b, tmp])
        dev.launch(module["mm2_kernel2"], grid=grid_2d(nl, ni), block=BLOCK_2D, params=[ni, nj, nl, BETA, tmp, c, d])
        return {"tmp": dev.copy_out(tmp, ni * nj, np.float32).reshape(ni, nj),
                "d": dev.copy_out(d, ni * nl, np.float32).reshape(ni, nl)}

    def reference(self, inputs, ni, nj, nk, nl):
        a, b, c, d = (inputs[key].astype(np.float64) for key in ("a", "b", "c", "d"))
        require_exact(ALPHA * (np.abs(a) @ np.abs(b)), TMP_STEP, f"{self.name} tmp")
        tmp = ALPHA * (a @ b)
        require_exact(BETA * np.abs(d) + np.abs(tmp) @ np.abs(c), D_STEP, f"{self.name} D")
        return {"tmp": tmp.astype(np.float32), "d": (BETA * d + tmp @ c).astype(np.float32)}

"""Polybench BICG: the BiCGStab sub-kernel s = A^T r, q = A p, two kernels (``bicg.cu``).

``bicg_kernel1`` forms s (a column of A per thread), then ``bicg_kernel2`` q (a row per thread),
on blocks of 256 threads, as Polybench/GPU launches them.

Deviations: a batch of ``problems`` independent problems along the grid's and block's y, so that
a launch fills the GPU (1152 problems of 128 x 128: 147,456 threads) while each thread's loop
stays the original's at n = 128 (see ``atax.py``); one problem is the original. Seeded dyadic
inputs (``exact.py``) so that the check is exact.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_BATCHED, SOURCE_DIR, PolybenchWorkload, grid_batched
from .exact import STEP, dyadic, require_exact


class Bicg(PolybenchWorkload):
    name = "bicg"
    description = ("s = A^T r and q = A p in two kernels, a thread per output element on 256-thread blocks, a batch "
                   "of independent problems along grid y: an FMA loop down a column (coalesced) then along a row "
                   "(strided), accumulating through memory")
    cuda_source = SOURCE_DIR / "bicg.cu"
    sizes = {
        "tiny": {"nx": 40, "ny": 72, "problems": 3},  # 1 x 2 blocks per launch, partly idle
        "small": {"nx": 256, "ny": 256, "problems": 8},
        "paper": {"nx": 128, "ny": 128, "problems": 1152},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("s", "q")

    def generate(self, rng, nx, ny, problems):
        return {"a": dyadic(rng, (problems, nx, ny)), "r": dyadic(rng, (problems, nx)),
                "p": dyadic(rng, (problems, ny))}

    def execute(self, dev, module, inputs, nx, ny, problems):
        a, r, p = (dev.upload(inputs[key]) for key in ("a", "r", "p"))
        s, q = dev.alloc(4 * problems * ny), dev.alloc(4 * problems * nx)
        dev.launch(module["bicg_kernel1"], grid=grid_batched(ny, problems), block=BLOCK_BATCHED,
                   params=[nx, ny, problems, a, r, s])
        dev.launch(module["bicg_kernel2"], grid=grid_batched(nx, problems), block=BLOCK_BATCHED,
                   params=[nx, ny, problems, a, p, q])
        return {"s": dev.copy_out(s, problems * ny, np.float32).reshape(problems, ny),
                "q": dev.copy_out(q, problems * nx, np.float32).reshape(problems, nx)}

    def reference(self, inputs, nx, ny, problems):
        a, r, p = (inputs[key].astype(np.float64) for key in ("a", "r", "p"))
        abs_a = np.abs(a)
        require_exact(np.einsum("pij,pi->pj", abs_a, np.abs(r)), STEP * STEP, f"{self.name} s")
        require_exact(np.einsum("pij,pj->pi", abs_a, np.abs(p)), STEP * STEP, f"{self.name} q")
        return {"s": np.einsum("pij,pi->pj", a, r).astype(np.float32),
                "q": np.einsum("pij,pj->pi", a, p).astype(np.float32)}

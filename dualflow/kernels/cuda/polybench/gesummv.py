"""Polybench GESUMMV: y = alpha A x + beta B x, one kernel, one thread per element (``gesummv.cu``).

Each thread sums a row of A and a row of B times x together, then combines them, on blocks of 256
threads, as Polybench/GPU launches it.

Deviations: the kernel zeroes tmp[i] and y[i] itself (Polybench/GPU relies on the host's copies);
a batch of ``problems`` independent problems along the grid's and block's y, so that the launch
fills the GPU (1152 problems of 128 x 128: 147,456 threads) while each thread's loop stays the
original's at n = 128 (see ``atax.py``); one problem is the original. Seeded dyadic inputs
(``exact.py``) and alpha, beta = 3/2, 5/4 (it uses 43532, 12313) so that the check is exact.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_BATCHED, SOURCE_DIR, PolybenchWorkload, grid_batched
from .exact import STEP, dyadic, require_exact

ALPHA = 1.5
BETA = 1.25
#: alpha * tmp is a multiple of 1/2 * 1/64, beta * y of 1/4 * 1/64
Y_STEP = 0.25 * STEP * STEP


class Gesummv(PolybenchWorkload):
    name = "gesummv"
    description = ("y = alpha*A*x + beta*B*x in one kernel, a thread per element on 256-thread blocks, a batch of "
                   "independent problems along grid y: two FMA chains along rows of A and B (strided), "
                   "accumulating through memory")
    cuda_source = SOURCE_DIR / "gesummv.cu"
    sizes = {
        "tiny": {"n": 72, "problems": 3},  # 1 x 2 blocks, partly idle
        "small": {"n": 256, "problems": 8},
        "paper": {"n": 128, "problems": 1152},
    }
    tolerance = "exact: dyadic inputs whose every partial sum is exact in FP32 (exact.py)"
    outputs = ("tmp", "y")

    def generate(self, rng, n, problems):
        return {"a": dyadic(rng, (problems, n, n)), "b": dyadic(rng, (problems, n, n)), "x": dyadic(rng, (problems, n))}

    def execute(self, dev, module, inputs, n, problems):
        a, b, x = (dev.upload(inputs[key]) for key in ("a", "b", "x"))
        tmp, y = dev.alloc(4 * problems * n), dev.alloc(4 * problems * n)
        dev.launch(module["gesummv_kernel"], grid=grid_batched(n, problems), block=BLOCK_BATCHED,
                   params=[n, problems, ALPHA, BETA, a, b, tmp, x, y])
        return {"tmp": dev.copy_out(tmp, problems * n, np.float32).reshape(problems, n),
                "y": dev.copy_out(y, problems * n, np.float32).reshape(problems, n)}

    def reference(self, inputs, n, problems):
        a, b, x = (inputs[key].astype(np.float64) for key in ("a", "b", "x"))
        abs_ax = np.einsum("pij,pj->pi", np.abs(a), np.abs(x))
        abs_bx = np.einsum("pij,pj->pi", np.abs(b), np.abs(x))
        require_exact(ALPHA * abs_ax + BETA * abs_bx, Y_STEP, self.name)
        tmp, bx = np.einsum("pij,pj->pi", a, x), np.einsum("pij,pj->pi", b, x)
        return {"tmp": tmp.astype(np.float32), "y": (ALPHA * tmp + BETA * bx).astype(np.float32)}

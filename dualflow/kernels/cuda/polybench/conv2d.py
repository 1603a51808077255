"""Polybench 2DCONV: a 3 x 3 convolution of an ni x nj matrix, one thread per element (``conv2d.cu``).

Interior elements get the weighted sum of their 3 x 3 neighbourhood with Polybench's nine weights;
border elements are not written (they stay as the host allocated them: zero here). Deviations:
seeded uniform inputs in [0, 1) as Polybench's rand()/RAND_MAX, from numpy's generator; "paper"
size is 1024 x 1024 (its standard size is 4096 x 4096), which fills the GPU (over a million
threads) in about 7e7 thread-instructions.
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK_2D, SOURCE_DIR, PolybenchWorkload, grid_2d

#: Polybench's weights, K[di][dj] for the neighbour at row i + di - 1, column j + dj - 1 (as conv2d.cu)
WEIGHTS = np.array([[0.2, 0.5, -0.8], [-0.3, 0.6, -0.9], [0.4, 0.7, 0.10]], dtype=np.float32)


class Conv2d(PolybenchWorkload):
    name = "conv2d"
    description = ("3x3 convolution of a matrix, a thread per element on 32x8 blocks: nine neighbouring loads "
                   "(three rows, coalesced), a multiply-add chain, border threads idle")
    cuda_source = SOURCE_DIR / "conv2d.cu"
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        "tiny": {"ni": 20, "nj": 40},  # 2 x 3 blocks
        "small": {"ni": 256, "nj": 256},
        "paper": {"ni": 1024, "nj": 1024},
    }
    tolerance = "bit-exact: FP32 reference in the kernel's operation order, compiled without FP contraction"
    outputs = ("b",)

    def generate(self, rng, ni, nj):
        return {"a": rng.random((ni, nj), dtype=np.float32)}

    def execute(self, dev, module, inputs, ni, nj):
        a, b = dev.upload(inputs["a"]), dev.upload(np.zeros((ni, nj), np.float32))
        dev.launch(module["convolution2d_kernel"], grid=grid_2d(nj, ni), block=BLOCK_2D, params=[ni, nj, a, b])
        return {"b": dev.copy_out(b, ni * nj, np.float32).reshape(ni, nj)}

    def reference(self, inputs, ni, nj):
        a = inputs["a"]
        out = np.zeros((ni, nj), np.float32)
        acc = None
        for di in range(3):  # row by row, left to right: the kernel's order of products and sums
            for dj in range(3):
                term = WEIGHTS[di, dj] * a[di:ni - 2 + di, dj:nj - 2 + dj]
                acc = term if acc is None else acc + term
        out[1:ni - 1, 1:nj - 1] = acc
        return {"b": out}

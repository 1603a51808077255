"""Rodinia srad_v2: speckle-reducing anisotropic diffusion; per iteration the host computes the
ROI statistic, then srad_1 (coefficients) and srad_2 (update) run over 16x16 shared tiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from ..sdk.compare import bit_exact

B = 16  # block side (srad.cu)

f32 = np.float32


def q0sqr(image: np.ndarray, r1: int, r2: int, c1: int, c2: int) -> np.float32:
    """The host's ROI statistic of an iteration: FP32 running sums of the ROI's pixels and their
    squares (row by row), mean, variance, and q0^2 = variance / mean^2."""
    roi = image[r1:r2 + 1, c1:c2 + 1].ravel()
    size = f32(roi.size)
    total = np.add.accumulate(roi, dtype=np.float32)[-1]
    total2 = np.add.accumulate(roi * roi, dtype=np.float32)[-1]
    mean = total / size
    var = total2 / size - mean * mean
    return f32(var / (mean * mean))


def srad_step(j: np.ndarray, q0: np.float32, lam: np.float32) -> np.ndarray:
    """One iteration of both kernels in numpy, FP32 in the kernels' order (a border pixel is its own
    neighbour); clang's rewrites of srad_1 (0.5 g2 - 0.0625 l^2 as 0.5 g2 + (-0.0625) l^2, 1 / x as a
    reciprocal) give the same bits."""
    rows, cols = j.shape
    up = np.maximum(np.arange(rows) - 1, 0)
    down = np.minimum(np.arange(rows) + 1, rows - 1)
    left = np.maximum(np.arange(cols) - 1, 0)
    right = np.minimum(np.arange(cols) + 1, cols - 1)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        n, s = j[up, :] - j, j[down, :] - j
        w, e = j[:, left] - j, j[:, right] - j
        g2 = (((n * n + s * s) + w * w) + e * e) / (j * j)
        lap = (((n + s) + w) + e) / j
        num = f32(0.5) * g2 - f32(0.0625) * (lap * lap)
        den = f32(1.0) + f32(0.25) * lap
        qsqr = num / (den * den)
        den = (qsqr - q0) / (q0 * (f32(1.0) + q0))
        c = np.clip(f32(1.0) / (f32(1.0) + den), f32(0.0), f32(1.0))
        cs, ce = c[down, :], c[:, right]
        divergence = ((c * n + cs * s) + c * w) + ce * e
        return j + (f32(0.25) * lam) * divergence


class Srad(CompiledWorkload):
    suite = "rodinia"
    name = "srad"
    description = ("speckle-reducing anisotropic diffusion (Rodinia srad_v2): per iteration srad_1 (gradients, "
                   "diffusion coefficient, four divisions, border branches) and srad_2 (divergence, update), "
                   "16x16 shared tiles with clamped halos")
    cuda_source = Path(__file__).with_name("srad.cu")
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        # 2 x 2 blocks, 2 iterations
        "tiny": {"rows": 32, "cols": 32, "r1": 0, "r2": 15, "c1": 0, "c2": 15, "lam": 0.5, "niter": 2},
        # 16 x 16 blocks, Rodinia's 128 x 128 ROI, 2 iterations
        "small": {"rows": 256, "cols": 256, "r1": 0, "r2": 127, "c1": 0, "c2": 127, "lam": 0.5, "niter": 2},
        # Rodinia's run script is `srad 2048 2048 0 127 0 127 0.5 2`; 512 x 1024 keeps the cycle model's run
        # short: 64 x 32 blocks, 524,288 threads per launch
        "paper": {"rows": 512, "cols": 1024, "r1": 0, "r2": 127, "c1": 0, "c2": 127, "lam": 0.5, "niter": 2},
    }
    tolerance = "bit-exact against numpy FP32 in the kernels' operation order (no FMA; IEEE division)"

    def generate(self, rng, rows, cols, r1, r2, c1, c2, lam, niter):
        if rows % B or cols % B:
            raise ValueError(f"srad: rows and cols must be multiples of {B}, not {rows} x {cols}")
        # random_matrix: rand() / RAND_MAX; the image is its exponential, J = exp(I)
        image = rng.random((rows, cols))
        return {"J": np.exp(image).astype(np.float32)}

    def execute(self, dev, module, inputs, rows, cols, r1, r2, c1, c2, lam, niter):
        j = inputs["J"].copy()
        size = rows * cols
        j_cuda, c_cuda = dev.alloc(4 * size), dev.alloc(4 * size)
        e_c, w_c, n_c, s_c = (dev.alloc(4 * size) for _ in range(4))
        grid, block = (cols // B, rows // B), (B, B)
        for _ in range(niter):
            q0 = q0sqr(j, r1, r2, c1, c2)
            dev.copy_in(j_cuda, j)
            dev.launch(module["srad_1"], grid=grid, block=block,
                       params=[e_c, w_c, n_c, s_c, j_cuda, c_cuda, cols, rows, q0])
            dev.launch(module["srad_2"], grid=grid, block=block,
                       params=[e_c, w_c, n_c, s_c, j_cuda, c_cuda, cols, rows, f32(lam)])
            j = dev.copy_out(j_cuda, size, np.float32).reshape(rows, cols)
        return {"J": j}

    def reference(self, inputs, rows, cols, r1, r2, c1, c2, lam, niter):
        j = inputs["J"]
        for _ in range(niter):
            j = srad_step(j, q0sqr(j, r1, r2, c1, c2), f32(lam))
        return {"J": j}

    def check(self, outputs, expected, rows, cols, r1, r2, c1, c2, lam, niter):
        count = bit_exact(self.name, "pixels", outputs["J"], expected["J"])
        return f"{count} pixels bit-exact after {niter} iterations"

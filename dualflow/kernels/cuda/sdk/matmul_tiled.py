"""CUDA SDK matrixMul: C = A * B through 16x16 shared-memory tiles, barriers inside the tile loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from .compare import within

TILE = 16  # threads per block side and tile side (matmul_tiled.cu)
U32 = 2.0 ** -24  # unit roundoff of FP32 round-to-nearest
U64 = 2.0 ** -53  # unit roundoff of float64
TINY = 2.0 ** -126  # smallest normal FP32: a flushed result loses at most this much


def gamma(n: int, u: float) -> float:
    """Higham's gamma_n = n u / (1 - n u): the relative error bound of n chained roundings."""
    return n * u / (1.0 - n * u)


def error_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element of A * B, a bound on |GPU - float64 product|: a length-n dot product of n fused
    multiply-adds (one rounding each) is within gamma_n(FP32) * sum |a_ik b_kj| of the exact value;
    the float64 reference is within gamma_n(float64) of it; each flushed denormal adds <= 2^-126."""
    n = a.shape[1]
    magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return (gamma(n, U32) + gamma(n, U64)) * magnitude + n * TINY


class MatmulTiled(CompiledWorkload):
    suite = "sdk"
    name = "matmul-tiled"
    description = ("tiled SGEMM C = A*B (the SDK's matrixMul): 16x16 blocks stage a tile of A and of B in shared "
                   "memory per step, two barriers per step, 16 fused multiply-adds per tile")
    cuda_source = Path(__file__).with_name("matmul_tiled.cu")
    cuda_flags = ()  # keep clang's FMA contraction, as nvcc compiles the sample
    sizes = {
        # 3 x 2 blocks, 2 tile steps
        "tiny": {"h_a": 32, "w_a": 32, "w_b": 48},
        # 8 x 8 blocks, 8 tile steps
        "small": {"h_a": 128, "w_a": 128, "w_b": 128},
        # the SDK's default C (320 x 640: 40 x 20 blocks, 204,800 threads); A 320 x 256 (not 320 x 320) keeps the
        # cycle model's run short: 16 tile steps
        "paper": {"h_a": 320, "w_a": 256, "w_b": 640},
    }
    tolerance = ("|C - A*B (float64)| <= (gamma_n(2^-24) + gamma_n(2^-53)) * (|A| |B|) + n 2^-126 per element "
                 "(n = width of A: the rounding-error bound of an n-term FMA dot product)")

    def generate(self, rng, h_a, w_a, w_b):
        # the SDK fills A with 1.0 and B with 0.01; random values make every product matter
        for extent in (h_a, w_a, w_b):
            if extent <= 0 or extent % TILE:
                raise ValueError(f"matmul-tiled: matrix extents must be positive multiples of {TILE}, not {extent}")
        return {"A": rng.uniform(-1.0, 1.0, (h_a, w_a)).astype(np.float32),
                "B": rng.uniform(-1.0, 1.0, (w_a, w_b)).astype(np.float32)}

    def execute(self, dev, module, inputs, h_a, w_a, w_b):
        d_a, d_b = dev.upload(inputs["A"]), dev.upload(inputs["B"])
        d_c = dev.alloc(4 * h_a * w_b)
        dev.launch(module["matmul_tiled"], grid=(w_b // TILE, h_a // TILE), block=(TILE, TILE),
                   params=[d_c, d_a, d_b, w_a, w_b])
        return {"C": dev.copy_out(d_c, h_a * w_b, np.float32).reshape(h_a, w_b)}

    def reference(self, inputs, h_a, w_a, w_b):
        a, b = inputs["A"], inputs["B"]
        return {"C": a.astype(np.float64) @ b.astype(np.float64), "bound": error_bound(a, b)}

    def check(self, outputs, expected, h_a, w_a, w_b):
        count = within(self.name, "elements of C", outputs["C"], expected["C"], expected["bound"])
        worst = np.max(np.abs(outputs["C"] - expected["C"]) / expected["bound"])
        return f"{count} elements of C within the FMA dot-product error bound (worst at {worst:.2f} of it)"

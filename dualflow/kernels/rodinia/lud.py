"""Rodinia 3.1 lud: blocked in-place LU decomposition (no pivoting) of a dense float32 matrix.

Host driver after ``lud_cuda`` in ``cuda/lud/cuda/lud_kernel.cu``: for offset = 0, 16, ... while
offset < matrix_dim - 16, launch ``lud_diagonal<<<1, 16>>>``, ``lud_perimeter<<<nb, 32>>>`` and
``lud_internal<<<(nb, nb), (16, 16)>>>`` with nb = (matrix_dim - offset)/16 - 1; then one last
``lud_diagonal`` at the final offset. The input is Rodinia's internal generator (``create_matrix``
in ``cuda/lud/common/common.c``, the ``-s N`` path): M[i][j] = 10*exp(-0.001*|i-j|) in float32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.common.errors import ConfigError
from dualflow.models import fp32

from ..workload import CheckFailed, Workload

BLOCK = 16
MINUS_ONE = np.array(np.float32(-1.0).view(np.uint32))
ZERO = np.array(0, dtype=np.uint32)
RESIDUAL_TOL = 1e-5


def _check_dim(matrix_dim: int) -> int:
    n = int(matrix_dim)
    if n < BLOCK or n % BLOCK:
        raise ConfigError(f"lud: matrix_dim must be a positive multiple of {BLOCK}, not {matrix_dim}")
    return n


def create_matrix(size: int) -> np.ndarray:
    """Rodinia's ``create_matrix``: coe[k] = (float)(10 * exp((double)((float)-0.001f * k))) for the
    distance k = |i - j| (the float product, the double exp, the float store), M[i][j] = coe[|i-j|]."""
    k = np.arange(size, dtype=np.float32)
    coe = (10.0 * np.exp((np.float32(-0.001) * k).astype(np.float64))).astype(np.float32)
    i = np.arange(size)
    return coe[np.abs(i[:, None] - i[None, :])]


def lud_same_order(matrix: np.ndarray) -> np.ndarray:
    """The blocked algorithm of the three kernels with the ISA's FP32 operations in the kernels'
    order (``dualflow.models.fp32`` on bit patterns): every `x -= a*b` chain as negate, ffma per
    term, negate back; divisions correctly rounded; the internal sum from 0 by ffma, then one fsub.
    Vectorized over the independent threads and blocks of each launch. (The negated chains equal
    CUDA's per-term fma(-a, b, x) up to the sign of an exact zero; on Rodinia's matrix they agree
    bit for bit at matrix_dim 16, 32, 64 and 256.)"""
    n = matrix.shape[0]
    a = np.ascontiguousarray(matrix, dtype=np.float32).view(np.uint32).copy()

    def diagonal(off: int) -> None:
        s = a[off:off + BLOCK, off:off + BLOCK].copy()          # shadow
        for i in range(BLOCK - 1):
            tx = np.arange(i + 1, BLOCK)                        # lanes tx > i
            acc = s[tx, i]
            if i:
                acc = fp32.fmul(acc, MINUS_ONE)
                for j in range(i):
                    acc = fp32.ffma(s[tx, j], s[j, i], acc)
                acc = fp32.fmul(acc, MINUS_ONE)
            s[tx, i] = fp32.fdiv(acc, s[i, i])
            acc = fp32.fmul(s[i + 1, tx], MINUS_ONE)
            for j in range(i + 1):
                acc = fp32.ffma(s[i + 1, j], s[j, tx], acc)
            s[i + 1, tx] = fp32.fmul(acc, MINUS_ONE)
        a[off + 1:off + BLOCK, off:off + BLOCK] = s[1:]

    def perimeter(off: int) -> None:
        dia = a[off:off + BLOCK, off:off + BLOCK].copy()
        row = a[off:off + BLOCK, off + BLOCK:].copy()           # every block's peri_row, side by side
        for i in range(1, BLOCK):
            acc = fp32.fmul(row[i], MINUS_ONE)
            for j in range(i):
                acc = fp32.ffma(dia[i, j], row[j], acc)
            row[i] = fp32.fmul(acc, MINUS_ONE)
        col = a[off + BLOCK:, off:off + BLOCK].copy()           # every block's peri_col, stacked
        for i in range(BLOCK):
            acc = col[:, i]
            if i:
                acc = fp32.fmul(acc, MINUS_ONE)
                for j in range(i):
                    acc = fp32.ffma(col[:, j], dia[j, i], acc)
                acc = fp32.fmul(acc, MINUS_ONE)
            col[:, i] = fp32.fdiv(acc, dia[i, i])
        a[off + 1:off + BLOCK, off + BLOCK:] = row[1:]
        a[off + BLOCK:, off:off + BLOCK] = col

    def internal(off: int) -> None:
        row = a[off:off + BLOCK, off + BLOCK:]
        col = a[off + BLOCK:, off:off + BLOCK]
        total = np.broadcast_to(ZERO, (n - off - BLOCK,) * 2)
        for i in range(BLOCK):
            total = fp32.ffma(col[:, i, None], row[None, i, :], total)
        a[off + BLOCK:, off + BLOCK:] = fp32.fsub(a[off + BLOCK:, off + BLOCK:], total)

    off = 0
    while off < n - BLOCK:
        diagonal(off)
        perimeter(off)
        internal(off)
        off += BLOCK
    diagonal(off)
    return a.view(np.float32)


def lu_residual(matrix: np.ndarray, lu: np.ndarray) -> np.ndarray:
    """|L*U - M| in float64, L unit lower-triangular and U upper-triangular from the in-place ``lu``."""
    lu64 = lu.astype(np.float64)
    lower = np.tril(lu64, -1) + np.eye(lu.shape[0])
    upper = np.triu(lu64)
    return np.abs(lower @ upper - matrix.astype(np.float64))


class Lud(Workload):
    suite = "rodinia"
    name = "lud"
    description = ("blocked LU decomposition (16x16 tiles): a divergent in-tile factorization, half-warp "
                   "triangular solves, and a shared-memory tile update, many barriers")
    source = Path(__file__).with_name("lud.s")
    sizes = {"tiny": {"matrix_dim": 16}, "small": {"matrix_dim": 64}, "paper": {"matrix_dim": 256}}
    tolerance = (f"in-place result bit-exact vs the same-order FP32 emulation, and max|L*U - M| <= {RESIDUAL_TOL:g}"
                 " * max|M| in float64 (Rodinia's 1e-4 absolute for max|M| = 10; float32 reaches 4e-7)")

    def generate(self, rng, matrix_dim):
        # Rodinia's `-s N` input is deterministic (no random numbers): the seed is not used.
        return {"m": create_matrix(_check_dim(matrix_dim))}

    def execute(self, dev, module, inputs, matrix_dim):
        n = _check_dim(matrix_dim)
        d_m = dev.upload(inputs["m"])
        diagonal, perimeter, internal = module["lud_diagonal"], module["lud_perimeter"], module["lud_internal"]
        offset = 0
        while offset < n - BLOCK:
            nb = (n - offset) // BLOCK - 1
            dev.launch(diagonal, grid=1, block=BLOCK, params=[d_m, n, offset])
            dev.launch(perimeter, grid=nb, block=2 * BLOCK, params=[d_m, n, offset])
            dev.launch(internal, grid=(nb, nb), block=(BLOCK, BLOCK), params=[d_m, n, offset])
            offset += BLOCK
        dev.launch(diagonal, grid=1, block=BLOCK, params=[d_m, n, offset])
        return {"m": dev.copy_out(d_m, n * n, np.float32).reshape(n, n)}

    def reference(self, inputs, matrix_dim):
        return {"m": lud_same_order(inputs["m"]), "input": inputs["m"]}

    def check(self, outputs, expected, matrix_dim):
        n = _check_dim(matrix_dim)
        got = np.asarray(outputs["m"], np.float32).reshape(n, n)
        want = np.asarray(expected["m"], np.float32).reshape(n, n)
        matrix = np.asarray(expected["input"], np.float32).reshape(n, n)
        scale = float(np.abs(matrix).max())
        res = lu_residual(matrix, got)
        bad = np.argwhere(~(res <= RESIDUAL_TOL * scale))
        if bad.size:
            i, j = (int(v) for v in bad[0])
            raise CheckFailed(f"lud: {len(bad)} of {n * n} elements of L*U differ from M by more than "
                              f"{RESIDUAL_TOL:g}*max|M|; first at index ({i}, {j}): |L*U - M| = {res[i, j]:.3g}, "
                              f"M = {matrix[i, j]!r} (in-place result there: {got[i, j]!r})")
        diff = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        if diff.size:
            i, j = divmod(int(diff[0]), n)
            raise CheckFailed(f"lud: {diff.size} of {n * n} elements differ from the same-order FP32 reference; "
                              f"first at index ({i}, {j}): got {got[i, j]!r}, expected {want[i, j]!r} "
                              f"(max |diff| {float(np.abs(got.astype(np.float64) - want).max()):.3g})")
        rel = float(res.max()) / scale
        return f"{n}x{n}: bit-exact vs same-order FP32 reference; max|LU-M|/max|M| {rel:.2g} <= {RESIDUAL_TOL:g}"

"""Rodinia 3.1 gaussian: Gaussian elimination without pivoting, Fan1/Fan2 per pivot, host back substitution."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.models import fp32

from ..workload import CheckFailed, Workload

MAXBLOCKSIZE = 512  # Fan1: 1-D blocks
BLOCK_SIZE_XY = 4  # Fan2: BLOCK_SIZE_XY x BLOCK_SIZE_XY blocks

#: The 4 x 4 example system of Rodinia's usage text (data/gaussian/matrix4.txt); solution (0.7, 0, -0.4, -0.5).
MATRIX4_A = [[-0.6, -0.5, 0.7, 0.3],
             [-0.3, -0.9, 0.3, 0.7],
             [-0.4, -0.5, -0.3, -0.8],
             [0.0, -0.1, 0.2, 0.9]]
MATRIX4_B = [-0.85, -0.68, 0.24, -0.53]

SOLUTION_RTOL = 1e-4


def create_matrix(size: int) -> np.ndarray:
    """Rodinia's create_matrix: A[i][j] = 10 * exp(lamda * |i-j|) with float lamda = -0.01.

    As in the C code, ``lamda * i`` is a float product, exp and the factor 10 are evaluated in double,
    and the result is stored as float.
    """
    i = np.arange(size)
    arg = np.float32(-0.01) * i.astype(np.float32)  # float * int -> float
    coe = (10.0 * np.exp(arg.astype(np.float64))).astype(np.float32)
    return coe[np.abs(i[:, None] - i[None, :])]


def launch_shapes(size: int) -> tuple[int, tuple[int, int]]:
    """Grid of Fan1 (1-D) and of Fan2 (2-D), with the host code's arithmetic."""
    grid1 = size // MAXBLOCKSIZE + (0 if size % MAXBLOCKSIZE == 0 else 1)
    grid2 = size // BLOCK_SIZE_XY + (0 if size % BLOCK_SIZE_XY == 0 else 1)
    return grid1, (grid2, grid2)


def back_substitution(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rodinia's BackSub in float32, same loop order (the host C code has no FMA contraction)."""
    n = b.size
    x = np.zeros(n, np.float32)
    for i in range(n):
        r = n - i - 1
        acc = np.float32(b[r])
        for j in range(i):
            c = n - j - 1
            acc = np.float32(acc - np.float32(a[r, c] * x[c]))
        x[r] = np.float32(acc / a[r, r])
    return x


def eliminate(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fan1/Fan2 in numpy float32, pivot by pivot in the same order: returns (a, b, m).

    The division is numpy's float32 divide (IEEE, correctly rounded); each update ``x -= p*q`` is a
    fused multiply-add with one rounding, as nvcc emits it, computed by ``dualflow.models.fp32.ffma``
    (numpy has no float32 fma). No value here is denormal, so flush-to-zero never matters.
    """
    n = b.size
    a = np.array(a, np.float32)
    b = np.array(b, np.float32)
    m = np.zeros((n, n), np.float32)
    for t in range(n - 1):
        with np.errstate(all="ignore"):
            m[t + 1:, t] = a[t + 1:, t] / a[t, t]
        neg = -m[t + 1:, t]
        a[t + 1:, t:] = fp32.ffma(neg.view(np.uint32)[:, None], a[t, t:].view(np.uint32)[None, :],
                                  a[t + 1:, t:].view(np.uint32)).view(np.float32)
        b[t + 1:] = fp32.ffma(neg.view(np.uint32), b[t:t + 1].view(np.uint32),
                              b[t + 1:].view(np.uint32)).view(np.float32)
    return a, b, m


def _bit_exact(name: str, got: np.ndarray, want: np.ndarray, shape: tuple[int, ...]) -> None:
    g = np.asarray(got, np.float32).reshape(shape)
    w = np.asarray(want, np.float32).reshape(shape)
    bad = np.argwhere(g.view(np.uint32) != w.view(np.uint32))
    if bad.size:
        idx = tuple(int(v) for v in bad[0])
        raise CheckFailed(f"gaussian: {name}: {len(bad)} of {w.size} values differ from the float32 numpy "
                          f"elimination; first {name}{list(idx)}: got {g[idx]!r}, expected {w[idx]!r}")


class Gaussian(Workload):
    suite = "rodinia"
    name = "gaussian"
    description = ("Gaussian elimination without pivoting: per pivot, Fan1 (512-thread blocks, one divide per "
                   "row) then Fan2 (4x4-thread blocks, FMA update of the submatrix and of b); host back-sub")
    source = Path(__file__).with_name("gaussian.s")
    sizes = {
        # a well-conditioned (diagonally dominant) random 4 x 4 system: 3 Fan1 + 3 Fan2 launches,
        # Fan1 one 512-thread block (16 warps, 13 leave at once), Fan2 one 4x4 block (one warp)
        "tiny": {"n": 4, "matrix": "random"},
        # the 4 x 4 example of Rodinia's usage text (matrix4.txt, `./gaussian -f matrix4.txt`)
        "matrix4": {"n": 4, "matrix": "matrix4"},
        # create_matrix(32): 31 + 31 launches, Fan2 grid 8 x 8 blocks: 64 one-warp blocks, enough to fill
        # one SM with 64 warps (the warps-per-SM study of `dualflow reproduce`)
        "medium": {"n": 32, "matrix": "create"},
        # create_matrix(64): 63 + 63 launches, Fan2 grid 16 x 16 blocks
        "small": {"n": 64, "matrix": "create"},
        # Rodinia's run script: `./gaussian -s 16`: 15 + 15 launches, Fan2 grid 4 x 4 blocks
        "paper": {"n": 16, "matrix": "create"},
    }
    tolerance = ("eliminated a, multipliers m and b bit-exact against a float32 numpy elimination in the same "
                 f"order (FMA updates); solution max|x - x64| / max|x64| <= {SOLUTION_RTOL:g} against float64 "
                 "numpy.linalg.solve (float32 without pivoting; cond(A) ~ 1e4 at Size 64, observed ~2e-5)")

    def generate(self, rng, n, matrix):
        if matrix == "create":
            a = create_matrix(n)
            b = np.ones(n, np.float32)
        elif matrix == "random":
            a = rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
            a[np.diag_indices(n)] += np.float32(n)  # strictly diagonally dominant: safe without pivoting
            b = rng.uniform(-1.0, 1.0, n).astype(np.float32)
        elif matrix == "matrix4":
            if n != 4:
                raise ValueError("matrix4 is a 4 x 4 system")
            a = np.array(MATRIX4_A, np.float32)
            b = np.array(MATRIX4_B, np.float32)
        else:
            raise ValueError(f"unknown matrix kind {matrix!r} (create, random, matrix4)")
        return {"a": a, "b": b}

    def execute(self, dev, module, inputs, n, matrix):
        fan1, fan2 = module["Fan1"], module["Fan2"]
        m_cuda = dev.upload(np.zeros((n, n), np.float32))  # InitPerRun: m = 0
        a_cuda = dev.upload(inputs["a"])
        b_cuda = dev.upload(inputs["b"])
        grid1, grid2 = launch_shapes(n)
        for t in range(n - 1):
            dev.launch(fan1, grid=grid1, block=MAXBLOCKSIZE, params=[m_cuda, a_cuda, n, t])
            dev.launch(fan2, grid=grid2, block=(BLOCK_SIZE_XY, BLOCK_SIZE_XY),
                       params=[m_cuda, a_cuda, b_cuda, n, n - t, t])
        m = dev.copy_out(m_cuda, n * n, np.float32).reshape(n, n)
        a = dev.copy_out(a_cuda, n * n, np.float32).reshape(n, n)
        b = dev.copy_out(b_cuda, n, np.float32)
        return {"m": m, "a": a, "b": b, "x": back_substitution(a, b)}

    def reference(self, inputs, n, matrix):
        a, b, m = eliminate(inputs["a"], inputs["b"])
        x64 = np.linalg.solve(inputs["a"].astype(np.float64), inputs["b"].astype(np.float64))
        return {"m": m, "a": a, "b": b, "x": back_substitution(a, b), "x64": x64}

    def check(self, outputs, expected, n, matrix):
        for key, shape in (("m", (n, n)), ("a", (n, n)), ("b", (n,)), ("x", (n,))):
            _bit_exact(key, outputs[key], expected[key], shape)
        x = np.asarray(outputs["x"], np.float64)
        x64 = np.asarray(expected["x64"], np.float64)
        scale = float(np.max(np.abs(x64)))
        err = np.abs(x - x64) / scale
        i = int(np.argmax(err))
        if not err[i] <= SOLUTION_RTOL:  # also catches NaN
            raise CheckFailed(f"gaussian: solution x[{i}] = {x[i]!r} vs float64 solve {x64[i]!r}: error "
                              f"{err[i]:.3g} of max|x| exceeds {SOLUTION_RTOL:g}")
        return (f"a, m ({n}x{n}), b, x bit-exact vs float32 numpy elimination; "
                f"solution max rel err {err[i]:.2g} <= {SOLUTION_RTOL:g}")

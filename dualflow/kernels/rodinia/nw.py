"""Rodinia 3.1 nw: Needleman-Wunsch alignment scores in 16x16 shared-memory tiles.

The host code of ``cuda/nw/needle.cu``: two random sequences of ``dim`` residues (codes 1..10,
as ``rand() % 10 + 1``), the reference matrix ``referrence[i][j] = blosum62[row_seq[i]][col_seq[j]]``,
the score matrix with its first row and column set to ``-k * penalty``; then
``needle_cuda_shared_1`` for i = 1 .. block_width (grid i) and ``needle_cuda_shared_2`` for
i = block_width - 1 .. 1 (grid i), blocks of BLOCK_SIZE = 16 threads, and the score matrix is
copied back. Rodinia runs ``needle 2048 10``.

Deviations: none in the algorithm. The sequences come from numpy's generator seeded by the
workload seed instead of ``srand(7)``/``rand()``; row 0 and column 0 of the reference matrix,
uninitialised (and never read) in Rodinia, are zero here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..workload import CheckFailed, Workload

BLOCK_SIZE = 16

#: The BLOSUM62 substitution matrix in the order of needle.cu (public data; 24 residue codes).
BLOSUM62 = np.array([
    [4, -1, -2, -2, 0, -1, -1, 0, -2, -1, -1, -1, -1, -2, -1, 1, 0, -3, -2, 0, -2, -1, 0, -4],
    [-1, 5, 0, -2, -3, 1, 0, -2, 0, -3, -2, 2, -1, -3, -2, -1, -1, -3, -2, -3, -1, 0, -1, -4],
    [-2, 0, 6, 1, -3, 0, 0, 0, 1, -3, -3, 0, -2, -3, -2, 1, 0, -4, -2, -3, 3, 0, -1, -4],
    [-2, -2, 1, 6, -3, 0, 2, -1, -1, -3, -4, -1, -3, -3, -1, 0, -1, -4, -3, -3, 4, 1, -1, -4],
    [0, -3, -3, -3, 9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4],
    [-1, 1, 0, 0, -3, 5, 2, -2, 0, -3, -2, 1, 0, -3, -1, 0, -1, -2, -1, -2, 0, 3, -1, -4],
    [-1, 0, 0, 2, -4, 2, 5, -2, 0, -3, -3, 1, -2, -3, -1, 0, -1, -3, -2, -2, 1, 4, -1, -4],
    [0, -2, 0, -1, -3, -2, -2, 6, -2, -4, -4, -2, -3, -3, -2, 0, -2, -2, -3, -3, -1, -2, -1, -4],
    [-2, 0, 1, -1, -3, 0, 0, -2, 8, -3, -3, -1, -2, -1, -2, -1, -2, -2, 2, -3, 0, 0, -1, -4],
    [-1, -3, -3, -3, -1, -3, -3, -4, -3, 4, 2, -3, 1, 0, -3, -2, -1, -3, -1, 3, -3, -3, -1, -4],
    [-1, -2, -3, -4, -1, -2, -3, -4, -3, 2, 4, -2, 2, 0, -3, -2, -1, -2, -1, 1, -4, -3, -1, -4],
    [-1, 2, 0, -1, -3, 1, 1, -2, -1, -3, -2, 5, -1, -3, -1, 0, -1, -3, -2, -2, 0, 1, -1, -4],
    [-1, -1, -2, -3, -1, 0, -2, -3, -2, 1, 2, -1, 5, 0, -2, -1, -1, -1, -1, 1, -3, -1, -1, -4],
    [-2, -3, -3, -3, -2, -3, -3, -3, -1, 0, 0, -3, 0, 6, -4, -2, -2, 1, 3, -1, -3, -3, -1, -4],
    [-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4, 7, -1, -1, -4, -3, -2, -2, -1, -2, -4],
    [1, -1, 1, 0, -1, 0, 0, 0, -1, -2, -2, 0, -1, -2, -1, 4, 1, -3, -2, -2, 0, 0, 0, -4],
    [0, -1, 0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1, 1, 5, -2, -2, 0, -1, -1, 0, -4],
    [-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1, 1, -4, -3, -2, 11, 2, -3, -4, -3, -2, -4],
    [-2, -2, -2, -3, -2, -1, -2, -3, 2, -1, -1, -2, -1, 3, -3, -2, -2, 2, 7, -1, -3, -2, -1, -4],
    [0, -3, -3, -3, -1, -2, -2, -3, -3, 3, 1, -2, 1, -1, -2, -2, 0, -3, -1, 4, -3, -2, -1, -4],
    [-2, -1, 3, 4, -3, 0, 1, -1, 0, -3, -4, 0, -3, -3, -2, 0, -1, -4, -3, -3, 4, 1, -1, -4],
    [-1, 0, 0, 1, -3, 3, 4, -2, 0, -3, -3, 1, -1, -3, -1, 0, -1, -3, -2, -2, 1, 4, -1, -4],
    [0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2, 0, 0, -2, -1, -1, -1, -1, -1, -4],
    [-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, 1],
], dtype=np.int32)


class Nw(Workload):
    suite = "rodinia"
    name = "nw"
    description = ("Needleman-Wunsch in 16x16 shared tiles: tile anti-diagonals across launches, "
                   "a barrier-separated wavefront with divergence on tx inside each tile")
    source = Path(__file__).with_name("nw.s")
    sizes = {
        "tiny": {"dim": 32, "penalty": 10},     # 2x2 tiles: both kernels, 3 one-block launches
        "small": {"dim": 256, "penalty": 10},   # 16x16 tiles, 31 launches
        "paper": {"dim": 2048, "penalty": 10},  # `needle 2048 10` (cuda/nw/run)
    }
    tolerance = "exact: every entry of the (dim+1)^2 int32 score matrix equals a numpy dynamic program"

    def generate(self, rng, dim, penalty):
        if dim % BLOCK_SIZE:
            raise ValueError(f"nw: dimension {dim} must be a multiple of {BLOCK_SIZE}")
        cols = dim + 1
        row_seq = rng.integers(1, 11, size=dim)  # input_itemsets[i * max_cols], i = 1..dim
        col_seq = rng.integers(1, 11, size=dim)  # input_itemsets[j], j = 1..dim
        ref = np.zeros((cols, cols), np.int32)
        ref[1:, 1:] = BLOSUM62[row_seq[:, None], col_seq[None, :]]
        score = np.zeros((cols, cols), np.int32)
        score[1:, 0] = -np.arange(1, cols) * penalty
        score[0, 1:] = -np.arange(1, cols) * penalty
        return {"reference": ref, "matrix": score}

    @staticmethod
    def launches(dim: int) -> list[tuple[str, int]]:
        """(kernel, i = grid size) in needle.cu's order."""
        block_width = dim // BLOCK_SIZE  # (max_cols - 1) / BLOCK_SIZE
        return ([("needle_cuda_shared_1", i) for i in range(1, block_width + 1)]
                + [("needle_cuda_shared_2", i) for i in range(block_width - 1, 0, -1)])

    def execute(self, dev, module, inputs, dim, penalty):
        cols = dim + 1
        d_ref = dev.upload(inputs["reference"])
        d_matrix = dev.upload(inputs["matrix"])
        block_width = dim // BLOCK_SIZE
        for kernel, i in self.launches(dim):
            dev.launch(module[kernel], grid=(i, 1), block=(BLOCK_SIZE, 1),
                       params=[d_ref, d_matrix, cols, penalty, i, block_width])
        return {"score": dev.copy_out(d_matrix, cols * cols, np.int32).reshape(cols, cols)}

    def reference(self, inputs, dim, penalty):
        """The same recurrence, one anti-diagonal of cells at a time."""
        ref = inputs["reference"].astype(np.int64)
        s = inputs["matrix"].astype(np.int64)
        cols = dim + 1
        for d in range(2, 2 * cols - 1):  # cells (y, x) with y + x = d, 1 <= y, x <= dim
            y = np.arange(max(1, d - dim), min(dim, d - 1) + 1)
            x = d - y
            s[y, x] = np.maximum(np.maximum(s[y - 1, x - 1] + ref[y, x], s[y, x - 1] - penalty),
                                 s[y - 1, x] - penalty)
        return {"score": s.astype(np.int32)}

    def check(self, outputs, expected, **params):
        got, want = outputs["score"], expected["score"]
        bad = np.argwhere(got != want)
        if bad.size:
            y, x = (int(v) for v in bad[0])
            raise CheckFailed(f"nw score: {len(bad)} of {got.size} entries differ from numpy; first at "
                              f"[{y}][{x}] (index {y * got.shape[1] + x}): got {int(got[y, x])}, "
                              f"expected {int(want[y, x])}")
        return f"all {got.size} scores exact (final score {int(got[-1, -1])})"

"""What the Polybench/GPU workloads share: the suite, the launch shapes and an exact check.

Polybench/GPU launches 2-D kernels on 32 x 8 blocks (x along a matrix's columns, y along its rows)
and 1-D kernels on blocks of 256 threads (the batched matrix-vector kernels here shape them 128
elements x 2 problems: ``grid_batched``). Every workload is checked exactly against numpy: the
linear-algebra ones on dyadic inputs whose sums FP32 keeps exact (``exact.py``), the stencils
compiled without FP contraction against a float32 reference in the kernels' operation order.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np

from ...compiled import CompiledWorkload
from ...workload import CheckFailed

#: the folder of the ``.cu`` files
SOURCE_DIR = Path(__file__).parent
#: Polybench/GPU's 2-D block: DIM_THREAD_BLOCK_X x DIM_THREAD_BLOCK_Y
BLOCK_2D = (32, 8)
#: Polybench/GPU's 1-D block of 256 threads, as the batched matrix-vector kernels shape it:
#: 128 elements x 2 independent problems, every thread busy when a problem has 128 elements
BLOCK_BATCHED = (128, 2)


def blocks(extent: int, block: int) -> int:
    """Blocks of ``block`` threads that cover ``extent`` elements (the original's ceil(extent / block))."""
    return -(-extent // block)


def grid_2d(cols: int, rows: int) -> tuple[int, int]:
    """The grid of ``BLOCK_2D`` blocks that covers a rows x cols matrix, one thread per element."""
    return blocks(cols, BLOCK_2D[0]), blocks(rows, BLOCK_2D[1])


def grid_batched(extent: int, problems: int) -> tuple[int, int]:
    """The grid of ``BLOCK_BATCHED`` blocks that covers ``extent`` elements of each of ``problems``
    independent problems (the matrix-vector kernels): x over the elements, y over the problems."""
    return blocks(extent, BLOCK_BATCHED[0]), blocks(problems, BLOCK_BATCHED[1])


def compare_exact(workload: str, name: str, got: np.ndarray, want: np.ndarray) -> str:
    """Raise ``CheckFailed`` naming the first element of ``got`` whose value differs from ``want``
    (NaN differs from everything; +0 and -0 are equal); else a one-line verdict."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise CheckFailed(f"{workload}: {name} has shape {got.shape}, expected {want.shape}")
    bad = np.argwhere(~(got == want))
    if bad.size:
        at = tuple(int(v) for v in bad[0])
        raise CheckFailed(f"{workload}: {len(bad)} of {want.size} values of {name} differ from numpy; first at "
                          f"index {at if len(at) > 1 else at[0]}: got {got[at]!r}, expected {want[at]!r}")
    return f"{name}: {want.size} exact"


class PolybenchWorkload(CompiledWorkload):
    """A Polybench/GPU workload: its ``.cu`` beside this module, outputs checked exactly.

    outputs: the names of the arrays ``execute`` returns and ``check`` compares, in order.
    """

    suite = "polybench"
    outputs: ClassVar[tuple[str, ...]]

    def check(self, outputs, expected, **params) -> str:
        return "; ".join(compare_exact(self.name, key, outputs[key], expected[key]) for key in self.outputs)

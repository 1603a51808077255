"""Element-wise comparisons shared by the compiled workloads' checks: each raises ``CheckFailed``
naming the workload, the output and the first element that differs, so a failing run points at
one index to debug."""

from __future__ import annotations

import numpy as np

from dualflow.kernels.workload import CheckFailed


def _index(flat: int, shape: tuple[int, ...]) -> str:
    """``flat`` as the index a reader would type: ``257`` for a vector, ``(3, 4)`` for a matrix."""
    if len(shape) <= 1:
        return str(flat)
    return str(tuple(int(i) for i in np.unravel_index(flat, shape)))


def _same_shape(workload: str, what: str, got: np.ndarray, want: np.ndarray) -> None:
    if got.shape != want.shape:
        raise CheckFailed(f"{workload}: {what} has shape {got.shape}, expected {want.shape}")


def bit_exact(workload: str, what: str, got, want) -> int:
    """Every element of ``got`` has the bit pattern of ``want``'s (32-bit words: FP32 results in
    the kernel's operation order, integers). Returns the element count."""
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    _same_shape(workload, what, got, want)
    if got.dtype.itemsize != 4 or want.dtype.itemsize != 4:
        raise TypeError(f"{what}: bit_exact compares 32-bit words, not {got.dtype} and {want.dtype}")
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    if bad.size:
        i = int(bad[0])
        raise CheckFailed(f"{workload}: {bad.size} of {want.size} {what} differ from numpy; first at index "
                          f"{_index(i, want.shape)}: got {got.flat[i]!r}, expected {want.flat[i]!r}")
    return int(want.size)


def within(workload: str, what: str, got, want, bound) -> int:
    """|got - want| <= bound element-wise (``bound`` an array of ``want``'s shape, or a scalar),
    compared in float64. Returns the element count."""
    got, want = np.asarray(got), np.asarray(want)
    _same_shape(workload, what, got, want)
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bound = np.broadcast_to(np.asarray(bound, np.float64), want.shape)
    bad = np.flatnonzero(~(error <= bound))  # NaN fails too
    if bad.size:
        i = int(bad[0])
        raise CheckFailed(f"{workload}: {bad.size} of {want.size} {what} exceed the error bound; first at index "
                          f"{_index(i, want.shape)}: got {got.flat[i]!r}, expected {want.flat[i]!r} "
                          f"+- {bound.flat[i]:.3g}")
    return int(want.size)

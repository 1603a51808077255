"""Inputs whose FP32 sums are exact, so a kernel's result is bit-exact in any order, fused or not.

The linear-algebra workloads sum products. FP32 rounds a partial sum only when it needs more than
24 significant bits. Their inputs are small integers over a power of two (dyadic rationals, e.g.
k/8 with |k| <= 8): every product, every scaled term and so every partial sum is then a multiple of
one step (the product of the steps of its factors); while the sum of the terms' absolute values,
which bounds every partial sum, stays below 2**24 steps, every partial sum is exact, in any order
and whether or not a multiply and add are fused. So these kernels keep clang's default FMA
contraction (as nvcc compiles them) and their check is still exact. ``require_exact`` makes each
reference prove the bound for the data it is given.
"""

from __future__ import annotations

import numpy as np

from dualflow.common.errors import ConfigError

#: significand bits of FP32 (23 stored, one implicit)
FP32_SIGNIFICAND_BITS = 24
#: the inputs' denominator: every input is k / DENOMINATOR
DENOMINATOR = 8
#: the inputs' largest numerator: |k| <= NUMERATOR_BOUND, so every input lies in [-1, 1]
NUMERATOR_BOUND = 8
#: the step of an input
STEP = 1.0 / DENOMINATOR


def dyadic(rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
    """FP32 values k / DENOMINATOR with integer k uniform in [-NUMERATOR_BOUND, NUMERATOR_BOUND]."""
    k = rng.integers(-NUMERATOR_BOUND, NUMERATOR_BOUND + 1, size=shape)
    return (k / DENOMINATOR).astype(np.float32)


def require_exact(magnitude: np.ndarray | float, step: float, what: str) -> None:
    """Refuse a computation whose FP32 partial sums could round.

    ``magnitude``: an upper bound of every partial sum's absolute value (per output, or one value);
    ``step``: a value every term and so every partial sum is a multiple of. Raises ``ConfigError``
    naming ``what`` when the largest bound reaches 2**24 steps."""
    largest = float(np.max(magnitude))
    if largest / step >= 2 ** FP32_SIGNIFICAND_BITS:
        raise ConfigError(f"{what}: partial sums up to {largest:g} in steps of {step:g} need more than "
                          f"{FP32_SIGNIFICAND_BITS} bits: FP32 would round them, the exact check cannot hold; "
                          f"use smaller sizes")

"""Exact FP32 semantics of the instruction set: the bit-for-bit reference for the RTL FP unit.

Every value is a raw 32-bit pattern held in a ``numpy.uint32`` array of any shape; every function
takes such arrays, broadcasts like numpy and returns a ``uint32`` array (compares return 0/1).

Semantics
---------
* **Inputs (DAZ).** A denormal input is replaced by a zero of the same sign before the operation.
  A NaN input of any sign and payload is just NaN.
* **Arithmetic** (``fadd``, ``fsub``, ``fmul``, ``ffma``, ``fdiv``, ``fsqrt``): IEEE-754 binary32,
  round to nearest, ties to even, with gradual underflow; *then*, if the rounded result is
  subnormal, it becomes a zero of the same sign (FTZ after rounding, so an exact result just below
  2**-126 that rounds up to 2**-126 is kept). Overflow gives +-inf. Every NaN result is the
  canonical NaN ``0x7FFFFFFF``. Exact zero results have IEEE signs (``x + (-x) = +0``,
  ``(-0) + (-0) = -0``, ``sqrt(-0) = -0``); ``sqrt`` of a value < 0 is NaN.
  ``ffma(a, b, c) = a*b + c`` rounded once.
* **Min/max** (``fmin``, ``fmax``): inputs flushed; -0 < +0; if exactly one input is NaN the other
  (flushed) input is returned unchanged; if both are NaN the result is the canonical NaN.
* **Compare** (``fsetp``): inputs flushed, +0 == -0. Ordered conditions (EQ NE LT LE GT GE) are
  false when either input is NaN; unordered ones (EQU .. GEU) are true; NUM / NAN test for NaNs.
  The codes are those of ``dualflow.isa.opcodes.Cmp``.
* **Conversions**: ``i2f``/``u2f`` convert int32/uint32 to float32 with one RNE rounding;
  ``f2i``/``f2u`` convert toward zero, saturating to the destination range, NaN -> 0 (and, for
  ``f2u``, negative -> 0).
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dualflow.isa.fp32 import CANONICAL_NAN

__all__ = [
    "CANONICAL_NAN",
    "ftz",
    "fadd",
    "fsub",
    "fmul",
    "ffma",
    "fdiv",
    "fsqrt",
    "fmin",
    "fmax",
    "fsetp",
    "i2f",
    "u2f",
    "f2i",
    "f2u",
]


U32 = NDArray[np.uint32]

# Constants as 0-d arrays: numpy mixes those with arrays about 3x faster than numpy scalars,
# which matters at warp size ([k, 32]) where per-call overhead dominates.
_SIGN = np.array(0x80000000, dtype=np.uint32)
_EXP = np.array(0x7F800000, dtype=np.uint32)
_ABS = np.array(0x7FFFFFFF, dtype=np.uint32)
_MIN_NORMAL = np.array(0x00800000, dtype=np.uint32)
_QNAN = np.array(CANONICAL_NAN, dtype=np.uint32)
_ZERO = np.array(0, dtype=np.uint32)
_SHIFT_SIGN = np.array(31, dtype=np.int32)
_ONE64 = np.array(1, dtype=np.uint64)
_ZERO64 = np.array(0, dtype=np.uint64)


def _u32(x: ArrayLike) -> U32:
    return np.asarray(x, dtype=np.uint32)


def ftz(bits: ArrayLike) -> U32:
    """Flush denormals to a zero of the same sign (DAZ on inputs).

    Parameters
    ----------
    bits : array_like of uint32
        Float32 bit patterns.

    Returns
    -------
    ndarray of uint32
        ``bits`` with every denormal replaced by +-0; all other patterns unchanged.
    """
    b = _u32(bits)
    # Exponent field 0 means zero or denormal; keeping only the sign bit maps both to +-0.
    return np.where((b & _EXP) == _ZERO, b & _SIGN, b)


def _f32(bits: ArrayLike) -> NDArray[np.float32]:
    """Flushed input bit patterns viewed as float32 (no copy beyond the flush)."""
    return ftz(bits).view(np.float32)


def _finish(result: ArrayLike) -> U32:
    """Bit patterns of a correctly rounded float32 result: flush a subnormal result to +-0,
    replace every NaN by the canonical NaN."""
    bits = np.asarray(result, dtype=np.float32).view(np.uint32)
    mag = bits & _ABS
    out = np.where(mag < _MIN_NORMAL, bits & _SIGN, bits)
    return np.where(mag > _EXP, _QNAN, out)


def fadd(a: ArrayLike, b: ArrayLike) -> U32:
    """``a + b`` (RNE, DAZ, FTZ after rounding, canonical NaN).

    Parameters
    ----------
    a, b : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        Bit patterns of the sum.
    """
    with np.errstate(all="ignore"):
        # numpy's float32 add is IEEE RNE with gradual underflow; only DAZ/FTZ/NaN are ours.
        return _finish(np.add(_f32(a), _f32(b)))


def fsub(a: ArrayLike, b: ArrayLike) -> U32:
    """``a - b`` (RNE, DAZ, FTZ after rounding, canonical NaN).

    Parameters
    ----------
    a, b : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        Bit patterns of the difference.
    """
    with np.errstate(all="ignore"):
        return _finish(np.subtract(_f32(a), _f32(b)))


def fmul(a: ArrayLike, b: ArrayLike) -> U32:
    """``a * b`` (RNE, DAZ, FTZ after rounding, canonical NaN).

    Parameters
    ----------
    a, b : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        Bit patterns of the product.
    """
    with np.errstate(all="ignore"):
        return _finish(np.multiply(_f32(a), _f32(b)))


def ffma(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> U32:
    """Fused ``a * b + c`` with a single rounding (RNE, DAZ, FTZ after rounding, canonical NaN).

    Parameters
    ----------
    a, b, c : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        Bit patterns of the fused multiply-add.

    Notes
    -----
    numpy has no float32 fma. The product of two float32 values is exact in float64 (48 bits,
    exponent well inside the float64 range), so only the addition rounds. Rounding ``p + c`` to
    float64 with round-to-odd and then once to float32 with RNE equals a single RNE rounding of
    the exact value, because 53 >= 24 + 2. Round-to-odd is made from the RNE sum ``s`` and its
    exact error ``err`` (TwoSum): when the sum is inexact and ``s`` has an even significand, ``s``
    moves one float64 ulp toward the exact value.
    """
    with np.errstate(all="ignore"):
        x = _f32(a).astype(np.float64)
        y = _f32(b).astype(np.float64)
        z = _f32(c).astype(np.float64)
        p = x * y  # exact
        s = p + z
        # Knuth's TwoSum: err = (p + z) - s exactly, no precondition on |p| vs |z|.
        bp = s - z
        err = (p - bp) + (z - (s - bp))
        # Only finite sums are adjusted: with inf/NaN inputs err is NaN and s is already final.
        odd = (err != 0) & ((s.view(np.uint64) & _ONE64) == _ZERO64) & np.isfinite(s)
        s = np.where(odd, np.nextafter(s, np.copysign(np.inf, err)), s)
        # float64 -> float32 cast is IEEE RNE with gradual underflow and overflow to inf.
        return _finish(s.astype(np.float32))


def fdiv(a: ArrayLike, b: ArrayLike) -> U32:
    """``a / b`` correctly rounded (RNE, DAZ, FTZ after rounding, canonical NaN).

    Parameters
    ----------
    a, b : array_like of uint32
        Float32 bit patterns (dividend, divisor); broadcast against each other.

    Returns
    -------
    ndarray of uint32
        Bit patterns of the quotient; ``x/0`` is a signed inf, ``0/0`` and ``inf/inf`` are NaN.
    """
    with np.errstate(all="ignore"):
        return _finish(np.divide(_f32(a), _f32(b)))


def fsqrt(a: ArrayLike) -> U32:
    """Square root, correctly rounded (RNE, DAZ, canonical NaN).

    Parameters
    ----------
    a : array_like of uint32
        Float32 bit patterns.

    Returns
    -------
    ndarray of uint32
        Bit patterns of the root; ``sqrt(-0) = -0``, the root of a value < 0 is NaN.
    """
    with np.errstate(all="ignore"):
        return _finish(np.sqrt(_f32(a)))


def _order_key(bits: U32) -> U32:
    """Map float bit patterns to uint32 keys whose unsigned order is the float order with
    -0 < +0 (NaNs excluded): negatives are bit-inverted, non-negatives get the sign bit set."""
    # Arithmetic shift of the sign gives all-ones for negatives, zero otherwise (no np.where).
    flip = (bits.view(np.int32) >> _SHIFT_SIGN).view(np.uint32) | _SIGN
    return bits ^ flip


def _minmax(a: ArrayLike, b: ArrayLike, want_min: bool) -> U32:
    x, y = ftz(a), ftz(b)
    nan_x = (x & _ABS) > _EXP
    nan_y = (y & _ABS) > _EXP
    kx, ky = _order_key(x), _order_key(y)
    pick_x = (kx <= ky) if want_min else (kx >= ky)
    # Exactly one NaN: take the other input. Both NaN: canonical NaN below.
    pick_x = (pick_x | nan_y) & ~nan_x
    return np.where(nan_x & nan_y, _QNAN, np.where(pick_x, x, y))


def fmin(a: ArrayLike, b: ArrayLike) -> U32:
    """Minimum with -0 < +0; a single NaN input is ignored.

    Parameters
    ----------
    a, b : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        The smaller flushed input; if exactly one input is NaN the other one; if both are NaN
        the canonical NaN.
    """
    return _minmax(a, b, True)


def fmax(a: ArrayLike, b: ArrayLike) -> U32:
    """Maximum with -0 < +0; a single NaN input is ignored.

    Parameters
    ----------
    a, b : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        The larger flushed input; if exactly one input is NaN the other one; if both are NaN
        the canonical NaN.
    """
    return _minmax(a, b, False)


# Relations for condition codes modulo 6 (EQ NE LT LE GT GE and their unordered twins).
_RELATIONS = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
_CMP_NUM = 12
_CMP_NAN = 13


def fsetp(cond: int, a: ArrayLike, b: ArrayLike) -> U32:
    """Compare ``a`` with ``b`` under condition ``cond``.

    Parameters
    ----------
    cond : int
        0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE (false if either input is NaN); 6 EQU, 7 NEU, 8 LTU,
        9 LEU, 10 GTU, 11 GEU (true if either input is NaN); 12 NUM (neither is NaN); 13 NAN
        (either is NaN). Same numbering as ``dualflow.isa.opcodes.Cmp``.
    a, b : array_like of uint32
        Float32 bit patterns; broadcast against each other.

    Returns
    -------
    ndarray of uint32
        1 where the condition holds, else 0.

    Raises
    ------
    ValueError
        If ``cond`` is not one of the codes above.
    """
    try:
        code = operator.index(cond)
    except TypeError:
        raise ValueError(f"fsetp: condition code must be an integer 0..13, not {cond!r}") from None
    if not 0 <= code <= _CMP_NAN:
        raise ValueError(f"fsetp: unknown condition code {code} (expected 0..13)")
    x, y = _f32(a), _f32(b)
    with np.errstate(all="ignore"):
        unordered = np.isnan(x) | np.isnan(y)
        if code == _CMP_NUM:
            result = ~unordered
        elif code == _CMP_NAN:
            result = unordered
        else:
            # float compares already give +0 == -0 and NaN -> false (NE -> true), so the NaN
            # outcome is forced explicitly for both families.
            rel = _RELATIONS[code % 6](x, y)
            result = (rel | unordered) if code >= 6 else (rel & ~unordered)
    return np.asarray(result, dtype=np.uint32)


def i2f(a: ArrayLike) -> U32:
    """Signed int32 (given as uint32 bit patterns) to float32, RNE.

    Parameters
    ----------
    a : array_like of uint32
        Two's-complement int32 bit patterns.

    Returns
    -------
    ndarray of uint32
        Float32 bit patterns.
    """
    # int32 -> float64 is exact, so the float32 cast is the only rounding.
    return _u32(a).view(np.int32).astype(np.float64).astype(np.float32).view(np.uint32)


def u2f(a: ArrayLike) -> U32:
    """Unsigned int32 to float32, RNE.

    Parameters
    ----------
    a : array_like of uint32
        Unsigned integers.

    Returns
    -------
    ndarray of uint32
        Float32 bit patterns.
    """
    # uint32 -> float64 is exact, so the float32 cast is the only rounding.
    return _u32(a).astype(np.float64).astype(np.float32).view(np.uint32)


def f2i(a: ArrayLike) -> U32:
    """Float32 to signed int32, toward zero, saturating; NaN -> 0.

    Parameters
    ----------
    a : array_like of uint32
        Float32 bit patterns. Denormals need no flush: they truncate to 0 either way.

    Returns
    -------
    ndarray of uint32
        Two's-complement int32 bit patterns, saturated to [-2**31, 2**31 - 1].
    """
    with np.errstate(all="ignore"):  # casting a signaling NaN raises "invalid"
        # float64 is exact for float32 and, unlike float32, holds the bound 2**31 - 1 exactly.
        x = _u32(a).view(np.float32).astype(np.float64)
        x = np.where(np.isnan(x), 0.0, x)
        # In-range float -> int casts truncate toward zero.
        r = np.minimum(np.maximum(x, -(2.0**31)), 2.0**31 - 1).astype(np.int32)
    return np.asarray(r).view(np.uint32)  # asarray: ufuncs turn 0-d results into scalars


def f2u(a: ArrayLike) -> U32:
    """Float32 to unsigned int32, toward zero, saturating; NaN and negative values -> 0.

    Parameters
    ----------
    a : array_like of uint32
        Float32 bit patterns. Denormals need no flush: they truncate to 0 either way.

    Returns
    -------
    ndarray of uint32
        Unsigned integers, saturated to [0, 2**32 - 1].
    """
    with np.errstate(all="ignore"):  # casting a signaling NaN raises "invalid"
        x = _u32(a).view(np.float32).astype(np.float64)
        # fmax with 0 maps NaN and every negative value (incl. -inf) to 0 in one step.
        return np.asarray(np.minimum(np.fmax(x, 0.0), 2.0**32 - 1).astype(np.uint32))

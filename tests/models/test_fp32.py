"""Bit-exact tests of dualflow.models.fp32 against an independent reference.

The reference decodes float32 bit patterns into exact rationals (``fractions.Fraction``),
computes the exact result and rounds it to binary32 with integer code (RNE, gradual underflow,
overflow to inf), then applies the flush-after-rounding rule. Neither numpy nor ``float()`` is
used to round in the reference.
"""

from __future__ import annotations

import math
import struct
import warnings
from fractions import Fraction

import numpy as np
import pytest

from dualflow.models import fp32

# --------------------------------------------------------------------------------------------
# Reference
# --------------------------------------------------------------------------------------------

SIGN = 0x80000000
QNAN = 0x7FFFFFFF
PINF, NINF = 0x7F800000, 0xFF800000
PZERO, NZERO = 0x00000000, 0x80000000
ONE = 0x3F800000
MAX_NORMAL = 0x7F7FFFFF
MIN_NORMAL = 0x00800000


class Val:
    """A decoded, flushed float32: kind is 'nan', 'inf', 'zero' or 'num'; sign is 0/1; q is the
    exact value for 'num'."""

    __slots__ = ("kind", "sign", "q")

    def __init__(self, kind: str, sign: int, q: Fraction = Fraction(0)):
        self.kind, self.sign, self.q = kind, sign, q


def decode(bits: int) -> Val:
    sign = bits >> 31
    e = (bits >> 23) & 0xFF
    m = bits & 0x7FFFFF
    if e == 0xFF:
        return Val("nan", sign) if m else Val("inf", sign)
    if e == 0:  # zero or denormal: flushed (DAZ)
        return Val("zero", sign)
    q = Fraction(m | 0x800000) * Fraction(2) ** (e - 127 - 23)
    return Val("num", sign, -q if sign else q)


def round_to_f32(q: Fraction) -> int:
    """Round a nonzero exact rational to binary32 bits: RNE, gradual underflow, overflow to inf.
    No flush here (see flush_out)."""
    assert q != 0
    sign = SIGN if q < 0 else 0
    q = abs(q)
    n, d = q.numerator, q.denominator
    # e = floor(log2(q)), found with integer comparisons only.
    e = n.bit_length() - d.bit_length()
    if (n << -e if e < 0 else n) < (d << e if e > 0 else d):
        e -= 1
    qe = max(e, -126) - 23  # exponent of one ulp; fixed at 2**-149 in the subnormal range
    num, den = (n, d << qe) if qe >= 0 else (n << -qe, d)
    m, rem = divmod(num, den)
    if 2 * rem > den or (2 * rem == den and m & 1):
        m += 1
    if m == 0:
        return sign
    if m == 1 << 24:  # carry out of the significand
        m >>= 1
        qe += 1
    if m < 1 << 23:  # subnormal (only possible with qe == -149)
        return sign | m
    biased = qe + 23 + 127
    if biased >= 255:
        return sign | PINF
    return sign | (biased << 23) | (m - (1 << 23))


def flush_out(bits: int) -> int:
    return bits & SIGN if (bits >> 23) & 0xFF == 0 else bits


def finish(q: Fraction) -> int:
    return flush_out(round_to_f32(q))


def zero(sign: int) -> int:
    return SIGN if sign else 0


def inf(sign: int) -> int:
    return NINF if sign else PINF


def exact(v: Val) -> Fraction:
    return v.q if v.kind == "num" else Fraction(0)


def ref_add(a: int, b: int) -> int:
    x, y = decode(a), decode(b)
    if "nan" in (x.kind, y.kind):
        return QNAN
    if x.kind == "inf" and y.kind == "inf":
        return inf(x.sign) if x.sign == y.sign else QNAN
    if x.kind == "inf" or y.kind == "inf":
        return inf(x.sign if x.kind == "inf" else y.sign)
    s = exact(x) + exact(y)
    if s == 0:  # (-0)+(-0) = -0; every other exact zero is +0 under RNE
        return NZERO if (x.kind == y.kind == "zero" and x.sign and y.sign) else PZERO
    return finish(s)


def ref_sub(a: int, b: int) -> int:
    return ref_add(a, b ^ SIGN)  # IEEE: a - b == a + (-b), also for NaN, inf and zeros


def ref_mul(a: int, b: int) -> int:
    x, y = decode(a), decode(b)
    sign = x.sign ^ y.sign
    if "nan" in (x.kind, y.kind):
        return QNAN
    if "inf" in (x.kind, y.kind):
        return QNAN if "zero" in (x.kind, y.kind) else inf(sign)
    if "zero" in (x.kind, y.kind):
        return zero(sign)
    return finish(x.q * y.q)


def ref_fma(a: int, b: int, c: int) -> int:
    x, y, z = decode(a), decode(b), decode(c)
    psign = x.sign ^ y.sign
    if "nan" in (x.kind, y.kind, z.kind):
        return QNAN
    if "inf" in (x.kind, y.kind):
        if "zero" in (x.kind, y.kind):
            return QNAN
        if z.kind == "inf" and z.sign != psign:
            return QNAN
        return inf(psign)
    if z.kind == "inf":
        return inf(z.sign)
    s = exact(x) * exact(y) + exact(z)
    if s == 0:
        prod_is_zero = "zero" in (x.kind, y.kind)
        return NZERO if (prod_is_zero and z.kind == "zero" and psign and z.sign) else PZERO
    return finish(s)


def ref_div(a: int, b: int) -> int:
    x, y = decode(a), decode(b)
    sign = x.sign ^ y.sign
    if "nan" in (x.kind, y.kind):
        return QNAN
    if x.kind == "inf":
        return QNAN if y.kind == "inf" else inf(sign)
    if y.kind == "inf":
        return zero(sign)
    if y.kind == "zero":
        return QNAN if x.kind == "zero" else inf(sign)
    if x.kind == "zero":
        return zero(sign)
    return finish(x.q / y.q)


def ref_sqrt(a: int) -> int:
    x = decode(a)
    if x.kind == "nan":
        return QNAN
    if x.kind == "zero":
        return zero(x.sign)
    if x.sign:
        return QNAN
    if x.kind == "inf":
        return PINF
    # x = m * 2**e with integer m; make e even, then sqrt(x) = sqrt(m * 4**k) * 2**(e/2 - k).
    m, e = x.q.numerator, 0
    den = x.q.denominator
    while den > 1:
        den >>= 1
        e -= 1
    if e % 2:
        m <<= 1
        e -= 1
    k = 30  # r = isqrt(m * 4**k) has >= 30 bits, well above 24 + 2
    big = m << (2 * k)
    r = math.isqrt(big)
    # An inexact root lies strictly inside (r, r+1), which contains no rounding boundary
    # (boundaries are integers here), so r + 1/2 rounds the same way (the sticky bit).
    root = Fraction(2 * r + (r * r != big), 2)
    return finish(root * Fraction(2) ** (e // 2 - k))


def as_float(bits: int) -> float:
    """Python float of the flushed value (for comparison references only; no rounding)."""
    return struct.unpack("<f", struct.pack("<I", flush_in(bits)))[0]


def flush_in(bits: int) -> int:
    return flush_out(bits)  # same rule on inputs: exponent field 0 -> signed zero


def is_nan(bits: int) -> bool:
    return (bits & 0x7FFFFFFF) > 0x7F800000


def ref_minmax(a: int, b: int, want_min: bool) -> int:
    x, y = flush_in(a), flush_in(b)
    if is_nan(x) and is_nan(y):
        return QNAN
    if is_nan(x):
        return y
    if is_nan(y):
        return x
    kx = (as_float(x), -(x >> 31))  # ties of value (only +0/-0) ordered by sign: -0 < +0
    ky = (as_float(y), -(y >> 31))
    if want_min:
        return x if kx <= ky else y
    return x if kx >= ky else y


def ref_fsetp(cond: int, a: int, b: int) -> int:
    x, y = as_float(a), as_float(b)
    unordered = math.isnan(x) or math.isnan(y)
    if cond == 12:
        return int(not unordered)
    if cond == 13:
        return int(unordered)
    rel = [x == y, x != y, x < y, x <= y, x > y, x >= y][cond % 6]
    return int((rel or unordered) if cond >= 6 else (rel and not unordered))


def ref_i2f(a: int) -> int:
    v = a - (1 << 32) if a & SIGN else a
    return round_to_f32(Fraction(v)) if v else 0


def ref_u2f(a: int) -> int:
    return round_to_f32(Fraction(a)) if a else 0


def ref_f2int(a: int, lo: int, hi: int) -> int:
    x = decode(a)
    if x.kind == "nan":
        return 0
    if x.kind == "inf":
        return lo if x.sign else hi
    return min(max(math.trunc(exact(x)), lo), hi)


def ref_f2i(a: int) -> int:
    return ref_f2int(a, -(1 << 31), (1 << 31) - 1) & 0xFFFFFFFF


def ref_f2u(a: int) -> int:
    return ref_f2int(a, 0, (1 << 32) - 1)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def u32(*vals: int) -> np.ndarray:
    return np.array(vals, dtype=np.uint32)


def bits_of(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def check(func, ref, *cols) -> None:
    """Run the vectorized func on the columns and compare every element with the reference."""
    arrays = [np.asarray(c, dtype=np.uint32) for c in cols]
    got = func(*arrays)
    assert got.dtype == np.uint32
    assert got.shape == arrays[0].shape
    bad = []
    for i, g in enumerate(got.tolist()):
        args = [int(a[i]) for a in arrays]
        want = ref(*args)
        if g != want:
            bad.append(" ".join(f"{v:08x}" for v in args) + f" -> got {g:08x}, want {want:08x}")
    assert not bad, f"{len(bad)} mismatches, first ones:\n" + "\n".join(bad[:20])


def pairs(values: list[int]) -> tuple[list[int], list[int]]:
    a = [x for x in values for _ in values]
    b = [y for _ in values for y in values]
    return a, b


# Hand-picked values: signed zeros, denormals, smallest/largest normals, infinities, NaNs with
# payloads and both signs, ones, near-ones, powers of two, midpoints.
SPECIAL = [
    PZERO, NZERO,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,  # denormals
    MIN_NORMAL, MIN_NORMAL | SIGN, 0x00800001, 0x00FFFFFF, 0x01000000,
    MAX_NORMAL, MAX_NORMAL | SIGN, 0x7F7FFFFE, 0x7F000000,
    PINF, NINF,
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x7FA12345,  # NaNs
    ONE, ONE | SIGN, 0x3F800001, 0x3F7FFFFF, 0x3F7FFFFE, 0x3FC00000, 0x40000000,
    0x33800000, 0x33000000, 0x34000000,  # 2**-24, 2**-25, 2**-23
    0x1F800000, 0x1F7FFFFF, 0x1F800001, 0x20000000,  # around 2**-64: products near 2**-126
    0x5F800000, 0x5F7FFFFF, 0x5F800001,  # around 2**64: products near overflow
    0x40490FDB, 0xC0490FDB, 0x4B800000, 0x4B800001,  # pi, 2**24
]


def interesting(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random float32 bit patterns with exponents concentrated where rounding is delicate."""
    kind = rng.integers(0, 7, n)
    exp = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3, kind == 4, kind == 5],
        [
            rng.integers(0, 256, n),  # anything, including denormals, inf and NaN
            rng.integers(117, 138, n),  # near 1.0
            rng.integers(0, 6, n),  # near the subnormal boundary
            rng.integers(246, 256, n),  # near overflow
            rng.integers(58, 70, n),  # ~2**-64: products/quotients land near 2**-126
            rng.integers(185, 196, n),  # ~2**64: products land near overflow
        ],
        rng.integers(0, 256, n),
    )
    mkind = rng.integers(0, 6, n)
    mant = np.select(
        [mkind == 0, mkind == 1, mkind == 2],
        [np.zeros(n, np.int64), np.full(n, 0x7FFFFF), rng.integers(0, 4, n)],
        rng.integers(0, 1 << 23, n),
    )
    sign = rng.integers(0, 2, n)
    bits = (sign << 31) | (exp << 23) | mant
    uniform = rng.integers(0, 1 << 32, n)
    return np.where(rng.random(n) < 0.15, uniform, bits).astype(np.uint32)


def near(rng: np.random.Generator, a: np.ndarray, spread: int) -> np.ndarray:
    """Patterns whose exponent is close to a's (so additions cancel or tie)."""
    n = a.size
    exp = ((a >> 23) & 0xFF).astype(np.int64) + rng.integers(-spread, spread + 1, n)
    exp = np.clip(exp, 0, 254)
    mant = np.where(rng.random(n) < 0.5, a & 0x7FFFFF, rng.integers(0, 1 << 23, n))
    sign = rng.integers(0, 2, n)
    return ((sign << 31) | (exp << 23) | mant).astype(np.uint32)


N_RANDOM = 3000


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240917)


# --------------------------------------------------------------------------------------------
# The reference itself
# --------------------------------------------------------------------------------------------


def test_reference_rounding_sanity():
    assert round_to_f32(Fraction(1)) == ONE
    assert round_to_f32(Fraction(-3, 2)) == 0xBFC00000
    assert round_to_f32(Fraction(1, 3)) == bits_of(1 / 3)
    assert round_to_f32(Fraction(2) ** -149) == 0x00000001
    assert round_to_f32(Fraction(2) ** -150) == 0  # tie to even (0)
    assert round_to_f32(Fraction(3) * Fraction(2) ** -151) == 0x00000001
    assert round_to_f32(Fraction(2) ** 128) == PINF
    assert round_to_f32(-Fraction(2) ** 128 + Fraction(2) ** 103) == NINF  # tie -> even -> inf
    assert round_to_f32(Fraction(2) ** 128 - Fraction(2) ** 103 - 1) == MAX_NORMAL
    assert ref_sqrt(bits_of(2.0)) == bits_of(2.0**0.5)
    assert ref_sqrt(bits_of(16.0)) == bits_of(4.0)


# --------------------------------------------------------------------------------------------
# Arithmetic: hand-picked corner cases
# --------------------------------------------------------------------------------------------


def test_ftz():
    got = fp32.ftz(u32(0, 1, 0x007FFFFF, 0x80000001, 0x807FFFFF, MIN_NORMAL, 0x80800000, PINF, 0x7FC00001))
    assert got.tolist() == [0, 0, 0, SIGN, SIGN, MIN_NORMAL, 0x80800000, PINF, 0x7FC00001]


@pytest.mark.parametrize(
    "func, ref",
    [(fp32.fadd, ref_add), (fp32.fsub, ref_sub), (fp32.fmul, ref_mul), (fp32.fdiv, ref_div)],
    ids=["fadd", "fsub", "fmul", "fdiv"],
)
def test_binary_special_grid(func, ref):
    check(func, ref, *pairs(SPECIAL))


def test_fsqrt_special():
    vals = SPECIAL + [bits_of(v) for v in (2.0, 3.0, 0.5, 1e-30, 1e30, 4.0, 1.0000001)]
    check(fp32.fsqrt, ref_sqrt, vals)
    got = fp32.fsqrt(u32(NZERO, PZERO, NINF, PINF, ONE | SIGN, 0x80000001, 0xFFC00000, 0x40800000))
    assert got.tolist() == [NZERO, PZERO, QNAN, PINF, QNAN, NZERO, QNAN, 0x40000000]


def test_fma_special_grid():
    vals = [PZERO, NZERO, 0x00000001, 0x80400000, MIN_NORMAL, 0x80800000, MAX_NORMAL, 0xFF7FFFFF,
            PINF, NINF, 0xFFC00001, ONE, ONE | SIGN, 0x3F800001, 0x33800000, 0x1F800000]
    a = [x for x in vals for _ in vals for _ in vals]
    b = [y for _ in vals for y in vals for _ in vals]
    c = [z for _ in vals for _ in vals for z in vals]
    check(fp32.ffma, ref_fma, a, b, c)


def test_signed_zero_and_invalid_cases():
    # x + (-x) = +0, (-0) + (-0) = -0, (+0) - (+0) = +0, (-0) - (+0) = -0
    assert fp32.fadd(u32(ONE, NZERO, NZERO), u32(ONE | SIGN, NZERO, PZERO)).tolist() == [PZERO, NZERO, PZERO]
    assert fp32.fsub(u32(PZERO, NZERO, ONE), u32(PZERO, PZERO, ONE)).tolist() == [PZERO, NZERO, PZERO]
    # inf - inf, 0 * inf, 0 / 0, inf / inf -> canonical NaN; x / 0 -> signed inf
    assert fp32.fadd(u32(PINF), u32(NINF)).tolist() == [QNAN]
    assert fp32.fsub(u32(PINF), u32(PINF)).tolist() == [QNAN]
    assert fp32.fmul(u32(PZERO, NZERO), u32(NINF, PINF)).tolist() == [QNAN, QNAN]
    assert fp32.fdiv(u32(PZERO, PINF, ONE, ONE, ONE | SIGN), u32(NZERO, NINF, PZERO, NZERO, PZERO)).tolist() == [
        QNAN, QNAN, PINF, NINF, NINF]
    # A denormal divisor is a zero: 1 / denormal = inf, not a huge finite number.
    assert fp32.fdiv(u32(ONE), u32(0x80000001)).tolist() == [NINF]
    # fma: (-0)*x + (-0) = -0; x*y - x*y = +0; 0 * inf + c = NaN; inf*1 + -inf = NaN
    assert fp32.ffma(u32(NZERO), u32(ONE), u32(NZERO)).tolist() == [NZERO]
    assert fp32.ffma(u32(0x40490FDB), u32(ONE), u32(0xC0490FDB)).tolist() == [PZERO]
    assert fp32.ffma(u32(PZERO), u32(PINF), u32(ONE)).tolist() == [QNAN]
    assert fp32.ffma(u32(PINF), u32(ONE), u32(NINF)).tolist() == [QNAN]


def test_nan_inputs_give_canonical_nan():
    nans = u32(0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FA5A5A5)
    one = u32(ONE)
    for out in (fp32.fadd(nans, one), fp32.fsub(one, nans), fp32.fmul(nans, one), fp32.fdiv(one, nans),
                fp32.fsqrt(nans), fp32.ffma(nans, one, one), fp32.ffma(one, one, nans)):
        assert out.tolist() == [QNAN] * 5


def test_ties_to_even():
    # add: 1 + 2**-24 is a tie -> 1.0 (even); (1 + 2**-23) + 2**-24 -> 1 + 2**-22 (even)
    assert fp32.fadd(u32(ONE, 0x3F800001), u32(0x33800000, 0x33800000)).tolist() == [ONE, 0x3F800002]
    # add: 2**24 + 1 -> 2**24; (2**24 + 2) + 1 -> 2**24 + 4
    assert fp32.fadd(u32(0x4B800000, 0x4B800001), u32(ONE, ONE)).tolist() == [0x4B800000, 0x4B800002]
    # mul: 1.5 * (1 + 2**-23) = 1.5 + 2**-23 + 2**-24, tie up to mantissa 0x400002;
    #      1.5 * (1 + 3 * 2**-23) = 1.5 + 4 * 2**-23 + 2**-24, tie down to mantissa 0x400004
    got = fp32.fmul(u32(0x3FC00000, 0x3FC00000), u32(0x3F800001, 0x3F800003))
    assert got.tolist() == [0x3FC00002, 0x3FC00004]
    check(fp32.fadd, ref_add, [ONE, 0x3F800001, 0x4B800000, 0x4B800001], [0x33800000, 0x33800000, ONE, ONE])
    check(fp32.fmul, ref_mul, [0x3FC00000, 0x3FC00000], [0x3F800001, 0x3F800003])


def test_subnormal_results_are_flushed_after_rounding():
    # 2**-126 * 0.5 = 2**-127 (subnormal) -> +0 / -0
    assert fp32.fmul(u32(MIN_NORMAL, 0x80800000), u32(0x3F000000, 0x3F000000)).tolist() == [PZERO, NZERO]
    # (2**-126 + 2**-149) - 2**-126 = 2**-149 -> +0; negated -> -0
    assert fp32.fsub(u32(0x00800001, 0x80800001), u32(MIN_NORMAL, 0x80800000)).tolist() == [PZERO, NZERO]
    # 2**-126 / 3 -> +0;  fma 2**-126 * 0.5 + 0 -> +0
    assert fp32.fdiv(u32(MIN_NORMAL), u32(0x40400000)).tolist() == [PZERO]
    assert fp32.ffma(u32(MIN_NORMAL), u32(0x3F000000), u32(PZERO)).tolist() == [PZERO]
    # (1 - 2**-23) * 2**-126 = 2**-126 - 2**-149 is exactly a subnormal -> flushed
    assert fp32.fmul(u32(0x3F7FFFFE), u32(MIN_NORMAL)).tolist() == [PZERO]


def test_rounding_up_to_smallest_normal_is_kept():
    # (1 - 2**-24) * 2**-126 = 2**-126 - 2**-150: with gradual underflow a tie between
    # 0x007FFFFF (odd) and 0x00800000 (even) -> rounds to the smallest normal, which is kept
    # (a flush *before* rounding would give 0).
    a, b = u32(0x3F7FFFFF, 0xBF7FFFFF), u32(MIN_NORMAL, MIN_NORMAL)
    assert fp32.fmul(a, b).tolist() == [MIN_NORMAL, MIN_NORMAL | SIGN]
    assert ref_mul(0x3F7FFFFF, MIN_NORMAL) == MIN_NORMAL
    assert fp32.ffma(a, b, u32(PZERO, PZERO)).tolist() == [MIN_NORMAL, MIN_NORMAL | SIGN]
    # Just above the midpoint also rounds up; just below it stays subnormal and is flushed.
    q = Fraction(2) ** -126 - Fraction(2) ** -150
    assert finish(q + Fraction(2) ** -170) == MIN_NORMAL
    assert finish(q - Fraction(2) ** -170) == PZERO


def test_overflow_to_inf():
    half_ulp_max = 0x73000000  # 2**103, half an ulp of MAX_NORMAL
    # MAX + 2**103 is a tie between MAX (odd mantissa) and 2**128 -> inf; MAX + 2**102 -> MAX
    assert fp32.fadd(u32(MAX_NORMAL, MAX_NORMAL), u32(half_ulp_max, 0x72800000)).tolist() == [PINF, MAX_NORMAL]
    assert fp32.fmul(u32(MAX_NORMAL, MAX_NORMAL | SIGN), u32(0x40000000, 0x40000000)).tolist() == [PINF, NINF]
    assert fp32.fdiv(u32(MAX_NORMAL), u32(0x3F000000)).tolist() == [PINF]
    # fma: 2**64 * 2**64 - 2**103 = 2**128 - 2**103 is the tie MAX / 2**128 -> inf; a little
    # more subtracted -> MAX; 2**64 * 2**64 - MAX = 2**104 is finite (no intermediate overflow).
    t = u32(0x5F800000, 0x5F800000, 0x5F800000, 0xDF800000)
    c = u32(0xF3000000, 0xF3000001, 0xFF7FFFFF, 0x73000000)
    assert fp32.ffma(t, u32(0x5F800000), c).tolist() == [PINF, MAX_NORMAL, 0x73800000, NINF]
    check(fp32.ffma, ref_fma, t, u32(0x5F800000, 0x5F800000, 0x5F800000, 0x5F800000), c)
    check(fp32.fadd, ref_add, [MAX_NORMAL, MAX_NORMAL], [half_ulp_max, 0x72800000])


def test_fma_double_rounding_case():
    # a*b = 24929 * 673 = 16777217 = 2**24 + 1 exactly (a float32 midpoint); c = 2**-30 is far
    # below half a float64 ulp (2**-29), so float64 a*b + c rounds to the midpoint and the
    # float32 cast then ties to even (2**24). The exact value is above the midpoint: 2**24 + 2.
    a, b, c = bits_of(24929.0), bits_of(673.0), bits_of(2.0**-30)
    correct = bits_of(16777218.0)
    x, y, z = (np.array([v], np.uint32).view(np.float32).astype(np.float64) for v in (a, b, c))
    naive = int((x * y + z).astype(np.float32).view(np.uint32)[0])
    assert naive == bits_of(16777216.0) != correct  # the naive method fails here ...
    assert ref_fma(a, b, c) == correct
    assert fp32.ffma(u32(a), u32(b), u32(c)).tolist() == [correct]  # ... and ffma does not
    assert fp32.ffma(u32(a | SIGN), u32(b), u32(c | SIGN)).tolist() == [correct | SIGN]
    # Not fused either: rounding a*b to float32 first gives 2**24, and 2**24 + 2**-30 -> 2**24.
    assert int(fp32.fadd(fp32.fmul(u32(a), u32(b)), u32(c))[0]) == bits_of(16777216.0)
    # Double rounding the other way (float64 sum at a midpoint, exact value below it):
    # 2**24 + 3 = 16777219 = 1549 * 10831, minus 2**-30 -> exact just below the midpoint
    # between 2**24 + 2 and 2**24 + 4, so the answer is 2**24 + 2, while naive gives 2**24 + 4.
    a, b, c = bits_of(1549.0), bits_of(10831.0), bits_of(-(2.0**-30))
    x, y, z = (np.array([v], np.uint32).view(np.float32).astype(np.float64) for v in (a, b, c))
    naive = int((x * y + z).astype(np.float32).view(np.uint32)[0])
    assert naive == bits_of(16777220.0)
    assert ref_fma(a, b, c) == bits_of(16777218.0) == int(fp32.ffma(u32(a), u32(b), u32(c))[0])


def test_fma_cancellation_cases():
    # a*b - round(a*b) must be the exact product's rounding error, a value naive code loses.
    a, b = bits_of(1.0000001), bits_of(1.0000001)
    p = int(fp32.fmul(u32(a), u32(b))[0])
    got = int(fp32.ffma(u32(a), u32(b), u32(p ^ SIGN))[0])
    assert got == ref_fma(a, b, p ^ SIGN) != 0


# --------------------------------------------------------------------------------------------
# Arithmetic: random patterns
# --------------------------------------------------------------------------------------------


def test_fadd_random(rng):
    a = interesting(rng, N_RANDOM)
    b = np.where(rng.random(N_RANDOM) < 0.5, near(rng, a, 26), interesting(rng, N_RANDOM)).astype(np.uint32)
    check(fp32.fadd, ref_add, a, b)


def test_fsub_random(rng):
    a = interesting(rng, N_RANDOM)
    b = np.where(rng.random(N_RANDOM) < 0.5, near(rng, a, 3), interesting(rng, N_RANDOM)).astype(np.uint32)
    check(fp32.fsub, ref_sub, a, b)


def test_fmul_random(rng):
    check(fp32.fmul, ref_mul, interesting(rng, N_RANDOM), interesting(rng, N_RANDOM))


def test_fdiv_random(rng):
    check(fp32.fdiv, ref_div, interesting(rng, N_RANDOM), interesting(rng, N_RANDOM))


def test_fsqrt_random(rng):
    check(fp32.fsqrt, ref_sqrt, interesting(rng, N_RANDOM))


def test_ffma_random(rng):
    n = N_RANDOM
    a, b = interesting(rng, n), interesting(rng, n)
    # c: independent, near a*b's magnitude, or -round(a*b) slightly perturbed (deep cancellation).
    with np.errstate(all="ignore"):
        p = (a.view(np.float32) * b.view(np.float32)).view(np.uint32)
    cancel = (p ^ np.uint32(SIGN)) + rng.integers(-2, 3, n).astype(np.uint32)
    choice = rng.integers(0, 3, n)
    c = np.select([choice == 0, choice == 1], [interesting(rng, n), near(rng, p, 30)], cancel).astype(np.uint32)
    check(fp32.ffma, ref_fma, a, b, c)


def test_ffma_random_double_rounding_prone(rng):
    # Integer products of ~24 bits plus a tiny c: float64 a*b + c often lands exactly on a
    # float32 midpoint, so naive float64-then-cast is wrong on a few percent of these.
    n = 2000
    a = rng.integers(1, 1 << 12, n).astype(np.float32)
    b = rng.integers(1 << 12, 1 << 13, n).astype(np.float32)
    c = (rng.choice([-1.0, 1.0], n) * np.ldexp(1.0, rng.integers(-40, -20, n))).astype(np.float32)
    naive = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)
    a, b, c = a.view(np.uint32), b.view(np.uint32), c.view(np.uint32)
    assert (naive.view(np.uint32) != fp32.ffma(a, b, c)).sum() >= 10
    check(fp32.ffma, ref_fma, a, b, c)


# --------------------------------------------------------------------------------------------
# fmin / fmax
# --------------------------------------------------------------------------------------------


def test_fmin_fmax_rules():
    nan = 0xFFC01234
    a = u32(NZERO, PZERO, nan, ONE, nan, 0x7FC00000, 0x80000001, 0x00000001, NINF, PINF)
    b = u32(PZERO, NZERO, ONE, nan, 0xFFC00000, 0x7FC00000, PZERO, ONE | SIGN, nan, ONE)
    assert fp32.fmin(a, b).tolist() == [NZERO, NZERO, ONE, ONE, QNAN, QNAN, NZERO, ONE | SIGN, NINF, ONE]
    assert fp32.fmax(a, b).tolist() == [PZERO, PZERO, ONE, ONE, QNAN, QNAN, PZERO, PZERO, NINF, PINF]
    # A denormal is seen (and returned) as a zero of its sign.
    assert fp32.fmin(u32(0x00000005), u32(ONE)).tolist() == [PZERO]
    assert fp32.fmax(u32(0x80000005), u32(ONE | SIGN)).tolist() == [NZERO]


def test_fmin_fmax_grid_and_random(rng):
    a, b = pairs(SPECIAL)
    check(fp32.fmin, lambda x, y: ref_minmax(x, y, True), a, b)
    check(fp32.fmax, lambda x, y: ref_minmax(x, y, False), a, b)
    a, b = interesting(rng, N_RANDOM), interesting(rng, N_RANDOM)
    check(fp32.fmin, lambda x, y: ref_minmax(x, y, True), a, b)
    check(fp32.fmax, lambda x, y: ref_minmax(x, y, False), a, b)


# --------------------------------------------------------------------------------------------
# fsetp
# --------------------------------------------------------------------------------------------

# rows: (a, b); columns: expected for EQ NE LT LE GT GE EQU NEU LTU LEU GTU GEU NUM NAN
FSETP_TABLE = [
    ((ONE, 0x40000000), (0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0)),  # 1 < 2
    ((0x40000000, ONE), (0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0)),  # 2 > 1
    ((ONE, ONE), (1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0)),
    ((PZERO, NZERO), (1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0)),  # +0 == -0
    ((0x00000001, NZERO), (1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0)),  # denormal == -0
    ((0x7FC00000, ONE), (0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1)),  # NaN vs 1
    ((ONE, 0xFF800001), (0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1)),
    ((0x7FC00000, 0x7FC00000), (0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1)),  # NaN vs same NaN
    ((NINF, PINF), (0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0)),
    ((PINF, PINF), (1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0)),
]


@pytest.mark.parametrize("cond", range(14))
def test_fsetp_conditions(cond):
    a = u32(*(row[0][0] for row in FSETP_TABLE))
    b = u32(*(row[0][1] for row in FSETP_TABLE))
    want = [row[1][cond] for row in FSETP_TABLE]
    got = fp32.fsetp(cond, a, b)
    assert got.dtype == np.uint32
    assert got.tolist() == want
    assert want == [ref_fsetp(cond, int(x), int(y)) for x, y in zip(a, b)]


def test_fsetp_grid_and_random(rng):
    a, b = pairs(SPECIAL)
    ra, rb = interesting(rng, 1000), interesting(rng, 1000)
    ra[::4] = rb[::4]  # equal operands too
    for cond in range(14):
        check(lambda x, y, c=cond: fp32.fsetp(c, x, y), lambda x, y, c=cond: ref_fsetp(c, x, y), a, b)
        check(lambda x, y, c=cond: fp32.fsetp(c, x, y), lambda x, y, c=cond: ref_fsetp(c, x, y), ra, rb)


def test_fsetp_accepts_cmp_enum_and_rejects_bad_codes():
    from dualflow.isa.opcodes import Cmp

    assert fp32.fsetp(Cmp.LT, u32(ONE), u32(0x40000000)).tolist() == [1]
    assert fp32.fsetp(np.int64(13), u32(0x7FC00000), u32(ONE)).tolist() == [1]
    for bad in (-1, 14, 99, 2.0, "EQ"):
        with pytest.raises(ValueError):
            fp32.fsetp(bad, u32(ONE), u32(ONE))


# --------------------------------------------------------------------------------------------
# Conversions (checked against Python integer arithmetic)
# --------------------------------------------------------------------------------------------

INTS = [0, 1, -1, 2, 16777216, 16777217, 16777218, 16777219, 16777221, -16777217, -16777219,
        33554435, 2**31 - 1, -(2**31), -(2**31) + 1, 2**30 + 64, 2**30 + 65, 2**30 + 192,
        123456789, -987654321]
UINTS = [0, 1, 16777217, 2**31, 2**31 - 1, 2**31 + 1, 2**32 - 1, 2**32 - 128, 2**32 - 129,
         2**32 - 127, 4294967040, 4294967167, 4294967168, 0xDEADBEEF]


def test_i2f():
    bits = [v & 0xFFFFFFFF for v in INTS]
    check(fp32.i2f, ref_i2f, bits)
    got = fp32.i2f(u32(16777217, 16777219, (-16777217) & 0xFFFFFFFF, 2**31 - 1, 2**31))
    assert got.tolist() == [bits_of(16777216.0), bits_of(16777220.0), bits_of(-16777216.0),
                            bits_of(2.0**31), bits_of(-(2.0**31))]


def test_u2f():
    check(fp32.u2f, ref_u2f, UINTS)
    got = fp32.u2f(u32(2**32 - 1, 2**32 - 128, 2**32 - 129, 16777217))
    # 2**32 - 128 is a tie between 2**32 - 256 (odd mantissa) and 2**32 -> 2**32
    assert got.tolist() == [bits_of(2.0**32), bits_of(2.0**32), bits_of(2.0**32 - 256), bits_of(16777216.0)]


def test_int_to_float_random(rng):
    a = rng.integers(0, 2**32, N_RANDOM, dtype=np.uint64)
    shift = rng.integers(0, 32, N_RANDOM).astype(np.uint64)
    a = np.where(rng.random(N_RANDOM) < 0.5, a >> shift, a).astype(np.uint32)  # varied magnitudes
    check(fp32.i2f, ref_i2f, a)
    check(fp32.u2f, ref_u2f, a)


def test_f2i_f2u():
    vals = SPECIAL + [bits_of(v) for v in (
        0.5, -0.5, 0.99999994, -0.99999994, 1.5, -1.5, 2.5, -2.5, 16777216.0, 123456.789,
        2.0**31, -(2.0**31), 2.0**31 - 128, -(2.0**31) - 256, 2.0**32, 2.0**32 - 256, -1.0, -1e30, 1e30)]
    check(fp32.f2i, ref_f2i, vals)
    check(fp32.f2u, ref_f2u, vals)
    a = u32(bits_of(2.0**31), bits_of(-(2.0**31)), bits_of(2.0**31 - 128), bits_of(-(2.0**31) - 256),
            bits_of(-1.5), 0x7FC00000, 0xFFC00000, PINF, NINF, NZERO, 0x80000001, bits_of(2.0**32))
    assert fp32.f2i(a).tolist() == [2**31 - 1, 2**31, 2**31 - 128, 2**31, (-1) & 0xFFFFFFFF,
                                    0, 0, 2**31 - 1, 2**31, 0, 0, 2**31 - 1]
    assert fp32.f2u(a).tolist() == [2**31, 0, 2**31 - 128, 0, 0, 0, 0, 2**32 - 1, 0, 0, 0, 2**32 - 1]


def test_float_to_int_random(rng):
    a = interesting(rng, N_RANDOM)
    # Add many values with exponents around 2**31/2**32 (the saturation boundaries).
    e = rng.integers(150, 162, N_RANDOM).astype(np.uint32)
    m = rng.integers(0, 1 << 23, N_RANDOM).astype(np.uint32)
    s = rng.integers(0, 2, N_RANDOM).astype(np.uint32)
    b = (s << np.uint32(31)) | (e << np.uint32(23)) | m
    check(fp32.f2i, ref_f2i, np.concatenate([a, b]))
    check(fp32.f2u, ref_f2u, np.concatenate([a, b]))


# --------------------------------------------------------------------------------------------
# Shapes, broadcasting, warnings
# --------------------------------------------------------------------------------------------

UNARY = [fp32.ftz, fp32.fsqrt, fp32.i2f, fp32.u2f, fp32.f2i, fp32.f2u]
BINARY = [fp32.fadd, fp32.fsub, fp32.fmul, fp32.fdiv, fp32.fmin, fp32.fmax,
          lambda a, b: fp32.fsetp(3, a, b), lambda a, b: fp32.fsetp(10, a, b)]


def test_shapes_and_broadcasting(rng):
    a = interesting(rng, 96).reshape(3, 32)
    b = interesting(rng, 96).reshape(3, 32)
    c = interesting(rng, 32)  # broadcasts over the 3 rows
    for f in UNARY:
        out = f(a)
        assert out.shape == (3, 32) and out.dtype == np.uint32
        assert out.ravel().tolist() == f(a.ravel()).tolist()
    for f in BINARY:
        out = f(a, b)
        assert out.shape == (3, 32) and out.dtype == np.uint32
        assert out.ravel().tolist() == f(a.ravel(), b.ravel()).tolist()
        row = f(a, c)
        assert row.shape == (3, 32)
        for i in range(3):
            assert row[i].tolist() == f(a[i], c).tolist()
        scalar = f(a, np.uint32(ONE))
        assert scalar.shape == (3, 32) and scalar.dtype == np.uint32
    out = fp32.ffma(a, b, c)
    assert out.shape == (3, 32) and out.dtype == np.uint32
    assert out.ravel().tolist() == fp32.ffma(a.ravel(), b.ravel(), np.tile(c, 3)).tolist()
    check(fp32.ffma, ref_fma, a.ravel(), b.ravel(), np.tile(c, 3))
    # Non-contiguous views work too.
    assert fp32.fadd(a.T, b.T).tolist() == fp32.fadd(a, b).T.tolist()


def test_scalar_inputs_give_0d_arrays():
    for f in UNARY:
        for x in (ONE, np.uint32(ONE), np.array(ONE, dtype=np.uint32)):
            out = f(x)
            assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.uint32
    for f in BINARY + [lambda x, y: fp32.ffma(x, y, y)]:
        out = f(np.uint32(ONE), ONE)
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.uint32
    assert int(fp32.ffma(ONE, ONE, ONE)) == 0x40000000
    assert int(fp32.f2i(bits_of(-2.5))) == (-2) & 0xFFFFFFFF


def test_no_warnings_escape():
    vals = u32(*SPECIAL)
    a, b = (np.array(x, dtype=np.uint32) for x in pairs(SPECIAL))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):  # a leaking FP exception would raise FloatingPointError
            for f in UNARY:
                f(vals)
            for f in BINARY:
                f(a, b)
            fp32.ffma(a, b, b[::-1].copy())
            for cond in range(14):
                fp32.fsetp(cond, a, b)

"""FP32 test vectors: directed corner cases and random operands weighted toward exponent edges.

One set of vectors serves the softfloat cross-check of ``models.fp32`` (tests/models/test_fp32_softfloat.py)
and the RTL benches of the FP32 unit and the SFU (dualflow/testbench/blocks/fp_tb.py), so the model and
the RTL are checked on the same inputs. A set is a ``Vectors`` of equal-length ``uint32`` arrays
``a``, ``b``, ``c`` and the ``mod`` (``fsetp`` condition) of each vector; ``expected`` gives the
golden results through the functional model's own opcode tables (``models.alu``).

Random operands: the exponent field is drawn uniformly half of the time and otherwise from the
edges (0: zero/denormal, 1, 2, around the bias, 253..255), the fraction uniformly or from patterns
that make ties and carries (all zeros, all ones, one bit, a tie bit). For two-operand arithmetic
``b``'s exponent is often near ``a``'s (cancellation, alignment by a few bits), for ``ffma`` ``c``
is often near ``-(a*b)`` (massive cancellation), and for the products and quotients the exponents
are often chosen so the exact result lands near the subnormal range or past the largest float.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualflow.isa.opcodes import SPECS, Cmp, Opcode, UnitClass
from dualflow.models import alu, fp32

__all__ = ["FP_OPS", "SFU_OPS", "Vectors", "directed", "expected", "random_vectors", "vectors"]

#: Opcodes of the FP32 unit and of the SFU, from the instruction-set table.
FP_OPS = tuple(op for op, spec in SPECS.items() if spec.unit is UnitClass.FP)
SFU_OPS = tuple(op for op, spec in SPECS.items() if spec.unit is UnitClass.SFU)

U32 = np.uint32
SIGN = 0x80000000
#: Interesting operands: signed zeros, denormals (smallest, largest), the smallest normals, one,
#: values around one, the largest finite, infinities, NaNs (quiet, signalling, negative, canonical).
SPECIAL_FLOATS = [
    0x00000000, 0x00000001, 0x007FFFFF, 0x00400000, 0x00800000, 0x00800001, 0x00FFFFFF, 0x01000000,
    0x3F800000, 0x3F800001, 0x3F7FFFFF, 0x3FC00000, 0x40000000, 0x3F000000, 0x33800000, 0x34000000,
    0x4B000000, 0x4B7FFFFF, 0x4EFFFFFF, 0x4F000000, 0x4F7FFFFF, 0x4F800000, 0x5F000000,
    0x7F000000, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF,
]
SPECIAL_FLOATS += [x | SIGN for x in SPECIAL_FLOATS]
#: Integer operands of i2f/u2f: zero, one, around 2**24 (the first that rounds), ties, the extremes.
SPECIAL_INTS = [0, 1, 2, 3, 0x00FFFFFF, 0x01000000, 0x01000001, 0x01000002, 0x01000003, 0x01000005,
                0x02000006, 0x7FFFFFBF, 0x7FFFFFC0, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF,
                0xFFFFFFFE, 0xFF000001, 0xFEFFFFFF, 0x12345678, 0x87654321]


@dataclass(frozen=True)
class Vectors:
    """Operand vectors of one opcode: ``a``, ``b``, ``c`` and ``mod`` (uint32, equal length)."""

    op: Opcode
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    mod: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    def __add__(self, other: Vectors) -> Vectors:
        fields = ("a", "b", "c", "mod")
        return Vectors(self.op, *(np.concatenate([getattr(self, f), getattr(other, f)]) for f in fields))


def _make(op: Opcode, a, b=None, c=None, mod=None) -> Vectors:
    a = np.asarray(a, dtype=U32)
    zeros = np.zeros_like(a)
    return Vectors(op, a, zeros if b is None else np.asarray(b, dtype=U32),
                   zeros if c is None else np.asarray(c, dtype=U32), zeros if mod is None else np.asarray(mod, U32))


def _float(sign: int, exp: int, frac: int) -> int:
    return (sign << 31) | (exp << 23) | frac


def directed(op: Opcode) -> Vectors:
    """The corner cases of ``op``: every pair (triple for ffma: a sampled set) of special
    operands, plus hand-made cases for ties, overflow, underflow and saturation."""
    sp = np.array(SPECIAL_FLOATS, dtype=U32)
    pa, pb = (x.ravel() for x in np.meshgrid(sp, sp, indexing="ij"))
    if op in (Opcode.I2F, Opcode.U2F):
        ints = SPECIAL_INTS + [x ^ 0xFFFFFFFF for x in SPECIAL_INTS] + SPECIAL_FLOATS
        return _make(op, ints)
    if op in (Opcode.F2I, Opcode.F2U, Opcode.FSQRT):
        # Around the integer limits (2**31, 2**32) and halves; for sqrt: exact squares, their
        # neighbours, denormals, negatives.
        extra = [_float(s, e, f) for s in (0, 1) for e in (126, 127, 157, 158, 159, 160) for f in (0, 1, 0x7FFFFF)]
        extra += [0x3F000000, 0xBF000000, 0x3F7FFFFF, 0x40800000, 0x41100000, 0x40000001, 0x3E800000]
        return _make(op, SPECIAL_FLOATS + extra)
    if op is Opcode.FSETP:
        conds = np.array([int(c) for c in Cmp], dtype=U32)
        n = len(pa)
        return _make(op, np.tile(pa, len(conds)), np.tile(pb, len(conds)), None, np.repeat(conds, n))
    if op is Opcode.FFMA:
        small = np.array(SPECIAL_FLOATS[::3] + [0x3F800000, 0xBF800000, 0x00800000], dtype=U32)
        ta, tb, tc = (x.ravel() for x in np.meshgrid(small, small, small, indexing="ij"))
        # Exact cancellation to zero (the sign of zero), and products that nearly cancel c.
        prod = fp32.fmul(pa, pb)
        return _make(op, np.concatenate([ta, pa, pa]), np.concatenate([tb, pb, pb]),
                     np.concatenate([tc, prod ^ U32(SIGN), prod ^ U32(SIGN + 1)]))
    # Binary arithmetic and min/max: all pairs, plus ties at the rounding bit: 1 + 2**-24 (tie to
    # even, down), 1 + 3 * 2**-24 (tie, up), results near the largest finite and near 2**-126.
    ties_a = [0x3F800000, 0x3F800001, 0x4B7FFFFF, 0x7F7FFFFF, 0x00800001, 0x00C00000, 0x3F800003]
    ties_b = [0x33800000, 0x33800000, 0x3F000000, 0x73000000, 0x80800000, 0x80800001, 0x33C00000]
    return _make(op, np.concatenate([pa, ties_a]), np.concatenate([pb, ties_b]))


def _random_floats(rng: np.random.Generator, n: int) -> np.ndarray:
    edges = np.array([0, 1, 2, 3, 23, 24, 25, 100, 103, 126, 127, 128, 150, 151, 152, 200, 230, 252, 253, 254, 255])
    exp = np.where(rng.random(n) < 0.5, rng.integers(0, 256, n), rng.choice(edges, n))
    patterns = np.array([0, 0x7FFFFF, 0x400000, 0x000001, 0x400001, 0x3FFFFF, 0x7FFFFE])
    frac = np.where(rng.random(n) < 0.7, rng.integers(0, 1 << 23, n), rng.choice(patterns, n))
    sign = rng.integers(0, 2, n)
    return ((sign << 31) | (exp << 23) | frac).astype(U32)


def _near_exponent(rng: np.random.Generator, x: np.ndarray, target: np.ndarray, p: float) -> np.ndarray:
    """``x`` with its exponent field replaced, with probability ``p``, by ``target`` plus -3..3."""
    n = len(x)
    exp = np.clip(target.astype(np.int64) + rng.integers(-3, 4, n), 0, 255).astype(U32)
    moved = (x & U32(0x807FFFFF)) | (exp << U32(23))
    return np.where(rng.random(n) < p, moved, x).astype(U32)


def random_vectors(op: Opcode, count: int, seed: int) -> Vectors:
    """``count`` random vectors of ``op`` (deterministic for ``seed``)."""
    rng = np.random.default_rng([seed, int(op)])
    a, b, c = (_random_floats(rng, count) for _ in range(3))
    ea = (a >> U32(23)) & U32(0xFF)
    if op in (Opcode.I2F, Opcode.U2F):
        # Integers of every magnitude: a random bit length, then random bits below it.
        bits = rng.integers(0, 33, count)
        a = (rng.integers(0, 1 << 32, count, dtype=np.uint64) & ((np.uint64(1) << bits.astype(np.uint64)) - 1))
        a = np.where(rng.random(count) < 0.3, (-a.astype(np.int64)) & 0xFFFFFFFF, a).astype(U32)
        return _make(op, a)
    if op in (Opcode.FADD, Opcode.FSUB, Opcode.FMIN, Opcode.FMAX, Opcode.FSETP):
        b = _near_exponent(rng, b, ea, 0.6)
    elif op in (Opcode.FMUL, Opcode.FDIV, Opcode.FFMA):
        # Exponent sums (differences for fdiv) near the underflow and overflow thresholds.
        want = rng.choice(np.array([127 - 126, 127 + 127, 127 - 149, 127 - 100]), count).astype(np.int64)
        eb = want - ea.astype(np.int64) + 127 if op is not Opcode.FDIV else ea.astype(np.int64) - want + 127
        b = _near_exponent(rng, b, np.clip(eb, 0, 255).astype(U32), 0.35)
        if op is Opcode.FDIV:
            # Same significands give exact quotients; near-equal ones give quotients near 1.
            same = rng.random(count) < 0.15
            b = np.where(same, (b & U32(0xFF800000)) | (a & U32(0x7FFFFF)), b).astype(U32)
    if op is Opcode.FFMA:
        prod = fp32.fmul(a, b)
        near = (prod ^ U32(SIGN)) + rng.integers(-2, 3, count).astype(U32)
        c = np.where(rng.random(count) < 0.3, near, _near_exponent(rng, c, (prod >> U32(23)) & U32(0xFF), 0.5))
        c = c.astype(U32)
    mod = rng.integers(0, len(Cmp), count).astype(U32) if op is Opcode.FSETP else None
    return _make(op, a, b, c, mod)


def vectors(op: Opcode, count: int, seed: int) -> Vectors:
    """The directed vectors of ``op`` followed by ``count`` random ones."""
    return directed(op) + random_vectors(op, count, seed)


def expected(v: Vectors) -> np.ndarray:
    """The golden results of ``v`` (the functional model's value semantics)."""
    op = v.op
    if op is Opcode.FSETP:
        out = np.zeros(len(v), dtype=U32)
        for cond in np.unique(v.mod):
            sel = v.mod == cond
            out[sel] = alu.compare(op, int(cond))(v.a[sel], v.b[sel])
        return out
    if op in alu.BINARY:
        return alu.BINARY[op](v.a, v.b)
    if op in alu.UNARY:
        return alu.UNARY[op](v.a)
    return alu.TERNARY[op](v.a, v.b, v.c)

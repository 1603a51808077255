"""dualflow/models/fp32.py against Berkeley SoftFloat 3 (``softfloatpy``), an independent IEEE-754
implementation, on the vectors the RTL benches use (dualflow/testbench/fp_vectors.py): directed corners
and 10^5 random operand sets per FP32 and SFU opcode.

SoftFloat computes IEEE binary32 with gradual underflow; the ISA's differences are applied around
it, never inside: inputs flushed (a denormal becomes a zero of its sign), a subnormal result
flushed to a zero of its sign, every NaN result made the canonical NaN, and the conversion rules
(``f2i``/``f2u`` of a NaN is 0). The compares and min/max are built on SoftFloat's quiet compares.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import softfloatpy as sf

from dualflow.isa.opcodes import Cmp, Opcode
from dualflow.models import fp32
from dualflow.testbench.fp_vectors import FP_OPS, SFU_OPS, Vectors, directed, expected, random_vectors, vectors

RANDOM_PER_OP = 100_000
U32 = np.uint32
QNAN = 0x7FFFFFFF


def _floats(bits: np.ndarray) -> list[sf.Float32]:
    """SoftFloat values of ``bits``, denormals flushed to a zero of their sign (the ISA's DAZ)."""
    flushed = np.where((bits & U32(0x7F800000)) == 0, bits & U32(0x80000000), bits)
    raw = flushed.astype(">u4").tobytes()
    return [sf.Float32.from_bytes(raw[i:i + 4]) for i in range(0, len(raw), 4)]


def _result_bits(values: list[sf.Float32]) -> np.ndarray:
    """Bit patterns of SoftFloat results with the ISA's output rules: subnormal -> signed zero,
    NaN -> canonical NaN."""
    bits = np.frombuffer(b"".join(v.to_bytes() for v in values), dtype=">u4").astype(U32)
    mag = bits & U32(0x7FFFFFFF)
    bits = np.where(mag < 0x00800000, bits & U32(0x80000000), bits)
    return np.where(mag > 0x7F800000, U32(QNAN), bits).astype(U32)


def _is_nan(x: sf.Float32) -> bool:
    return sf.f32_is_nan(x)


def _less(x: sf.Float32, y: sf.Float32) -> bool:
    """x < y with -0 < +0 (SoftFloat's quiet compare has -0 == +0)."""
    if sf.f32_eq(x, y):
        return x.to_bytes()[0] >= 0x80 and y.to_bytes()[0] < 0x80
    return sf.f32_lt_quiet(x, y)


def _min_max(want_max: bool) -> Callable:
    def one(x: sf.Float32, y: sf.Float32) -> sf.Float32:
        if _is_nan(x) and _is_nan(y):
            return sf.Float32.from_bytes(QNAN.to_bytes(4, "big"))
        if _is_nan(x):
            return y
        if _is_nan(y):
            return x
        return (y if _less(x, y) else x) if want_max else (x if _less(x, y) or not _less(y, x) else y)
    return one


def _fsetp(cond: int, x: sf.Float32, y: sf.Float32) -> int:
    unordered = _is_nan(x) or _is_nan(y)
    if cond == Cmp.NUM:
        return int(not unordered)
    if cond == Cmp.NAN:
        return int(unordered)
    eq, lt, gt = sf.f32_eq(x, y), sf.f32_lt_quiet(x, y), sf.f32_lt_quiet(y, x)
    rel = (eq, not eq, lt, lt or eq, gt, gt or eq)[cond % 6]
    return int(rel or unordered) if cond >= 6 else int(rel and not unordered)


def _to_int(x: sf.Float32, signed: bool) -> int:
    if _is_nan(x):
        return 0  # the ISA's rule; SoftFloat gives its own NaN integer
    if signed:
        return sf.f32_to_i32(x, sf.RoundingMode.MIN_MAG, False).to_int() & 0xFFFFFFFF
    return sf.f32_to_ui32(x, sf.RoundingMode.MIN_MAG, False).to_int()  # this port: negative -> 0


def softfloat_reference(v: Vectors) -> np.ndarray:
    """The ISA's result of every vector of ``v``, computed by SoftFloat (rounding: nearest even)."""
    sf.set_rounding_mode(sf.RoundingMode.NEAR_EVEN)
    op = v.op
    if op in (Opcode.I2F, Opcode.U2F):
        convert = sf.i32_to_f32 if op is Opcode.I2F else sf.ui32_to_f32
        ints = v.a.view(np.int32) if op is Opcode.I2F else v.a
        make = sf.Int32.from_int if op is Opcode.I2F else sf.UInt32.from_int
        return _result_bits([convert(make(int(x))) for x in ints])
    a = _floats(v.a)
    if op in (Opcode.F2I, Opcode.F2U):
        return np.array([_to_int(x, op is Opcode.F2I) for x in a], dtype=U32)
    if op is Opcode.FSQRT:
        return _result_bits([sf.f32_sqrt(x) for x in a])
    b = _floats(v.b)
    if op is Opcode.FSETP:
        return np.array([_fsetp(int(m), x, y) for m, x, y in zip(v.mod, a, b)], dtype=U32)
    if op is Opcode.FFMA:
        return _result_bits([sf.f32_mul_add(x, y, z) for x, y, z in zip(a, b, _floats(v.c))])
    binary = {Opcode.FADD: sf.f32_add, Opcode.FSUB: sf.f32_sub, Opcode.FMUL: sf.f32_mul, Opcode.FDIV: sf.f32_div,
              Opcode.FMIN: _min_max(False), Opcode.FMAX: _min_max(True)}[op]
    return _result_bits([binary(x, y) for x, y in zip(a, b)])


def _report(v: Vectors, model: np.ndarray, ref: np.ndarray) -> str:
    bad = np.flatnonzero(model != ref)
    lines = [f"{v.op.name.lower()}: {len(bad)} of {len(v)} differ"]
    for i in bad[:10]:
        lines.append(f"  a={v.a[i]:#010x} b={v.b[i]:#010x} c={v.c[i]:#010x} mod={v.mod[i]}: "
                     f"[MODEL] {model[i]:#010x} [SOFTFLOAT] {ref[i]:#010x}")
    return "\n".join(lines)


@pytest.mark.parametrize("op", FP_OPS + SFU_OPS, ids=lambda op: op.name.lower())
def test_model_matches_softfloat(op: Opcode) -> None:
    v = vectors(op, RANDOM_PER_OP, seed=13)
    model, ref = expected(v), softfloat_reference(v)
    assert np.array_equal(model, ref), _report(v, model, ref)


def test_directed_vectors_cover_the_corners() -> None:
    """The directed vectors reach what they are there for (so the cross-check is not vacuous)."""
    def hits(op, predicate) -> bool:
        v = directed(op)
        return bool(np.any(predicate(v, expected(v))))

    subnormal_exact = lambda v, r: (fp32.fmul(v.a, v.b) == 0) & ((v.a & 0x7F800000) != 0) & ((v.b & 0x7F800000) != 0)
    assert hits(Opcode.FMUL, subnormal_exact), "fmul: no product that underflows"
    assert hits(Opcode.FADD, lambda v, r: r == 0x7F800000), "fadd: no overflow to inf"
    assert hits(Opcode.FADD, lambda v, r: (r == 0) & (v.a != 0)), "fadd: no exact cancellation"
    assert hits(Opcode.FFMA, lambda v, r: r == 0x80000000), "ffma: no -0 result"
    assert hits(Opcode.F2I, lambda v, r: r == 0x7FFFFFFF), "f2i: no saturation"
    assert hits(Opcode.F2U, lambda v, r: (r == 0) & ((v.a & 0x7FFFFFFF) > 0x7F800000)), "f2u: no NaN"
    fsetp = directed(Opcode.FSETP)
    nan_conds = {int(m) for m, a in zip(fsetp.mod, fsetp.a) if (a & 0x7FFFFFFF) > 0x7F800000}
    assert nan_conds == {int(c) for c in Cmp}, "fsetp: not every condition meets a NaN"


def test_reference_catches_a_wrong_model() -> None:
    """Expect-fail: an ffma model that rounds twice (multiply, then add) differs from SoftFloat."""
    v = random_vectors(Opcode.FFMA, 5000, seed=5)
    twice = fp32.fadd(fp32.fmul(v.a, v.b), v.c)
    assert not np.array_equal(twice, softfloat_reference(v))

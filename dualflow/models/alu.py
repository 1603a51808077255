"""Value semantics of every computing opcode, vectorized over lanes (and warps).

Operands and results are ``uint32`` arrays of raw bit patterns. Integer ops wrap modulo 2^32;
shift amounts are unsigned, and amounts of 32 or more give 0 (``ishl``, ``ishr``) or the sign
fill (``isra``). Compares produce 1 or 0. FP32 semantics are in ``fp32``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dualflow.isa import Cmp, Opcode

from . import fp32

U32 = np.uint32


def _signed(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32)


def _shift_amount(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    big = b >= 32
    return big, (b & U32(31))


def _ishl(a, b):
    big, s = _shift_amount(b)
    return np.where(big, U32(0), a << s)


def _ishr(a, b):
    big, s = _shift_amount(b)
    return np.where(big, U32(0), a >> s)


def _isra(a, b):
    s = np.minimum(b, U32(31))
    return (_signed(a) >> s.astype(np.int32)).view(U32)


_INT_CMP: dict[Cmp, Callable] = {
    Cmp.EQ: np.equal, Cmp.NE: np.not_equal, Cmp.LT: np.less,
    Cmp.LE: np.less_equal, Cmp.GT: np.greater, Cmp.GE: np.greater_equal,
}


def int_compare(cond: int, a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    if signed:
        a, b = _signed(a), _signed(b)
    return _INT_CMP[Cmp(cond)](a, b).astype(U32)


#: Two-source operations: opcode -> f(a, b).
BINARY: dict[Opcode, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    Opcode.IADD: np.add,
    Opcode.ISUB: np.subtract,
    Opcode.IMUL: np.multiply,
    Opcode.IAND: np.bitwise_and,
    Opcode.IOR: np.bitwise_or,
    Opcode.IXOR: np.bitwise_xor,
    Opcode.ISHL: _ishl,
    Opcode.ISHR: _ishr,
    Opcode.ISRA: _isra,
    Opcode.IMIN: lambda a, b: np.minimum(_signed(a), _signed(b)).view(U32),
    Opcode.IMAX: lambda a, b: np.maximum(_signed(a), _signed(b)).view(U32),
    Opcode.UMIN: np.minimum,
    Opcode.UMAX: np.maximum,
    Opcode.FADD: fp32.fadd,
    Opcode.FSUB: fp32.fsub,
    Opcode.FMUL: fp32.fmul,
    Opcode.FMIN: fp32.fmin,
    Opcode.FMAX: fp32.fmax,
    Opcode.FDIV: fp32.fdiv,
}

#: One-source operations: opcode -> f(a).
UNARY: dict[Opcode, Callable[[np.ndarray], np.ndarray]] = {
    Opcode.INOT: np.invert,
    Opcode.I2F: fp32.i2f,
    Opcode.U2F: fp32.u2f,
    Opcode.F2I: fp32.f2i,
    Opcode.F2U: fp32.f2u,
    Opcode.FSQRT: fp32.fsqrt,
}

#: Three-source operations: opcode -> f(a, b, c).
TERNARY: dict[Opcode, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    Opcode.IMAD: lambda a, b, c: a * b + c,
    Opcode.FFMA: fp32.ffma,
    Opcode.SELP: lambda a, b, c: np.where(c != 0, a, b),
}


def compare(op: Opcode, cond: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The two-source function of a compare opcode with its condition bound."""
    if op is Opcode.ISETP:
        return lambda a, b: int_compare(cond, a, b, signed=True)
    if op is Opcode.USETP:
        return lambda a, b: int_compare(cond, a, b, signed=False)
    if op is Opcode.FSETP:
        return lambda a, b: fp32.fsetp(cond, a, b)
    raise KeyError(op)

"""The CUDA front end: kernels compiled from CUDA C give numpy's results in both operand forms,
and what it cannot compile is refused with the file and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dualflow.frontend import CompileOptions, FrontendError, compile_file, compile_ptx
from dualflow.isa.convert import convert_module
from dualflow.models import Device

KERNELS = Path(__file__).parent / "kernels"
pytestmark = pytest.mark.skipif(
    not any(Path(d, "clang-14").exists() or Path(d, "clang").exists() for d in ("/usr/bin", "/usr/local/bin")),
    reason="clang is not installed (make clang)")


def _c32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def run_both_forms(path: str, kernel: str, n: int, arrays, out_words: int, block: int = 64,
                   options: CompileOptions | None = None) -> np.ndarray:
    """Run ``kernel`` over n threads in REG and DFLOW form; the forms must agree; returns the words."""
    compiled = compile_file(KERNELS / path, options or CompileOptions())
    results = []
    for module in (compiled.module, convert_module(compiled.module)[0]):
        dev = Device()
        ptrs = [dev.upload(a) for a in arrays]
        out = dev.alloc(4 * out_words)
        dev.launch(module[kernel], grid=-(-n // block), block=block, params=[*ptrs, out, n])
        results.append(dev.copy_out(out, out_words, np.uint32))
    np.testing.assert_array_equal(results[0], results[1])
    return results[0]


def _shapes_reference(x: int) -> int:
    def cdiv(a, b):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q

    acc = _c32(x * 3) if x & 1 else cdiv(x, 2)
    done = False
    for k in range(x & 15):
        if k == 11 and x & 64:
            break
        if k & 1:
            continue
        acc = _c32(acc + k * x)
        for j in range(k & 3):
            acc ^= j + k
            if acc < -1000000:
                done = True
                break
        if done:
            break
    if not done:
        while x > 1 and acc != 7:
            x = _c32(3 * x + 1) if x & 1 else x >> 1
            acc += 1
            if acc > 100000:
                break
    return acc


@pytest.mark.parametrize("max_registers", [255, 8])
def test_control_flow_shapes_reconverge_and_compute_as_c(max_registers):
    """if/else, lane-dependent loops, break, continue, a goto out of two loops, early return;
    at 8 registers the same kernel spills to local memory and still agrees."""
    rng = np.random.default_rng(3)
    n = 300
    x = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    x[:12] = [0, 1, 2, 3, -1, -2, 7, 8, 15, 2**31 - 1, -2**31, 1000]
    got = run_both_forms("control.cu", "shapes", n, [x], n,
                         options=CompileOptions(max_registers=max_registers)).view(np.int32)
    want = np.array([_shapes_reference(int(v)) for v in x], np.int32)
    np.testing.assert_array_equal(got, want)
    report = compile_file(KERNELS / "control.cu", CompileOptions(max_registers=max_registers)).reports["shapes"]
    assert report.registers <= max_registers
    assert (report.spilled_values > 0) == (max_registers == 8)


def test_integer_division_remainder_and_high_products_are_exact():
    rng = np.random.default_rng(5)
    n = 400
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b[::3] = rng.integers(1, 1000, b[::3].size)
    b[::7] = rng.integers(2**31, 2**32, b[::7].size, dtype=np.uint64)
    a[:10] = [0, 1, 2**32 - 1, 2**31, 2**31 - 1, 0xFFFFFFFE, 12345, 7, 6, 2**32 - 1]
    b[:10] = [1, 1, 1, 0x80000001, 3, 0xFFFFFFFF, 1, 7, 7, 0x80000001]
    b[(a.view(np.int32) == -2**31) & (b.view(np.int32) == -1)] = 3  # INT_MIN / -1 is undefined in C
    got = run_both_forms("arith.cu", "intdiv", n, [a, b], 8 * n).reshape(n, 8)
    A, B = a.astype(np.int64), b.astype(np.int64)
    SA, SB = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)

    def tdiv(p, q):
        r = np.abs(p) // np.abs(q)
        return np.where((p < 0) != (q < 0), -r, r)

    want = np.stack([A // B, A % B, tdiv(SA, SB), SA - tdiv(SA, SB) * SB, A // 7, tdiv(SA, np.full_like(SA, 10)),
                     (SA * SB) >> 32, (A * B) >> 32], axis=1) & 0xFFFFFFFF
    np.testing.assert_array_equal(got, want.astype(np.uint32))


def test_floor_ceil_trunc_rint_match_numpy_bit_for_bit():
    rng = np.random.default_rng(7)
    n = 200
    f = (rng.standard_normal(n) * 10).astype(np.float32)
    f[:20] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 0.0, 1e30, -1e30, np.inf, 8388609.0,
                       -0.3, 0.3, 2.4999998, -2.4999998, 3.5, 4.5, -3.5, 1e-40], np.float32)
    got = run_both_forms("arith.cu", "rounding", n, [f], 4 * n).view(np.float32).reshape(n, 4)
    flushed = np.where(np.abs(f) < np.float32(1.1754944e-38), np.copysign(np.float32(0), f), f)
    want = np.stack([np.floor(flushed), np.ceil(flushed), np.trunc(flushed), np.rint(flushed)], axis=1)
    np.testing.assert_array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))


def test_byte_and_short_arrays_in_local_memory():
    rng = np.random.default_rng(9)
    n = 200
    v = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    got = run_both_forms("arith.cu", "bytes", n, [v], n).view(np.int32)

    def ref(x):
        buf = [((x >> (k & 7)) + k) & 0xFF for k in range(16)]
        half = [(x * (k + 1) - 40000 * k) & 0xFFFF for k in range(5)]
        half = [h - 0x10000 if h >= 0x8000 else h for h in half]
        s = 0
        for k in range(16):
            s = (s * 3 + buf[(k * 5 + x) & 15]) & 0xFFFFFFFF
        for k in range(5):
            s = (s + half[((x & 0xFFFFFFFF) + k) % 5]) & 0xFFFFFFFF
        c = x & 0xFF
        return _c32(s + (c - 256 if c >= 128 else c))

    np.testing.assert_array_equal(got, np.array([ref(int(t)) for t in v], np.int32))


def test_report_counts_and_parameter_names_come_from_the_source():
    compiled = compile_file(KERNELS / "control.cu")
    kernel = compiled.module["shapes"]
    assert kernel.params == ["in", "out", "n"]
    r = compiled.reports["shapes"]
    assert r.reg_instructions == len(kernel.code)
    assert r.registers == kernel.regs
    assert r.ptx_instructions > 50
    assert "; ptx:" in compiled.assembly


@pytest.mark.parametrize("source, message", [
    ("bad.cu", "bad.ptx:"),  # a double
])
def test_unsupported_constructs_name_the_ptx_line(source, message):
    with pytest.raises(FrontendError, match=message):
        compile_file(KERNELS / source)


@pytest.mark.parametrize("ptx_body, message", [
    ("atom.global.add.u32 %r1, [%r2], 1;", r"x\.ptx:\d+: atom\.global\.add\.u32: PTX instruction not supported"),
    ("mul.wide.s32 %rd1, %r1, 4;", "64-bit value"),
    ("st.global.u8 [%r2], %rs1;", "8-bit store to global memory"),
    ("call.uni foo, (%r1);", "no call instruction"),
])
def test_unsupported_instructions_are_refused_with_the_line(ptx_body, message):
    ptx = (".version 6.0\n.target sm_70\n.address_size 32\n.visible .entry k(\n.param .u32 k_param_0\n)\n{\n"
           "ld.param.u32 %r2, [k_param_0];\n" + ptx_body + "\nret;\n}\n")
    with pytest.raises(FrontendError, match=message):
        compile_ptx(ptx, "x.ptx")


def test_clang_errors_name_the_cuda_file_and_line(tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text('#include "dualflow_cuda.h"\nextern "C" __global__ void f(int *o) { o[0] = nope; }\n')
    with pytest.raises(FrontendError, match=r"broken\.cu:2:\d+: error: use of undeclared identifier 'nope'"):
        compile_file(src)


def test_a_64_bit_build_is_refused():
    ptx = ".version 6.0\n.target sm_70\n.address_size 64\n"
    with pytest.raises(FrontendError, match="-m32"):
        compile_ptx(ptx, "wide.ptx")


def _globals_reference(i: int) -> int:
    a = 5 ^ i
    b = [(v + (a >> k)) & 0xFF for k, v in enumerate([1, 2, 3])]
    c = (-7 * a) & 0xFFFF
    c = c - 0x10000 if c >= 0x8000 else c
    arr = [1, 2, 3, 4, 5, 6, 7, 8]
    arr[(i & 3) * 2 + 1] += c
    s = (a + b[0] + b[1] * 7 + b[2] * 13 + c) & 0xFFFFFFFF
    for k in range(8):
        s = (s * 31 + arr[k]) & 0xFFFFFFFF
    return s


def test_private_globals_give_each_thread_its_own_initialized_copy():
    compiled = compile_file(KERNELS / "globals.cu", CompileOptions(private_globals=True))
    for module in (compiled.module, convert_module(compiled.module)[0]):
        dev = Device()
        out = dev.alloc(4 * 100)
        dev.launch(module["prog"], grid=2, block=64, params=[out, 100])
        got = dev.copy_out(out, 100, np.uint32)
        np.testing.assert_array_equal(got, np.array([_globals_reference(i) for i in range(100)], np.uint32))


def test_module_variables_are_refused_without_private_globals():
    with pytest.raises(FrontendError, match=r"globals\.ptx:\d+: module-scope variable g_a"):
        compile_file(KERNELS / "globals.cu")


def test_warp_votes():
    rng = np.random.default_rng(11)
    n = 128  # four full warps
    x = rng.integers(0, 8, n).astype(np.int32)
    x[32:64] = 7  # a warp where every lane is above 5
    got = run_both_forms("votes.cu", "votes", n, [x], n)
    warps = x.reshape(4, 32)
    ballot = (((warps & 1) << np.arange(32)).sum(axis=1) & 0xFF).astype(np.uint32)
    want = ((warps > 5).any(axis=1) + 2 * (warps > 5).all(axis=1) + 4 * ballot).astype(np.uint32)
    np.testing.assert_array_equal(got, np.repeat(want, 32))


def test_narrow_arithmetic_as_clang_writes_it_for_csmith():
    """Csmith seeds 42, 98 and 120: an unsigned 16-bit compare with an immediate above 0x7fff,
    16-bit division by a constant (mul.hi.s16), a bit-field extract."""
    seeds = np.array([0, 0xFE01 ^ 0x87A6, 0xFE01 ^ 0x87A7, 0xFE01 ^ 1, 0xFFFF8001, 12345, 0xDEADBEEF, 77],
                     dtype=np.uint32)
    compiled = compile_file(KERNELS / "narrow.cu", CompileOptions(private_globals=True))
    for module in (compiled.module, convert_module(compiled.module)[0]):
        dev = Device()
        s = dev.upload(seeds)
        out = dev.alloc(4 * 5 * len(seeds))
        dev.launch(module["narrow"], grid=1, block=len(seeds), params=[s, out])
        got = dev.copy_out(out, 5 * len(seeds), np.uint32).reshape(len(seeds), 5)
        for t, v in enumerate(int(x) for x in seeds):
            g = (0xFE01 ^ v) & 0xFFFF
            x = v & 0xFFFF
            x = x - 0x10000 if x >= 0x8000 else x
            q = abs(x) // 7 * (1 if x >= 0 else -1)
            a, b = (v >> 3) & 0xFFFF, (v >> 11) & 0xFFFF
            pair = [1, 2, -1, -1] if v & 1 else [1, 2, 3, 4]
            want = [int(g > 0x87A6), q & 0xFFFF, (g * (b ^ a)) & 0xFFFFFFFF, (v >> 5) & 0x3FF,
                    (pair[0] + 3 * pair[1] + 5 * pair[2] + 7 * pair[3]) & 0xFFFFFFFF]
            assert list(got[t]) == want, (t, hex(v))


def test_64_bit_constants_stores_and_16_bit_widening_products():
    """Csmith seeds 228, 62 and 194: clang merges two 32-bit constant stores into one 64-bit store
    of a 64-bit constant, and multiplies 16-bit values into 32 bits with mul.wide."""
    ptx = """.version 6.0
.target sm_70
.address_size 32
.visible .entry k(.param .u32 k_param_0)
{
    ld.param.u32 %r1, [k_param_0];
    mov.u32 %r2, %tid.x;
    shl.b32 %r3, %r2, 4;
    add.s32 %r4, %r1, %r3;
    mov.u64 %rd1, -1;
    st.global.u64 [%r4], %rd1;
    mov.u64 %rd2, 4294967298;
    st.global.u64 [%r4+8], %rd2;
    ld.global.u64 %rd3, [%r4+8];
    cvt.u32.u64 %r9, %rd3;
    cvt.u16.u32 %rs1, %r2;
    mov.u16 %rs2, 40000;
    mul.wide.u16 %r5, %rs1, %rs2;
    add.s32 %r6, %r5, %r9;
    mov.u16 %rs3, -3;
    mul.wide.s16 %r7, %rs1, %rs3;
    add.s32 %r8, %r6, %r7;
    st.global.u32 [%r4+4], %r8;
    ret;
}
"""
    module = compile_ptx(ptx, "wide.ptx").module
    dev = Device()
    out = dev.alloc(4 * 4 * 8)
    dev.launch(module["k"], grid=1, block=8, params=[out])
    got = dev.copy_out(out, 4 * 8, np.uint32).reshape(8, 4)
    for t in range(8):
        assert list(got[t]) == [0xFFFFFFFF, (t * 40000 + 2 - 3 * t) & 0xFFFFFFFF, 2, 1]


def test_predicate_constants_are_0_or_1():
    """Csmith seed 191 (--float): clang writes ``mov.pred %p, -1`` for true, and a predicate is
    0 or 1 on our machine (``not.pred`` is ``ixor 1``), so -1 must become 1: not(true) was -2,
    still true."""
    ptx = """.version 6.0
.target sm_70
.address_size 32
.visible .entry k(.param .u32 k_param_0)
{
    ld.param.u32 %r1, [k_param_0];
    mov.u32 %r2, %tid.x;
    shl.b32 %r3, %r2, 3;
    add.s32 %r4, %r1, %r3;
    mov.pred %p1, -1;
    mov.pred %p2, 0;
    not.pred %p3, %p1;
    not.pred %p4, %p2;
    selp.u32 %r5, 7, 9, %p3;
    selp.u32 %r6, 7, 9, %p4;
    st.global.u32 [%r4], %r5;
    st.global.u32 [%r4+4], %r6;
    ret;
}
"""
    module = compile_ptx(ptx, "pred.ptx").module
    dev = Device()
    out = dev.alloc(8 * 4)
    dev.launch(module["k"], grid=1, block=4, params=[out])
    assert dev.copy_out(out, 8, np.uint32).reshape(4, 2).tolist() == [[9, 7]] * 4

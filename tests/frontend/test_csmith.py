"""Csmith differential testing of the CUDA front end (dualflow/frontend/csmith/).

The pieces are checked on their own first: our CRC is Csmith's CRC-32, our safe_math.h follows
Csmith's convention and is free of undefined behaviour for every edge operand (UBSan), the
transform keeps the program (seed 0 is the program as generated) and the host driver reports a
run that does not finish or does something undefined. Then a handful of seeds (integer and
--float) go end to end on every machine, the defects the campaigns found are kept as regression
tests (each with its Csmith seed, some with a minimal kernel), and a slow campaign runs 1000
programs.
"""

from __future__ import annotations

import shutil
import subprocess
import zlib
from pathlib import Path

import benchmark_scripts
import numpy as np
import pytest

from dualflow.frontend import CompileOptions, compile_file
from dualflow.frontend.csmith import (
    CsmithOptions,
    Settings,
    Target,
    check_program,
    run_campaign,
    run_csmith,
    thread_seeds,
    transform,
)
from dualflow.frontend.csmith.explain import differing_globals, hashed_names
from dualflow.frontend.csmith.host import build_host, run_host
from dualflow.frontend.csmith.transform import INCLUDE_DIR
from dualflow.isa import Form

pytestmark = pytest.mark.skipif(shutil.which("csmith") is None or shutil.which("g++") is None
                                or shutil.which("clang-14") is None,
                                reason="csmith, g++ or clang-14 is not installed")

campaign = benchmark_scripts.load("csmith_campaign")

#: The Csmith options the seeds below were found with (CsmithOptions' defaults when they were):
#: pinned here so that a change of the defaults does not silently change the programs.
OPTIONS = CsmithOptions(max_funcs=3, max_block_depth=3, max_block_size=3, max_expr_complexity=5,
                        max_array_dim=2, max_array_len_per_dim=4)
#: Seeds that match on every machine with the front end as it is (a handful, by count).
GOOD_SEEDS = (1, 2, 3, 5, 6, 40)


def _settings(**kw) -> Settings:
    return Settings(csmith=OPTIONS, **kw)


def _host_program(tmp_path: Path, main: str) -> Path:
    """A small host program with our csmith.h, for checking the header itself."""
    src = tmp_path / "t.cpp"
    src.write_text('#include <stdio.h>\n#define CSMITH_GLOBAL\n#include "csmith.h"\n' + main)
    exe = tmp_path / "t"
    subprocess.run(["g++", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-I", str(INCLUDE_DIR),
                    str(src), "-o", str(exe)], check=True, capture_output=True)
    return exe


# --- the runtime header -------------------------------------------------------------------------

def test_checksum_is_csmith_crc32(tmp_path):
    """transparent_crc over 32-bit values is zlib's CRC-32 of their little-endian bytes, what
    Csmith's table-driven crc32_8bytes computes under NO_LONGLONG."""
    values = [0, 1, 0xFFFFFFFF, 0x12345678, 0x80000000, 0xDEADBEEF, 7]
    exe = _host_program(tmp_path, "int main(void) {\n" +
                        "".join(f"    transparent_crc({v}u, \"v\", 0);\n" for v in values) +
                        '    printf("%08x\\n", (unsigned)(crc32_context ^ 0xFFFFFFFFu));\n    return 0;\n}\n')
    got = int(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout, 16)
    assert got == zlib.crc32(b"".join(v.to_bytes(4, "little") for v in values))


_TYPES = {"int8_t": (8, True), "int16_t": (16, True), "int32_t": (32, True),
          "uint8_t": (8, False), "uint16_t": (16, False), "uint32_t": (32, False)}


def _wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _expected(op: str, t: str, a: int, b: int) -> int:
    """Csmith's convention, from the C standard: the exact result, or the first operand where C
    leaves the operation undefined or the result outside the type (signed), else wrapped."""
    bits, signed = _TYPES[t]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if op == "unary_minus":
        return a if signed and a == lo else _wrap(-a, bits, signed)
    if op in ("add", "sub", "mul"):
        r = {"add": a + b, "sub": a - b, "mul": a * b}[op]
        return a if signed and not lo <= r <= hi else _wrap(r, bits, signed)
    if op in ("div", "mod"):
        if b == 0 or (signed and a == lo and b == -1):
            return a
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward zero
        return _wrap(q if op == "div" else a - q * b, bits, signed)
    if op in ("lshift", "rshift"):  # b: the shift count as the callee sees it (int or unsigned)
        if b < 0 or b >= 32 or (signed and a < 0):
            return a
        if op == "rshift":
            return a >> b
        return a if a > hi >> b else a << b
    raise AssertionError(op)


def test_safe_math_follows_csmith_and_is_free_of_undefined_behaviour(tmp_path):
    """Every safe_* function of every type on edge operands (the type's limits, -1, 0, 1, shift
    counts around 0, the width and 32), built with UBSan that aborts on any undefined operation,
    gives what the C standard and Csmith's convention say."""
    cases = []
    for t, (bits, signed) in _TYPES.items():
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        values = sorted({lo, lo + 1, -1 if signed else 2, 0, 1, 3, 7, hi - 1, hi, -7 if signed else hi // 3})
        s = "s" if signed else "u"
        cases += [(f"safe_unary_minus_func_{t}_{s}", "unary_minus", t, a, 0) for a in values]
        for op in ("add", "sub", "mul", "div", "mod"):
            cases += [(f"safe_{op}_func_{t}_{s}_{s}", op, t, a, b) for a in values for b in values]
        for op in ("lshift", "rshift"):
            for count_sign in ("s", "u"):
                counts = (-1, 0, 1, bits - 1, bits, 31, 32, 33) if count_sign == "s" else (0, 1, bits - 1, bits, 31, 32)
                cases += [(f"safe_{op}_func_{t}_{s}_{count_sign}", op, t, a, c) for a in values for c in counts]
    lines = []
    for fn, op, t, a, b in cases:
        call = f"{fn}(({t})({a}))" if op == "unary_minus" else f"{fn}(({t})({a}), {b})"
        lines.append(f'    printf("%lld\\n", (long long){call});')
    exe = _host_program(tmp_path, "int main(void) {\n" + "\n".join(lines) + "\n    return 0;\n}\n")
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert len(got) == len(cases)
    wrong = [(fn, a, b, int(g), _expected(op, t, a, b)) for (fn, op, t, a, b), g in zip(cases, got)
             if int(g) != _expected(op, t, a, b)]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. (function, a, b, got, expected): {wrong[:5]}"


# --- the transform and the host side -----------------------------------------------------------

def test_transform_marks_globals_and_injects_the_seed():
    program = transform(run_csmith(1, OPTIONS), 1)
    assert program.globals and all(f"CSMITH_GLOBAL static {g.ctype} {g.name}" in program.body
                                   or f"CSMITH_GLOBAL static const {g.ctype} {g.name}" in program.body
                                   for g in program.globals)
    scalars = [g.name for g in program.globals if not g.const and not g.dims]
    assert program.injected == tuple(scalars)
    assert all(f"{name} ^= " in program.body for name in scalars)
    assert "int main" not in program.body and "printf(" not in program.body.replace("CSMITH_PRINTF(", "")
    assert transform(run_csmith(1, OPTIONS), 1, inject="first").injected == tuple(scalars[:1])
    # every hashed global is named: one name per element the main hashes
    assert len(hashed_names(program)) == sum(g.words for g in program.globals)


def test_seed_zero_is_the_program_as_generated(tmp_path):
    """Injection XORs seed times a constant: seed 0 changes nothing, so thread 0's checksum does
    not depend on where the seeds go, while other seeds do change the result of some programs."""
    changed = 0
    for seed in (1, 2, 5):
        text = run_csmith(seed, OPTIONS)
        runs = {inject: run_host(build_host(transform(text, seed, inject=inject), tmp_path / f"{seed}{inject}"),
                                 [0, 12345]).checksums for inject in ("scalars", "first")}
        assert runs["scalars"][0] == runs["first"][0]
        changed += runs["scalars"][1] != runs["scalars"][0]
    assert changed, "no program's checksum depends on its seed: the injection does nothing"


_ENDLESS = """#include "csmith.h"
static int32_t g_1 = 0;
static uint32_t  func_1(void);
static uint32_t  func_1(void)
{
    volatile uint32_t spins = 0;   /* a side effect: the loop may not be assumed to end */
    while (g_1 == 0) { spins++; }
    return 0;
}
int main (void)
{
    int print_hash_value = 0;
    platform_main_begin();
    crc32_gentab();
    func_1();
    transparent_crc(g_1, "g_1", print_hash_value);
    platform_main_end(crc32_context ^ 0xFFFFFFFFUL, print_hash_value);
    return 0;
}
"""


def test_host_run_reports_a_seed_that_does_not_finish(tmp_path):
    """The thread seed makes g_1 non-zero except for seed 0, whose run loops: it is reported as a
    timeout after the seeds before it gave their checksums, and the driver stops there."""
    program = transform(_ENDLESS, 0)
    assert program.injected == ("g_1",)
    run = run_host(build_host(program, tmp_path), [5, 9, 0, 7], cpu_seconds=1)
    assert run.failures == {2: "timeout", 3: "not run"}
    assert None not in run.checksums[:2] and run.checksums[0] != run.checksums[1]


def test_host_programs_are_free_of_undefined_behaviour(tmp_path):
    """The generated integer programs with our header, built with UBSan (the default build), run
    every thread seed to the end without an undefined operation, and give the same checksums as
    a build without it."""
    for seed in GOOD_SEEDS[:4]:
        program = transform(run_csmith(seed, OPTIONS), seed)
        seeds = [int(s) for s in thread_seeds(seed, 8)]
        checked = run_host(build_host(program, tmp_path / str(seed)), seeds)
        plain = run_host(build_host(program, tmp_path / str(seed), sanitize=False), seeds)
        assert not checked.failures and checked.checksums == plain.checksums


_FLOAT_TO_INT = _ENDLESS.replace("static int32_t g_1 = 0;", "static int32_t g_1 = 0;\nstatic float g_2 = 0x1.0p40;") \
    .replace("""    volatile uint32_t spins = 0;   /* a side effect: the loop may not be assumed to end */
    while (g_1 == 0) { spins++; }""", "    if (g_1 == 7) g_1 = g_2;   /* 2^40 does not fit: undefined */")


def test_host_run_reports_undefined_behaviour(tmp_path):
    """A seed whose run converts a float out of the int range (undefined; Csmith's --float
    programs can) is reported as undefined, not given a checksum; the seed before it is not."""
    program = transform(_FLOAT_TO_INT, 0)
    assert program.injected == ("g_1",)  # the float global takes no seed
    seven = 7 * pow(0x9E3779B1, -1, 1 << 32) % (1 << 32)  # the seed that makes g_1 == 7
    run = run_host(build_host(program, tmp_path), [0, seven])
    assert run.failures == {1: "undefined"} and run.checksums[0] is not None


def test_thread_seeds():
    seeds = thread_seeds(7, 32)
    assert seeds[0] == 0 and len(set(seeds.tolist())) == 32
    assert np.array_equal(seeds, thread_seeds(7, 32)) and not np.array_equal(seeds, thread_seeds(8, 32))


# --- end to end --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", GOOD_SEEDS)
def test_program_matches_on_every_machine(seed, tmp_path):
    """Host checksums equal the GPU's for every thread: functional model in REG and DFLOW form,
    timing model in BASE and D-FLOW mode."""
    result = check_program(seed, tmp_path, _settings(targets=campaign.targets()))
    assert result.status == "match", result.message
    assert result.targets_run == campaign.TARGETS


@pytest.mark.parametrize("seed", (1, 2, pytest.param(191, marks=pytest.mark.slow)))
def test_float_program_matches_on_every_machine(seed, tmp_path):
    """Csmith's --float programs: the host flushing denormals and neither side fusing a*b+c, the
    FP32 results agree bit for bit on every machine. Seed 191 found ``mov.pred %p, -1`` taken as
    -1, not 1 (test_compile.py's ``test_predicate_constants_are_0_or_1``)."""
    floats = CsmithOptions(**{**OPTIONS.__dict__, "floats": True})
    result = check_program(seed, tmp_path, Settings(csmith=floats, targets=campaign.targets()))
    assert result.status == "match", result.message
    assert "float" in (tmp_path / "csmith.cpp").read_text()


def test_a_mismatch_is_caught_and_explained(tmp_path):
    """A machine that computes something else is reported as a mismatch naming the threads, and
    the explanation names the global that differs: a device whose out[] loses bit 0 of one word
    stands for a miscompiled kernel."""
    from dualflow.models import Device

    class Flipping(Device):
        def copy_out(self, addr, count, dtype=np.uint32):
            out = super().copy_out(addr, count, dtype).copy()
            out[3] ^= 1
            return out

    broken = Target("broken", Form.REG, Flipping)
    result = check_program(2, tmp_path, _settings(targets=(broken,)))
    assert result.status == "mismatch" and result.mismatches == {"broken": [3]}
    # the explanation runs the recording variant: its out[3] is the first recorded value of thread 0
    program = transform(run_csmith(2, OPTIONS), 2)
    diffs = differing_globals(program, thread_seeds(2, 32), broken, tmp_path / "explain")
    assert [(d.thread, d.name) for d in diffs] == [(0, hashed_names(program)[2])]


class _Sleepy:
    """A device whose launch hangs: stands for a stage that never ends."""

    def __init__(self):
        from dualflow.models import Device

        self.device = Device()

    def __getattr__(self, name):
        return getattr(self.device, name)

    def launch(self, *args, **kwargs):
        import time

        time.sleep(60)


def test_campaign_counts_and_wall_timeout(tmp_path):
    """A campaign in two worker processes counts every program; a program over its wall time has
    its worker killed and replaced, counts as skipped, and its files are kept."""
    tally = run_campaign(GOOD_SEEDS[:3], _settings(targets=campaign.targets(("reg",))), jobs=2, root=tmp_path)
    assert tally.total == 3 and tally.statuses["match"] == 3 and not tally.failures
    assert not (tmp_path / "work" / str(GOOD_SEEDS[0])).exists()  # a passing program's files go
    hanging = _settings(targets=(Target("hanging", Form.REG, _Sleepy),))
    slow = run_campaign(GOOD_SEEDS[:2], hanging, jobs=1, root=tmp_path, program_timeout=3.0)
    assert slow.total == 2 and slow.skipped["wall timeout"] == 2  # killed at its limit, not after its 60 s sleep
    assert (tmp_path / "timeouts" / str(GOOD_SEEDS[0]) / "kernel.cu").exists()


# --- defects found by the campaign (the lead's to fix; strict, so that a fix shows) --------------

#: Seeds on which the D-FLOW timing model deadlocked, both engines, until its ring guard became
#: per slot (tests/models/timing/test_ring_guard.py): the functional model ran them correctly.
TIMING_DEADLOCKS = (282, 227)
#: Seeds of defects the campaign found and the front end now compiles correctly (each the first of
#: its kind): an unsigned 16-bit compare with an immediate >= 0x8000 (42), mul.hi.s16 (98),
#: mul.wide.u16/s16 (62, 194), bfe.u32 (120), a 64-bit store of merged constants (228), a loop
#: right after a loop, where the first one's join was the second one's header (7).
FIXED_DEFECTS = (42, 98, 62, 194, 120, 228, 7)


@pytest.mark.parametrize("seed", [TIMING_DEADLOCKS[0], pytest.param(TIMING_DEADLOCKS[1], marks=pytest.mark.slow)])
def test_fixed_timing_deadlock(seed, tmp_path):
    result = check_program(seed, tmp_path, _settings(targets=campaign.targets(("timing-dflow",))))
    assert result.status == "match", result.message


@pytest.mark.slow
@pytest.mark.parametrize("seed", FIXED_DEFECTS)
def test_fixed_defect(seed, tmp_path):
    """The functional model in both forms (the defects were the front end's, not a machine's); the
    default suite has each as a small kernel (test_compile.py's narrow and 64-bit tests, the
    minimal kernels below)."""
    result = check_program(seed, tmp_path, _settings(targets=campaign.targets(("reg", "dflow"))))
    assert result.status == "match", result.message


_U16_COMPARE = """#include "dualflow_cuda.h"
__device__ unsigned short g = 0xFE01;
extern "C" __global__ void k(const unsigned int *seeds, unsigned int *out)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    g ^= (unsigned short)seeds[t];
    out[t] = g > (unsigned short)0x87A6;   /* setp.gt.u16 %p1, %rs1, -30810 */
}
"""

_MUL_HI_S16 = """#include "dualflow_cuda.h"
extern "C" __global__ void k(const unsigned int *seeds, unsigned int *out)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    short x = (short)seeds[t];
    out[t] = (unsigned short)(short)(x / (short)7);   /* mul.hi.s16 %rs2, %rs1, 18725 */
}
"""


def _run_minimal(tmp_path: Path, source: str, seeds: np.ndarray) -> np.ndarray:
    from dualflow.models import Device

    cu = tmp_path / "k.cu"
    cu.write_text(source)
    module = compile_file(cu, CompileOptions(private_globals=True)).module
    dev = Device()
    s = dev.upload(seeds.astype(np.uint32))
    out = dev.alloc(4 * len(seeds))
    dev.launch(module["k"], grid=1, block=len(seeds), params=[s, out])
    return dev.copy_out(out, len(seeds), np.uint32)


def test_minimal_u16_compare(tmp_path):
    seeds = np.array([0, 0xFE01 ^ 0x87A6, 0xFE01 ^ 0x87A7, 0xFE01 ^ 1], dtype=np.uint32)
    np.testing.assert_array_equal(_run_minimal(tmp_path, _U16_COMPARE, seeds), [1, 0, 1, 0])


def test_minimal_mul_hi_s16(tmp_path):
    seeds = np.arange(-32768, 32768, 2053, dtype=np.int64)[:32].astype(np.uint32)
    x = seeds.astype(np.uint16).astype(np.int16).astype(np.int64)
    expected = (np.trunc(x / 7).astype(np.int64) & 0xFFFF).astype(np.uint32)
    np.testing.assert_array_equal(_run_minimal(tmp_path, _MUL_HI_S16, seeds), expected)


_LOOP_INTO_LOOP_NEST = """//
// Front-end defect (Csmith seed 7; since f94fc8b): refused with "control flow leaves a region
// past its join LBB0_7". A loop (LBB0_5) exits straight into the header of a loop nest (LBB0_7,
// whose body holds the loop LBB0_8 and whose latch branches back conditionally): the first
// loop's join is the outer loop's header. Structured PTX, as clang writes it.
// out[t] = 32 CRC steps of t, then for i < 3: 32 CRC steps of (that ^ in[t + i]).
//
.version 6.0
.target sm_70
.address_size 32

.visible .entry joinhdr(
	.param .u32 joinhdr_param_0,
	.param .u32 joinhdr_param_1
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<30>;

	ld.param.u32 	%r1, [joinhdr_param_0];
	ld.param.u32 	%r24, [joinhdr_param_1];
	mov.u32 	%r2, %tid.x;
	shl.b32 	%r3, %r2, 2;
	add.s32 	%r25, %r1, %r3;
	mov.u32 	%r22, 0;
	mov.u32 	%r21, 32;
	mov.u32 	%r20, %r2;
LBB0_5:
	shr.u32 	%r6, %r20, 1;
	and.b32  	%r7, %r20, 1;
	neg.s32 	%r8, %r7;
	and.b32  	%r9, %r8, -306674912;
	xor.b32  	%r20, %r9, %r6;
	add.s32 	%r21, %r21, -1;
	setp.ne.s32 	%p1, %r21, 0;
	@%p1 bra 	LBB0_5;
LBB0_7:
	shl.b32 	%r10, %r22, 2;
	add.s32 	%r11, %r25, %r10;
	ld.global.u32 	%r12, [%r11];
	xor.b32  	%r20, %r12, %r20;
	mov.u32 	%r23, 32;
LBB0_8:
	shr.u32 	%r13, %r20, 1;
	and.b32  	%r14, %r20, 1;
	neg.s32 	%r15, %r14;
	and.b32  	%r16, %r15, -306674912;
	xor.b32  	%r20, %r16, %r13;
	add.s32 	%r23, %r23, -1;
	setp.ne.s32 	%p2, %r23, 0;
	@%p2 bra 	LBB0_8;
	add.s32 	%r22, %r22, 1;
	setp.ne.s32 	%p3, %r22, 3;
	@%p3 bra 	LBB0_7;
	add.s32 	%r17, %r24, %r3;
	st.global.u32 	[%r17], %r20;
	ret;
}
"""


def test_minimal_loop_into_loop_nest():
    from dualflow.frontend import compile_ptx
    from dualflow.models import Device

    module = compile_ptx(_LOOP_INTO_LOOP_NEST, "joinhdr.ptx").module
    data = (np.arange(40, dtype=np.uint32) * 2654435761).astype(np.uint32)

    def steps(c: int) -> int:
        for _ in range(32):
            c = (c >> 1) ^ (0xEDB88320 & -(c & 1))
        return c & 0xFFFFFFFF

    expected = []
    for t in range(32):
        c = steps(t)
        for i in range(3):
            c = steps(c ^ int(data[t + i]))
        expected.append(c)
    dev = Device()
    a, out = dev.upload(data), dev.alloc(4 * 32)
    dev.launch(module["joinhdr"], grid=1, block=32, params=[a, out])
    np.testing.assert_array_equal(dev.copy_out(out, 32, np.uint32), expected)


# --- the campaign -------------------------------------------------------------------------------

@pytest.mark.slow
def test_campaign_of_a_thousand_programs(tmp_path):
    """1000 Csmith programs on every machine: no mismatch and no GPU-side failure."""
    tally = run_campaign(range(1, 1001), _settings(targets=campaign.targets()), jobs=2, root=tmp_path,
                         keep_going=True)
    assert tally.total == 1000
    assert not tally.failures, "\n".join(r.summary() for r in tally.failures[:20]) + "\n" + tally.report()

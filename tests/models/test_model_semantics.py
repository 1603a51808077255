"""Per-instruction semantics of the functional model (docs/isa.md, "Instructions" and "Memory"),
checked over all lanes in both operand forms against Python integer arithmetic, the FP32
reference functions, CUDA's special-register definitions and hand-computed statistics."""

from __future__ import annotations

import numpy as np
import pytest
from programs import (
    EDGES,
    FORMS,
    M32,
    SHIFTS,
    asm,
    bits,
    launch_out,
    pairs_with_random,
    run_elementwise,
    s32,
    u32,
)

from dualflow.isa import Form, SpecialReg
from dualflow.models import Device, FunctionalConfig, fp32

FORM_IDS = [f.value for f in FORMS]


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def expect_equal(got: np.ndarray, want, what: str = "") -> None:
    want = np.asarray(want, dtype=np.uint64).astype(np.uint32)
    bad = np.flatnonzero(got != want)
    assert not bad.size, (f"{what}: {bad.size} elements differ; first at {bad[0]}: "
                          f"got {int(got[bad[0]]):#x}, expected {int(want[bad[0]]):#x}")


# --------------------------------------------------------------------------------------------
# Integer ALU
# --------------------------------------------------------------------------------------------

def _shl(a, b):
    return u32(a << b) if b < 32 else 0


def _shr(a, b):
    return a >> b if b < 32 else 0


def _sra(a, b):
    return u32(s32(a) >> b)  # Python's >> on negative ints fills with the sign for any b


BINARY = {
    "iadd": lambda a, b: u32(a + b),
    "isub": lambda a, b: u32(a - b),
    "imul": lambda a, b: u32(a * b),
    "iand": lambda a, b: a & b,
    "ior": lambda a, b: a | b,
    "ixor": lambda a, b: a ^ b,
    "ishl": _shl,
    "ishr": _shr,
    "isra": _sra,
    "imin": lambda a, b: u32(min(s32(a), s32(b))),
    "imax": lambda a, b: u32(max(s32(a), s32(b))),
    "umin": min,
    "umax": max,
}

COND = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
}


def reference(fn, a, b):
    return [fn(int(x), int(y)) for x, y in zip(a, b)]


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_integer_op_register_operands(form, op, rng):
    a, b = pairs_with_random(rng)
    if op in ("ishl", "ishr", "isra"):  # shift amounts: every interesting amount for many a
        b = np.resize(np.array(SHIFTS + (2, 7, 30, 64, 0x80000000), np.uint32), len(a))
    got = run_elementwise(form, f"{op} {{d}}{{a}}, {{b}}", a, b)
    expect_equal(got, reference(BINARY[op], a, b), f"{op} {form.value}")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_integer_op_immediate_operand(form, op, rng):
    a, _ = pairs_with_random(rng, total=128)
    imms = (SHIFTS if op in ("ishl", "ishr", "isra")
            else (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x1234ABCD))
    for imm in imms:
        # Alternate hex and negative decimal spellings of the same 32-bit pattern.
        text = str(s32(imm)) if imm & 0x80000000 and imm != 0x80000000 else hex(imm)
        got = run_elementwise(form, f"{op} {{d}}{{a}}, {text}", a)
        expect_equal(got, [BINARY[op](int(x), imm) for x in a], f"{op} {form.value} imm {text}")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_shift_edge_amounts_exact_values(form):
    """A few hand-written values, independent of the Python reference functions above."""
    a = np.array([0x80000001] * 6 + [0x7FFFFFFF] * 6 + [0] * 52, np.uint32)
    b = np.array(list(SHIFTS) * 2 + [0] * 52, np.uint32)
    shl = run_elementwise(form, "ishl {d}{a}, {b}", a, b)[:12]
    shr = run_elementwise(form, "ishr {d}{a}, {b}", a, b)[:12]
    sra = run_elementwise(form, "isra {d}{a}, {b}", a, b)[:12]
    assert shl.tolist() == [0x80000001, 2, 0x80000000, 0, 0, 0, 0x7FFFFFFF, 0xFFFFFFFE, 0x80000000, 0, 0, 0]
    assert shr.tolist() == [0x80000001, 0x40000000, 1, 0, 0, 0, 0x7FFFFFFF, 0x3FFFFFFF, 0, 0, 0, 0]
    assert sra.tolist() == [0x80000001, 0xC0000000, M32, M32, M32, M32, 0x7FFFFFFF, 0x3FFFFFFF, 0, 0, 0, 0]


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_inot(form, rng):
    a, _ = pairs_with_random(rng)
    expect_equal(run_elementwise(form, "inot {d}{a}", a), [M32 ^ int(x) for x in a], "inot")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_imad_low_32_bits(form, rng):
    a, b = pairs_with_random(rng)
    c = np.resize(np.array(EDGES, np.uint32), len(a))[::-1].copy()
    got = run_elementwise(form, "imad {d}{a}, {b}, {c}", a, b, c)
    expect_equal(got, [u32(int(x) * int(y) + int(z)) for x, y, z in zip(a, b, c)], "imad")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_selp_by_nonzero_predicate(form, rng):
    a, b = pairs_with_random(rng)
    c = np.resize(np.array([0, 1, 2, 0x80000000, 0xFFFFFFFF, 0], np.uint32), len(a))
    got = run_elementwise(form, "selp {d}{a}, {b}, {c}", a, b, c)
    expect_equal(got, [int(x) if z else int(y) for x, y, z in zip(a, b, c)], "selp")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("signed", [True, False], ids=["isetp", "usetp"])
@pytest.mark.parametrize("cond", sorted(COND))
def test_integer_compare_every_condition(form, signed, cond, rng):
    op = "isetp" if signed else "usetp"
    conv = s32 if signed else u32
    a, b = pairs_with_random(rng, total=192)
    got = run_elementwise(form, f"{op}.{cond} {{d}}{{a}}, {{b}}", a, b)
    want = [int(COND[cond](conv(int(x)), conv(int(y)))) for x, y in zip(a, b)]
    expect_equal(got, want, f"{op}.{cond}")
    for imm in (0, 0x80000000, 0xFFFFFFFF):  # -1 signed, largest unsigned
        got = run_elementwise(form, f"{op}.{cond} {{d}}{{a}}, {imm:#x}", a)
        expect_equal(got, [int(COND[cond](conv(int(x)), conv(imm))) for x in a], f"{op}.{cond} imm {imm:#x}")


def test_signed_and_unsigned_compares_differ_on_sign_bit():
    a = np.array([0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 1] * 16, np.uint32)
    b = np.array([1, 0, 0xFFFFFFFF, 0x80000000] * 16, np.uint32)
    for form in FORMS:
        assert run_elementwise(form, "isetp.lt {d}{a}, {b}", a, b)[:4].tolist() == [1, 1, 0, 0]
        assert run_elementwise(form, "usetp.lt {d}{a}, {b}", a, b)[:4].tolist() == [0, 0, 1, 1]
        assert run_elementwise(form, "imin {d}{a}, {b}", a, b)[:4].tolist() == [0x80000000, 0xFFFFFFFF,
                                                                               0xFFFFFFFF, 0x80000000]
        assert run_elementwise(form, "umin {d}{a}, {b}", a, b)[:4].tolist() == [1, 0, 0x7FFFFFFF, 1]


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_mov_register_and_immediates(form, rng):
    a, _ = pairs_with_random(rng, total=128)
    expect_equal(run_elementwise(form, "mov {d}{a}", a), a, "mov reg")
    for text, value in (("0x12345678", 0x12345678), ("-5", 0xFFFFFFFB), ("4294967295", M32), ("0", 0),
                        ("-2147483648", 0x80000000), ("0f3f800000", 0x3F800000)):
        expect_equal(run_elementwise(form, f"mov {{d}}{text}", a), [value] * len(a), f"mov {text}")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_rz_source_reads_zero(form, rng):
    a, _ = pairs_with_random(rng, total=128)
    expect_equal(run_elementwise(form, "isub {d}rz, {a}", a), [u32(-int(x)) for x in a], "isub rz")
    expect_equal(run_elementwise(form, "ior {d}{a}, rz", a), a, "ior rz")


# --------------------------------------------------------------------------------------------
# FP32 wiring: the model must call the fp32 reference function with the right operands.
# --------------------------------------------------------------------------------------------

FP_VALUES = [1.5, -2.25, 3.0, 0.1, -0.0, 0.0, 1e30, -7.5, 2.0, 1e-3, 16.0, -1.0,
             float("inf"), float("-inf"), float("nan"), 3.4e38]


def _fp_inputs():
    vals = np.array([bits(v) for v in FP_VALUES] + [0x00000001, 0x807FFFFF], np.uint32)  # + denormals
    a = np.repeat(vals, len(vals))
    b = np.tile(vals, len(vals))
    n = (len(a) + 63) // 64 * 64
    return np.resize(a, n), np.resize(b, n), np.resize(np.roll(vals, 3), n)


FP_BINARY = {"fadd": fp32.fadd, "fsub": fp32.fsub, "fmul": fp32.fmul, "fdiv": fp32.fdiv,
             "fmin": fp32.fmin, "fmax": fp32.fmax}
FP_UNARY = {"fsqrt": fp32.fsqrt, "i2f": fp32.i2f, "u2f": fp32.u2f, "f2i": fp32.f2i, "f2u": fp32.f2u}
FP_CONDS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("op", sorted(FP_BINARY))
def test_fp_binary_wiring(form, op):
    a, b, _ = _fp_inputs()
    expect_equal(run_elementwise(form, f"{op} {{d}}{{a}}, {{b}}", a, b), FP_BINARY[op](a, b), op)


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("op", sorted(FP_UNARY))
def test_fp_unary_wiring(form, op, rng):
    a, _, _ = _fp_inputs()
    if op in ("i2f", "u2f"):
        a = np.concatenate([np.array(EDGES, np.uint32),
                            rng.integers(0, 1 << 32, len(a) - len(EDGES), dtype=np.uint64).astype(np.uint32)])
    expect_equal(run_elementwise(form, f"{op} {{d}}{{a}}", a), FP_UNARY[op](a), op)


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_ffma_wiring(form):
    a, b, c = _fp_inputs()
    expect_equal(run_elementwise(form, "ffma {d}{a}, {b}, {c}", a, b, c), fp32.ffma(a, b, c), "ffma")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_fsetp_every_condition(form):
    a, b, _ = _fp_inputs()
    for index, cond in enumerate(FP_CONDS):
        got = run_elementwise(form, f"fsetp.{cond} {{d}}{{a}}, {{b}}", a, b)
        expect_equal(got, fp32.fsetp(index, a, b), f"fsetp.{cond}")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_fp_immediate_operands(form):
    a, _, _ = _fp_inputs()
    cases = [("fadd", "0.5", bits(0.5)), ("fsub", "1e-3", bits(1e-3)), ("fmul", "-2.5", bits(-2.5)),
             ("fdiv", "3.0", bits(3.0)), ("fmin", "0f3f800000", 0x3F800000), ("fmax", "-0.0", 0x80000000),
             ("fadd", "0.1", 0x3DCCCCCD)]
    for op, text, imm in cases:
        got = run_elementwise(form, f"{op} {{d}}{{a}}, {text}", a)
        expect_equal(got, FP_BINARY[op](a, np.uint32(imm)), f"{op} {text}")
    got = run_elementwise(form, "fsetp.lt {d}{a}, 2.0", a)
    expect_equal(got, fp32.fsetp(2, a, np.uint32(bits(2.0))), "fsetp.lt 2.0")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_fp_exact_known_values(form):
    """Absolute values (not via fp32.py): operand order and the right operation are wired."""
    a = np.resize(np.array([bits(6.0), bits(-1.5), bits(9.0), bits(2.0)], np.uint32), 64)
    b = np.resize(np.array([bits(1.5), bits(4.0), bits(-3.0), bits(0.5)], np.uint32), 64)
    c = np.resize(np.array([bits(1.0), bits(0.5), bits(100.0), bits(-1.0)], np.uint32), 64)

    def f(op):
        return run_elementwise(form, op, a, b, c)[:4].view(np.float32).tolist()
    assert f("fadd {d}{a}, {b}") == [7.5, 2.5, 6.0, 2.5]
    assert f("fsub {d}{a}, {b}") == [4.5, -5.5, 12.0, 1.5]
    assert f("fmul {d}{a}, {b}") == [9.0, -6.0, -27.0, 1.0]
    assert f("fdiv {d}{a}, {b}") == [4.0, -0.375, -3.0, 4.0]
    assert f("ffma {d}{a}, {b}, {c}") == [10.0, -5.5, 73.0, 0.0]
    assert f("fsqrt {d}{a}")[2] == 3.0
    assert f("fmin {d}{a}, {b}") == [1.5, -1.5, -3.0, 0.5]
    assert f("fmax {d}{a}, {b}") == [6.0, 4.0, 9.0, 2.0]
    assert run_elementwise(form, "f2i {d}{a}", a)[:4].tolist() == [6, u32(-1), 9, 2]
    assert run_elementwise(form, "f2u {d}{a}", a)[:4].tolist() == [6, 0, 9, 2]
    ints = np.resize(np.array([5, u32(-3), 0x80000000, 7], np.uint32), 64)
    assert run_elementwise(form, "i2f {d}{a}", ints)[:4].view(np.float32).tolist() == [5.0, -3.0, -2.0**31,
                                                                                       7.0]
    assert run_elementwise(form, "u2f {d}{a}", ints)[:4].view(np.float32).tolist() == [5.0, 4294967296.0,
                                                                                       2.0**31, 7.0]


# --------------------------------------------------------------------------------------------
# vote inside a divergent branch, with a partial last warp
# --------------------------------------------------------------------------------------------

VOTE_REG = """
.kernel vote
.form reg
.param pred out
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, pred
    iadd r2, r2, r1
    ldg r3, [r2]            ; p
    s2r r4, %laneid
    iand r4, r4, 1
    ssy J
    brz r4, EVEN            ; even lanes (taken) first
    vote.any r5, r3
    vote.all r6, r3
    vote.ballot r7, r3
    sync
EVEN:
    vote.ballot r7, r3
    vote.any r5, r3
    vote.all r6, r3
    sync
J:
    ldc r8, out
    imul r9, r0, 12
    iadd r8, r8, r9
    stg [r8], r5
    stg [r8+4], r6
    stg [r8+8], r7
    exit
"""

VOTE_DFLOW = """
.kernel vote
.form dflow
.param pred out
    s2r %tid.x              ; P0
    ishl |1|, 2             ; P1
    ldc pred                ; P2
    iadd |1|, |2|           ; P3
    ldg [|1|]               ; P4 p
    s2r %laneid             ; P5
    iand |1|, 1             ; P6
    ssy J
    brz |1|, EVEN           ; RP 7
    vote.any |3|            ; P7 any
    vote.all |4|            ; P8 all
    vote.ballot |5|         ; P9 ballot
    sync
EVEN:
    vote.any |3|            ; P7
    vote.all |4|            ; P8
    vote.ballot |5|         ; P9
    sync
J:                          ; RP 10
    ldc out                 ; P10
    imul |11|, 12           ; P11 tid*12
    iadd |1|, |2|           ; P12
    stg [|1|], |6|
    stg [|1|+4], |5|
    stg [|1|+8], |4|
    exit
"""


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_vote_over_the_active_lanes_of_a_divergent_path(form, rng):
    ws, block = 8, 28  # four warps, the last with lanes 0..3 only
    pred = np.zeros(32, np.uint32)
    pred[8:16] = [1, 0x80000000, 2, 0xFFFFFFFF, 7, 1, 0x10, 1]  # warp 1: all non-zero
    pred[16:24] = [0, 5, 0, 0, 0, 0, 9, 0]  # warp 2: lane 1 (odd group), lane 6 (even group)
    pred[24:28] = [3, 0, 5, 4]  # warp 3 (partial): even group all set, odd group lane 3 only
    pred[28:32] = 1  # lanes that do not exist must not be counted
    kernel = asm(VOTE_REG if form is Form.REG else VOTE_DFLOW)
    dev = Device(FunctionalConfig(warp_size=ws))
    dpred, dout = dev.upload(pred), dev.alloc(12 * block)
    dev.launch(kernel, 1, block, [dpred, dout])
    out = dev.copy_out(dout, 3 * block).reshape(block, 3)
    for t in range(block):
        w, lane = divmod(t, ws)
        group = [w * ws + k for k in range(ws) if k % 2 == lane % 2 and w * ws + k < block]
        votes = [pred[g] != 0 for g in group]
        ballot = sum(1 << (g % ws) for g, v in zip(group, votes) if v)
        assert out[t].tolist() == [int(any(votes)), int(all(votes)), ballot], f"thread {t}"
    # spot checks by hand
    assert out[9].tolist() == [1, 1, 0xAA] and out[8].tolist() == [1, 1, 0x55]
    assert out[17].tolist() == [1, 0, 0x02] and out[16].tolist() == [1, 0, 0x40]
    assert out[24].tolist() == [1, 1, 0x05] and out[25].tolist() == [1, 0, 0x08]
    assert out[0].tolist() == [0, 0, 0] and out[7].tolist() == [0, 0, 0]


def test_vote_ballot_uses_all_32_lanes():
    kernel = asm("""
.kernel b32
.form reg
.param out
    s2r r0, %laneid
    isetp.ge r1, r0, 30         ; lanes 30, 31
    vote.ballot r2, r1
    vote.all r3, r1
    vote.any r4, r1
    ldc r5, out
    ishl r6, r0, 4
    iadd r5, r5, r6
    stg [r5], r2
    stg [r5+4], r3
    stg [r5+8], r4
    exit
""")
    _, res, out = launch_out(kernel, 1, 32, 128, trace=True)
    assert out.reshape(32, 4)[:, :3].tolist() == [[0xC0000000, 0, 1]] * 32
    assert res.trace.records[0].mask == 0xFFFFFFFF


# --------------------------------------------------------------------------------------------
# s2r: every special register on a 3-D grid and a 3-D block with a partial last warp
# --------------------------------------------------------------------------------------------

SREGS = list(SpecialReg)


def _s2r_kernel(form: Form):
    names = [s.asm_name for s in SREGS]
    if form is Form.REG:
        lines = ["s2r r0, %ctaid.x", "s2r r1, %ctaid.y", "s2r r2, %ctaid.z", "s2r r3, %nctaid.x",
                 "s2r r4, %nctaid.y", "imad r5, r2, r4, r1", "imad r5, r5, r3, r0",  # linear block
                 "s2r r6, %warpid", "s2r r7, %laneid", "ishl r6, r6, 3", "iadd r6, r6, r7",
                 "ishl r5, r5, 5", "iadd r5, r5, r6", "ishl r5, r5, 6", "ldc r8, out", "iadd r9, r8, r5"]
        for j, name in enumerate(names):
            lines += [f"s2r r10, {name}", f"stg [r9+{4 * j}], r10"]
    else:
        lines = ["s2r %ctaid.x", "s2r %ctaid.y", "s2r %ctaid.z", "s2r %nctaid.x", "s2r %nctaid.y",
                 "imad |3|, |1|, |4|",  # P5 cz*ny + cy
                 "imad |1|, |3|, |6|",  # P6 (..)*nx + cx
                 "s2r %warpid", "s2r %laneid", "ishl |2|, 3", "iadd |1|, |2|",  # P10 warp*8 + lane
                 "ishl |5|, 5", "iadd |1|, |2|", "ishl |1|, 6", "ldc out", "iadd |1|, |2|"]  # P15 base
        for j, name in enumerate(names):
            lines += [f"s2r {name}", f"stg [|{j + 2}|+{4 * j}], |1|"]
    body = "\n    ".join(lines + ["exit"])
    return asm(f".kernel sregs\n.form {form.value}\n.param out\n    {body}\n")


def _cuda_sregs(block_linear: int, t: int) -> list[int]:
    """CUDA's definitions for block (5,3,2), grid (2,2,2), warp size 8."""
    bx, by, bz = 5, 3, 2
    cx, cy, cz = block_linear % 2, (block_linear // 2) % 2, block_linear // 4
    return [t % bx, (t // bx) % by, t // (bx * by), bx, by, bz, cx, cy, cz, 2, 2, 2, t % 8, t // 8, 4]


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_special_registers_3d(form):
    sentinel = 0xA5A5A5A5
    kernel = _s2r_kernel(form)
    _, res, out = launch_out(kernel, (2, 2, 2), (5, 3, 2), 8 * 32 * 16, config=FunctionalConfig(warp_size=8),
                             trace=True, fill=sentinel)
    rows = out.reshape(8, 32, 16)
    for b in range(8):
        for t in range(32):
            if t < 30:
                assert rows[b, t, :15].tolist() == _cuda_sregs(b, t), f"block {b} thread {t}"
            else:
                assert (rows[b, t] == sentinel).all(), f"lanes past the block wrote (block {b} lane {t})"
        assert (rows[b, :, 15] == sentinel).all()
    # The trace names the block and warp independently of the kernel's own address arithmetic.
    s2r_pcs = [pc for pc, ins in enumerate(kernel.code) if ins.op.name == "S2R"][-len(SREGS):]
    pcs = {pc: j for j, pc in enumerate(s2r_pcs)}
    seen = 0
    for rec in res.trace.records:
        if rec.pc in pcs:
            j = pcs[rec.pc]
            assert rec.mask == (0x3F if rec.warp == 3 else 0xFF)
            for lane in range(8):
                t = rec.warp * 8 + lane
                want = _cuda_sregs(rec.block, t)[j] if t < 30 else 0
                assert rec.values[lane] == want, (rec, lane)
            seen += 1
    assert seen == 15 * 8 * 4


# --------------------------------------------------------------------------------------------
# ldc: parameters by name and by offset
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_ldc_by_name_and_offset(form):
    if form is Form.REG:
        body = """
    ldc r0, x
    ldc r1, y
    ldc r2, [12]
    ldc r3, out
    s2r r4, %tid.x
    ishl r4, r4, 4
    iadd r3, r3, r4
    stg [r3], r0
    stg [r3+4], r1
    stg [r3+8], r2
    exit"""
    else:
        body = """
    ldc x                   ; P0
    ldc y                   ; P1
    ldc [12]                ; P2 z
    ldc out                 ; P3
    s2r %tid.x              ; P4
    ishl |1|, 4             ; P5
    iadd |3|, |1|           ; P6
    stg [|1|], |7|
    stg [|1|+4], |6|
    stg [|1|+8], |5|
    exit"""
    kernel = asm(f".kernel k\n.form {form.value}\n.param out x y z\n{body}\n")
    _, _, out = launch_out(kernel, 1, 4, 16, extra_params=[0xDEADBEEF, -2, 1.5],
                           config=FunctionalConfig(warp_size=4))
    assert out.reshape(4, 4)[:, :3].tolist() == [[0xDEADBEEF, 0xFFFFFFFE, 0x3FC00000]] * 4


# --------------------------------------------------------------------------------------------
# Memory spaces
# --------------------------------------------------------------------------------------------

SHARED = {
    Form.REG: """
.kernel sh
.form reg
.param out
.shared 16
    s2r r0, %ctaid.x
    s2r r1, %tid.x
    ssy W
    brnz r1, WSYNC              ; thread 0 of each block writes word 2
    imul r3, r0, 100
    iadd r3, r3, 7
    sts [rz+8], r3
WSYNC:
    sync
W:
    bar
    lds r4, [rz+8]              ; every thread reads it back
    s2r r8, %ntid.x
    imad r5, r0, r8, r1
    ishl r5, r5, 2
    ldc r7, out
    iadd r7, r7, r5
    stg [r7], r4
    exit
""",
    Form.DFLOW: """
.kernel sh
.form dflow
.param out
.shared 16
    s2r %ctaid.x                ; P0
    s2r %tid.x                  ; P1
    ssy W
    brnz |1|, SKIP              ; RP 2
    imul |2|, 100               ; P2
    iadd |1|, 7                 ; P3
    sts [rz+8], |1|
    sync
SKIP:
    rpinc 2
    sync
W:                              ; RP 4
    bar
    lds [rz+8]                  ; P4
    s2r %ntid.x                 ; P5
    imad |6|, |1|, |5|          ; P6
    ishl |1|, 2                 ; P7
    ldc out                     ; P8
    iadd |1|, |2|               ; P9
    stg [|1|], |6|
    exit
""",
}


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_shared_memory_is_per_block(form):
    """Three blocks (of two warps) write different values to the same shared word and each
    block reads back its own."""
    _, _, out = launch_out(asm(SHARED[form]), 3, 16, 48, config=FunctionalConfig(warp_size=8))
    assert out.tolist() == [7] * 16 + [107] * 16 + [207] * 16


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_local_memory_is_per_thread(form):
    if form is Form.REG:
        body = """
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    imul r4, r3, 3
    iadd r4, r4, 1
    stl [rz], r4
    inot r5, r3
    stl [rz+4], r5
    ldl r6, [rz+4]
    ldl r7, [rz]
    ishl r8, r3, 3
    ldc r9, out
    iadd r9, r9, r8
    stg [r9], r7
    stg [r9+4], r6
    exit"""
    else:
        body = """
    s2r %tid.x              ; P0
    s2r %ctaid.x            ; P1
    s2r %ntid.x             ; P2
    imad |2|, |1|, |3|      ; P3 i
    imul |1|, 3             ; P4
    iadd |1|, 1             ; P5
    stl [rz], |1|
    inot |3|                ; P6
    stl [rz+4], |1|
    ldl [rz+4]              ; P7
    ldl [rz]                ; P8
    ishl |6|, 3             ; P9
    ldc out                 ; P10
    iadd |1|, |2|           ; P11
    stg [|1|], |4|
    stg [|1|+4], |5|
    exit"""
    kernel = asm(f".kernel loc\n.form {form.value}\n.param out\n.local 8\n{body}\n")
    _, _, out = launch_out(kernel, 2, 12, 48, config=FunctionalConfig(warp_size=8))
    pairs = out.reshape(24, 2)
    assert pairs[:, 0].tolist() == [3 * i + 1 for i in range(24)]
    assert pairs[:, 1].tolist() == [M32 ^ i for i in range(24)]


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_store_collision_highest_lane_wins(form):
    """All active lanes of a warp store to one word: the highest active lane's value is kept, for
    a full warp, a partial warp and a divergent subset; global and shared."""
    if form is Form.REG:
        body = """
    s2r r0, %laneid
    s2r r1, %ctaid.x
    ldc r2, out
    ishl r3, r1, 4
    iadd r2, r2, r3         ; &out[ctaid*4]
    iadd r4, r0, 100
    stg [r2], r4            ; every lane
    sts [rz], r4
    iand r5, r0, 4
    ssy J
    brnz r5, J_SYNC         ; lanes 4..7 skip
    stg [r2+4], r4          ; lanes 0..3 of those alive
J_SYNC:
    sync
J:
    lds r6, [rz]
    stg [r2+8], r6
    exit"""
    else:
        body = """
    s2r %laneid             ; P0
    s2r %ctaid.x            ; P1
    ldc out                 ; P2
    ishl |2|, 4             ; P3
    iadd |2|, |1|           ; P4 &out[ctaid*4]
    iadd |5|, 100           ; P5
    stg [|2|], |1|
    sts [rz], |1|
    iand |6|, 4             ; P6
    ssy J
    brnz |1|, J_SYNC
    stg [|3|+4], |2|
J_SYNC:
    sync
J:
    lds [rz]                ; P7
    stg [|4|+8], |1|
    exit"""
    kernel = asm(f".kernel col\n.form {form.value}\n.param out\n.shared 4\n{body}\n")
    cfg = FunctionalConfig(warp_size=8)
    _, _, full = launch_out(kernel, 2, 8, 8, config=cfg)
    assert full.reshape(2, 4)[:, :3].tolist() == [[107, 103, 107]] * 2
    _, res, part = launch_out(kernel, 1, 3, 4, config=cfg, trace=True)
    assert part[:3].tolist() == [102, 102, 102]
    first = [r for r in res.trace.records if r.op == "stg"][0]  # the trace keeps every lane's store
    assert first.mask == 0b111 and first.data == (100, 101, 102, 0, 0, 0, 0, 0)
    assert len(set(first.addrs[:3])) == 1 and first.addrs[3:] == (0,) * 5


# --------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------

STATS_REG = """
.kernel st
.form reg
.param out
    s2r r0, %tid.x          ; 0  int
    ldc r1, out             ; 1  mem
    isetp.lt r2, r0, 3      ; 2  int
    ssy J                   ; 3  ctrl
    brz r2, SKIP            ; 4  ctrl
    i2f r3, r0              ; 5  fp
    fsqrt r3, r3            ; 6  sfu
    sync                    ; 7  ctrl
SKIP:
    sync                    ; 8  ctrl
J:
    ishl r4, r0, 2          ; 9  int
    iadd r4, r4, r1         ; 10 int
    stg [r4], r3            ; 11 mem
    exit                    ; 12 ctrl
"""

STATS_DFLOW = """
.kernel st
.form dflow
.param out
    s2r %tid.x              ; 0  int   P0
    ldc out                 ; 1  mem   P1
    isetp.lt |2|, 3         ; 2  int   P2
    ssy J                   ; 3  ctrl
    brz |1|, SKIP           ; 4  ctrl
    i2f |3|                 ; 5  fp    P3
    fsqrt |1|               ; 6  sfu   P4
    sync                    ; 7  ctrl
SKIP:
    rpinc 1                 ; 8  ctrl
    mov 0                   ; 9  int   P4 (the stored value on this arm)
    sync                    ; 10 ctrl
J:
    ishl |5|, 2             ; 11 int   P5
    iadd |1|, |5|           ; 12 int   P6
    stg [|1|], |3|          ; 13 mem
    exit                    ; 14 ctrl
"""


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_statistics_by_class_computed_by_hand(form):
    """12 threads, warp size 8: warp 0 (tids 0..7) diverges (0..2 run the fp arm), warp 1 (tids
    8..11, partial) is uniform."""
    kernel = asm(STATS_REG if form is Form.REG else STATS_DFLOW)
    _, res, out = launch_out(kernel, 1, 12, 12, config=FunctionalConfig(warp_size=8))
    assert out[:3].view(np.float32).tolist() == [0.0, 1.0, np.float32(np.sqrt(np.float32(2.0)))]
    assert out[3:].tolist() == [0] * 9
    s = res.stats
    skip = {"warp": 2, "thread": 9}  # warp 0 lanes 3..7, warp 1 lanes 0..3
    if form is Form.REG:
        want = {"int": {"warp": 8, "thread": 48}, "mem": {"warp": 4, "thread": 24},
                "ctrl": {"warp": 2 + 2 + 1 + 2 + 2, "thread": 12 + 12 + 3 + 9 + 12},
                "fp": {"warp": 1, "thread": 3}, "sfu": {"warp": 1, "thread": 3}}
        assert s.ring_writes == 0
    else:  # the skip arm has rpinc (ctrl) and mov (int), same lanes as its sync
        want = {"int": {"warp": 8 + 2, "thread": 48 + 9}, "mem": {"warp": 4, "thread": 24},
                "ctrl": {"warp": 2 + 2 + 1 + 2 * 2 + 2, "thread": 12 + 12 + 3 + 2 * 9 + 12},
                "fp": {"warp": 1, "thread": 3}, "sfu": {"warp": 1, "thread": 3}}
        # producers: s2r ldc isetp (2 warps each), i2f fsqrt (1), mov (2), ishl iadd (2 each)
        assert s.ring_writes == 2 + 2 + 2 + 1 + 1 + 2 + 2 + 2
        assert s.by_opcode["rpinc"] == skip and s.by_opcode["mov"] == skip
    assert s.by_class == want
    assert s.warp_instructions == sum(v["warp"] for v in want.values())
    assert s.thread_instructions == sum(v["thread"] for v in want.values())
    assert s.by_opcode["sync"] == {"warp": 3, "thread": 12}
    assert s.by_opcode["isetp.lt"] == {"warp": 2, "thread": 12}
    assert s.by_opcode["fsqrt"] == {"warp": 1, "thread": 3}
    assert (s.blocks, s.threads, s.warps, s.warp_size) == (1, 12, 2, 8)
    assert s.to_dict()["simd_efficiency"]["value"] == s.thread_instructions / (8 * s.warp_instructions)


# --------------------------------------------------------------------------------------------
# DFLOW rpinc and REG rz destination
# --------------------------------------------------------------------------------------------

def test_dflow_rpinc_moves_distances():
    kernel = asm("""
.kernel rp
.form dflow
.param out
    mov 5                   ; P0
    mov 6                   ; P1
    rpinc 3                 ; RP 2 -> 5
    iadd |5|, |4|           ; P5 = P0 + P1
    rpinc 1                 ; RP 6 -> 7
    imul |2|, |6|           ; P7 = P5 * P1
    s2r %laneid             ; P8
    ishl |1|, 3             ; P9
    ldc out                 ; P10
    iadd |1|, |2|           ; P11
    stg [|1|], |7|
    stg [|1|+4], |5|
    exit
""")
    _, res, out = launch_out(kernel, 1, 4, 8, config=FunctionalConfig(warp_size=4), trace=True)
    assert out.tolist() == [11, 66] * 4
    assert [r.rp for r in res.trace.records] == [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 12, 12]
    assert [r.dst for r in res.trace.records] == [0, 1, None, 5, None, 7, 8, 9, 10, 11, None, None, None]


def test_reg_rz_destination_discards():
    kernel = asm("""
.kernel rz
.form reg
.param out
    mov r1, 7
    s2r r2, %laneid
    ldc r0, out
    ishl r3, r2, 4
    iadd r0, r0, r3         ; &out[lane*4]
    stg [r0], r2            ; so that the ldg below reads valid memory
    mov rz, 99
    iadd rz, r1, 1
    ldg rz, [r0]
    isetp.eq rz, r1, 7
    s2r rz, %ntid.x
    stg [r0], r1
    stg [r0+4], r2
    stg [r0+8], r3
    stg [r0+12], r0
    exit
""")
    dev, res, out = launch_out(kernel, 1, 4, 16, config=FunctionalConfig(warp_size=4), trace=True)
    base = dev.memory.top - 256  # the only allocation
    assert kernel.regs == 4  # rz takes no register
    assert out.reshape(4, 4).tolist() == [[7, lane, 16 * lane, base + 16 * lane] for lane in range(4)]
    recs = res.trace.records
    assert [(r.op, r.dst, r.values) for r in recs if r.pc in (6, 7, 9, 10)] == [
        ("mov", None, None), ("iadd", None, None), ("isetp.eq", None, None), ("s2r", None, None)]
    ld = [r for r in recs if r.op == "ldg"][0]
    assert ld.dst is None and ld.values is None and ld.addrs == tuple(base + 16 * k for k in range(4))
    assert recs[0].dst == 1 and recs[0].values == (7, 7, 7, 7)

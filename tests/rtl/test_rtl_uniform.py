"""The ``uniform-operands`` variant on the RTL core (``CoreParams.uniform_operands``; docs/rtl.md,
"Uniform operands"): hand-written kernels with uniform operands in positions A, B and C, parameter
words and every uniform special register, a memory base and uniform branch conditions, co-simulated
against the golden model (every retired record and the final memory), with one ring and with
hands; a core built without the variant traps ILLEGAL at the first uniform word (the golden model
refuses such a word in any kernel that does not declare the variant); a uniform operand naming a
parameter word the core does not hold traps PARAM, as ``ldc`` does."""

from __future__ import annotations

import numpy as np
import pytest

from dualflow.common.errors import AsmError, ConfigError
from dualflow.isa import Opcode, assemble
from dualflow.isa.opcodes import UNIFORM_SREGS, uniform_operand
from dualflow.rtl.params import CoreParams
from dualflow.testbench import cosim
from dualflow.testbench.cosim import CosimCase, run_cosim

#: 4 lanes x 2 warps: a block of 4 x 1 x 2 threads (ntid x, y, z differ), a grid of 3 x 1 x 2 blocks
CORE = dict(mode="dflow", warp_size=4, warps=2, register_banks=4, collector_units=4, alu_latency=2)
BLOCK, GRID = (4, 1, 2), (3, 1, 2)
THREADS = 8
BLOCKS = 6
#: parameter values after out and in: k, m, flag, n (the loop's trip count)
K, M, FLAG, N = 5, 7, 1, 2
IN1 = 1000  # in[1], loaded through a uniform memory base

#: Positions (producers) are counted in the comments; the store reads the address 26 back (n = 2).
OPERANDS = """.kernel operands
.form dflow
.param out
.param in
.param k
.param m
.param flag
.param n
.ring 32
.dmax 31
.variant uniform-operands
    s2r %laneid                     ; 0
    ishl %warpid, 2                 ; 1: A uniform, B immediate
    iadd |1|, |2|                   ; 2: t, the thread in the block
    imad %ctaid.z, %nctaid.y, %ctaid.y ; 3: A, B and C uniform
    imad |1|, %nctaid.x, %ctaid.x   ; 4: the block's linear index
    ishl |1|, 3                     ; 5
    iadd |1|, |4|                   ; 6: global thread index
    ishl |1|, 2                     ; 7
    iadd c[out], |1|                ; 8: the address (A: a parameter by name)
    imad %ctaid.x, %ntid.x, |7|     ; 9
    imad |1|, %ntid.y, %ctaid.y     ; 10: B and C uniform
    imad |1|, %ntid.z, %ctaid.z     ; 11
    imad |1|, %nctaid.x, %nctaid.y  ; 12
    imad %nctaid.z, |1|, %warpid    ; 13: A and C uniform, B a ring read
    imad |1|, c[k], %nwarpid        ; 14
    iadd |1|, c[4]                  ; 15: B: a parameter word by number (flag)
    imad c[m], c[k], |1|            ; 16: A and B parameters
    ldg [c[in]+4]                   ; 17: a uniform memory base
    iadd |1|, |2|                   ; 18: acc
    mov 0                           ; 19: i
LOOP:                               ; acc at |2|, i at |1|; 5 positions an iteration
    iadd |2|, %ntid.x
    iadd |2|, 1
    isetp.lt |1|, c[n]              ; B uniform: a uniform trip count
    mov |3|
    mov |3|
    brnz |3|, LOOP
    ssy J1                          ; RP = R: acc at |2|
    brnz c[flag], T1                ; a uniform condition: every lane one way
    mov 11                          ; R
    sync
T1: mov 22                          ; R
    sync
J1: iadd |1|, |3|                   ; R + 1
    ssy J2
    brz %ctaid.x, T2                ; taken in the blocks of ctaid.x 0 only
    mov 33                          ; R + 2
    sync
T2: mov 44                          ; R + 2
    sync
J2: iadd |1|, |2|                   ; R + 3
    stg [|26|], |1|                 ; the address (position 8; R = 20 + 5n = 30)
    exit
"""

#: hands s and t with uniform operands (none names a hand) beside sources on both hands, and a
#: uniform branch condition; each thread stores t + k + (2 if flag else 1)
HANDS = """.kernel hands
.form dflow
.param out
.param k
.param flag
.ring 16 8
.dmax 15
.variant hands uniform-operands
    s2r %tid.x                      ; s0
    s2r %tid.z -> t                 ; t0
    imad |t1|, %ntid.x, |1| -> t    ; t1: the thread in the block (A on t, B uniform, C on s)
    imad %ctaid.z, %nctaid.x, %ctaid.x -> t ; t2: the block's linear index
    ishl |t1|, 3 -> t               ; t3
    iadd |t1|, |t3| -> t            ; t4: global thread index
    ishl |t1|, 2 -> t               ; t5
    iadd c[out], |t1| -> t          ; t6: the address
    iadd |t6|, c[k]                 ; s1
    ssy JOIN
    brnz c[flag], A
    mov 1                           ; s2
    sync
A:  mov 2                           ; s2
    sync
JOIN:
    iadd |1|, |2|                   ; s3
    stg [|t1|], |1|
    exit
"""


def _expected_operands(block: tuple[int, int, int], t: int) -> int:
    """What thread ``t`` of block ``block`` (ctaid) stores: the kernel's arithmetic in Python."""
    cx, cy, cz = block
    (nx, ny, nz), (gx, gy, gz) = BLOCK, GRID
    warpid, nwarpid = t // 4, THREADS // 4
    v = cx * nx + t
    v = v * ny + cy
    v = v * nz + cz
    v = v * gx + gy
    v = gz * v + warpid
    v = v * K + nwarpid
    v = v + FLAG
    v = M * K + v
    acc = v + IN1
    for _ in range(N):
        acc += nx
    acc += 22 if FLAG else 11
    acc += 44 if cx == 0 else 33
    return acc & 0xFFFFFFFF


def _operands_case(outputs: dict, name: str = "operands", text: str | None = None) -> CosimCase:
    kernel = assemble(text or OPERANDS).only

    def setup(dev):
        out = dev.alloc(4 * THREADS * BLOCKS)
        inp = dev.upload(np.array([0, IN1, 0, 0], dtype=np.uint32))
        outputs[name] = out
        return [out, inp, K, M, FLAG, N]

    return CosimCase(name, kernel, BLOCK, setup, grid=GRID)


def test_operands_kernel_covers_every_position_and_uniform_register():
    """The kernel below does use what the co-simulation claims to test."""
    kernel = assemble(OPERANDS).only
    flagged = {f for ins in kernel.code for f in "abc" if ins.is_uniform(f)}
    named = {uniform_operand(getattr(ins, f)) for ins in kernel.code for f in "abc" if ins.is_uniform(f)}
    assert flagged == {"a", "b", "c"}
    assert set(UNIFORM_SREGS) <= named and {0, 1, 2, 3, 4, 5} <= named  # every sreg, every parameter word
    branches = [ins for ins in kernel.code if ins.op in (Opcode.BRNZ, Opcode.BRZ) and ins.is_uniform("a")]
    assert len(branches) == 2
    assert any(ins.op is Opcode.LDG and ins.is_uniform("a") for ins in kernel.code)


def _hands_case(outputs: dict) -> CosimCase:
    kernel = assemble(HANDS).only

    def setup(dev):
        out = dev.alloc(4 * THREADS * BLOCKS)
        outputs["hands"] = out
        return [out, K, FLAG]

    return CosimCase("hands", kernel, BLOCK, setup, grid=GRID)


def _blocks():
    """ctaid of each block in the order of the linear index (x fastest)."""
    gx, gy, gz = GRID
    return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]


def _stored(r, outputs: dict) -> list[int] | None:
    base = outputs[r.name] // 4
    return r.memory[base:base + THREADS * BLOCKS].tolist() if r.memory is not None else None


def test_golden_model_runs_the_kernels_as_written():
    """The kernels' arithmetic (in Python) is what the golden model computes: the co-simulation
    below compares the core with a model that runs them as intended."""
    from dualflow.machine.functional import FunctionalConfig
    from dualflow.models.device import Device

    for text, params, want in (
            (OPERANDS, lambda out, inp: [out, inp, K, M, FLAG, N],
             [_expected_operands(b, t) for b in _blocks() for t in range(THREADS)]),
            (HANDS, lambda out, inp: [out, K, FLAG],
             [t + K + (2 if FLAG else 1) for _ in _blocks() for t in range(THREADS)])):
        dev = Device(FunctionalConfig(warp_size=CORE["warp_size"]))
        out = dev.alloc(4 * THREADS * BLOCKS)
        inp = dev.upload(np.array([0, IN1, 0, 0], dtype=np.uint32))
        dev.launch(assemble(text).only, grid=GRID, block=BLOCK, params=params(out, inp))
        assert dev.copy_out(out, THREADS * BLOCKS).tolist() == want


def test_uniform_kernels_match_the_golden_model():
    """One ring and hands, each on a core built with uniform operands."""
    outputs: dict = {}
    problems = []
    runs = [(CoreParams(**CORE, uniform_operands=True), [_operands_case(outputs)]),
            (CoreParams(**CORE, rings=(16, 8), dmax=15, uniform_operands=True), [_hands_case(outputs)])]
    want = {"operands": [_expected_operands(b, t) for b in _blocks() for t in range(THREADS)],
            "hands": [t + K + (2 if FLAG else 1) for _ in _blocks() for t in range(THREADS)]}
    for params, cases in runs:
        for r in run_cosim(params, cases):
            if not r.ok or not r.compare.matched or r.fault is not None:
                problems.append(r.summary())
            elif _stored(r, outputs) != want[r.name]:
                problems.append(f"{r.name}: out {_stored(r, outputs)}, expected {want[r.name]}")
    assert not problems, "\n\n".join(problems)


def test_core_without_the_variant_traps_illegal_and_past_param_words_traps_param(monkeypatch):
    """A core built without uniform operands stops with ILLEGAL at the first word with a uniform
    flag (pc 1); the golden model has no run to compare with: it refuses such a word in any kernel
    that does not declare the variant, and cosim refuses the kernel on that core (test_rtl_cli.py),
    so ``check_case`` is bypassed here. A uniform operand naming a parameter word past the core's
    ``param_words`` traps PARAM at its pc, as ``ldc`` past them does (the golden model has no such
    limit)."""
    with pytest.raises(AsmError, match="a uniform operand needs .variant uniform-operands"):
        assemble(OPERANDS.replace(".variant uniform-operands\n", ""))
    monkeypatch.setattr(cosim, "check_case", lambda params, case: None)
    outputs: dict = {}
    r, = run_cosim(CoreParams(**CORE), [_operands_case(outputs)])
    assert r.trap is not None and r.trap.startswith("ILLEGAL at pc 1 "), r.summary()
    small = CoreParams(**CORE, uniform_operands=True, param_words=4)  # c[m] (word 3) is held, c[flag] (4) not
    r, = run_cosim(small, [_operands_case(outputs)])
    pc = next(i for i, ins in enumerate(assemble(OPERANDS).only.code)
              if any(ins.is_uniform(f) and getattr(ins, f) in (4, 5) for f in "abc"))
    assert r.trap is not None and r.trap.startswith(f"PARAM at pc {pc} "), r.summary()


def test_uniform_operands_params():
    p = CoreParams(uniform_operands=True)
    assert p.to_dict()["uniform_operands"] is True and CoreParams(**p.to_dict()) == p
    assert "uniform_operands" not in CoreParams().to_dict()  # the original core's dictionary as it was
    with pytest.raises(ConfigError, match="uniform operands are of the DFLOW form"):
        CoreParams(mode="base", uniform_operands=True)
    with pytest.raises(ConfigError, match="uniform_operands must be True or False"):
        CoreParams(uniform_operands=1)


# ------------------------------------------------------------------ random programs
#: The core of the random campaigns: the 4 x 4 core of tests/testbench/test_rtl_random.py, with uniform operands.
SMALL = dict(warp_size=4, warps=4)


def test_random_programs_use_uniform_operands_on_a_core_built_with_them():
    """The ``uniform`` parameter set converts every program with uniform operands: over a few seeds
    they appear in positions A, B and C, name parameter words and special registers, and are
    branch conditions; the golden model runs each as it runs the REG program. A BASE core of the
    set is the default one."""
    from dualflow.isa import Variant
    from dualflow.testbench.campaign import core_params
    from dualflow.testbench.randprog.core_programs import core_program
    from dualflow.testbench.randprog.generator import make_inputs, run

    params = core_params("uniform", "dflow", SMALL)
    assert params.uniform_operands and not core_params("uniform", "base").uniform_operands
    positions, named, branches = set(), set(), 0
    for seed in range(12):
        prog = core_program(params, seed)
        kernel = prog.kernel
        assert Variant.UNIFORM_OPERANDS in kernel.variants
        for ins in kernel.code:
            for f in "abc":
                if ins.is_uniform(f):
                    positions.add(f)
                    named.add(type(uniform_operand(getattr(ins, f))).__name__)
            branches += ins.op in (Opcode.BRNZ, Opcode.BRZ) and ins.is_uniform("a")
        reg = core_program(CoreParams(mode="base", **SMALL), seed)
        p = prog.program
        inputs = make_inputs(p.data_seed)
        assert np.array_equal(run(kernel, p.launch, p.n, p.slots, inputs),
                              run(reg.kernel, p.launch, p.n, p.slots, inputs))
    assert positions == {"a", "b", "c"} and named == {"int", "SpecialReg"} and branches > 0


def test_a_short_uniform_campaign_passes():
    """Random programs with uniform operands on the 4 x 4 core built with them, every record compared."""
    from dualflow.testbench.campaign import run_campaign

    camp = run_campaign(800, 3, modes=("dflow",), param_sets=("uniform",), overrides=SMALL, batch=2)
    try:
        assert camp.ok, camp.report()
        assert camp.tallies["dflow"].compared >= 800
    finally:
        camp.coverage.close()


@pytest.mark.slow
def test_a_uniform_campaign():
    """About 30,000 compared warp instructions of programs with uniform operands, faults included."""
    from dualflow.testbench.campaign import run_campaign

    camp = run_campaign(30_000, 17, modes=("dflow",), param_sets=("uniform",), overrides=SMALL, batch=8)
    try:
        assert camp.ok, camp.report()
        assert camp.tallies["dflow"].compared >= 30_000 and camp.tallies["dflow"].faults_met > 0
    finally:
        camp.coverage.close()

"""SIMT control flow of the functional model (docs/isa.md, "Control flow"): divergence and
reconvergence in both operand forms against per-thread Python references, the retirement trace
(order, masks, DFLOW register pointer at joins, ring slots), barriers and determinism."""

from __future__ import annotations

import numpy as np
import pytest
from programs import FORMS, M32, asm, launch_out

from dualflow.isa import SPECS, Form, Opcode
from dualflow.models import Device, FunctionalConfig, Trace

FORM_IDS = [f.value for f in FORMS]
CFG8 = FunctionalConfig(warp_size=8)


def check_trace_invariants(trace: Trace, kernel) -> None:
    """Per warp: seq is 0..n-1; DFLOW: rp advances by one per producer, by k per rpinc k, is
    unchanged by other non-producers except sync/exit (which resume a stack entry); dst of a
    producer is rp mod ring; lanes outside the mask hold 0."""
    for key, recs in trace.by_warp().items():
        assert [r.seq for r in recs] == list(range(len(recs))), key
        assert recs[-1].op == "exit", key
        for r in recs:
            for field in (r.values, r.addrs, r.data):
                if field is not None:
                    assert all(v == 0 for lane, v in enumerate(field) if not r.mask >> lane & 1), r
        if kernel.form is not Form.DFLOW:
            continue
        for r in recs:
            assert r.dst == (r.rp % kernel.ring if SPECS[kernel.code[r.pc].op].produces else None), r
        for prev, nxt in zip(recs, recs[1:]):
            ins = kernel.code[prev.pc]
            if SPECS[ins.op].produces:
                assert nxt.rp == prev.rp + 1, (prev, nxt)
            elif ins.op is Opcode.RPINC:
                assert nxt.rp == prev.rp + ins.imm, (prev, nxt)
            elif ins.op not in (Opcode.SYNC, Opcode.EXIT):
                assert nxt.rp == prev.rp, (prev, nxt)


# --------------------------------------------------------------------------------------------
# if / else
# --------------------------------------------------------------------------------------------

IFELSE = {
    Form.REG: """
.kernel ifelse
.form reg
.param out in
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i
    ishl r4, r3, 2
    ldc r5, in
    iadd r5, r5, r4
    ldg r6, [r5]                ; x
    iand r7, r6, 1
    ssy J
    brz r7, EVEN
    imul r8, r6, 3              ; odd: 3x + 1
    iadd r8, r8, 1
    sync
EVEN:
    ishr r8, r6, 1              ; even: x / 2
    sync
J:
    iadd r8, r8, r3
    ldc r9, out
    iadd r9, r9, r4
    stg [r9], r8
    exit
""",
    Form.DFLOW: """
.kernel ifelse
.form dflow
.param out in
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 i
    ishl |1|, 2                 ; P4
    ldc in                      ; P5
    iadd |1|, |2|               ; P6
    ldg [|1|]                   ; P7 x
    iand |1|, 1                 ; P8
    ssy J
    brz |1|, EVEN               ; RP 9
    imul |2|, 3                 ; P9
    iadd |1|, 1                 ; P10 y
    sync
EVEN:
    rpinc 1                     ; P9 pad
    ishr |3|, 1                 ; P10 y
    sync
J:                              ; RP 11
    iadd |1|, |8|               ; P11 y + i
    ldc out                     ; P12
    iadd |1|, |9|               ; P13
    stg [|1|], |3|
    exit
""",
}


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_if_else(form):
    rng = np.random.default_rng(5)
    n = 60
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x[:4] = [0xFFFFFFFF, 0, 1, 0x80000000]
    dev = Device(CFG8)
    dout, dx = dev.alloc(4 * n), dev.upload(x)
    res = dev.launch(asm(IFELSE[form]), 3, 20, [dout, dx], trace=True)
    out = dev.copy_out(dout, n)
    want = [((3 * int(v) + 1 if v & 1 else int(v) >> 1) + i) & M32 for i, v in enumerate(x)]
    assert out.tolist() == want
    check_trace_invariants(res.trace, asm(IFELSE[form]))


# --------------------------------------------------------------------------------------------
# Nested if / else, three levels, different lane patterns at each level
# --------------------------------------------------------------------------------------------

NEST = {
    Form.REG: """
.kernel nest
.form reg
.param out
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i
    iand r4, r3, 1
    ssy J1
    brz r4, ELSE1
    iand r5, r3, 2              ; odd i
    ssy J2
    brz r5, ELSE2
    iand r6, r3, 4
    ssy J3
    brz r6, ELSE3
    mov r7, 1
    sync
ELSE3:
    mov r7, 2
    sync
J3:
    sync
ELSE2:
    mov r7, 3
    sync
J2:
    sync
ELSE1:
    isetp.ge r5, r3, 10         ; even i
    ssy J4
    brz r5, ELSE4
    mov r7, 4
    sync
ELSE4:
    iand r6, r3, 4
    ssy J5
    brz r6, ELSE5
    mov r7, 5
    sync
ELSE5:
    mov r7, 6
    sync
J5:
    sync
J4:
    sync
J1:
    imul r8, r7, 10
    iadd r8, r8, r3
    ldc r9, out
    ishl r10, r3, 2
    iadd r9, r9, r10
    stg [r9], r8
    exit
""",
    Form.DFLOW: """
.kernel nest
.form dflow
.param out
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 i
    iand |1|, 1                 ; P4
    ssy J1
    brz |1|, ELSE1              ; RP 5
    iand |2|, 2                 ; P5
    ssy J2
    brz |1|, ELSE2              ; RP 6
    iand |3|, 4                 ; P6
    ssy J3
    brz |1|, ELSE3              ; RP 7
    mov 1                       ; P7 v
    sync
ELSE3:
    mov 2                       ; P7 v
    sync
J3:                             ; RP 8
    sync
ELSE2:                          ; RP 6
    rpinc 1                     ; P6 pad
    mov 3                       ; P7 v
    sync
J2:                             ; RP 8
    sync
ELSE1:                          ; RP 5
    isetp.ge |2|, 10            ; P5
    ssy J4
    brz |1|, ELSE4              ; RP 6
    rpinc 1                     ; P6 pad
    mov 4                       ; P7 v
    sync
ELSE4:
    iand |3|, 4                 ; P6
    ssy J5
    brz |1|, ELSE5              ; RP 7
    mov 5                       ; P7 v
    sync
ELSE5:
    mov 6                       ; P7 v
    sync
J5:
    sync
J4:
    sync
J1:                             ; RP 8: v at |1|, i at |5|
    imul |1|, 10                ; P8
    iadd |1|, |6|               ; P9
    ldc out                     ; P10
    ishl |8|, 2                 ; P11
    iadd |1|, |2|               ; P12
    stg [|1|], |4|
    exit
""",
}


def nest_leaf(i: int) -> int:
    if i & 1:
        return (1 if i & 4 else 2) if i & 2 else 3
    return 4 if i >= 10 else (5 if i & 4 else 6)


def nest_reference(i: int) -> int:
    return nest_leaf(i) * 10 + i


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_nested_if_else_three_levels(form):
    kernel = asm(NEST[form])
    _, res, out = launch_out(kernel, 2, 13, 26, config=CFG8, trace=True)
    assert out.tolist() == [nest_reference(i) for i in range(26)]
    check_trace_invariants(res.trace, kernel)
    # Every leaf ran with exactly the lanes of its pattern: the six `mov`s of v by lane count.
    movs = {}
    for r in res.trace.records:
        ins = kernel.code[r.pc]
        if ins.op is Opcode.MOV and ins.bimm:
            movs[ins.imm] = movs.get(ins.imm, 0) + bin(r.mask).count("1")
    assert movs == {v: sum(1 for i in range(26) if nest_leaf(i) == v) for v in range(1, 7)}


# --------------------------------------------------------------------------------------------
# Loops with lane-dependent trip counts
# --------------------------------------------------------------------------------------------

LOOP = {
    Form.REG: """
.kernel loop
.form reg
.param out
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i
    imul r4, r3, 5
    iand r4, r4, 7
    iadd r4, r4, 1              ; trips 1..8
    mov r5, 0                   ; acc
    mov r6, 0                   ; k
    ssy JOIN
LOOP:
    imul r5, r5, 3
    iadd r5, r5, r6
    iadd r5, r5, r3
    iadd r6, r6, 1
    isetp.lt r7, r6, r4
    brnz r7, LOOP
    sync
JOIN:
    ldc r8, out
    ishl r9, r3, 2
    iadd r8, r8, r9
    stg [r8], r5
    exit
""",
    Form.DFLOW: """
.kernel loop
.form dflow
.param out
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 i
    ldc out                     ; P4
    ishl |2|, 2                 ; P5
    iadd |1|, |2|               ; P6 &out[i]
    imul |4|, 5                 ; P7
    iand |1|, 7                 ; P8
    iadd |1|, 1                 ; P9 trips
    mov |7|                     ; P10 i
    mov |5|                     ; P11 &out[i]
    mov |3|                     ; P12 trips
    mov 0                       ; P13 acc
    mov 0                       ; P14 k
    ssy JOIN
LOOP:                           ; R: i R-5, &out R-4, trips R-3, acc R-2, k R-1
    imul |2|, 3                 ; R+0
    iadd |1|, |2|               ; R+1
    iadd |1|, |7|               ; R+2 acc'
    iadd |4|, 1                 ; R+3 k'
    isetp.lt |1|, |7|           ; R+4
    mov |10|                    ; R+5 i
    mov |10|                    ; R+6 &out
    mov |10|                    ; R+7 trips
    mov |6|                     ; R+8 acc'
    mov |6|                     ; R+9 k'
    brnz |6|, LOOP              ; next R = R+10
    stg [|4|], |2|              ; each exit group stores on its own path
    sync
JOIN:
    exit
""",
}


def loop_reference(i: int) -> tuple[int, int]:
    trips = ((i * 5) & 7) + 1
    acc = 0
    for k in range(trips):
        acc = (acc * 3 + k + i) & M32
    return acc, trips


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_loop_with_lane_dependent_trip_count(form):
    kernel = asm(LOOP[form])
    _, res, out = launch_out(kernel, 2, 20, 40, config=CFG8, trace=True)
    assert out.tolist() == [loop_reference(i)[0] for i in range(40)]
    check_trace_invariants(res.trace, kernel)
    brnz = [pc for pc, ins in enumerate(kernel.code) if ins.op is Opcode.BRNZ][0]
    for (block, warp), recs in res.trace.by_warp().items():
        threads = [block * 20 + warp * 8 + lane for lane in range(8) if warp * 8 + lane < 20]
        trips = {i: loop_reference(i)[1] for i in threads}
        # The loop branch issues max(trips) times; in iteration k its mask holds the lanes still looping.
        masks = [r.mask for r in recs if r.pc == brnz]
        assert masks == [sum(1 << (i - threads[0]) for i in threads if trips[i] > k)
                         for k in range(max(trips.values()))]
        if form is Form.DFLOW:  # the join takes the RP of the lanes that left last (R = 15)
            assert recs[-1].rp == 15 + 10 * max(trips.values())


# --------------------------------------------------------------------------------------------
# Early exit, exit from inside a loop
# --------------------------------------------------------------------------------------------

EARLY = {
    Form.REG: """
.kernel early
.form reg
.param out n
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; i
    ldc r4, n
    isetp.ge r5, r3, r4
    brnz r5, DONE               ; early exit past n, no ssy
    iand r6, r3, 7
    iadd r6, r6, 1              ; trips
    iand r7, r3, 3
    isetp.eq r7, r7, 1          ; flag: may leave inside the loop
    mov r8, 0                   ; acc
    mov r9, 0                   ; k
    ldc r10, out
    ishl r11, r3, 2
    iadd r10, r10, r11          ; &out[i]
    ssy JOIN
LOOP:
    imad r8, r3, r9, r8
    iadd r8, r8, 1
    isetp.eq r12, r9, 2
    iand r12, r12, r7
    brnz r12, LEAVE             ; exit from inside the loop
    iadd r9, r9, 1
    isetp.lt r12, r9, r6
    brnz r12, LOOP
    sync
JOIN:
    stg [r10], r8
DONE:
    exit
LEAVE:
    iadd r13, r8, 0xdead0000
    stg [r10], r13
    exit
""",
    Form.DFLOW: """
.kernel early
.form dflow
.param out n
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 i
    ldc n                       ; P4
    isetp.ge |2|, |1|           ; P5
    brnz |1|, DONE              ; RP 6
    iand |3|, 7                 ; P6
    iadd |1|, 1                 ; P7 trips
    iand |5|, 3                 ; P8
    isetp.eq |1|, 1             ; P9 flag
    ldc out                     ; P10
    ishl |8|, 2                 ; P11
    iadd |2|, |1|               ; P12 &out[i]
    mov |10|                    ; P13 i
    mov |7|                     ; P14 trips
    mov |6|                     ; P15 flag
    mov |4|                     ; P16 &out[i]
    mov 0                       ; P17 acc
    mov 0                       ; P18 k
    ssy JOIN
LOOP:                           ; R: i R-6, trips R-5, flag R-4, &out R-3, acc R-2, k R-1
    imul |6|, |1|               ; R+0 i*k
    iadd |1|, |3|               ; R+1
    iadd |1|, 1                 ; R+2 acc'
    isetp.eq |4|, 2             ; R+3
    iand |1|, |8|               ; R+4
    brnz |1|, LEAVE             ; RP R+5
    iadd |6|, 1                 ; R+5 k'
    isetp.lt |1|, |11|          ; R+6
    mov |13|                    ; R+7 i
    mov |13|                    ; R+8 trips
    mov |13|                    ; R+9 flag
    mov |13|                    ; R+10 &out
    mov |9|                     ; R+11 acc'
    mov |7|                     ; R+12 k'
    brnz |7|, LOOP              ; next R = R+13
    stg [|3|], |2|
    sync
JOIN:
DONE:
    exit
LEAVE:                          ; RP R+5
    iadd |3|, 0xdead0000        ; R+5
    stg [|9|], |1|
    exit
""",
}


def early_reference(i: int) -> int:
    trips, flag, acc = (i & 7) + 1, (i & 3) == 1, 0
    for k in range(trips):
        acc = (acc + i * k + 1) & M32
        if k == 2 and flag:
            return (acc + 0xDEAD0000) & M32
    return acc


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_early_exit_and_exit_inside_loop(form):
    kernel = asm(EARLY[form])
    sentinel = 0xA5A5A5A5
    n = 50  # threads 50..63 exit at once: warp 6 partly, warp 7 entirely
    _, res, out = launch_out(kernel, 2, 32, 64, extra_params=[n], config=CFG8, trace=True, fill=sentinel)
    assert out.tolist() == [early_reference(i) for i in range(n)] + [sentinel] * (64 - n)
    assert sum(1 for i in range(n) if (i & 7) == 5 and (i & 3) == 1) > 0  # some lanes do leave the loop
    check_trace_invariants(res.trace, kernel)
    per_warp = res.trace.by_warp()
    # warp 7 (threads 56..63) leaves uniformly: its records stop at the early-exit branch + exit
    assert [r.op for r in per_warp[(1, 3)]] == ["s2r", "s2r", "s2r", "imad", "ldc", "isetp.ge", "brnz",
                                                "exit"]


EXIT_BRANCH_DFLOW = """
.kernel exb
.form dflow
.param out
    s2r %tid.x                  ; P0
    ldc out                     ; P1
    ishl |2|, 2                 ; P2
    iadd |1|, |2|               ; P3 &out[tid]
    iand |4|, 1                 ; P4
    {cond}                      ; P5 branch condition
    ssy J
    brnz |1|, TAKEN             ; RP 6
{fall}
TAKEN:
{taken}
J:
    iadd |1|, 1                 ; y + 1
    stg [|5|], |1|              ; &out at P3
    exit
"""

_EXIT_ARM = """    iadd |6|, 0xbad00          ; odd lanes: three producers, a store, then exit
    mov |1|
    mov |1|
    stg [|6|], |1|
    exit
"""
_SYNC_ARM = """    imul |6|, 7                 ; even lanes: y = 7 tid at P6
    sync
"""


@pytest.mark.parametrize("exit_first", [True, False], ids=["exit-path-taken", "exit-path-deferred"])
@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_exit_inside_divergent_branch(form, exit_first):
    """Odd lanes leave inside an if (after advancing RP further than the other arm); even lanes
    reach the join. DFLOW: the join's RP is that of the arm that reached sync, so y is at |1|."""
    if form is Form.REG:
        text = f"""
.kernel exb
.form reg
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r1, r1, r2
    iand r3, r0, 1
    {"mov r3, r3" if exit_first else "ixor r3, r3, 1"}
    ssy J
    brnz r3, TAKEN
    {"imul r4, r0, 7" if exit_first else "iadd r6, r0, 0xbad00"}
    {"sync" if exit_first else "stg [r1], r6"}
    {"" if exit_first else "exit"}
TAKEN:
    {"iadd r6, r0, 0xbad00" if exit_first else "imul r4, r0, 7"}
    {"stg [r1], r6" if exit_first else "sync"}
    {"exit" if exit_first else ""}
J:
    iadd r4, r4, 1
    stg [r1], r4
    exit
"""
    else:
        cond = "mov |1|" if exit_first else "ixor |1|, 1"
        fall, taken = (_SYNC_ARM, _EXIT_ARM) if exit_first else (_EXIT_ARM, _SYNC_ARM)
        text = EXIT_BRANCH_DFLOW.format(cond=cond, fall=fall, taken=taken)
    kernel = asm(text)
    _, res, out = launch_out(kernel, 2, 12, 12, config=CFG8, trace=True)
    # tid-based: both blocks write the same words with the same values
    assert out.tolist() == [(0xBAD00 + t if t & 1 else 7 * t + 1) for t in range(12)]
    check_trace_invariants(res.trace, kernel)
    if form is Form.DFLOW:
        join = {name: pc for pc, name in kernel.labels.items()}["J"]
        for recs in res.trace.by_warp().values():  # RP 7: the syncing arm's, not the exiting arm's 9
            assert [r.rp for r in recs if r.pc == join] == [7]
    join = {name: pc for pc, name in kernel.labels.items()}["J"]
    for (_, warp), recs in res.trace.by_warp().items():  # only the even lanes reach the join
        assert [r.mask for r in recs if r.pc == join] == [0x55 if warp == 0 else 0x05]


UNIFORM = {
    Form.REG: """
.kernel uni
.form reg
.param out
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    ssy J
    brnz r1, B1                 ; uniform: every lane of a block agrees
    imul r2, r0, 3
    sync
B1:
    iadd r2, r0, 1000
    iadd r2, r2, r1
    sync
J:
    s2r r3, %ntid.x
    imad r4, r1, r3, r0
    ishl r4, r4, 2
    ldc r5, out
    iadd r5, r5, r4
    stg [r5], r2
    exit
""",
    Form.DFLOW: """
.kernel uni
.form dflow
.param out
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    ssy J
    brnz |1|, B1                ; RP 2
    rpinc 1                     ; P2 pad
    imul |3|, 3                 ; P3 y
    sync
B1:
    iadd |2|, 1000              ; P2
    iadd |1|, |2|               ; P3 y
    sync
J:                              ; RP 4
    s2r %ntid.x                 ; P4
    imad |4|, |1|, |5|          ; P5
    ishl |1|, 2                 ; P6
    ldc out                     ; P7
    iadd |1|, |2|               ; P8
    stg [|1|], |6|
    exit
""",
}


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_uniform_branches_do_not_diverge(form):
    kernel = asm(UNIFORM[form])
    _, res, out = launch_out(kernel, 3, 16, 48, config=CFG8, trace=True)
    assert out.tolist() == [3 * t if b == 0 else 1000 + t + b for b in range(3) for t in range(16)]
    check_trace_invariants(res.trace, kernel)
    for (block, _), recs in res.trace.by_warp().items():
        assert all(r.mask == 0xFF for r in recs)
        pcs = [r.pc for r in recs]
        arm = [4, 5] if block == 0 else [6, 7, 8]
        if form is Form.DFLOW:
            arm = [4, 5, 6] if block == 0 else [7, 8, 9]
        assert pcs[:4] == [0, 1, 2, 3] and pcs[4:4 + len(arm)] == arm
        if form is Form.DFLOW:
            assert recs[4 + len(arm)].rp == 4  # padded arms: same join RP whichever arm ran


# --------------------------------------------------------------------------------------------
# Trace: order, masks, RP at the join, ring slots, inactive lanes
# --------------------------------------------------------------------------------------------

TRACE_PROG = {
    Form.REG: """
.kernel tr
.form reg
.param cond
    s2r r0, %tid.x              ; 0
    ishl r1, r0, 2              ; 1
    ldc r2, cond                ; 2
    iadd r2, r2, r1             ; 3
    ldg r3, [r2]                ; 4
    ssy J                       ; 5
    brnz r3, LONG               ; 6
    iadd r4, r3, 10             ; 7  fall-through arm: short
    sync                        ; 8
LONG:
    iadd r4, r3, 20             ; 9  taken arm: long
    imul r4, r4, 3              ; 10
    iadd r4, r4, 1              ; 11
    sync                        ; 12
J:
    s2r r5, %laneid             ; 13
    exit                        ; 14
""",
    Form.DFLOW: """
.kernel tr
.form dflow
.ring 4
.dmax 3
.param cond
    s2r %tid.x                  ; 0  P0
    ishl |1|, 2                 ; 1  P1
    ldc cond                    ; 2  P2
    iadd |1|, |2|               ; 3  P3
    ldg [|1|]                   ; 4  P4 c
    ssy J                       ; 5
    brnz |1|, LONG              ; 6  RP 5
    iadd |1|, 10                ; 7  P5        short arm: RP 5 -> 6
    sync                        ; 8
LONG:
    iadd |1|, 20                ; 9  P5        long arm: RP 5 -> 8
    imul |1|, 3                 ; 10 P6
    iadd |1|, 1                 ; 11 P7
    sync                        ; 12
J:
    s2r %laneid                 ; 13
    exit                        ; 14
""",
}

#: warp 0 diverges (taken lanes 1, 3, 6, 7), warp 1 takes the long arm only, warp 2 the short one.
COND = [0, 3, 0, 5, 0, 0, 7, 9] + [5] * 8 + [0] * 8


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_trace_order_masks_rp_and_slots(form):
    kernel = asm(TRACE_PROG[form])
    dev = Device(CFG8)
    dc = dev.upload(np.array(COND, np.uint32))
    res = dev.launch(kernel, 1, 24, [dc], trace=True)
    check_trace_invariants(res.trace, kernel)
    per_warp = res.trace.by_warp()
    assert sorted(per_warp) == [(0, 0), (0, 1), (0, 2)]
    head = list(range(7))
    taken, fall = 0b11001010, 0b00110101
    # warp 0: taken path first, then the fall-through path, then the join
    w0 = per_warp[(0, 0)]
    assert [r.pc for r in w0] == head + [9, 10, 11, 12, 7, 8, 13, 14]
    assert [r.mask for r in w0] == [0xFF] * 7 + [taken] * 4 + [fall] * 2 + [0xFF] * 2
    assert [r.pc for r in per_warp[(0, 1)]] == head + [9, 10, 11, 12, 13, 14]
    assert [r.pc for r in per_warp[(0, 2)]] == head + [7, 8, 13, 14]
    # values of inactive lanes are 0
    by_pc = {r.pc: r for r in w0}
    assert by_pc[9].values == (0, 23, 0, 25, 0, 0, 27, 29)
    assert by_pc[7].values == (10, 0, 10, 0, 10, 10, 0, 0)
    assert by_pc[10].values == (0, 69, 0, 75, 0, 0, 81, 87)
    assert by_pc[4].addrs == tuple(dc + 4 * lane for lane in range(8))
    assert by_pc[13].values == tuple(range(8))
    if form is Form.REG:
        assert all(r.rp is None for r in res.trace.records)
        assert [by_pc[pc].dst for pc in (0, 4, 7, 9, 13, 5, 6, 8, 14)] == [0, 3, 4, 4, 5] + [None] * 4
        return
    # DFLOW: rp per record; the join's RP is the max of the arriving paths
    assert [r.rp for r in w0] == [0, 1, 2, 3, 4, 5, 5, 5, 6, 7, 8, 5, 6, 8, 9]
    assert [r.rp for r in per_warp[(0, 1)]] == [0, 1, 2, 3, 4, 5, 5, 5, 6, 7, 8, 8, 9]
    assert [r.rp for r in per_warp[(0, 2)]] == [0, 1, 2, 3, 4, 5, 5, 5, 6, 6, 7]
    # dst = rp mod ring (4): the ring wraps
    assert [r.dst for r in w0] == [0, 1, 2, 3, 0, None, None, 1, 2, 3, None, 1, None, 0, None]


def test_trace_reversed_arms_join_rp_is_still_the_max():
    """The long arm is the deferred (fall-through) one: the join RP is still the long arm's."""
    text = TRACE_PROG[Form.DFLOW].replace("brnz |1|, LONG", "brz |1|, LONG")
    kernel = asm(text)
    dev = Device(CFG8)
    dc = dev.upload(np.array(COND, np.uint32))
    res = dev.launch(kernel, 1, 24, [dc], trace=True)
    check_trace_invariants(res.trace, kernel)
    w0 = res.trace.by_warp()[(0, 0)]
    # brz: the lanes with c == 0 are taken (LONG first), the others run the short arm afterwards
    assert [r.pc for r in w0] == list(range(7)) + [9, 10, 11, 12, 7, 8, 13, 14]
    assert [r.rp for r in w0] == [0, 1, 2, 3, 4, 5, 5, 5, 6, 7, 8, 5, 6, 8, 9]
    assert [r.mask for r in w0][7:13] == [0b00110101] * 4 + [0b11001010] * 2
    assert [r.rp for r in res.trace.by_warp()[(0, 1)]][-2:] == [6, 7]  # only the short arm ran
    assert [r.rp for r in res.trace.by_warp()[(0, 2)]][-2:] == [8, 9]  # only the long arm ran


# --------------------------------------------------------------------------------------------
# DFLOW: exit after an inner ssy must not raise the outer join's RP
# --------------------------------------------------------------------------------------------

EXIT_AFTER_SSY = """
.kernel k
.form dflow
.param out
    s2r %laneid                 ; 0  P0
    iand |1|, 1                 ; 1  P1
    ssy J                       ; 2
    brz |1|, EVEN               ; 3  RP 2: even lanes taken
    mov 1                       ; 4  P2 odd lanes
    mov 2                       ; 5  P3
    mov 3                       ; 6  P4
    {inner}
    exit                        ; 8
EVEN:
    iadd |2|, 100               ; 9  P2
    sync                        ; 10 RP 3
J:
    ldc out                     ; 11
    s2r %laneid                 ; 12
    ishl |1|, 2                 ; 13
    iadd |1|, |3|               ; 14
    stg [|1|], |5|              ; 15 the even lanes' P2
    exit                        ; 16
J2:
    exit
"""


def _exit_after_ssy(inner: str, read: bool = True):
    text = EXIT_AFTER_SSY.format(inner=inner)
    if not read:
        text = text.replace("stg [|1|], |5|", "nop")
    kernel = asm(text)
    _, res, out = launch_out(kernel, 1, 8, 8, config=CFG8, trace=True)
    recs = res.trace.by_warp()[(0, 0)]
    return out, [r.rp for r in recs if r.pc == 11]


def test_exit_inside_branch_does_not_raise_join_rp():
    """The odd path advances RP to 5 and exits; only the even path (RP 3) reaches the sync."""
    out, join_rp = _exit_after_ssy("nop                         ; 7")
    assert join_rp == [3]
    assert out.tolist() == [100, 0xA5A5A5A5, 102, 0xA5A5A5A5, 104, 0xA5A5A5A5, 106, 0xA5A5A5A5]


def test_exit_after_inner_ssy_does_not_raise_join_rp():
    """Same, but the exiting path pushed an inner SYNC entry before leaving: dropping that entry
    must not pass its RP (5) to the outer join either; the even lanes' read then stays legal."""
    _, join_rp = _exit_after_ssy("ssy J2                      ; 7", read=False)
    assert join_rp == [3]
    out, join_rp = _exit_after_ssy("ssy J2                      ; 7")
    assert join_rp == [3]
    assert out.tolist() == [100, 0xA5A5A5A5, 102, 0xA5A5A5A5, 104, 0xA5A5A5A5, 106, 0xA5A5A5A5]


# --------------------------------------------------------------------------------------------
# Barriers
# --------------------------------------------------------------------------------------------

EXCHANGE = {
    Form.REG: """
.kernel xchg
.form reg
.param out
.shared 64
    s2r r0, %tid.x              ; 0
    s2r r1, %warpid             ; 1
    ishl r2, r0, 2              ; 2  &s[tid]
    brz r1, DELAY               ; 3  warp 0 writes late, at the end of the program
SYNCPT:
    {bar}                       ; 4
    brz r1, DONE                ; 5
    lds r3, [r2-32]             ; 6  warp 1 reads s[tid - 8], written by warp 0
    ldc r4, out
    iadd r4, r4, r2
    stg [r4-32], r3
DONE:
    exit
DELAY:
    mov r5, 20
SPIN:
    iadd r5, r5, -1
    brnz r5, SPIN
    imul r6, r0, 7
    iadd r6, r6, 3
    sts [r2], r6
    bra SYNCPT
""",
    Form.DFLOW: """
.kernel xchg
.form dflow
.param out
.shared 64
    s2r %tid.x                  ; P0
    s2r %warpid                 ; P1
    brz |1|, DELAY              ; RP 2
SYNCPT:
    {bar}
    s2r %warpid                 ; Q0 (rematerialized: the warps arrive with different RPs)
    brz |1|, DONE
    s2r %tid.x                  ; Q1
    ishl |1|, 2                 ; Q2
    lds [|1|-32]                ; Q3
    ldc out                     ; Q4
    iadd |1|, |3|               ; Q5
    stg [|1|-32], |3|
DONE:
    exit
DELAY:
    mov 20                      ; S-1 counter
SPIN:
    iadd |1|, -1                ; S
    brnz |1|, SPIN
    s2r %tid.x
    imul |1|, 7
    iadd |1|, 3
    s2r %tid.x
    ishl |1|, 2
    sts [|1|], |3|
    bra SYNCPT
""",
}


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_barrier_orders_shared_memory_between_warps(form):
    kernel = asm(EXCHANGE[form].format(bar="bar"))
    _, res, out = launch_out(kernel, 2, 16, 8, config=CFG8, trace=True)
    assert out.tolist() == [7 * t + 3 for t in range(8)]
    check_trace_invariants(res.trace, kernel)
    # Without the barrier warp 1 reads before warp 0 has written: the test can tell.
    _, _, out = launch_out(asm(EXCHANGE[form].format(bar="nop")), 2, 16, 8, config=CFG8)
    assert out.tolist() == [0] * 8


EXITED = {
    Form.REG: """
.kernel exited
.form reg
.param out
.shared 64
    s2r r0, %tid.x
    s2r r1, %warpid
    ishl r2, r0, 2
    isetp.eq r3, r1, 2
    brz r3, WORK
    exit                        ; warp 2 leaves before anyone reaches the barrier
WORK:
    isetp.ge r3, r0, 12
    brnz r3, DONE               ; lanes 12..15 of warp 1 leave (after the others wait)
    iadd r4, r0, 1000
    sts [r2], r4
    bar
    isub r5, rz, r2
    iadd r5, r5, 44
    lds r6, [r5]                ; s[11 - tid]
    ldc r7, out
    iadd r7, r7, r2
    stg [r7], r6
DONE:
    exit
""",
    Form.DFLOW: """
.kernel exited
.form dflow
.param out
.shared 64
    s2r %tid.x                  ; P0
    s2r %warpid                 ; P1
    isetp.eq |1|, 2             ; P2
    brz |1|, WORK               ; RP 3
    exit
WORK:
    isetp.ge |3|, 12            ; P3
    brnz |1|, DONE              ; RP 4
    iadd |4|, 1000              ; P4
    ishl |5|, 2                 ; P5
    sts [|1|], |2|
    bar
    isub rz, |1|                ; P6
    iadd |1|, 44                ; P7
    lds [|1|]                   ; P8
    ldc out                     ; P9
    iadd |1|, |5|               ; P10
    stg [|1|], |3|
DONE:
    exit
""",
}


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_exited_warps_and_lanes_do_not_block_a_barrier(form):
    kernel = asm(EXITED[form])
    _, res, out = launch_out(kernel, 2, 24, 24, config=CFG8, trace=True)
    assert out.tolist() == [1011 - t for t in range(12)] + [0xA5A5A5A5] * 12
    recs = res.trace.by_warp()
    warp2 = (["s2r", "s2r", "ishl", "isetp.eq", "brz", "exit"] if form is Form.REG
             else ["s2r", "s2r", "isetp.eq", "brz", "exit"])
    for block in (0, 1):  # warp 2 stops at its exit, before the barrier
        assert [r.op for r in recs[(block, 2)]] == warp2
        assert [r.mask for r in recs[(block, 0)] if r.op == "bar"] == [0xFF]
    bar_masks = [r.mask for r in recs[(1, 1)] if r.op == "bar"]
    assert bar_masks == [0x0F]


# --------------------------------------------------------------------------------------------
# Determinism and the trace file
# --------------------------------------------------------------------------------------------

def _traced_nest(config=CFG8):
    kernel = asm(NEST[Form.DFLOW])
    _, res, out = launch_out(kernel, 2, 13, 26, config=config, trace=True)
    return res, out


def test_same_launch_twice_is_identical():
    a, out_a = _traced_nest()
    b, out_b = _traced_nest()
    assert a.trace == b.trace and len(a.trace.records) > 100
    assert a.stats == b.stats and a.stats.to_dict() == b.stats.to_dict()
    assert out_a.tolist() == out_b.tolist()
    # batching blocks differently changes neither the per-warp records nor the counts
    c, out_c = _traced_nest(FunctionalConfig(warp_size=8, batch_warps=1))
    assert c.trace.by_warp() == a.trace.by_warp() and c.stats == a.stats and out_c.tolist() == out_a.tolist()


def test_trace_file_round_trip_records(tmp_path):
    res, _ = _traced_nest()
    path = tmp_path / "t.jsonl"
    res.trace.write(path)
    back = Trace.read(path)
    assert back.records == res.trace.records
    assert (back.kernel, back.form, back.warp_size) == ("nest", "dflow", 8)
    assert back.config["grid"] == [2, 1, 1] and back.config["ring"] == 32 and back.config["dmax"] == 31
    assert back.header() == __import__("json").loads(path.read_text().splitlines()[0])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_trace_file_round_trip_equals_original(tmp_path):
    """The whole object, header configuration included (tuples must not come back as lists)."""
    res, _ = _traced_nest()
    path = tmp_path / "t.jsonl"
    res.trace.write(path)
    assert Trace.read(path) == res.trace

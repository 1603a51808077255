"""Run-time error paths of the functional model: every fault names kernel, pc, block, warp, lane
and address (docs/isa.md: memory rules, legal DFLOW reads, barriers), launch-shape errors are
ConfigError, host memory errors are DeviceMemoryError; nothing is silently tolerated."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from programs import FORMS, asm

from dualflow.common.errors import ConfigError, DualflowError, KernelFault
from dualflow.isa import Form
from dualflow.models import Device, FunctionalConfig
from dualflow.models.memory import DeviceMemoryError

FORM_IDS = [f.value for f in FORMS]
CFG8 = FunctionalConfig(warp_size=8)


def launch_fault(kernel, grid, block, params=(), config=CFG8, setup=None) -> KernelFault:
    dev = Device(config)
    if setup is not None:
        params = setup(dev)
    with pytest.raises(KernelFault) as info:
        dev.launch(kernel, grid, block, params)
    assert isinstance(info.value, DualflowError)
    return info.value


def check_fault(exc: KernelFault, *, kernel: str, pc: int, block, warp, lane, address=None, phrase: str,
                instruction: str | None = None, line: int | None = None) -> None:
    assert (exc.kernel, exc.pc, exc.block, exc.warp, exc.lane, exc.address) == (
        kernel, pc, block, warp, lane, address), str(exc)
    text = str(exc)
    assert phrase in exc.message and phrase in text, text
    assert text.startswith(f"kernel '{kernel}', pc {pc}, "), text
    if block is not None:
        assert "block ({},{},{})".format(*block) in text
    if warp is not None:
        assert f"warp {warp}," in text or f"warp {warp}:" in text
    if lane is not None:
        assert f"lane {lane}" in text
    else:
        assert "lane " not in text.split(": ", 1)[0]
    if address is not None:
        assert f"address {address:#x}" in text
    if instruction is not None:
        assert f"`{instruction}`" in text
    if line is not None:
        assert f"(<string>:{line})" in text


# --------------------------------------------------------------------------------------------
# Global memory
# --------------------------------------------------------------------------------------------

def _global_kernel(form: Form, access: str, extra: str = ""):
    if form is Form.REG:
        mem = {"load": "ldg r6, [r5]", "store": "stg [r5], r3"}[access]
        text = f"""
.kernel oob
.form reg
.param a
    s2r r0, %tid.x          ; 0
    s2r r1, %ctaid.x        ; 1
    s2r r2, %ntid.x         ; 2
    imad r3, r1, r2, r0     ; 3 i
    ishl r4, r3, 2          ; 4
    ldc r5, a               ; 5
    iadd r5, r5, r4         ; 6
    {mem}
    exit
"""
    else:
        mem = {"load": "ldg [|1|]", "store": "stg [|1|], |4|"}[access]
        text = f"""
.kernel oob
.form dflow
.param a
    s2r %tid.x              ; 0
    s2r %ctaid.x            ; 1
    s2r %ntid.x             ; 2
    imad |2|, |1|, |3|      ; 3 i
    ishl |1|, 2             ; 4
    ldc a                   ; 5
    iadd |1|, |2|           ; 6
    {mem}
    exit
"""
    return asm(text)


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("access", ["load", "store"])
@pytest.mark.parametrize("where", ["past-the-end", "gap", "freed"])
def test_global_out_of_bounds(form, access, where):
    """27 valid words; threads i = 0..31 (2 blocks of 16, warps of 8): the first bad one is i = 27,
    block 1, warp 1, lane 3 (or, freed, i = 0)."""
    kernel = _global_kernel(form, access)

    def setup(dev):
        if where == "past-the-end":
            dev.alloc(64)  # at 0x100
            a = dev.alloc(108)  # at 0x200: nothing after it
        else:
            a = dev.alloc(108)  # at 0x100
            dev.alloc(64)  # at 0x200: 0x16c..0x1ff is a gap between two allocations
        if where == "freed":
            dev.free(a)
        return [a]
    exc = launch_fault(kernel, 2, 16, setup=setup)
    if where == "freed":
        check_fault(exc, kernel="oob", pc=7, block=(0, 0, 0), warp=0, lane=0, address=0x100,
                    phrase="out-of-bounds global access (not inside any allocation)")
    else:
        base = 0x200 if where == "past-the-end" else 0x100
        check_fault(exc, kernel="oob", pc=7, block=(1, 0, 0), warp=1, lane=3, address=base + 108,
                    phrase="out-of-bounds global access (not inside any allocation)", line=12)


def test_global_in_bounds_control_case():
    """The same kernel with 32 valid words runs (so the faults above come from the addresses)."""
    for form in FORMS:
        for access in ("load", "store"):
            dev = Device(CFG8)
            a = dev.alloc(128)
            dev.launch(_global_kernel(form, access), 2, 16, [a])
            if access == "store":
                assert dev.copy_out(a, 32).tolist() == list(range(32))


def test_global_access_far_outside_memory_and_null():
    kernel = asm("""
.kernel far
.param a
    ldc r0, a
    ldg r1, [r0-4]
    exit
""")
    for addr, bad in ((0x7FFFFFF0, 0x7FFFFFEC), (0x100000, 0xFFFFC), (4, 0), (0, 0xFFFFFFFC)):
        exc = launch_fault(kernel, 1, 3, [addr])
        check_fault(exc, kernel="far", pc=1, block=(0, 0, 0), warp=0, lane=0, address=bad,
                    phrase="out-of-bounds global access", instruction="ldg r1, [r0-4]", line=5)


@pytest.mark.parametrize("op", ["ldg r7, [r5]", "stg [r5], r3", "lds r7, [r5]", "stl [r5], r3"])
def test_misaligned_access(op):
    """Only thread i = 13 (block 0, warp 1, lane 5) adds 2 to its word address."""
    kernel = asm(f"""
.kernel mis
.param a
.shared 256
.local 256
    s2r r0, %tid.x          ; 0
    s2r r1, %ctaid.x        ; 1
    s2r r2, %ntid.x         ; 2
    imad r3, r1, r2, r0     ; 3
    ishl r4, r3, 2          ; 4
    ldc r5, a               ; 5
    iadd r5, r5, r4         ; 6
    isetp.eq r6, r3, 13     ; 7
    ishl r6, r6, 1          ; 8
    iadd r5, r5, r6         ; 9
    {op}                    ; 10
    exit
""")
    space = {"ldg": "global", "stg": "global", "lds": "shared", "stl": "local"}[op[:3]]
    is_global = space == "global"

    def setup(dev):
        return [dev.alloc(256) if is_global else 0]
    exc = launch_fault(kernel, 2, 16, setup=setup)
    check_fault(exc, kernel="mis", pc=10, block=(0, 0, 0), warp=1, lane=5,
                address=(0x100 if is_global else 0) + 13 * 4 + 2,
                phrase=f"misaligned {space} access", instruction=op)


# --------------------------------------------------------------------------------------------
# Shared and local memory bounds
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("access", ["load", "store"])
def test_shared_out_of_bounds(form, access):
    """.shared 100 = 25 words; word i = ctaid*16 + tid: first bad i = 25 -> block 1, warp 1, lane 1."""
    if form is Form.REG:
        mem = "lds r5, [r4]" if access == "load" else "sts [r4], r3"
        body = f"""
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ishl r4, r3, 2
    {mem}
    exit"""
    else:
        mem = "lds [|1|]" if access == "load" else "sts [|1|], |2|"
        body = f"""
    s2r %tid.x
    s2r %ctaid.x
    s2r %ntid.x
    imad |2|, |1|, |3|
    ishl |1|, 2
    {mem}
    exit"""
    kernel = asm(f".kernel sh\n.form {form.value}\n.shared 100\n{body}\n")
    exc = launch_fault(kernel, 2, 16)
    check_fault(exc, kernel="sh", pc=5, block=(1, 0, 0), warp=1, lane=1, address=100,
                phrase="out-of-bounds shared access (block has 100 bytes of shared memory)")


def test_shared_negative_offset_and_no_shared_memory():
    exc = launch_fault(asm(".kernel sh\n.shared 64\n    lds r0, [rz-4]\n    exit\n"), 1, 8)
    check_fault(exc, kernel="sh", pc=0, block=(0, 0, 0), warp=0, lane=0, address=0xFFFFFFFC,
                phrase="out-of-bounds shared access")
    exc = launch_fault(asm(".kernel sh\n    sts [rz], rz\n    exit\n"), 1, 8)
    check_fault(exc, kernel="sh", pc=0, block=(0, 0, 0), warp=0, lane=0, address=0,
                phrase="block has 0 bytes of shared memory")


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("access", ["load", "store"])
def test_local_out_of_bounds(form, access):
    """.local 24 = 6 words per thread; word (ctaid.y*4 + tid) on grid (1,2,1) x block 4: first bad
    is ctaid.y = 1, tid 2 -> block (0,1,0), warp 0, lane 2, address 24."""
    if form is Form.REG:
        mem = "ldl r5, [r4]" if access == "load" else "stl [r4], r3"
        body = f"""
    s2r r0, %tid.x
    s2r r1, %ctaid.y
    ishl r1, r1, 2
    iadd r3, r1, r0
    ishl r4, r3, 2
    {mem}
    exit"""
    else:
        mem = "ldl [|1|]" if access == "load" else "stl [|1|], |2|"
        body = f"""
    s2r %tid.x
    s2r %ctaid.y
    ishl |1|, 2
    iadd |1|, |3|
    ishl |1|, 2
    {mem}
    exit"""
    kernel = asm(f".kernel loc\n.form {form.value}\n.local 24\n{body}\n")
    exc = launch_fault(kernel, (1, 2, 1), 4)
    check_fault(exc, kernel="loc", pc=5, block=(0, 1, 0), warp=0, lane=2, address=24,
                phrase="out-of-bounds local access (thread has 24 bytes of local memory)")


# --------------------------------------------------------------------------------------------
# Illegal DFLOW reads
# --------------------------------------------------------------------------------------------

UNPADDED = """
.kernel unpadded
.form dflow
    s2r %tid.x                  ; 0  P0
    isetp.lt |1|, 13            ; 1  P1: tid < 13 runs the long arm
    ssy J                       ; 2
    brz |1|, ELSE               ; 3  RP 2: tid >= 13 taken
    mov 10                      ; 4  P2
    mov 11                      ; 5  P3
    sync                        ; 6
ELSE:
    mov 20                      ; 7  P2 only: not padded
    sync                        ; 8
J:                              ;    RP 4
    iadd |1|, 1                 ; 9  position 3: the ELSE lanes never wrote it
    exit
"""


def test_illegal_read_of_a_position_the_lane_never_wrote():
    exc = launch_fault(asm(UNPADDED), 2, 16)
    check_fault(exc, kernel="unpadded", pc=9, block=(0, 0, 0), warp=1, lane=5,
                phrase="illegal DFLOW read of |1| at RP 4: this lane's path never wrote position 3",
                instruction="iadd |1|, 1", line=15)
    # Padded with rpinc and producing at the same position, the same program is legal.
    fixed = UNPADDED.replace("    mov 20                      ; 7  P2 only: not padded",
                             "    rpinc 1\n    mov 20")
    dev = Device(CFG8)
    res = dev.launch(asm(fixed), 2, 16, trace=True)
    assert {r.values for r in res.trace.records if r.op == "iadd"} == {(12,) * 8, (12,) * 5 + (21,) * 3}


def test_illegal_read_before_any_write_at_rp_above_one():
    kernel = asm(".kernel first\n.form dflow\n    mov 1\n    iadd |3|, 1\n    exit\n")
    exc = launch_fault(kernel, 1, 8)
    check_fault(exc, kernel="first", pc=1, block=(0, 0, 0), warp=0, lane=0,
                phrase="illegal DFLOW read of |3| at RP 1: this lane's path never wrote position -2")


@pytest.mark.parametrize("text", ["    iadd |1|, 5", "    mov 7\n    iadd |2|, 5"], ids=["rp0", "rp1"])
def test_illegal_read_of_position_minus_one(text):
    kernel = asm(f".kernel first\n.form dflow\n{text}\n    exit\n")
    exc = launch_fault(kernel, 1, 8)
    assert "never wrote position -1" in str(exc)


def test_illegal_read_of_an_overwritten_position():
    """A value produced, then four more producers, then read at |5|. With .ring 8 this is legal;
    with a 4-slot ring (.ring 4 .dmax 3) the slot was reused by position 4. The assembler rejects
    |5| when .dmax is 3, so the 4-slot kernel is the same code with its ring metadata replaced
    (as a binary could carry it): the model must still never return the stale value."""
    text = """
.kernel ovw
.form dflow
.ring 8
.dmax 7
    s2r %laneid                 ; 0 P0
    mov 1                       ; 1 P1
    mov 2                       ; 2 P2
    mov 3                       ; 3 P3
    mov 4                       ; 4 P4 reuses slot 0 of a 4-slot ring
    iadd |5|, 100               ; 5 reads position 0
    exit
"""
    kernel = asm(text)
    res = Device(CFG8).launch(kernel, 1, 8, trace=True)
    assert res.trace.records[5].values == tuple(range(100, 108))
    # A valid kernel cannot reach this (every distance <= dmax < ring); shrink the ring of the
    # built kernel behind validation's back, as a corrupted binary or a timing bug would.
    small = dataclasses.replace(kernel)
    small.ring, small.dmax = 4, 3
    exc = launch_fault(small, 1, 8)
    check_fault(exc, kernel="ovw", pc=5, block=(0, 0, 0), warp=0, lane=0,
                phrase="illegal DFLOW read of |5| at RP 5: position 0 was overwritten by position 4 "
                       "(ring of 4 slots)")


def test_illegal_read_after_loop_by_early_lanes():
    """docs/isa.md rule 3: after a loop with a lane-dependent trip count the join has the RP of
    the lanes that left last; an early lane reading a loop value there faults (lanes 0 and 1
    leave after one iteration, lane 7 after seven: join RP = 3 + 4 * 7)."""
    kernel = asm("""
.kernel lp
.form dflow
    s2r %laneid                 ; 0  P0 lane
    mov 0                       ; 1  P1 k
    mov |2|                     ; 2  P2 lane: at LOOP (R) k is at R-2, lane at R-1
    ssy J                       ; 3
LOOP:
    iadd |2|, 1                 ; 4  R+0 k+1
    isetp.lt |1|, |2|           ; 5  R+1 k+1 < lane
    mov |2|                     ; 6  R+2 k+1
    mov |4|                     ; 7  R+3 lane
    brnz |3|, LOOP              ; 8  next R = R+4
    sync                        ; 9
J:
    iadd |2|, 1                 ; 10 reads position 29, written only by lane 7
    exit
""")
    exc = launch_fault(kernel, 1, 8)
    check_fault(exc, kernel="lp", pc=10, block=(0, 0, 0), warp=0, lane=0,
                phrase="illegal DFLOW read of |2| at RP 31: this lane's path never wrote position 29")
    # With a uniform trip count (seven iterations for every lane) the same read is legal.
    uniform = asm("""
.kernel lpu
.form dflow
    mov 7                       ; 0  P0 "lane" = 7 for everyone
    mov 0                       ; 1  P1 k
    mov |2|                     ; 2  P2
    ssy J                       ; 3
LOOP:
    iadd |2|, 1                 ; 4
    isetp.lt |1|, |2|           ; 5
    mov |2|                     ; 6
    mov |4|                     ; 7
    brnz |3|, LOOP              ; 8
    sync                        ; 9
J:
    iadd |2|, 1                 ; 10
    exit
""")
    res = Device(CFG8).launch(uniform, 1, 8, trace=True)
    assert res.trace.records[-2].rp == 31 and res.trace.records[-2].values == (8,) * 8


# --------------------------------------------------------------------------------------------
# Control-flow faults
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
def test_barrier_inside_divergent_branch_deadlocks(form):
    """Block 0 is uniform and reaches the barrier; in block 1 the odd lanes run their arm first,
    then the even lanes arrive at bar without them."""
    if form is Form.REG:
        head = """
    s2r r0, %laneid             ; 0
    s2r r1, %ctaid.x            ; 1
    iand r2, r0, 1              ; 2
    iand r2, r2, r1             ; 3 odd lanes of block 1
    ssy J                       ; 4
    brnz r2, ODD                ; 5"""
    else:
        head = """
    s2r %laneid                 ; 0
    s2r %ctaid.x                ; 1
    iand |2|, 1                 ; 2
    iand |1|, |2|               ; 3
    ssy J                       ; 4
    brnz |1|, ODD               ; 5"""
    kernel = asm(f""".kernel dl
.form {form.value}
{head}
    bar                         ; 6
    sync                        ; 7
ODD:
    sync                        ; 8
J:
    exit                        ; 9
""")
    exc = launch_fault(kernel, 2, 8)
    check_fault(exc, kernel="dl", pc=6, block=(1, 0, 0), warp=0, lane=1, phrase="barrier deadlock",
                instruction="bar")
    assert "lanes {0,2,4,6} wait while lanes {1,3,5,7} can never arrive" in exc.message


def test_sync_without_ssy():
    kernel = asm("""
.kernel ns
    s2r r0, %ctaid.y            ; 0
    brz r0, DONE                ; 1 only blocks with ctaid.y = 1 go on
    s2r r1, %tid.x              ; 2
    sync                        ; 3
DONE:
    exit                        ; 4
""")
    exc = launch_fault(kernel, (1, 2, 1), 16)
    check_fault(exc, kernel="ns", pc=3, block=(0, 1, 0), warp=0, lane=None,
                phrase="sync with no pending ssy", instruction="sync", line=6)
    assert "kernel 'ns'" in str(exc) and "pc 3" in str(exc)


NO_EXIT = """
.kernel noexit
    s2r r0, %tid.x              ; 0
    iand r1, r0, 1              ; 1
    brnz r1, ODD                ; 2
    exit                        ; 3
ODD:
    iadd r0, r0, 1              ; 4 odd lanes fall off the end here
"""


def test_running_past_the_end_of_the_kernel():
    exc = launch_fault(asm(NO_EXIT), 1, 8)
    check_fault(exc, kernel="noexit", pc=4, block=(0, 0, 0), warp=0, lane=None,
                phrase="execution ran past the end of the kernel (5 instructions): a path ends without exit",
                instruction="iadd r0, r0, 1", line=8)


def test_running_past_the_end_in_the_timing_model():
    """The performance model fetches ahead, so it finds the fall-through at fetch: the same fault."""
    from dualflow.machine.presets import preset
    from dualflow.models.timing.device import TimingDevice

    dev = TimingDevice(preset("paper-rtx3080"))
    with pytest.raises(KernelFault, match="pc 4, .*execution ran past the end of the kernel"):
        dev.launch(asm(NO_EXIT), 1, 32)


def test_instruction_budget_exceeded_by_an_infinite_loop():
    kernel = asm(".kernel spin\n    nop\nLOOP:\n    bra LOOP\n    exit\n")
    cfg = FunctionalConfig(warp_size=8, max_warp_instructions=1000)
    exc = launch_fault(kernel, 1, 8, config=cfg)
    check_fault(exc, kernel="spin", pc=1, block=(0, 0, 0), warp=0, lane=None,
                phrase="instruction budget exceeded: more than 1000 warp instructions")


def test_instruction_budget_is_per_launch_across_batches():
    """202 warp instructions per one-warp block; batches of one block; the 5th block crosses 1000
    at its 193rd instruction, a brnz (pc 2)."""
    kernel = asm(".kernel cnt\n    mov r0, 100\nLOOP:\n    iadd r0, r0, -1\n    brnz r0, LOOP\n    exit\n")
    cfg = FunctionalConfig(warp_size=8, max_warp_instructions=1000, batch_warps=1)
    dev = Device(cfg)
    assert dev.launch(kernel, 4, 8).stats.warp_instructions == 4 * 202
    exc = launch_fault(kernel, 5, 8, config=cfg)
    check_fault(exc, kernel="cnt", pc=2, block=(4, 0, 0), warp=0, lane=None,
                phrase="instruction budget exceeded")


# --------------------------------------------------------------------------------------------
# Launch shape and configuration
# --------------------------------------------------------------------------------------------

SIMPLE = ".kernel k\n.param a\n    exit\n"


@pytest.mark.parametrize("grid, block, params, source, phrase", [
    (1, (33, 32), [0], SIMPLE, "block of 1056 threads exceeds the limit of 1024"),
    (1, (1, 1, 65), [0], SIMPLE, "block dimension z = 65 exceeds 64"),
    (1, (2048,), [0], SIMPLE, "block of 2048 threads exceeds the limit of 1024"),
    ((1, 65536), 1, [0], SIMPLE, "grid dimension y = 65536 exceeds 65535"),
    ((1, 1, 65536), 1, [0], SIMPLE, "grid dimension z = 65536 exceeds 65535"),
    (1, 1, [], SIMPLE, "kernel takes 1 parameters (a), got 0"),
    (1, 1, [1, 2], SIMPLE, "kernel takes 1 parameters (a), got 2"),
    (1, 1, [1 << 32], SIMPLE, "parameter a = 4294967296 is not a 32-bit integer or float"),
    (1, 1, [-(1 << 31) - 1], SIMPLE, "is not a 32-bit integer or float"),
    (1, 1, ["x"], SIMPLE, "parameter a = 'x' is not a 32-bit integer or float"),
    (1, 1, [], ".kernel k\n.shared 49156\n    exit\n", "49156 bytes of shared memory per block exceed 49152"),
    (1, 1, [], ".kernel k\n.local 16388\n    exit\n", "16388 bytes of local memory per thread exceed 16384"),
    ((2, 0), 1, [0], SIMPLE, "launch grid must be 1 to 3 positive integers, not (2, 0)"),
    ((1, 1, 1, 1), 1, [0], SIMPLE, "launch grid must be 1 to 3 positive integers"),
    ([], 1, [0], SIMPLE, "launch grid must be 1 to 3 positive integers, not []"),
    (-1, 1, [0], SIMPLE, "launch grid must be 1 to 3 positive integers, not -1"),
    ((2.0,), 1, [0], SIMPLE, "launch grid must be 1 to 3 positive integers"),
    ("ab", 1, [0], SIMPLE, "launch grid must be 1 to 3 positive integers"),
    (1, (4, -1), [0], SIMPLE, "launch block must be 1 to 3 positive integers, not (4, -1)"),
    (1, 0, [0], SIMPLE, "launch block must be 1 to 3 positive integers, not 0"),
])
def test_launch_shape_errors(grid, block, params, source, phrase):
    dev = Device()
    with pytest.raises(ConfigError) as info:
        dev.launch(asm(source), grid, block, params)
    assert phrase in str(info.value)
    assert "launch" in str(info.value)
    assert dev.history == []  # nothing ran


def test_launch_at_the_limits_runs():
    dev = Device()
    k = asm(".kernel k\n.shared 49152\n.local 16384\n    exit\n")
    assert dev.launch(k, 1, (1, 1, 64)).stats.warps == 2
    big = asm(".kernel big\n    exit\n")
    assert dev.launch(big, (2, 3, 1), (1024,)).stats.threads == 6 * 1024
    assert dev.launch(big, (1, 65535, 1), 1).stats.blocks == 65535


@pytest.mark.parametrize("grid", [1.5, None], ids=["float", "none"])
def test_non_sequence_launch_shape_is_a_config_error(grid):
    with pytest.raises(ConfigError):
        Device().launch(asm(SIMPLE), grid, 1, [0])


@pytest.mark.parametrize("timing", [False, True], ids=["functional", "timing"])
def test_launching_a_whole_module_names_its_kernels(timing):
    """A forgotten ``.only``: a clear ConfigError on both devices, not an AttributeError."""
    from dualflow.isa import assemble
    from dualflow.machine.presets import preset
    from dualflow.models.timing.device import TimingDevice

    module = assemble(".kernel one\n exit\n.kernel two\n exit\n", path="two.s")
    dev = TimingDevice(preset("paper-rtx3080")) if timing else Device()
    with pytest.raises(ConfigError, match=r"not the module two\.s \(kernels one, two\): pass module\.only"):
        dev.launch(module, 1, 32)
    with pytest.raises(ConfigError, match="launch takes a Kernel, not str"):
        dev.launch("one", 1, 32)
    assert not dev.launches and not dev.history


@pytest.mark.parametrize("kwargs, phrase", [
    ({"warp_size": 0}, "warp_size must be an integer in 1..32"),
    ({"warp_size": 33}, "warp_size must be an integer in 1..32"),
    ({"max_warp_instructions": 0}, "max_warp_instructions must be a positive integer"),
    ({"max_block_dim": (1, 2)}, "max_block_dim must be three positive integers"),
    ({"global_memory_bytes": 1022}, "global_memory_bytes must be a multiple of 4"),
])
def test_functional_config_validation(kwargs, phrase):
    with pytest.raises(ConfigError, match=phrase.replace(".", r"\.")):
        FunctionalConfig(**kwargs)


# --------------------------------------------------------------------------------------------
# Host memory
# --------------------------------------------------------------------------------------------

def test_host_memory_errors():
    dev = Device(FunctionalConfig(global_memory_bytes=4096))
    a = dev.alloc(16)
    b = dev.alloc(16)
    assert (a, b) == (0x100, 0x200)
    dev.copy_in(a, np.arange(4, dtype=np.uint32))
    cases = [
        (lambda: dev.copy_in(a, np.arange(5, dtype=np.uint32)), "[0x100, 0x114) is not inside an allocation"),
        (lambda: dev.copy_in(a + 16, np.arange(1, dtype=np.uint32)), "is not inside an allocation"),
        (lambda: dev.copy_in(0, np.arange(1, dtype=np.uint32)), "[0x0, 0x4) is not inside an allocation"),
        (lambda: dev.copy_in(-4, np.arange(1, dtype=np.uint32)), "is not inside an allocation"),
        (lambda: dev.copy_in(a + 2, np.arange(1, dtype=np.uint32)), "must be multiples of 4"),
        (lambda: dev.copy_in(a, np.arange(2, dtype=np.uint16)), "element size must be 4 bytes"),
        (lambda: dev.copy_out(b, 5), "copy from device: [0x200, 0x214) is not inside an allocation"),
        (lambda: dev.alloc(0), "alloc: size must be a positive number of bytes, not 0"),
        (lambda: dev.alloc(-8), "alloc: size must be a positive number of bytes"),
        (lambda: dev.alloc(4096), "alloc: 4096 bytes do not fit"),
        (lambda: dev.free(a + 4), "free: 0x104 is not the start of an allocation"),
    ]
    for action, phrase in cases:
        with pytest.raises(DeviceMemoryError) as info:
            action()
        assert phrase in str(info.value), (phrase, str(info.value))
        assert isinstance(info.value, DualflowError)
    # what is left still fits exactly; one more word does not
    c = dev.alloc(4096 - 0x300)
    assert c == 0x300
    with pytest.raises(DeviceMemoryError, match="do not fit"):
        dev.alloc(4)
    assert dev.copy_out(a, 4).tolist() == [0, 1, 2, 3]  # failed copies changed nothing
    dev.free(b)
    with pytest.raises(DeviceMemoryError):
        dev.copy_out(b, 1)
    with pytest.raises(DeviceMemoryError):
        dev.free(b)

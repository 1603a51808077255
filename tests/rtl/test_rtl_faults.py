"""Faulting programs on the RTL core: the golden model raises a KernelFault, the core (or the bench's
memory model) must stop for the same reason, and the records both retired before must agree. The
suite's faulting programs run at the RTL level of tests/kernels/test_directed_programs.py; here: illegal
DFLOW reads (the core's written bits, dualflow/rtl/written_bits.py) next to legal programs at the edge of
each rule, a barrier that completes after warps exit, paths past the end, and the fault-kind
rules."""

from __future__ import annotations

import pytest

from dualflow.common.errors import KernelFault
from dualflow.isa import Form, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.rtl.interfaces import TrapCause
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CosimCase, run_cosim
from dualflow.testbench.faults import check_fault, golden_kind

CORE = dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2)


#: Every slot written once by every lane (positions 0..31 of the 32-slot ring), so that a position
#: a lane later skips finds an older lap in its slot, not an empty one: only the clears of the
#: written bits (rpinc, sync) can tell.
FILL = "    mov 7\n" * 32

#: Two arms of different length (odd lanes take FIRST and run first); the join reads position 36,
#: which only the long arm writes. Short arm first: the odd lanes park at the join and are
#: cleared when the even lanes arrive later (the join's RP rises past them); long arm first: the
#: even lanes arrive behind the join's RP. Padding the short arm (``rpinc 1``) makes it legal.
ARMS = """
.kernel arms
.form dflow
.param out
{fill}
    s2r %tid.x                  ; P32
    ldc out                     ; P33
    iand |2|, 1                 ; P34 odd
    ssy J
    brnz |1|, FIRST             ; RP 35
{second}
    sync
FIRST:
{first}
    sync
J:                              ; RP 37
    iadd |1|, 1                 ; position 36
    ishl |6|, 2
    iadd |6|, |1|
    stg [|1|], |3|
    exit
"""
LONG, SHORT, PADDED = "    mov 10\n    mov 11", "    mov 20", "    rpinc 1\n    mov 20"

#: ``rpinc {k}`` at RP 34 skips positions 34 .. 33+k; ``ishl |{d}|`` then reads 34 + k - d
#: (tid is at 32). Reading a skipped position is illegal even though its slot holds an older lap.
SKIP = """
.kernel skip
.form dflow
.param out
{fill}
    s2r %tid.x                  ; P32
    ldc out                     ; P33
    rpinc {k}
    ishl |{d}|, 2
    iadd |1|, |{d_out}|
    stg [|1|], |2|
    exit
"""

#: docs/isa.md rule 3 (tests/models/test_model_errors.py): lanes leave a loop after lane-id iterations;
#: the join has the RP of lane 3, the last to leave, and reads a position only lane 3 wrote.
#: With a uniform trip count (``{lane}`` = mov 3) the same read is legal.
LOOP = """
.kernel loop
.form dflow
.param out
    {lane}                      ; P0 trip count
    mov 0                       ; P1 k
    mov |2|                     ; P2: at LOOP (R) k is at R-2, the trip count at R-1
    ssy J
LOOP:
    iadd |2|, 1                 ; R+0 k+1
    isetp.lt |1|, |2|           ; R+1 k+1 < trip count
    mov |2|                     ; R+2 k+1
    mov |4|                     ; R+3 trip count
    brnz |3|, LOOP
    sync
J:
    iadd |2|, 1                 ; the last k of lane 3
    exit
"""

#: Legal at the edge: distance Dmax (31) reads the oldest slot still valid, twice, after the ring
#: has wrapped for later positions.
OLDEST = """
.kernel oldest
.form dflow
.param out
    s2r %tid.x                  ; P0
    ldc out                     ; P1
{fill29}
    ishl |31|, 2                ; RP 31 reads position 0
    iadd |31|, |1|              ; RP 32 reads position 1 (slot 1 of the next lap is still free)
    stg [|1|], |2|
    exit
"""

#: The odd lanes run 40 producers (their ring wraps past every slot) and exit; the even lanes then
#: read at ``|{d}|`` from RP 3: tid (``d`` = 3), legal: the written bits are per lane; or
#: position -27 (``d`` = 30), never written by an even lane, though the odd lanes wrote its slot.
WRAP = """
.kernel wrap
.form dflow
.param out
    s2r %tid.x                  ; P0
    ldc out                     ; P1
    iand |2|, 1                 ; P2
    brnz |1|, ODD               ; RP 3, no ssy: both paths exit
    ishl |{d}|, 2
    iadd |1|, |3|
    stg [|1|], |2|
    exit
ODD:
{fill40}
    s2r %tid.x
    ldc out
    ishl |2|, 2
    iadd |2|, |1|
    stg [|1|], |4|
    exit
"""

CORE_DFLOW = CoreParams(mode="dflow", **CORE)


def _case(name: str, text: str) -> CosimCase:
    return CosimCase(name, assemble(text).only, 16, lambda dev: [dev.alloc(64)])


#: name -> (program, the golden model's fault message contains this, or None: legal)
DFLOW_READS = {
    "never_written": ("""
.kernel never_written
.form dflow
.param out
    s2r %tid.x
    ldc out
    iadd |1|, |5|
    stg [|1|], |2|
    exit
""", "never wrote position -3"),
    "short_arm_first": (ARMS.format(fill=FILL, first=SHORT, second=LONG),
                        "never wrote position 36 (the slot last held position 4)"),
    "long_arm_first": (ARMS.format(fill=FILL, first=LONG, second=SHORT),
                        "never wrote position 36 (the slot last held position 4)"),
    "padded_arm": (ARMS.format(fill=FILL, first=LONG, second=PADDED), None),
    "rpinc_skipped": (SKIP.format(fill=FILL, k=2, d=2, d_out=4),
                        "never wrote position 34 (the slot last held position 2)"),
    "rpinc_past_ring": (SKIP.format(fill=FILL, k=40, d=1, d_out=1),
                        "never wrote position 73 (the slot last held position 9)"),
    "rpinc_kept": (SKIP.format(fill=FILL, k=2, d=4, d_out=4), None),
    "loop_early_lanes": (LOOP.format(lane="s2r %laneid"), "never wrote position 13"),
    "loop_uniform": (LOOP.format(lane="mov 3"), None),
    "oldest_slot": (OLDEST.format(fill29="    mov 5\n" * 29), None),
    "other_lanes_wrapped": (WRAP.format(fill40="    mov 9\n" * 40, d=3), None),
    "other_lanes_wrote": (WRAP.format(fill40="    mov 9\n" * 40, d=30), "never wrote position -27"),
}


def test_illegal_dflow_reads_trap_and_legal_ones_run():
    """Each illegal read traps DFLOW_READ at the golden model's pc; each legal program at the edge
    of a rule runs to the end with every record and the memory as the golden model's."""
    cases = [_case(name, text) for name, (text, _) in DFLOW_READS.items()]
    results = run_cosim(CORE_DFLOW, cases)
    problems = []
    for r in results:
        want = DFLOW_READS[r.name][1]
        if not r.ok or not r.compare.matched:
            problems.append(r.summary())
        elif want is None and r.fault is not None:
            problems.append(f"{r.name}: faulted: {r.fault.message}")
        elif want is not None and (r.fault is None or want not in r.fault.message
                                   or "the RTL trapped alike (DFLOW_READ" not in r.fault.message):
            problems.append(f"{r.name}: expected an illegal read ({want}), got {r.summary()}")
    assert not problems, "\n\n".join(problems)


def test_without_read_check_legal_programs_run_alike_and_illegal_reads_go_unseen():
    """``read_check=False`` (the core for area and power figures) drops the written bits: the legal
    programs at the edge of each rule still retire every record and the memory as the golden model
    does, and an illegal read no longer stops the core there."""
    legal = [name for name, (_, want) in DFLOW_READS.items() if want is None]
    illegal = ["never_written", "short_arm_first", "rpinc_skipped"]
    cases = [_case(name, DFLOW_READS[name][0]) for name in legal + illegal]
    results = run_cosim(CoreParams(mode="dflow", read_check=False, **CORE), cases)
    problems = []
    for r in results:
        if r.name in legal:
            if not r.ok or not r.compare.matched or r.fault is not None:
                problems.append(r.summary())
        elif r.fault is None or "the RTL trapped alike (DFLOW_READ" in r.fault.message:
            # past the read, the garbage it got may fault later (a misaligned store): not DFLOW_READ
            problems.append(f"{r.name}: expected the core to run past the illegal read, got {r.summary()}")
    assert not problems, "\n\n".join(problems)


#: Threads 6.. leave early, after a global load and store (so that they exit while the others
#: may already wait): warp 1 keeps lanes 0 and 1, warps 2 and 3 exit entirely. The barrier is
#: reached by converged warps (exited lanes no longer count) and completes once the last warp
#: that has not exited arrives: the shared words read after it were written before it.
BAR_AFTER_EXIT = """
.kernel bar_after_exit
.param out
.shared 64
    s2r r0, %tid.x
    ldc r6, out
    ishl r2, r0, 2
    iadd r6, r6, r2
    isetp.ge r1, r0, 6
    brnz r1, LEAVE
    imul r3, r0, 3
    sts [r2], r3
    bar
    ixor r4, r0, 1
    ishl r4, r4, 2
    lds r5, [r4]
    stg [r6], r5
    exit
LEAVE:
    ldg r7, [r6]
    iadd r7, r7, 5
    stg [r6], r7
    exit
"""


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_barrier_completes_after_warps_exit(mode: str):
    kernel = assemble(BAR_AFTER_EXIT).only
    if mode == "dflow":
        kernel, _ = convert_kernel(kernel)
        assert kernel.form is Form.DFLOW
    params = CORE_DFLOW if mode == "dflow" else CoreParams(mode=mode, **CORE)
    out = []

    def setup(dev):
        out.append(dev.alloc(64))
        return out

    (r,) = run_cosim(params, [CosimCase("bar_after_exit", kernel, 16, setup)])
    assert r.ok and r.fault is None and r.compare.matched == r.compare.model_records, r.summary()
    assert list(r.memory[out[0] // 4:][:16]) == [3 * (t ^ 1) for t in range(6)] + [5] * 10


#: Paths that run past the last instruction (the converter refuses such kernels, so each form is
#: written by hand): odd threads in REG form, every thread in DFLOW form.
NO_EXIT = {
    "base": """
.kernel no_exit
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r1, r1, r2
    iand r3, r0, 1
    brnz r3, ODD
    exit
ODD:
    stg [r1], r0
""",
    "dflow": """
.kernel no_exit
.form dflow
.param out
    s2r %tid.x
    ldc out
    stg [|1|], |2|
""",
}


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_running_past_the_end_traps(mode: str):
    params = CoreParams(mode=mode, **CORE)
    kernel = assemble(NO_EXIT[mode]).only
    (r,) = run_cosim(params, [CosimCase("no_exit", kernel, 16, lambda dev: [dev.alloc(64)])])
    assert r.ok and r.compare.matched > 0, r.summary()
    assert f"PC_RANGE at pc {len(kernel.code) - 1}" in r.fault.message


def _fault(message: str, pc: int = 7) -> KernelFault:
    return KernelFault(message, kernel="k", pc=pc, block=(0, 0, 0), warp=1, lane=2)


def test_fault_kinds():
    assert golden_kind(_fault("misaligned shared access (4-byte words need 4-byte alignment)")) == "MISALIGNED"
    assert golden_kind(_fault("out-of-bounds shared access (block has 64 bytes)")) == "SHARED_BOUNDS"
    assert golden_kind(_fault("out-of-bounds global access (not inside any allocation)")) == "bounds global"
    assert golden_kind(_fault("sync with no pending ssy on this warp's stack")) == "STACK_EMPTY"
    assert golden_kind(_fault("illegal DFLOW read of |3| at RP 9: never written")) == "DFLOW_READ"
    assert golden_kind(_fault("barrier deadlock: warps wait at a barrier that can never complete")) == "BARRIER"
    assert golden_kind(_fault("instruction budget exceeded")) == "instruction budget exceeded"


def test_fault_check_can_fail():
    bar = _fault("barrier deadlock: bar reached by a diverged warp; lanes {0} wait", pc=8)
    trap = {"cause": TrapCause.BARRIER.value, "pc": 8, "warp": 0, "block": 0}
    assert check_fault(bar, trap, None, False).agree
    assert not check_fault(bar, {**trap, "pc": 9}, None, False).agree  # same cause, another instruction
    assert not check_fault(bar, {**trap, "cause": TrapCause.STACK_EMPTY.value}, None, False).agree
    assert not check_fault(bar, None, None, True).agree  # the core hung
    oob = _fault("out-of-bounds global access (not inside any allocation)")
    assert check_fault(oob, None, "block 0: global access not inside any allocation: warp 1 lane 0", False).agree
    assert not check_fault(oob, None, "local access outside 8 bytes per thread: warp 1 lane 1", False).agree

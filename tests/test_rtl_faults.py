"""Faulting programs on the RTL core: the golden model raises a KernelFault, the core (or the bench's
memory model) must stop for the same reason, and the records both retired before must agree. The
suite's faulting programs run at the RTL level of tests/test_directed_programs.py; here: the kinds
the core does not detect, paths past the end, and the fault-kind rules."""

from __future__ import annotations

import pytest

from dualflow.errors import KernelFault
from dualflow.isa import assemble
from dualflow.rtl.params import CoreParams
from dualflow.rtl.trap import TrapCause
from dualflow.testbench.cosim import CosimCase, run_cosim
from dualflow.testbench.faults import check_fault, golden_kind

CORE = dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2)


#: A DFLOW read of a slot never written (distance 5 at RP 2): the functional model faults, the
#: core reads whatever the slot holds and goes on. A kind the core does not detect: the case must
#: fail and say so.
NEVER_WRITTEN = """
.kernel never_written
.form dflow
.param out
    s2r %tid.x
    ldc out
    iadd |1|, |5|
    stg [|1|], |2|
    exit
"""


def test_undetected_fault_kind_fails_the_case():
    params = CoreParams(mode="dflow", **CORE)
    case = CosimCase("never_written", assemble(NEVER_WRITTEN).only, 16, lambda dev: [dev.alloc(64)])
    (r,) = run_cosim(params, [case])
    assert r.fault is not None and not r.ok
    assert "the RTL finished normally: it does not detect this kind of fault (illegal DFLOW read" in r.fault.message


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
    assert golden_kind(_fault("illegal DFLOW read of |3| at RP 9: never written")).startswith("illegal DFLOW read")


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

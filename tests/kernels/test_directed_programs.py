"""The directed program suite (dualflow/kernels/directed.py) on every level: the functional model, the
timing model and the RTL core, each held to the programs' expected results (pymtl3 runs one test
class over FL/CL/RTL the same way).

Functional and timing levels: every program, both operand forms (DFLOW through the converter),
warps of 4 lanes (the RTL core's) and 32. RTL level: every program in one co-simulation run per
mode (one simulator build; the traces compare with the golden model's), the core's final memory
against each reference, the golden fault against each expected one. Adding a program to the
suite adds it to every level.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from rtl_param_sets import PARAM_SETS

from dualflow.common.errors import ConfigError, KernelFault
from dualflow.isa import Form, Variant, assemble
from dualflow.kernels.directed import (
    FAULT_PROGRAMS,
    PROGRAMS,
    RESERVED_SSY_DFLOW,
    expected_output,
    fault_mismatch,
    kernel,
    output_mismatches,
    program,
    source_pc,
)
from dualflow.machine.functional import FunctionalConfig
from dualflow.machine.mode import Mode
from dualflow.machine.presets import preset
from dualflow.models.device import Device
from dualflow.models.timing.device import TimingDevice
from dualflow.rtl.params import CoreParams
from dualflow.testbench.core.directed import directed_case, expectation_mismatches
from dualflow.testbench.cosim import CaseResult, run_cosim

NAMES = [*PROGRAMS, *FAULT_PROGRAMS]
WARP_SIZES = [4, 32]


def _device(level: str, mode: Mode, warp_size: int) -> Device:
    if level == "functional":
        return Device(FunctionalConfig(warp_size=warp_size))
    return TimingDevice(preset("paper-rtx3080").replace(mode=mode.value, num_sms=2, **{"sm.warp_size": warp_size}))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("warp_size", WARP_SIZES)
@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("level", ["functional", "timing"])
def test_model_level(level: str, mode: Mode, warp_size: int, name: str):
    prog = program(name)
    dev = _device(level, mode, warp_size)
    params = prog.setup(dev)
    k = kernel(name, mode.form)
    if prog.fault is None:
        dev.launch(k, grid=prog.grid, block=prog.block, params=params)
        assert not output_mismatches(name, dev.copy_out, params, warp_size)
    else:
        with pytest.raises(KernelFault) as info:
            dev.launch(k, grid=prog.grid, block=prog.block, params=params)
        assert fault_mismatch(name, info.value, mode.form) is None


def test_expectations_can_fail():
    """Expect-fail: a run checked against another warp size's reference (``alu`` reads lane and
    warp numbers and votes); faults of another kind, at another pc, or none at all; a core's
    final memory with one word wrong."""
    prog = program("alu")
    dev = Device(FunctionalConfig(warp_size=4))
    params = prog.setup(dev)
    dev.launch(kernel("alu", Mode.BASE.form), grid=prog.grid, block=prog.block, params=params)
    assert not output_mismatches("alu", dev.copy_out, params, 4)
    wrong = output_mismatches("alu", dev.copy_out, params, 32)
    assert wrong and wrong[0].startswith("alu: out[12] at ")
    form = Mode.BASE.form
    fault = KernelFault("misaligned global access", kernel="fault_misaligned", pc=7)
    assert fault_mismatch("misaligned", fault, form) is None
    assert "got kernel 'fault_misaligned', pc 6" in fault_mismatch(
        "misaligned", KernelFault("misaligned global access", kernel="fault_misaligned", pc=6), form)
    assert fault_mismatch("misaligned", KernelFault("out-of-bounds global access", kernel="k", pc=7), form)
    assert "finished without a fault" in fault_mismatch("misaligned", None, form)
    # The RTL level's check of the core's final memory, on a made-up result with one word wrong.
    params = CoreParams(mode="base", **PARAM_SETS["l4w4"])
    dev = Device()
    out = program("early_exit").setup(dev)[0]
    dev.copy_in(out, expected_output("early_exit", params.warp_size))
    result = CaseResult("early_exit", 1, None, memory=dev.memory.words.copy())
    assert not expectation_mismatches(result, params)
    result.memory[out // 4 + 3] ^= 1
    assert expectation_mismatches(result, params) == [f"early_exit: out[3] at {out + 12:#x} is 0x8, expected 0x9"]


def test_hand_written_dflow_form():
    """``reserved_ssy``'s DFLOW form is written by hand with ``.variant reserved-ssy`` (the
    converter writes none): the caller's ring and dmax, no REG pcs; without the reserved advance
    of its uniform region it does not compute its reference (block 1 reads the wrong positions
    after the join: a wrong address, a fault)."""
    k = kernel("reserved_ssy", Form.DFLOW, ring=64, dmax=20)
    assert (k.ring, k.dmax, k.variants) == (64, 20, frozenset({Variant.RESERVED_SSY}))
    assert not any(ins.op.name == "RPINC" for ins in k.code)
    with pytest.raises(ConfigError, match="written by hand"):
        source_pc("reserved_ssy", Form.DFLOW, 3)
    with pytest.raises(ValueError, match="no hand-written DFLOW form"):
        replace(program("global_bounds"), dflow_source=RESERVED_SSY_DFLOW)
    prog = program("reserved_ssy")
    dev = Device(FunctionalConfig(warp_size=4))
    params = prog.setup(dev)
    plain = assemble(RESERVED_SSY_DFLOW.replace("ssy JOIN, 3", "ssy JOIN")).only
    with pytest.raises(KernelFault, match="misaligned"):
        dev.launch(plain, grid=prog.grid, block=prog.block, params=params)


def _retired_before(trace, first_op: str, later_op: str) -> dict[int, bool]:
    """Per warp: did the first ``later_op`` (younger in program order) retire before the first
    ``first_op``?"""
    out: dict[int, bool] = {}
    position: dict[tuple[int, str], int] = {}
    for i, rec in enumerate(trace.records):
        position.setdefault((rec.warp, rec.op), i)
    for (warp, op), i in position.items():
        if op == first_op and (warp, later_op) in position:
            out[warp] = position[(warp, later_op)] < i
    return out


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_rtl_level(mode: str, tmp_path):
    """Every program on the core (4 lanes x 4 warps, GTO, 4 banks, 4 CUs, ALU latency 2): traces
    and final memory as the golden model's, a fault where it faults, and the suite's expected
    results. Then what these programs are built to show on the core."""
    params = CoreParams(mode=mode, **PARAM_SETS["l4w4"])
    results = run_cosim(params, [directed_case(name, params) for name in NAMES], report_dir=tmp_path)
    problems = []
    for r in results:
        if not r.ok or not r.compare.matched or (r.fault is None and r.compare.matched != r.compare.model_records):
            problems.append(r.summary())
        problems += expectation_mismatches(r, params)
    assert not problems, "\n\n".join(problems)
    assert [r.fault is not None for r in results] == [name in FAULT_PROGRAMS for name in NAMES]
    assert len(list(tmp_path.glob("*.json"))) == len(NAMES)
    # Out-of-order dispatch is real in DFLOW: behind a slow load and an instruction that waits
    # for it, younger independent work completes first (in at least one warp: with 4 collector
    # units, GTO may fill the window with one warp's waiting instructions). BASE stalls issue at
    # the dependent instruction in every warp.
    ooo = next(r for r in results if r.name == "ooo")
    early = _retired_before(ooo.rtl, "ldg", "ixor")
    assert early, "no warp ran both the load and the independent instruction"
    assert any(early.values()) if mode == "dflow" else not any(early.values()), early
    assert any(r.mem_stats["reordered"] for r in results)  # the memory model did answer out of order
    # A grid of 3 x 2 blocks of 2 warps runs block after block: every block's records matched.
    grid = next(r for r in results if r.name == "grid")
    assert grid.blocks == 6 and grid.compare.warps == 12
    assert {rec.block for rec in grid.rtl.records} == set(range(6))


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_rtl_without_verification_features_runs_in_the_same_cycles(mode: str):
    """The cores of the area and power figures run every program that does not fault as the full
    core does. Without the illegal-read trap (``read_check=False``, DFLOW): the same records retired
    at the same cycles. Without the trace port and the fields only the trace reads as well
    (``trace=False``): the golden model's memory, in the same cycles with the same bank conflicts."""
    names = [name for name in NAMES if name not in FAULT_PROGRAMS]
    core = PARAM_SETS["l4w4"]
    bare = CoreParams(mode=mode, trace=False, read_check=False, **core)
    variants = [CoreParams(mode=mode, **core), bare]
    if mode == "dflow":
        variants.append(CoreParams(mode=mode, read_check=False, **core))
    runs = [run_cosim(p, [directed_case(name, p) for name in names]) for p in variants]
    for a, b, *unchecked in zip(*runs, strict=True):
        assert a.ok and b.ok and b.compare is None and b.rtl is None, b.summary()
        assert b.cycles == a.cycles and b.bank_conflicts == a.bank_conflicts, (mode, a.name)
        assert expectation_mismatches(b, bare) == [], (mode, a.name)
        for c in unchecked:
            assert c.ok and c.compare.matched == c.compare.model_records, c.summary()
            assert (c.cycles, c.retire_cycles, c.rtl.records) == (a.cycles, a.retire_cycles, a.rtl.records), a.name

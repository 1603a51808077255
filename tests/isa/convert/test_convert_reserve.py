"""The converter's ``reserved-ssy`` pass (dualflow/isa/convert/reserve.py): each acyclic region's advance
reserved in its ``ssy``, the pads that end its shorter paths dropped, the code still computing
what the REG form computes, in the functional model and on both timing engines."""

from __future__ import annotations

import pytest
from engines import assert_same, devices

from dualflow.isa import Form, Module, Opcode, Variant, assemble
from dualflow.isa.convert import convert_kernel, convert_module
from dualflow.isa.convert.reserve import region_advance
from dualflow.kernels.registry import HAND_WRITTEN, WORKLOADS
from dualflow.kernels.workload import run_workload, with_dflow_form
from dualflow.machine.presets import preset

RESERVED = frozenset({Variant.RESERVED_SSY})


def _with(name: str, module: Module):
    """The workload ``name`` with ``module`` as its DFLOW form."""
    return with_dflow_form(WORKLOADS[name], module)


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))  # the converter's training set
def test_every_workload_converts_and_checks_with_the_variant(name):
    reg = WORKLOADS[name]().module(Form.REG)
    plain, _ = convert_module(reg)
    reserved, reports = convert_module(reg, variants=RESERVED)
    assert run_workload(_with(name, reserved), "tiny", Form.DFLOW).verdict  # a wrong output raises
    for k in reserved:
        dropped = len(plain[k.name].code) - len(k.code)
        advances = [ins.a for ins in k.code if ins.op is Opcode.SSY and ins.a]
        assert (dropped > 0) == bool(advances) == (Variant.RESERVED_SSY in k.variants)
        pads = plain[k.name].code
        assert dropped == sum(1 for pc in range(1, len(pads)) if pads[pc - 1].op is Opcode.RPINC
                              and pads[pc].op is Opcode.SYNC) - _trailing_kept(plain[k.name])
        assert len(reports[k.name].causes) == len(k.code)


def _trailing_kept(kernel) -> int:
    """Pads before a sync the pass keeps: those of regions with unequal advances (loops)."""
    kept = 0
    for pc, ins in enumerate(kernel.code):
        if ins.op is Opcode.SSY and region_advance(kernel.code, pc) is None:
            kept += _pads_closing(kernel.code, pc)
    return kept


def _pads_closing(code, ssy_pc) -> int:
    """rpinc-before-sync pairs at the syncs that close the region opened at ``ssy_pc`` (plain walk
    of the pcs between the ssy and its join, at depth 0)."""
    join, depth, count = code[ssy_pc].imm, 0, 0
    for pc in range(ssy_pc + 1, max(join, ssy_pc + 1)):
        op = code[pc].op
        if op is Opcode.SSY:
            depth += 1
        elif op is Opcode.SYNC:
            if depth == 0:
                count += code[pc - 1].op is Opcode.RPINC
            else:
                depth -= 1
    return count


def test_reduce_drops_both_pads_of_its_if_regions():
    reg = WORKLOADS["reduce"]().module(Form.REG)
    k = convert_module(reg, variants=RESERVED)[0]["reduce"]
    assert not any(ins.op is Opcode.RPINC for ins in k.code)
    assert sorted(ins.a for ins in k.code if ins.op is Opcode.SSY) == [0, 5, 5]


def test_a_lane_dependent_loop_keeps_its_pads():
    """divloop's region holds a loop whose trip count differs between lanes: no fixed advance."""
    reg = WORKLOADS["divloop"]().module(Form.REG)
    k = convert_module(reg, variants=RESERVED)[0]["divloop"]
    ssys = [pc for pc, ins in enumerate(k.code) if ins.op is Opcode.SSY]
    assert ssys and all(region_advance(k.code, pc) is None for pc in ssys)
    assert Variant.RESERVED_SSY not in k.variants


def test_region_advance_of_nested_regions():
    k = assemble(""".kernel k
.form dflow
    s2r %tid.x
    ssy OUT
    brz |1|, SKIP
    ssy IN
    brz |2|, INSKIP
    mov 1
    mov 2
    sync
INSKIP:
    rpinc 2
    sync
IN:
    mov 3
    sync
SKIP:
    rpinc 3
    sync
OUT:
    exit
""").only
    assert region_advance(k.code, 1) == (3, [11, 13])
    assert region_advance(k.code, 3) == (2, [7, 9])


def assert_engines_agree(name: str, module: Module) -> None:
    """The workload ``name`` with ``module`` as its DFLOW form gives the same results, statistics
    and issue log on both timing engines."""
    devs = devices(preset("paper-rtx3080").replace(mode="dflow"))
    for dev in devs.values():
        run_workload(_with(name, module), "tiny", Form.DFLOW, device=dev)
    assert_same(devs["reference"], devs["compiled"])


@pytest.mark.parametrize("name", ["reduce", "nw", "pathfinder"])
def test_both_timing_engines_agree_on_the_variant(name):
    assert_engines_agree(name, convert_module(WORKLOADS[name]().module(Form.REG), variants=RESERVED)[0])


def test_convert_kernel_without_variants_is_unchanged():
    k = WORKLOADS["reduce"]().module(Form.REG)["reduce"]
    assert convert_kernel(k)[0].code == convert_kernel(k, variants=frozenset())[0].code

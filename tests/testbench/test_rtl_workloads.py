"""Whole Rodinia workloads on the RTL core: every launch of the host driver, against the golden model.

Every workload runs at ``tiny`` in both modes, FP32 and SFU kernels included, on the smallest core
of 8 lanes that holds its largest block (benchmarks/rtl_workloads.py prints what each costs). The
default suite: bfs on a 16-node graph (8 launches of two kernels, one block each, 4 lanes), and
vadd (``fadd``) and divloop (``i2f``, ``fmul``) at tiny on 8 lanes x 16 warps, a few seconds of
simulation each. The slow suite: the others (reduce, lud, bfs tiny on 8 x 16; nn, hotspot,
pathfinder on 8 x 32; gaussian on 8 x 64; nw on 4 x 4), thousands to tens of thousands of cycles
per launch. The compiled suite likewise: vadd-cu and divloop-cu in the default suite, the others
slow; the warp-synchronous reduction refuses a core of 8-lane warps.
"""

from __future__ import annotations

import math

import pytest

from dualflow.common.errors import ConfigError
from dualflow.isa import Opcode, Variant
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import dim3, run_cosim
from dualflow.testbench.workload_cosim import core_for, workload_cases

CORE = dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2)
#: At tiny, on 8 lanes and at least 16 warps, grown to the workload's largest block and, in BASE, its
#: registers (``core_for``); the default suite's and the slow suite's.
L8 = dict(warp_size=8, warps=16)
DEFAULT_TINY = {"vadd", "divloop"}
SLOW_TINY = {"reduce", "lud", "bfs", "nn", "hotspot", "gaussian"}
#: tiny workloads with a test of their own below (launch structure checked too)
OWN_TEST = {"nw", "pathfinder"}
#: Compiled workloads at tiny on 8 lanes: two in the default suite, the rest slow (up to tens of
#: minutes of Icarus each: benchmarks/rtl_workloads.py --suite compiled prints them).
COMPILED_DEFAULT = {"vadd-cu", "divloop-cu"}
COMPILED_SLOW = {"gaussian-cu", "lud-cu", "pathfinder-cu", "nn-cu", "bfs-cu", "hotspot-cu", "nw-cu", "reduce-cu",
                 "gemm", "2mm", "atax", "bicg", "mvt", "gesummv", "syrk", "conv2d", "fdtd-2d", "jacobi-2d",
                 "backprop", "kmeans", "srad", "streamcluster", "matmul-tiled", "bitonic", "transpose", "scan"}
#: Warp-synchronous kernels: they need 32 lanes in one warp, and refuse a narrower core.
WIDE_WARPS = {"reduction"}


def _run(name: str, mode: str, core: dict = CORE, **kwargs):
    params = CoreParams(mode=mode, **core)
    wc = workload_cases(name, params, **kwargs)
    params = core_for(wc, params)
    results = run_cosim(params, wc.cases)
    failed = [r for r in results if not r.ok]
    assert not failed, "\n\n".join(r.summary() for r in failed)
    for r in results:
        assert r.compare.matched == r.compare.model_records > 0
    return wc, results


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_bfs_every_launch(mode: str):
    wc, results = _run("bfs", mode, values={"nodes": 16})
    assert "16 nodes exact" in wc.verdict
    # Kernel and Kernel2 alternate until no node changes: 4 iterations on this graph
    assert [c.kernel.name for c in wc.cases] == ["Kernel", "Kernel2"] * 4
    assert all(r.blocks == 1 for r in results)


def test_bfs_with_reserved_ssy():
    """bfs converted with the reserved-ssy variant: its Kernel's if-region reserves its advance
    instead of padding, and the core runs every launch as the golden model does."""
    wc, _ = _run("bfs", "dflow", values={"nodes": 16}, variants=frozenset({Variant.RESERVED_SSY}))
    assert any(ins.op is Opcode.SSY and ins.a for c in wc.cases for ins in c.kernel.code)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["reduce", "hotspot"])
def test_tiny_workload_with_reserved_ssy_slow(name: str):
    wc, _ = _run(name, "dflow", L8, size="tiny", variants=frozenset({Variant.RESERVED_SSY}))
    assert any(ins.op is Opcode.SSY and ins.a for c in wc.cases for ins in c.kernel.code)


@pytest.mark.parametrize("mode", ["dflow", "base"])
@pytest.mark.parametrize("name", sorted(DEFAULT_TINY) + sorted(COMPILED_DEFAULT))
def test_tiny_workload(name: str, mode: str):
    wc, _ = _run(name, mode, L8, size="tiny")
    assert wc.cases


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dflow", "base"])
@pytest.mark.parametrize("name", sorted(SLOW_TINY) + sorted(COMPILED_SLOW))
def test_tiny_workload_slow(name: str, mode: str):
    wc, _ = _run(name, mode, L8, size="tiny")
    assert wc.cases


def test_every_workload_is_covered():
    from dualflow.kernels.registry import COMPILED, HAND_WRITTEN

    assert DEFAULT_TINY | SLOW_TINY | OWN_TEST == set(HAND_WRITTEN)
    assert COMPILED_DEFAULT | COMPILED_SLOW | WIDE_WARPS == set(COMPILED)




@pytest.mark.parametrize("name", sorted(WIDE_WARPS))
def test_warp_synchronous_workload_refuses_narrow_warps(name: str):
    with pytest.raises(ConfigError, match="warp size 32"):
        workload_cases(name, CoreParams(mode="base", **L8), size="tiny")


def test_core_for_grows_shared_memory_to_the_kernels():
    params = CoreParams(mode="base", **L8)
    wc = workload_cases("bitonic", params, size="tiny")
    shared = max(c.kernel.shared_bytes for c in wc.cases)
    assert shared > params.shared_bytes
    assert core_for(wc, params).shared_bytes == shared == 8192
    assert core_for(wc, params, keep=["shared_bytes"]).shared_bytes == params.shared_bytes


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_nw_every_launch(mode: str):
    wc, results = _run("nw", mode)
    assert [(c.kernel.name, c.grid) for c in wc.cases] == [
        ("needle_cuda_shared_1", (1, 1)), ("needle_cuda_shared_1", (2, 1)), ("needle_cuda_shared_2", (1, 1))]
    assert [r.blocks for r in results] == [1, 2, 1]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_pathfinder_every_launch(mode: str):
    wc, results = _run("pathfinder", mode, dict(CORE, warp_size=8, warps=32), size="tiny")
    assert [c.grid for c in wc.cases] == [2, 2, 2] and all(r.blocks == 2 for r in results)


def test_core_for_grows_warps_and_registers_unless_given():
    params = CoreParams(mode="base", warp_size=8, warps=16)
    wc = workload_cases("gaussian", params, size="tiny")
    threads = max(math.prod(dim3(c.block)) for c in wc.cases)
    regs = max(c.kernel.regs for c in wc.cases)
    assert regs > params.regs  # the case that needs growing (Fan2)
    grown = core_for(wc, params)
    assert grown.regs == regs and grown.warps * 8 >= threads > grown.warps * 4
    assert core_for(wc, params, keep=["regs", "warps"]) == params
    assert core_for(wc, CoreParams(mode="base", warp_size=8, warps=64, regs=64)).regs == 64  # never lowered

"""Whole Rodinia workloads on the RTL core: every launch of the host driver, against the golden model.

The integer workloads: bfs on a 16-node graph (8 launches of two kernels, one block each) in the
default suite; in the slow suite nw on its tiny 32 x 32 matrix (3 launches, one of them a grid of
2 blocks, thousands of cycles per block) and pathfinder tiny (3 launches of 2 blocks of 256
threads, on a core of 8 lanes x 32 warps).
"""

from __future__ import annotations

import pytest

from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import run_cosim
from dualflow.testbench.workload_cosim import workload_cases

CORE = dict(warp_size=4, warps=4, register_banks=4, collector_units=4, alu_latency=2)


def _run(name: str, mode: str, core: dict = CORE, **kwargs):
    params = CoreParams(mode=mode, **core)
    wc = workload_cases(name, params, **kwargs)
    results = run_cosim(params, wc.cases)
    failed = [r for r in results if not r.ok]
    assert not failed, "\n\n".join(r.summary() for r in failed)
    for r in results:
        assert r.compare.matched == r.compare.model_records > 0
    return wc, results


@pytest.mark.parametrize("mode", ["dflow", "base"])
def test_bfs_every_launch(mode: str):
    wc, results = _run("bfs", mode, values={"nodes": 16})
    assert "16 nodes exact" in wc.verdict and not wc.skipped
    # Kernel and Kernel2 alternate until no node changes: 4 iterations on this graph
    assert [c.kernel.name for c in wc.cases] == ["Kernel", "Kernel2"] * 4
    assert all(r.blocks == 1 for r in results)


def test_fp_kernels_are_left_out_by_name():
    wc = workload_cases("nn", CoreParams(mode="base", **CORE))
    assert wc.cases == [] and wc.skipped == ["euclid (1 launch: FP32/SFU instructions, no FP units yet)"]


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

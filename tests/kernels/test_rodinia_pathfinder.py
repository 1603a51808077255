"""Rodinia pathfinder: runs, matches the numpy DP exactly, and launches like calc_path()."""

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.rodinia.pathfinder import BLOCK_SIZE, Pathfinder, launch_plan
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device, FunctionalConfig


@pytest.mark.parametrize("size", ["tiny", "small"])
def test_size_runs_and_matches_numpy(size):
    run = run_workload(Pathfinder, size, Form.REG)
    p = Pathfinder.sizes[size]
    _, block_cols, steps = launch_plan(p["cols"], p["rows"], p["pyramid_height"])
    stats = run.by_kernel["dynproc_kernel"]
    assert stats.launches == len(steps) == -(-(p["rows"] - 1) // p["pyramid_height"])
    assert stats.blocks == len(steps) * block_cols
    assert stats.threads == stats.blocks * BLOCK_SIZE
    assert run.outputs["result"].shape == (p["cols"],)
    assert "exact" in run.verdict


def test_plan_matches_rodinia_arithmetic():
    # the paper's run: pathfinder 100000 100 20 -> 463 blocks of 216 columns, 5 launches
    border, block_cols, steps = launch_plan(100000, 100, 20)
    assert (border, block_cols) == (20, 463)
    assert steps == [(0, 20), (20, 20), (40, 20), (60, 20), (80, 19)]


def test_launch_sequence_follows_calc_path():
    """Launch order, shapes, iteration/startStep arguments and the gpuResult ping-pong."""
    wl, p = Pathfinder(), Pathfinder.sizes["tiny"]
    dev = Device()
    inputs = wl.generate(np.random.default_rng(1), **p)
    wl.execute(dev, wl.module(Form.REG), inputs, **p)
    assert [c[0] for c in dev.launches] == ["dynproc_kernel"] * 3
    assert all(grid == 2 and block == BLOCK_SIZE for _, grid, block, _ in dev.launches)
    iterations = [c[3][0] for c in dev.launches]
    start_steps = [c[3][6] for c in dev.launches]
    assert iterations == [2, 2, 1] and start_steps == [0, 2, 4]
    srcs, dsts = [c[3][2] for c in dev.launches], [c[3][3] for c in dev.launches]
    assert srcs[1:] == dsts[:-1] and dsts[1:] == srcs[:-1] and srcs[0] != dsts[0]
    assert all(c[3][7] == p["pyramid_height"] for c in dev.launches)  # border
    assert all(c[3][4:6] == [p["cols"], p["rows"]] for c in dev.launches)


def test_check_can_fail():
    class Corrupted(Pathfinder):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref["result"][257] += 1
            return ref

    with pytest.raises(CheckFailed, match="index 257"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_deterministic_and_batch_independent():
    a = run_workload(Pathfinder, "tiny", Form.REG, seed=7)
    b = run_workload(Pathfinder, "tiny", Form.REG, seed=7)
    one_block = run_workload(Pathfinder, "tiny", Form.REG, seed=7, config=FunctionalConfig(batch_warps=1))
    np.testing.assert_array_equal(a.outputs["result"], b.outputs["result"])
    np.testing.assert_array_equal(a.outputs["result"], one_block.outputs["result"])
    assert a.total.warp_instructions == b.total.warp_instructions == one_block.total.warp_instructions


@pytest.mark.parametrize("cols, rows, pyramid_height", [(1, 3, 1), (252, 4, 2), (253, 9, 3), (600, 2, 5)])
def test_edge_shapes(cols, rows, pyramid_height):
    """One column, an exact multiple of the small block, one column past it, a single launch."""
    run_workload(Pathfinder, "tiny", Form.REG, params={"cols": cols, "rows": rows, "pyramid_height": pyramid_height})

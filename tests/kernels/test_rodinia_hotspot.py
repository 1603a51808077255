"""Rodinia hotspot: runs, matches the numpy FP32 stencil bit for bit, and launches like
compute_tran_temp()."""

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.rodinia.hotspot import BLOCK_SIZE, Hotspot, launch_iterations, physical_params, pyramid
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device, FunctionalConfig


@pytest.mark.parametrize("size", ["tiny", "small"])
def test_size_runs_and_matches_numpy(size):
    run = run_workload(Hotspot, size, Form.REG)
    p = Hotspot.sizes[size]
    _, blocks = pyramid(p["grid"], p["pyramid_height"])
    stats = run.by_kernel["calculate_temp"]
    assert stats.launches == len(launch_iterations(p["total_iterations"], p["pyramid_height"]))
    assert stats.blocks == stats.launches * blocks * blocks
    assert stats.threads == stats.blocks * BLOCK_SIZE * BLOCK_SIZE
    assert "bit-exact" in run.verdict
    # the simulation moved: the output is not the input
    inputs = Hotspot().generate(np.random.default_rng(1), **p)
    assert np.any(run.outputs["temp"] != inputs["temp"])


def test_paper_plan_and_constants():
    # hotspot 512 2 2: border 2, 12x12 owned cells, 43x43 blocks, one launch of 2 iterations
    assert pyramid(512, 2) == (2, 43)
    assert launch_iterations(2, 2) == [2]
    assert launch_iterations(5, 2) == [2, 2, 1]
    phys = physical_params(512, 512)
    assert all(isinstance(v, np.float32) for v in phys.values())
    assert (float(phys["Rx"]), float(phys["Ry"]), float(phys["Rz"])) == (10.0, 10.0, 5120.0)
    np.testing.assert_allclose(float(phys["step"] / phys["Cap"]), 0.3413, rtol=1e-3)


def test_launch_sequence_follows_compute_tran_temp():
    """Launch order, 2-D shapes, per-launch iteration and the MatrixTemp ping-pong."""
    wl, p = Hotspot(), Hotspot.sizes["tiny"]
    dev = Device()
    inputs = wl.generate(np.random.default_rng(1), **p)
    wl.execute(dev, wl.module(Form.REG), inputs, **p)
    assert [c[0] for c in dev.launches] == ["calculate_temp"] * 2
    assert all(grid == (2, 2) and block == (BLOCK_SIZE, BLOCK_SIZE) for _, grid, block, _ in dev.launches)
    assert [c[3][0] for c in dev.launches] == [2, 1]  # MIN(num_iterations, total_iterations - t)
    srcs, dsts = [c[3][2] for c in dev.launches], [c[3][3] for c in dev.launches]
    assert srcs[1] == dsts[0] and dsts[1] == srcs[0] and srcs[0] != dsts[0]
    assert all(c[3][4:8] == [16, 16, 2, 2] for c in dev.launches)  # cols, rows, border_cols, border_rows


def test_check_can_fail():
    class Corrupted(Hotspot):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref["temp"][5, 13] = np.nextafter(ref["temp"][5, 13], np.float32(np.inf))  # one ulp
            return ref

    with pytest.raises(CheckFailed, match=r"index \(5, 13\)"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_deterministic_and_batch_independent():
    a = run_workload(Hotspot, "tiny", Form.REG, seed=3)
    b = run_workload(Hotspot, "tiny", Form.REG, seed=3)
    one_block = run_workload(Hotspot, "tiny", Form.REG, seed=3, config=FunctionalConfig(batch_warps=1))
    np.testing.assert_array_equal(a.outputs["temp"].view(np.uint32), b.outputs["temp"].view(np.uint32))
    np.testing.assert_array_equal(a.outputs["temp"].view(np.uint32), one_block.outputs["temp"].view(np.uint32))
    assert a.total.warp_instructions == b.total.warp_instructions == one_block.total.warp_instructions


@pytest.mark.parametrize("grid, pyramid_height, total_iterations",
                         [(1, 1, 1), (14, 1, 2), (15, 1, 1), (40, 7, 7), (20, 3, 4)])
def test_edge_shapes(grid, pyramid_height, total_iterations):
    """One cell, an exact multiple of the small block, one past it, the deepest pyramid, mixed."""
    run_workload(Hotspot, "tiny", Form.REG,
                 params={"grid": grid, "pyramid_height": pyramid_height, "total_iterations": total_iterations})

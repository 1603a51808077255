"""Rodinia nn: per-record distances bit-exact against numpy, k nearest records selected on the host."""

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.rodinia.nn import Nn, find_lowest, hurricane_locations, launch_grid
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device


@pytest.mark.parametrize("size, records, blocks", [("tiny", 301, 2), ("small", 4004, 16)])
def test_sizes_pass_check(size, records, blocks):
    run = run_workload(Nn, size, Form.REG)
    assert run.outputs["distances"].size == records
    assert run.outputs["nearest"].size == 5
    s = run.by_kernel["euclid"]
    assert (s.launches, s.blocks, s.threads) == (1, blocks, blocks * 256)
    assert run.verdict.startswith(f"{records} distances bit-exact")


def test_launch_shape_matches_rodinia():
    wl = Nn()
    params = dict(wl.sizes["tiny"])
    inputs = wl.generate(np.random.default_rng(1), **params)
    dev = Device()
    wl.execute(dev, wl.module(Form.REG), inputs, **params)
    [(name, grid, block, args)] = dev.launches
    assert (name, grid, block) == ("euclid", (2, 1), 256)
    assert args[2:] == [301, 30.0, 90.0]


def test_two_d_grid():
    """With a small grid-x limit the host spreads the blocks over y; spare blocks do nothing."""
    assert launch_grid(42764, 256, 65535) == (168, 1)
    assert launch_grid(4004, 256, 7) == (6, 3)  # 16 blocks needed, 18 launched
    run = run_workload(Nn, "small", Form.REG, params={"max_grid_x": 7})
    assert run.by_kernel["euclid"].blocks == 18
    plain = run_workload(Nn, "small", Form.REG)
    np.testing.assert_array_equal(run.outputs["distances"].view(np.uint32),
                                  plain.outputs["distances"].view(np.uint32))


def test_generator_follows_hurricane_gen():
    loc = hurricane_locations(np.random.default_rng(2), 1000, 4)
    assert loc.shape == (4 * 251, 2) and loc.dtype == np.float32
    lat, lng = loc[:, 0], loc[:, 1]
    assert lat.min() >= 7 and lat.max() <= 70 and lng.min() >= 0 and lng.max() <= 358
    tenths = loc.astype(np.float64) * 10  # printed with one decimal, read back with atof
    np.testing.assert_allclose(tenths, np.round(tenths), atol=1e-3)


def test_find_lowest_ties_go_to_lower_index():
    # Rodinia's swap-based scan would pick record 2 before record 0 for the third place
    idx, dist = find_lowest(np.array([5, 1, 5, 0, 1], np.float32), 4)
    assert idx.tolist() == [3, 1, 4, 0]
    assert dist.tolist() == [0, 1, 1, 5]


def test_check_can_fail_on_distance():
    class Corrupted(Nn):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref["distances"][17] = np.nextafter(ref["distances"][17], np.float32(np.inf))
            return ref

    with pytest.raises(CheckFailed, match="record 17"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_check_can_fail_on_nearest():
    class Corrupted(Nn):
        def execute(self, dev, module, inputs, **params):
            out = super().execute(dev, module, inputs, **params)
            out["nearest"] = out["nearest"][[0, 2, 1, 3, 4]]
            return out

    with pytest.raises(CheckFailed, match="rank 1"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_deterministic():
    one = run_workload(Nn, "small", Form.REG, seed=9)
    two = run_workload(Nn, "small", Form.REG, seed=9)
    np.testing.assert_array_equal(one.outputs["distances"].view(np.uint32), two.outputs["distances"].view(np.uint32))
    np.testing.assert_array_equal(one.outputs["nearest"], two.outputs["nearest"])
    assert one.total.warp_instructions == two.total.warp_instructions
    assert one.total.thread_instructions == two.total.thread_instructions

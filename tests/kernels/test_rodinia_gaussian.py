"""Rodinia gaussian: Fan1/Fan2 per pivot, checked bit-exact against a float32 numpy elimination."""

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.rodinia.gaussian import Gaussian, create_matrix, launch_shapes
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device


@pytest.mark.parametrize("size", ["tiny", "matrix4", "small"])
def test_sizes_pass_check(size):
    run = run_workload(Gaussian, size, Form.REG)
    n = run.params["n"]
    assert "bit-exact" in run.verdict
    assert run.by_kernel["Fan1"].launches == n - 1
    assert run.by_kernel["Fan2"].launches == n - 1
    grid1, (gx, gy) = launch_shapes(n)
    assert run.by_kernel["Fan1"].blocks == (n - 1) * grid1
    assert run.by_kernel["Fan1"].threads == (n - 1) * grid1 * 512
    assert run.by_kernel["Fan2"].blocks == (n - 1) * gx * gy
    assert run.by_kernel["Fan2"].threads == (n - 1) * gx * gy * 16


def test_matrix4_solution():
    """Rodinia's example system has the solution (0.7, 0, -0.4, -0.5)."""
    run = run_workload(Gaussian, "matrix4", Form.REG)
    np.testing.assert_allclose(run.outputs["x"], [0.7, 0.0, -0.4, -0.5], atol=1e-6)


def test_launch_sequence_matches_rodinia():
    """Fan1 then Fan2 for t = 0 .. Size-2, with the host code's grids, blocks and arguments."""
    wl = Gaussian()
    n = 9  # not a multiple of 4: Fan2's grid rounds up to 3 x 3
    inputs = wl.generate(np.random.default_rng(3), n=n, matrix="create")
    dev = Device()
    wl.execute(dev, wl.module(Form.REG), inputs, n=n, matrix="create")
    assert [name for name, *_ in dev.launches] == ["Fan1", "Fan2"] * (n - 1)
    for t in range(n - 1):
        _, grid1, block1, p1 = dev.launches[2 * t]
        _, grid2, block2, p2 = dev.launches[2 * t + 1]
        assert (grid1, block1) == (1, 512)
        assert (grid2, block2) == ((3, 3), (4, 4))
        assert p1[2:] == [n, t]
        assert p2[3:] == [n, n - t, t]
        assert p1[:2] == p2[:2]  # the same m and a buffers every launch


def test_create_matrix():
    a = create_matrix(16)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, a.T)
    np.testing.assert_array_equal(np.diag(a), 10.0)
    i, j = np.indices(a.shape)
    np.testing.assert_allclose(a, 10 * np.exp(-0.01 * np.abs(i - j)), rtol=1e-6)


def test_check_can_fail_on_matrix():
    class Corrupted(Gaussian):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref["a"][2, 3] = np.nextafter(ref["a"][2, 3], np.float32(np.inf))  # one ulp
            return ref

    with pytest.raises(CheckFailed, match=r"a\[2, 3\]"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_check_can_fail_on_solution():
    class Corrupted(Gaussian):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref["x64"][1] *= 1.001
            return ref

    with pytest.raises(CheckFailed, match=r"solution x\[1\]"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_deterministic():
    one = run_workload(Gaussian, "small", Form.REG, seed=5)
    two = run_workload(Gaussian, "small", Form.REG, seed=5)
    for key in ("a", "b", "m", "x"):
        np.testing.assert_array_equal(one.outputs[key].view(np.uint32), two.outputs[key].view(np.uint32))
    assert one.total.warp_instructions == two.total.warp_instructions
    assert one.total.thread_instructions == two.total.thread_instructions

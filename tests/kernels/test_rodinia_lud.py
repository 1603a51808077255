"""Rodinia lud: the three kernels factor Rodinia's synthetic matrix, launched as lud_cuda does."""

import numpy as np
import pytest

from dualflow.common.errors import ConfigError
from dualflow.isa import Form
from dualflow.kernels.rodinia.lud import Lud, create_matrix
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device, FunctionalConfig


@pytest.mark.parametrize(("size", "params"), [("tiny", None), ("tiny", {"matrix_dim": 32}), ("small", None)],
                         ids=["tiny16", "tiny32", "small64"])
def test_runs_and_passes_check(size, params):
    run = run_workload(Lud, size, Form.REG, params=params)
    n = run.params["matrix_dim"]
    assert run.verdict.startswith(f"{n}x{n}: bit-exact")
    assert run.outputs["m"].shape == (n, n)
    steps = n // 16 - 1                                  # offsets 0, 16, ... < n - 16
    assert run.by_kernel["lud_diagonal"].launches == steps + 1
    if steps:
        assert run.by_kernel["lud_perimeter"].launches == steps
        assert run.by_kernel["lud_internal"].launches == steps
    else:
        assert set(run.by_kernel) == {"lud_diagonal"}


def test_tiny_is_one_diagonal_block_of_16_threads():
    run = run_workload(Lud, "tiny", Form.REG)
    s = run.by_kernel["lud_diagonal"]
    assert (s.launches, s.blocks, s.threads, s.warps) == (1, 1, 16, 1)
    assert s.by_opcode["bar"]["warp"] == 1 + 2 * 15     # after the copy-in, then two per step
    assert s.by_opcode["fdiv"]["thread"] == 15 * 16 // 2  # one per strictly-lower element


def test_launch_sequence_and_shapes_follow_lud_cuda():
    n = 64
    wl = Lud()
    dev = Device()
    wl.execute(dev, wl.module(Form.REG), wl.generate(np.random.default_rng(1), matrix_dim=n), matrix_dim=n)
    got = [(s.kernel, s.blocks, s.threads // s.blocks) for s in dev.history]
    want = []
    for offset in range(0, n - 16, 16):
        nb = (n - offset) // 16 - 1
        want += [("lud_diagonal", 1, 16), ("lud_perimeter", nb, 32), ("lud_internal", nb * nb, 256)]
    want.append(("lud_diagonal", 1, 16))
    assert got == want


def test_input_is_rodinia_create_matrix():
    m = create_matrix(64)
    assert m.dtype == np.float32
    assert m[0, 0] == np.float32(10.0) and m[3, 5] == m[5, 3] == m[10, 12]
    assert m[0, 63] == np.float32(10 * np.exp(np.float64(np.float32(-0.001) * np.float32(63))))


def test_check_fails_on_a_corrupted_reference():
    class Corrupted(Lud):
        def reference(self, inputs, matrix_dim):
            ref = super().reference(inputs, matrix_dim)
            ref["m"][5, 7] = np.nextafter(ref["m"][5, 7], np.float32(np.inf))  # one ulp
            return ref

    with pytest.raises(CheckFailed, match=r"same-order FP32 reference; first at index \(5, 7\)"):
        run_workload(Corrupted, "tiny", Form.REG, params={"matrix_dim": 32})


def test_check_fails_on_a_corrupted_result():
    class Corrupted(Lud):
        def execute(self, dev, module, inputs, matrix_dim):
            out = super().execute(dev, module, inputs, matrix_dim)
            out["m"][20, 3] += np.float32(0.01)
            return out

    with pytest.raises(CheckFailed, match=r"L\*U differ from M .* first at index \(20, 3\)"):
        run_workload(Corrupted, "tiny", Form.REG, params={"matrix_dim": 32})


def test_deterministic():
    a = run_workload(Lud, "small", Form.REG, seed=1)
    b = run_workload(Lud, "small", Form.REG, seed=2)    # the Rodinia input does not depend on the seed
    np.testing.assert_array_equal(a.outputs["m"].view(np.uint32), b.outputs["m"].view(np.uint32))
    assert a.total.warp_instructions == b.total.warp_instructions
    one_block = run_workload(Lud, "small", Form.REG, config=FunctionalConfig(batch_warps=1))
    np.testing.assert_array_equal(a.outputs["m"].view(np.uint32), one_block.outputs["m"].view(np.uint32))
    assert one_block.total.warp_instructions == a.total.warp_instructions


def test_matrix_dim_must_be_a_multiple_of_16():
    with pytest.raises(ConfigError, match="multiple of 16"):
        run_workload(Lud, "tiny", Form.REG, params={"matrix_dim": 40})

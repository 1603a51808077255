"""Rodinia nw: runs and checks at tiny and small size, launches like needle.cu, its numpy
reference agrees with a plain cell-by-cell dynamic program, and its check can fail."""

from __future__ import annotations

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.rodinia.nw import BLOSUM62, Nw
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device


@pytest.fixture(scope="module")
def small_run():
    return run_workload(Nw, "small", Form.REG)


def test_tiny_passes():
    run = run_workload(Nw, "tiny", Form.REG)
    assert "exact" in run.verdict
    assert run.by_kernel["needle_cuda_shared_1"].launches == 2
    assert run.by_kernel["needle_cuda_shared_2"].launches == 1


def test_small_passes_and_launches_like_rodinia(small_run):
    run = small_run
    block_width = 256 // 16
    k1, k2 = run.by_kernel["needle_cuda_shared_1"], run.by_kernel["needle_cuda_shared_2"]
    assert k1.launches == block_width and k2.launches == block_width - 1
    assert k1.blocks + k2.blocks == block_width * block_width  # every 16x16 tile once
    assert k1.threads == 16 * k1.blocks and k2.threads == 16 * k2.blocks
    # The wavefront diverges on tx: fewer than 16 active lanes on most compute steps.
    assert k1.thread_instructions < 16 * k1.warp_instructions
    assert run.outputs["score"].shape == (257, 257)


def test_launch_sequence_and_grids():
    """_1 with grid i = 1..block_width, then _2 with grid i = block_width-1..1, 16-thread blocks."""
    wl = Nw()
    dev = Device()
    params = {"dim": 64, "penalty": 10}
    wl.execute(dev, wl.module(Form.REG), wl.generate(np.random.default_rng(2), **params), **params)
    got = [(s.kernel, s.blocks, s.threads) for s in dev.history]
    want = ([("needle_cuda_shared_1", i, 16 * i) for i in (1, 2, 3, 4)]
            + [("needle_cuda_shared_2", i, 16 * i) for i in (3, 2, 1)])
    assert got == want


def test_reference_matches_plain_dynamic_program():
    wl = Nw()
    inputs = wl.generate(np.random.default_rng(9), dim=32, penalty=10)
    ref, s = inputs["reference"], inputs["matrix"].astype(int).tolist()
    for y in range(1, 33):
        for x in range(1, 33):
            s[y][x] = max(s[y - 1][x - 1] + int(ref[y, x]), s[y][x - 1] - 10, s[y - 1][x] - 10)
    assert np.array_equal(wl.reference(inputs, dim=32, penalty=10)["score"], np.array(s))
    assert BLOSUM62.shape == (24, 24) and np.array_equal(BLOSUM62, BLOSUM62.T)
    assert (inputs["matrix"][0, 1:] == -10 * np.arange(1, 33)).all()


def test_check_can_fail():
    class Corrupted(Nw):
        def reference(self, inputs, **params):
            out = super().reference(inputs, **params)
            out["score"][5, 7] += 1
            return out

    with pytest.raises(CheckFailed, match=r"\[5\]\[7\]"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_deterministic(small_run):
    again = run_workload(Nw, "small", Form.REG)
    assert np.array_equal(again.outputs["score"], small_run.outputs["score"])
    assert again.total.warp_instructions == small_run.total.warp_instructions
    assert again.total.thread_instructions == small_run.total.thread_instructions

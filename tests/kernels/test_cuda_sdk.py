"""The SDK-style CUDA workloads (dualflow/kernels/cuda/sdk/): each compiles through the front end,
passes its check at size tiny in both operand forms with bit-identical outputs, launches as its
host code says, and its check fails on a wrong value; paper sizes fill the paper's GPU."""


import numpy as np
import pytest
from corrupted import check_names_a_wrong_word

from dualflow.common.errors import ConfigError
from dualflow.isa import Form
from dualflow.kernels.cuda.sdk.bitonic import Bitonic
from dualflow.kernels.cuda.sdk.matmul_tiled import MatmulTiled
from dualflow.kernels.cuda.sdk.reduction import Reduction
from dualflow.kernels.cuda.sdk.scan import Scan
from dualflow.kernels.cuda.sdk.transpose import Transpose
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import FunctionalConfig

# (workload, output, index): one word of the reference made wrong must be named by the check
CORRUPTIONS = [(Reduction, "partial", 2), (Reduction, "sum", 0), (Bitonic, "values", (1, 17)),
               (Bitonic, "sorted", (3, 200)), (Transpose, "out", (5, 3)), (Scan, "scan", 2047)]


@pytest.mark.parametrize("workload, key, index", CORRUPTIONS, ids=[f"{w.name}-{k}" for w, k, _ in CORRUPTIONS])
def test_check_names_a_wrong_word(workload, key, index):
    check_names_a_wrong_word(workload, key, index)


def test_matmul_bound_is_tight_and_checked():
    """The FMA error bound is far below the values, and an element off by twice it fails."""
    wl, params = MatmulTiled(), MatmulTiled.sizes["tiny"]
    ref = wl.reference(wl.generate(np.random.default_rng(1), **params), **params)
    assert np.max(ref["bound"]) < 1e-5 * np.max(np.abs(ref["C"]))

    class Corrupted(MatmulTiled):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            ref["C"][7, 40] += 2 * ref["bound"][7, 40]
            return ref

    with pytest.raises(CheckFailed, match=r"index \(7, 40\):"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_matmul_refuses_ragged_extents():
    with pytest.raises(ValueError, match="multiples of 16"):
        run_workload(MatmulTiled, "tiny", Form.REG, params={"w_a": 40})


def test_reduction_relaunches_on_ping_pong_partial_sums():
    run = run_workload(Reduction, "tiny", Form.REG)
    (k1, g1, b1, p1), (k2, g2, b2, p2) = run.launches
    assert (k1, g1, b1, p1[2]) == ("reduction", 4, 256, 5000)
    assert (k2, g2, b2, p2[2]) == ("reduction", 1, 256, 4)
    assert p2[0] == p1[1] and p2[1] not in (p1[0], p1[1])  # reads the partial sums, writes elsewhere


def test_reduction_refuses_narrow_warps():
    with pytest.raises(ConfigError, match="warp size 32"):
        run_workload(Reduction, "tiny", Form.REG, config=FunctionalConfig(warp_size=8))


@pytest.mark.parametrize("length, ascending", [(2, True), (4, False), (64, False), (1024, True)])
def test_bitonic_lengths_and_directions(length, ascending):
    run = run_workload(Bitonic, "tiny", Form.REG, params={"length": length, "batch": 2, "ascending": ascending})
    assert run.launches[0][1:3] == (2, length // 2)


def test_bitonic_refuses_lengths_the_network_cannot_sort():
    for length in (0, 6, 2048):
        with pytest.raises(ValueError, match="power of two"):
            run_workload(Bitonic, "tiny", Form.REG, params={"length": length})


@pytest.mark.parametrize("width, height", [(1, 1), (32, 32), (33, 31), (31, 65)])
def test_transpose_edge_shapes(width, height):
    run = run_workload(Transpose, "tiny", Form.REG, params={"width": width, "height": height})
    assert run.launches[0][1] == (-(-width // 32), -(-height // 32))


@pytest.mark.parametrize("n", [1, 1024, 1025])
def test_scan_edge_lengths(n):
    run_workload(Scan, "tiny", Form.REG, params={"n": n})


def test_scan_scans_the_block_totals_then_adds_them():
    run = run_workload(Scan, "tiny", Form.REG)
    assert [(k, g, b) for k, g, b, _ in run.launches] == [("scan_block", 3, 512), ("scan_block", 1, 512),
                                                         ("add_offsets", 3, 512)]
    sums, offsets = run.launches[0][3][2], run.launches[1][3][0]
    assert run.launches[1][3][1] == sums and run.launches[2][3][1] == offsets

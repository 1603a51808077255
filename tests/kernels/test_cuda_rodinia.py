"""The Rodinia CUDA workloads (dualflow/kernels/cuda/rodinia/): each compiles through the front end,
passes its check at size tiny in both operand forms with bit-identical outputs, launches in the
original host code's order and shapes, and its check fails on a wrong value; paper sizes fill the
paper's GPU."""


import numpy as np
import pytest
from corrupted import check_names_a_wrong_word

from dualflow.isa import Form
from dualflow.kernels.cuda.rodinia.backprop import Backprop
from dualflow.kernels.cuda.rodinia.kmeans import Kmeans, grid_of
from dualflow.kernels.cuda.rodinia.srad import Srad
from dualflow.kernels.cuda.rodinia.streamcluster import Streamcluster
from dualflow.kernels.workload import run_workload

# (workload, output, index): one word of the reference made wrong must be named by the check
CORRUPTIONS = [(Backprop, "partial_sum", (2, 5)), (Backprop, "input_weights", (0, 3)),
               (Backprop, "input_prev_weights", (40, 16)), (Kmeans, "membership", 321),
               (Kmeans, "transposed", (3, 999)), (Srad, "J", (17, 30)), (Streamcluster, "cost", 500),
               (Streamcluster, "work_mem", (999, 1))]


@pytest.mark.parametrize("workload, key, index", CORRUPTIONS, ids=[f"{w.name}-{k}" for w, k, _ in CORRUPTIONS])
def test_check_names_a_wrong_word(workload, key, index):
    check_names_a_wrong_word(workload, key, index)


def test_backprop_launches_as_bpnn_train_cuda():
    run = run_workload(Backprop, "tiny", Form.REG)
    (k1, g1, b1, p1), (k2, g2, b2, p2) = run.launches
    assert (k1, g1, b1) == ("bpnn_layerforward", (1, 4), (16, 16))
    assert (k2, g2, b2) == ("bpnn_adjust_weights", (1, 4), (16, 16))
    assert p1[3:] == [64, 16] and p2[1] == 16 and p2[3] == 64
    assert p2[2] == p1[0] and p2[4] == p1[1]  # the same inputs and weight buffers (weights uploaded again)


def test_kmeans_transposes_once_then_loops():
    run = run_workload(Kmeans, "tiny", Form.REG)
    names = [k for k, _, _, _ in run.launches]
    assert names[0] == "invert_mapping" and names[1:] == ["kmeans_point"] * len(run.outputs["moved"])
    assert run.outputs["moved"][0] == 1000  # every point leaves cluster -1 in the first loop
    blocks, grid = grid_of(1000)
    assert (blocks, grid) == (4, (2, 2)) and run.launches[1][1] == grid
    assert grid_of(131072) == (512, (23, 23))  # the smallest square of at least 512 blocks


def test_kmeans_stops_when_no_point_moves():
    run = run_workload(Kmeans, "tiny", Form.REG, params={"max_loops": 50})
    moved = run.outputs["moved"]
    assert moved[-1] == 0 and np.all(moved[:-1] > 0) and len(moved) < 50


def test_srad_runs_both_kernels_per_iteration():
    run = run_workload(Srad, "tiny", Form.REG, params={"niter": 3})
    assert [k for k, _, _, _ in run.launches] == ["srad_1", "srad_2"] * 3
    assert all(g == (2, 2) and b == (16, 16) for _, g, b, _ in run.launches)


def test_srad_refuses_ragged_images():
    with pytest.raises(ValueError, match="multiples of 16"):
        run_workload(Srad, "tiny", Form.REG, params={"rows": 40})


def test_streamcluster_opens_rejects_and_closes_at_tiny():
    """The tiny size exercises every host decision: candidates opened and rejected, centres closed."""
    run = run_workload(Streamcluster, "tiny", Form.REG)
    gains = run.outputs["gains"]
    opened = int(np.count_nonzero(gains))
    assert 0 < opened < gains.size and np.all(gains >= 0)
    assert 1 + opened - int(run.outputs["is_center"].sum()) > 0  # some centres closed
    strides = [p[5] for _, _, _, p in run.launches]
    assert strides[0] == 2 and len(set(strides)) > 1  # K + 1 follows the number of centres

"""Rodinia bfs: runs and checks at tiny and small size, follows bfs.cu's host loop and launch
shape, and its check can fail."""

from __future__ import annotations

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.rodinia.bfs import Bfs, generate_graph
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import Device


@pytest.fixture(scope="module")
def small_run():
    return run_workload(Bfs, "small", Form.REG)


def test_tiny_passes():
    run = run_workload(Bfs, "tiny", Form.REG)
    assert "exact" in run.verdict
    assert run.total.warp_instructions > 0


def test_small_passes_and_launches_like_rodinia(small_run):
    run = small_run
    cost = run.outputs["cost"]
    levels = int(cost.max()) + 1  # the host loop stops after the level that discovers nothing
    k1, k2 = run.by_kernel["Kernel"], run.by_kernel["Kernel2"]
    assert k1.launches == k2.launches == levels == int(run.outputs["iterations"][0])
    assert k1.blocks == k2.blocks == levels * (4096 // 512)  # grid = ceil(4096 / 512)
    assert k1.threads == k2.threads == levels * 4096        # blocks of MAX_THREADS_PER_BLOCK = 512
    assert cost[0] == 0 and (cost >= 0).sum() > 4000
    # Data-dependent control flow really diverges: many issued warp instructions run partial warps.
    assert k1.thread_instructions < 0.5 * 32 * k1.warp_instructions


def test_launch_order_and_small_graph_shape():
    """Kernel then Kernel2 per iteration; a graph of n <= 512 nodes runs as one block of n threads."""
    wl = Bfs()
    dev = Device()
    inputs = wl.generate(np.random.default_rng(3), nodes=64)
    out = wl.execute(dev, wl.module(Form.REG), inputs, nodes=64)
    names = [s.kernel for s in dev.history]
    assert names == ["Kernel", "Kernel2"] * int(out["iterations"][0])
    assert all(s.blocks == 1 and s.threads == 64 for s in dev.history)
    assert Bfs.launch_shape(4097) == (9, 512)


def test_generator_follows_graphgen():
    nodes, edges = generate_graph(np.random.default_rng(5), 1000)
    starting, degree = nodes[:, 0], nodes[:, 1]
    assert starting[0] == 0 and np.array_equal(starting[1:], np.cumsum(degree)[:-1])
    assert degree.sum() == edges.size and (degree >= 2).all()  # every node draws 2..4 edges itself
    assert 5.0 < edges.size / 1000 < 7.0                        # 2 * 3 on average
    src = np.repeat(np.arange(1000), degree)

    def multiset(a, b):
        order = np.lexsort((b, a))
        return np.stack([a[order], b[order]])

    assert np.array_equal(multiset(src, edges), multiset(edges, src))  # each drawn edge stored both ways


def test_check_can_fail():
    class Corrupted(Bfs):
        def execute(self, dev, module, inputs, **params):
            out = super().execute(dev, module, inputs, **params)
            out["cost"][17] += 1
            return out

    with pytest.raises(CheckFailed, match="node 17"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_deterministic(small_run):
    again = run_workload(Bfs, "small", Form.REG)
    assert np.array_equal(again.outputs["cost"], small_run.outputs["cost"])
    assert again.total.warp_instructions == small_run.total.warp_instructions
    assert again.total.thread_instructions == small_run.total.thread_instructions

"""Rodinia 3.1 bfs: level-synchronous breadth-first search, one thread per node.

The host loop of ``cuda/bfs/bfs.cu``: clear ``over``, launch ``Kernel`` (the frontier expands to
its unvisited neighbours, cost = cost + 1) then ``Kernel2`` (the discovered nodes become the
next frontier and raise ``over``), read ``over`` back, repeat while it was raised. Blocks are
MAX_THREADS_PER_BLOCK = 512 threads, ceil(n / 512) of them (one block of n threads if n <= 512).

The graph follows Rodinia's generator (``data/bfs/inputGen/graphgen.cpp``): every node draws
2..4 random neighbours (uniform over all nodes, loops and repeats allowed) and each such edge is
stored in both directions, so a node's degree is random (6 on average); adjacency lists keep the
generator's insertion order. The source is node 0, as ``bfs.cu`` forces. Node records are
``{starting, no_of_edges}`` pairs of int words.

Deviation from Rodinia: the C ``bool`` arrays (frontier mask, updating mask, visited) and the
``over`` flag are 32-bit words (0/1), because the ISA has only 32-bit memory accesses.
The kernels re-read ``cost[tid]`` and the loop bound ``starting + no_of_edges`` inside the edge
loop, as compiled C without ``__restrict__`` must (the stores to ``cost[id]`` may alias them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..workload import CheckFailed, Workload

MAX_THREADS_PER_BLOCK = 512
MIN_EDGES, MAX_INIT_EDGES = 2, 4  # graphgen.cpp: each node draws this many random neighbours


def generate_graph(rng: np.random.Generator, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Rodinia's graphgen: (node records int32[n, 2] = {starting, no_of_edges}, edge list int32[m])."""
    draws = rng.integers(MIN_EDGES, MAX_INIT_EDGES + 1, size=nodes)
    src = np.repeat(np.arange(nodes), draws)  # generator order: node i's draws, i ascending
    dst = rng.integers(0, nodes, size=src.size)
    # Each draw appends i -> dest to i's list, then dest -> i to dest's list; a stable sort by
    # owner keeps every list in insertion order.
    owner = np.stack([src, dst], axis=1).reshape(-1)
    target = np.stack([dst, src], axis=1).reshape(-1)
    order = np.argsort(owner, kind="stable")
    edges = target[order].astype(np.int32)
    degree = np.bincount(owner, minlength=nodes)
    starting = np.concatenate([[0], np.cumsum(degree)[:-1]])
    node_records = np.stack([starting, degree], axis=1).astype(np.int32)
    return node_records, edges


class Bfs(Workload):
    suite = "rodinia"
    name = "bfs"
    description = ("breadth-first search, one thread per node: data-dependent branches, "
                   "per-lane edge-loop trip counts and indirect gathers/scatters")
    source = Path(__file__).with_name("bfs.s")
    sizes = {
        "tiny": {"nodes": 64},
        "small": {"nodes": 4096},     # Rodinia's graph4096 scale
        "paper": {"nodes": 65536},    # Rodinia's graph65536 (cuda/bfs/run)
    }
    tolerance = "exact: every node's cost (BFS level, -1 if unreached) equals a numpy BFS from node 0"

    def generate(self, rng, nodes):
        node_records, edges = generate_graph(rng, nodes)
        return {"nodes": node_records, "edges": edges, "source": 0}

    @staticmethod
    def launch_shape(nodes: int) -> tuple[int, int]:
        """(blocks, threads per block) exactly as bfs.cu computes them."""
        if nodes > MAX_THREADS_PER_BLOCK:
            return -(-nodes // MAX_THREADS_PER_BLOCK), MAX_THREADS_PER_BLOCK
        return 1, nodes

    def execute(self, dev, module, inputs, nodes):
        source = inputs["source"]
        mask = np.zeros(nodes, np.uint32)
        visited = np.zeros(nodes, np.uint32)
        mask[source] = visited[source] = 1
        cost = np.full(nodes, -1, np.int32)
        cost[source] = 0
        d_nodes = dev.upload(inputs["nodes"])
        d_edges = dev.upload(inputs["edges"])
        d_mask = dev.upload(mask)
        d_updating = dev.upload(np.zeros(nodes, np.uint32))
        d_visited = dev.upload(visited)
        d_cost = dev.upload(cost)
        d_over = dev.alloc(4)
        blocks, threads = self.launch_shape(nodes)
        kernel, kernel2 = module["Kernel"], module["Kernel2"]
        iterations = 0
        while True:
            dev.copy_in(d_over, np.zeros(1, np.uint32))  # stop = false
            dev.launch(kernel, grid=blocks, block=threads,
                       params=[d_nodes, d_edges, d_mask, d_updating, d_visited, d_cost, nodes])
            dev.launch(kernel2, grid=blocks, block=threads, params=[d_mask, d_updating, d_visited, d_over, nodes])
            iterations += 1
            if not dev.copy_out(d_over, 1)[0]:
                break
        return {"cost": dev.copy_out(d_cost, nodes, np.int32), "iterations": np.array([iterations])}

    def reference(self, inputs, nodes):
        """Frontier-at-a-time BFS over the same CSR graph, in numpy."""
        starting, degree = inputs["nodes"][:, 0].astype(np.int64), inputs["nodes"][:, 1].astype(np.int64)
        edges = inputs["edges"]
        cost = np.full(nodes, -1, np.int32)
        frontier = np.array([inputs["source"]])
        cost[frontier] = 0
        level = 0
        while frontier.size:
            counts = degree[frontier]
            # positions of all edges leaving the frontier: starting[v] + 0..degree[v]-1
            first = np.repeat(starting[frontier] - np.cumsum(counts) + counts, counts)
            neighbours = edges[first + np.arange(counts.sum())]
            fresh = np.unique(neighbours[cost[neighbours] < 0])
            level += 1
            cost[fresh] = level
            frontier = fresh
        # Rodinia's host loop runs one more level than the deepest one reached (the level that
        # finds nothing new), so iterations = deepest cost + 1.
        return {"cost": cost, "iterations": np.array([level])}

    def check(self, outputs, expected, **params):
        got, want = outputs["cost"], expected["cost"]
        bad = np.flatnonzero(got != want)
        if bad.size:
            i = int(bad[0])
            raise CheckFailed(f"bfs cost: {bad.size} of {got.size} nodes differ from numpy BFS; first at node {i}: "
                              f"got {int(got[i])}, expected {int(want[i])}")
        if outputs["iterations"][0] != expected["iterations"][0]:
            raise CheckFailed(f"bfs: host loop ran {int(outputs['iterations'][0])} iterations, expected "
                              f"{int(expected['iterations'][0])} (deepest level + 1)")
        reached = int((got >= 0).sum())
        return (f"cost of all {got.size} nodes exact ({reached} reached, deepest level {int(got.max())}, "
                f"{int(outputs['iterations'][0])} iterations)")

"""Rodinia kmeans (CUDA): features transposed on the GPU once, then per clustering loop the
nearest-centre kernel on the GPU and the centre update on the host, until no point moves."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from ..sdk.compare import bit_exact

THREADS = 256  # Rodinia's THREADS_PER_BLOCK (kmeans_cuda.cu: num_threads)


def grid_of(npoints: int) -> tuple[int, tuple[int, int]]:
    """(blocks of invert_mapping, grid of kmeans_point) as kmeans_cuda.cu computes them: one
    thread per point; kmeans_point's grid is the smallest square of blocks holding them all."""
    blocks = -(-npoints // THREADS)
    side = math.isqrt(blocks)
    while side * side < blocks:
        side += 1
    return blocks, (side, side)


def nearest(features: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """kmeans_point in numpy, its exact FP32 order: per centre, the squared differences summed
    feature by feature; the first centre with the smallest sum wins."""
    npoints = features.shape[0]
    best = np.full(npoints, np.finfo(np.float32).max, np.float32)
    index = np.full(npoints, -1, np.int32)
    for i, centre in enumerate(clusters):
        dist = np.zeros(npoints, np.float32)
        for feature, c in enumerate(centre):
            diff = features[:, feature] - c
            dist = dist + diff * diff
        closer = dist < best
        best[closer], index[closer] = dist[closer], i
    return index


def new_centres(features: np.ndarray, membership: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """The host's update after a kernel: each centre becomes the mean of its points (FP32 sums in
    point order, then divided by the count); a centre with no points stays where it was."""
    out = clusters.copy()
    for i in range(clusters.shape[0]):
        members = features[membership == i]
        if len(members):
            out[i] = np.add.accumulate(members, axis=0, dtype=np.float32)[-1] / np.float32(len(members))
    return out


def cluster(features: np.ndarray, nclusters: int, max_loops: int, assign) -> dict[str, np.ndarray]:
    """kmeans_clustering's loop: the first nclusters points are the initial centres, every point
    starts in no cluster (-1); each loop assigns the points (``assign(clusters)``: the GPU or numpy),
    counts the points that moved and moves the centres, until none moved or after max_loops loops."""
    clusters = features[:nclusters].copy()
    membership = np.full(features.shape[0], -1, np.int32)
    moved = []
    for _ in range(max_loops):
        new = assign(clusters)
        moved.append(int(np.count_nonzero(new != membership)))
        membership = new
        clusters = new_centres(features, membership, clusters)
        if moved[-1] == 0:
            break
    return {"membership": membership, "clusters": clusters, "moved": np.array(moved, np.int32)}


class Kmeans(CompiledWorkload):
    suite = "rodinia"
    name = "kmeans"
    description = ("k-means clustering (Rodinia kmeans): invert_mapping transposes the features, then per loop "
                   "kmeans_point finds each point's nearest centre (nested loops over centres and features, "
                   "a data-dependent min), the host moves the centres")
    cuda_source = Path(__file__).with_name("kmeans.cu")
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        # 4 blocks, 3 clusters of 4 features, at most 3 loops
        "tiny": {"npoints": 1000, "nfeatures": 4, "nclusters": 3, "max_loops": 3},
        # 32 blocks, Rodinia's 5 clusters of kdd_cup's 34 features, 2 loops
        "small": {"npoints": 8192, "nfeatures": 34, "nclusters": 5, "max_loops": 2},
        # Rodinia's kdd_cup input is 494,020 points of 34 features; 163,840 points of 10 features and at most
        # 2 loops keep the cycle model's run short: 640 blocks in a 26 x 26 grid (173,056 threads)
        "paper": {"npoints": 163840, "nfeatures": 10, "nclusters": 5, "max_loops": 2},
    }
    tolerance = ("exact memberships, FP32 distances in the kernel's order (no FMA): the moves per loop and the "
                 "final centres (host updates shared) follow bit for bit")

    def generate(self, rng, npoints, nfeatures, nclusters, max_loops):
        # Rodinia reads feature files; here points around 2 * nclusters random centres
        centres = rng.uniform(0.0, 10.0, size=(2 * nclusters, nfeatures))
        which = rng.integers(0, len(centres), size=npoints)
        points = centres[which] + rng.standard_normal((npoints, nfeatures))
        return {"features": points.astype(np.float32)}

    def execute(self, dev, module, inputs, npoints, nfeatures, nclusters, max_loops):
        features = inputs["features"]
        blocks, grid = grid_of(npoints)
        # allocateMemory: points uploaded point-major, transposed on the GPU into feature-major
        feature_flipped_d = dev.upload(features)
        feature_d = dev.alloc(features.nbytes)
        dev.launch(module["invert_mapping"], grid=blocks, block=THREADS,
                   params=[feature_flipped_d, feature_d, npoints, nfeatures])
        membership_d = dev.alloc(4 * npoints)
        clusters_d = dev.alloc(4 * nclusters * nfeatures)

        def assign(clusters):  # kmeansCuda: centres in, memberships out
            dev.copy_in(clusters_d, clusters)
            dev.launch(module["kmeans_point"], grid=grid, block=THREADS,
                       params=[feature_d, nfeatures, npoints, nclusters, membership_d, clusters_d])
            return dev.copy_out(membership_d, npoints, np.int32)

        result = cluster(features, nclusters, max_loops, assign)
        result["transposed"] = dev.copy_out(feature_d, features.size, np.float32).reshape(nfeatures, npoints)
        return result

    def reference(self, inputs, npoints, nfeatures, nclusters, max_loops):
        features = inputs["features"]
        result = cluster(features, nclusters, max_loops, lambda clusters: nearest(features, clusters))
        result["transposed"] = np.ascontiguousarray(features.T)
        return result

    def check(self, outputs, expected, npoints, nfeatures, nclusters, max_loops):
        bit_exact(self.name, "transposed features", outputs["transposed"], expected["transposed"])
        moves = np.asarray(outputs["moved"])
        bit_exact(self.name, "points moved per loop", moves, expected["moved"])
        count = bit_exact(self.name, "memberships", outputs["membership"], expected["membership"])
        bit_exact(self.name, "centre coordinates", outputs["clusters"], expected["clusters"])
        return (f"{count} memberships exact after {moves.size} loops (moves {', '.join(map(str, moves))}), "
                f"{nclusters} centres bit-exact")

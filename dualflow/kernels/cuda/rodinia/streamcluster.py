"""Rodinia streamcluster (CUDA): pgain, the facility-location step, asks for a candidate centre x
what opening it would save; the GPU computes each point's switch/keep cost, the host sums the
columns, decides, and updates the assignment. Here a seeded sequence of candidates, as pFL draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.kernels.compiled import CompiledWorkload

from ..sdk.compare import bit_exact

THREADS = 512  # Rodinia's THREADS_PER_BLOCK for the cost kernel

f32 = np.float32


def distances(coord: np.ndarray, x: int) -> np.ndarray:
    """Squared distance of every point to point x, FP32 sums over the dimensions in order: the
    kernel's distance2 and the host's dist() both sum this way. coord is (dim, num)."""
    total = np.zeros(coord.shape[1], np.float32)
    for row in coord:
        d = row - row[x]
        total = total + d * d
    return total


def cost_rows(coord, x, weight, cost, assign, center_table, stride):
    """pgain_cost in numpy: (work_mem rows, switch_membership), the kernel's FP32 operations."""
    num = coord.shape[1]
    x_cost = distances(coord, x) * weight
    switch = x_cost < cost
    work = np.zeros((num, stride), np.float32)
    k = stride - 1
    points = np.arange(num)
    work[points[switch], k] = x_cost[switch] - cost[switch]
    keep = ~switch
    work[points[keep], center_table[assign[keep]]] = cost[keep] - x_cost[keep]
    return work, switch.astype(np.int32)


class State:
    """The points' host state between pgain calls: centres, assignments and costs."""

    def __init__(self, coord: np.ndarray, weight: np.ndarray):
        num = coord.shape[1]
        self.coord, self.weight = coord, weight
        self.is_center = np.zeros(num, bool)
        self.is_center[0] = True  # start from one centre, the first point
        self.assign = np.zeros(num, np.int32)
        self.cost = distances(coord, 0) * weight

    def center_table(self) -> tuple[np.ndarray, int]:
        """Each centre's column in a work row (0, 1, .. in point order), and the number of centres K."""
        table = np.zeros(self.is_center.size, np.int32)
        centers = np.flatnonzero(self.is_center)
        table[centers] = np.arange(centers.size, dtype=np.int32)
        return table, int(centers.size)

    def decide(self, x: int, z: np.float32, work: np.ndarray, switch: np.ndarray, table: np.ndarray) -> np.float32:
        """pgain's host part after the kernel: per centre, the cost of closing it (z plus its column,
        FP32 in point order); a centre that saves when closed is closed, its cost moved to its own row's
        slot K; opening x pays if z plus slot K over all rows is negative: then the switching points and
        those of closed centres move to x. Returns the gain (0 if x is not opened)."""
        k = work.shape[1] - 1
        work = work.copy()
        lower = np.zeros(k, np.float32)
        centers = np.flatnonzero(self.is_center)
        for i in centers:
            col = table[i]
            low = np.add.accumulate(np.concatenate(([z], work[:, col])), dtype=np.float32)[-1]
            lower[col] = low
            if low > 0:
                work[i, k] = work[i, k] - low
        opening = np.add.accumulate(np.concatenate(([z], work[:, k])), dtype=np.float32)[-1]
        if not opening < 0:
            return f32(0.0)
        closing = lower[table[self.assign]] > 0
        moving = (switch != 0) | closing
        self.cost[moving] = (self.weight * distances(self.coord, x))[moving]
        self.assign[moving] = x
        self.is_center[centers[lower[table[centers]] > 0]] = False
        self.is_center[x] = True
        return -opening


class Streamcluster(CompiledWorkload):
    suite = "rodinia"
    name = "streamcluster"
    description = ("facility-location cost step (Rodinia streamcluster's pgain kernel): per point a distance loop "
                   "to the candidate, a data-dependent branch and an indirect store into its own work row; the "
                   "host opens or rejects the candidate and reassigns")
    cuda_source = Path(__file__).with_name("streamcluster.cu")
    cuda_flags = ("-ffp-contract=off",)
    sizes = {
        # 2 blocks, 8 dimensions, 8 candidates (seed 1: 5 opened, 3 rejected, 2 centres closed)
        "tiny": {"num": 1000, "dim": 8, "calls": 8},
        # 16 blocks, 32 dimensions, 6 candidates
        "small": {"num": 8192, "dim": 32, "calls": 6},
        # Rodinia's run script uses 65,536 points of 256 dimensions per chunk; 163,840 points of 16 keep the
        # cycle model's run short: 320 blocks (163,840 threads), 5 candidates
        "paper": {"num": 163840, "dim": 16, "calls": 5},
    }
    tolerance = ("bit-exact against numpy FP32 in the kernel's order (no FMA): every call's work rows and switch "
                 "flags decide the same openings, so the gains, assignments and costs follow exactly")

    def generate(self, rng, num, dim, calls):
        # points around 16 random centres, unit weights (Rodinia's generated stream); candidates drawn as
        # pFL draws them; the facility cost z a fraction of the first assignment's total cost
        centres = rng.uniform(0.0, 10.0, size=(16, dim))
        points = centres[rng.integers(0, 16, size=num)] + rng.standard_normal((num, dim))
        coord = np.ascontiguousarray(points.T.astype(np.float32))  # feature-major, as coord_h
        first = distances(coord, 0)
        z = f32(np.add.accumulate(first, dtype=np.float32)[-1] / f32(32.0))
        return {"coord": coord, "weight": np.ones(num, np.float32),
                "candidates": rng.integers(1, num, size=calls).astype(np.int32), "z": z}

    def _run(self, inputs, kernel) -> dict[str, np.ndarray]:
        """The pgain calls over the candidates; ``kernel(x, state, table, stride)`` gives the work rows
        and switch flags (the GPU or numpy)."""
        state = State(inputs["coord"], inputs["weight"])
        gains = []
        work = switch = None
        for x in inputs["candidates"]:
            table, k = state.center_table()
            work, switch = kernel(int(x), state, table, k + 1)
            gains.append(state.decide(int(x), inputs["z"], work, switch, table))
        return {"gains": np.array(gains, np.float32), "assign": state.assign, "cost": state.cost,
                "is_center": state.is_center.astype(np.int32), "work_mem": work, "switch": switch}

    def execute(self, dev, module, inputs, num, dim, calls):
        blocks = -(-num // THREADS)
        coord_d = dev.upload(inputs["coord"])
        switch_d = dev.alloc(4 * num)
        center_table_d = dev.alloc(4 * num)

        def kernel(x, state, table, stride):
            # Point {weight, coord pointer, assign, cost}: four words per point
            p = np.zeros((num, 4), np.uint32)
            p[:, 0] = state.weight.view(np.uint32)
            p[:, 2] = state.assign.view(np.uint32)
            p[:, 3] = state.cost.view(np.uint32)
            p_d = dev.upload(p)
            dev.copy_in(center_table_d, table)
            work_d = dev.upload(np.zeros(num * stride, np.float32))  # cudaMemset(work_mem_d, 0)
            dev.copy_in(switch_d, np.zeros(num, np.int32))  # cudaMemset(switch_membership_d, 0)
            dev.launch(module["pgain_cost"], grid=blocks, block=THREADS,
                       params=[num, dim, x, p_d, stride - 1, stride, coord_d, work_d, center_table_d, switch_d])
            work = dev.copy_out(work_d, num * stride, np.float32).reshape(num, stride)
            switch = dev.copy_out(switch_d, num, np.int32)
            dev.free(work_d)
            dev.free(p_d)
            return work, switch

        return self._run(inputs, kernel)

    def reference(self, inputs, num, dim, calls):
        def kernel(x, state, table, stride):
            return cost_rows(state.coord, x, state.weight, state.cost, state.assign, table, stride)

        return self._run(inputs, kernel)

    def check(self, outputs, expected, num, dim, calls):
        bit_exact(self.name, "gains", outputs["gains"], expected["gains"])
        bit_exact(self.name, "last call's work_mem words", outputs["work_mem"], expected["work_mem"])
        bit_exact(self.name, "last call's switch flags", outputs["switch"], expected["switch"])
        bit_exact(self.name, "centre flags", outputs["is_center"], expected["is_center"])
        count = bit_exact(self.name, "assignments", outputs["assign"], expected["assign"])
        bit_exact(self.name, "costs", outputs["cost"], expected["cost"])
        opened = int(np.count_nonzero(expected["gains"]))
        centres = int(expected["is_center"].sum())
        return (f"{calls} candidates ({opened} opened, {1 + opened - centres} centres closed, {centres} left): "
                f"gains, {count} assignments and costs bit-exact")

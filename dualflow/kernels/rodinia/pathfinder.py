"""Rodinia 3.1 pathfinder: dynamic programming over a grid of wall costs, pyramid-blocked."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..workload import CheckFailed, Workload

BLOCK_SIZE = 256  # threads per block, columns per block window
HALO = 1  # columns a step consumes on either side


def launch_plan(cols: int, rows: int, pyramid_height: int) -> tuple[int, int, list[tuple[int, int]]]:
    """Host parameters of run() and calc_path(): (borderCols, blockCols, [(startStep, iteration)])."""
    border = pyramid_height * HALO
    small_block_cols = BLOCK_SIZE - pyramid_height * HALO * 2
    if small_block_cols <= 0:
        raise ValueError(f"pyramid_height {pyramid_height} leaves no columns in a {BLOCK_SIZE}-thread block")
    block_cols = -(-cols // small_block_cols)
    steps = [(t, min(pyramid_height, rows - t - 1)) for t in range(0, rows - 1, pyramid_height)]
    return border, block_cols, steps


class Pathfinder(Workload):
    suite = "rodinia"
    name = "pathfinder"
    description = ("min-cost path DP, row by row: 256-thread blocks advance pyramid_height rows per launch in "
                   "shared memory (shrinking valid range, two barriers per step), ping-pong result rows")
    source = Path(__file__).with_name("pathfinder.s")
    sizes = {
        # 2 blocks (252 columns each), 3 launches: iterations 2, 2, 1 (a shorter final pyramid)
        "tiny": {"cols": 300, "rows": 6, "pyramid_height": 2},
        # 18 blocks (236 columns each, the last one ragged), 3 launches of 10 iterations: 144 warps, enough
        # to fill two SMs with 64 warps each (the warps-per-SM study of `dualflow reproduce`)
        "medium": {"cols": 4096, "rows": 31, "pyramid_height": 10},
        # 70 blocks (236 columns each, the last one ragged), 8 launches: iterations 10 x 7, then 7
        "small": {"cols": 16384, "rows": 78, "pyramid_height": 10},
        # Rodinia's run script: 463 blocks, 5 launches (20, 20, 20, 20, 19)
        "paper": {"cols": 100000, "rows": 100, "pyramid_height": 20},
    }
    tolerance = "exact integer equality of the final DP row (integer min/add only)"

    def generate(self, rng, cols, rows, pyramid_height):
        # Rodinia: wall[i][j] = rand() % 10; row 0 is the initial result row
        return {"wall": rng.integers(0, 10, size=(rows, cols), dtype=np.int32)}

    def execute(self, dev, module, inputs, cols, rows, pyramid_height):
        kernel = module["dynproc_kernel"]
        wall = inputs["wall"]
        border, block_cols, steps = launch_plan(cols, rows, pyramid_height)
        gpu_result = [dev.upload(wall[0]), dev.alloc(4 * cols)]
        gpu_wall = dev.upload(wall[1:])  # data + cols: rows 1 .. rows-1
        src, dst = 1, 0
        for t, iteration in steps:
            src, dst = dst, src
            dev.launch(kernel, grid=block_cols, block=BLOCK_SIZE,
                       params=[iteration, gpu_wall, gpu_result[src], gpu_result[dst], cols, rows, t, border])
        return {"result": dev.copy_out(gpu_result[dst], cols, np.int32)}

    def reference(self, inputs, cols, rows, pyramid_height):
        wall = inputs["wall"].astype(np.int64)
        cur = wall[0].copy()
        for r in range(1, rows):
            left = np.concatenate(([cur[0]], cur[:-1]))
            right = np.concatenate((cur[1:], [cur[-1]]))
            cur = np.minimum(np.minimum(left, cur), right) + wall[r]
        return {"result": cur.astype(np.int32)}

    def check(self, outputs, expected, cols, rows, pyramid_height):
        got, want = np.asarray(outputs["result"]), np.asarray(expected["result"])
        bad = np.flatnonzero(got != want)
        if bad.size:
            i = int(bad[0])
            raise CheckFailed(f"pathfinder: {bad.size} of {want.size} path costs differ from numpy; first at "
                              f"index {i}: got {int(got[i])}, expected {int(want[i])}")
        return f"{want.size} path costs exact (min {int(want.min())}, max {int(want.max())})"

"""Rodinia 3.1 hotspot: transient 2-D thermal simulation, pyramid-blocked 5-point stencil."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..workload import CheckFailed, Workload

BLOCK_SIZE = 16  # the block is BLOCK_SIZE x BLOCK_SIZE threads, one per tile cell
EXPAND_RATE = 2  # one more iteration widens the pyramid base by one cell on each side

# Constants of hotspot.cu: the #defines are doubles (K_SI an int), the chip globals floats.
MAX_PD = 3.0e6
PRECISION = 0.001
SPEC_HEAT_SI = 1.75e6
K_SI = 100
FACTOR_CHIP = 0.5
T_CHIP = np.float32(0.0005)
CHIP_HEIGHT = np.float32(0.016)
CHIP_WIDTH = np.float32(0.016)
AMB_TEMP = np.float32(80.0)  # the kernel's local `float amb_temp = 80.0`

f32 = np.float32


def physical_params(cols: int, rows: int) -> dict[str, np.float32]:
    """Cap, Rx, Ry, Rz, step, time_elapsed as compute_tran_temp() computes them: float variables,
    expressions evaluated in double where a double #define takes part (C promotion), float else."""
    grid_height = f32(CHIP_HEIGHT / f32(rows))  # float / int -> float
    grid_width = f32(CHIP_WIDTH / f32(cols))
    d_t, d_gw, d_gh = float(T_CHIP), float(grid_width), float(grid_height)
    cap = f32(FACTOR_CHIP * SPEC_HEAT_SI * d_t * d_gw * d_gh)  # all double, left to right
    rx = f32(d_gw / (2.0 * K_SI * d_t * d_gh))
    ry = f32(d_gh / (2.0 * K_SI * d_t * d_gw))
    rz = f32(T_CHIP / (f32(K_SI) * grid_height * grid_width))  # int * float * float: float throughout
    max_slope = f32(MAX_PD / (FACTOR_CHIP * d_t * SPEC_HEAT_SI))
    step = f32(PRECISION / float(max_slope))
    return {"Cap": cap, "Rx": rx, "Ry": ry, "Rz": rz, "step": step, "time_elapsed": f32(0.001)}


def pyramid(grid: int, pyramid_height: int) -> tuple[int, int]:
    """(border, blocks) along one axis, as run() computes borderCols/blockCols."""
    border = pyramid_height * EXPAND_RATE // 2
    small = BLOCK_SIZE - pyramid_height * EXPAND_RATE
    if small <= 0:
        raise ValueError(f"pyramid_height {pyramid_height} leaves no cells in a {BLOCK_SIZE}-wide block")
    return border, -(-grid // small)


def launch_iterations(total_iterations: int, pyramid_height: int) -> list[int]:
    """The `iteration` argument of each launch of compute_tran_temp()."""
    return [min(pyramid_height, total_iterations - t) for t in range(0, total_iterations, pyramid_height)]


class Hotspot(Workload):
    suite = "rodinia"
    name = "hotspot"
    description = ("2-D thermal stencil: 16x16 blocks run pyramid_height time steps per launch on shared tiles "
                   "with grid-edge clamping (data-dependent boundary branches), ping-pong temperature grids")
    source = Path(__file__).with_name("hotspot.s")
    sizes = {
        # 2x2 blocks of 12x12 owned cells, 2 launches (iterations 2, 1: a shorter final pyramid)
        "tiny": {"grid": 16, "pyramid_height": 2, "total_iterations": 3},
        # 13x13 blocks of 10x10 owned cells (the last row and column ragged), 3 launches (3, 3, 2)
        "small": {"grid": 128, "pyramid_height": 3, "total_iterations": 8},
        # Rodinia's run script `hotspot 512 2 2`: 43x43 blocks, one launch
        "paper": {"grid": 512, "pyramid_height": 2, "total_iterations": 2},
    }
    tolerance = "bit-exact against a numpy FP32 stencil in the kernel's operation order (no FMA, RNE)"

    def generate(self, rng, grid, pyramid_height, total_iterations):
        # Rodinia reads temp_N / power_N files: temperatures of a few hundred kelvin, power per cell
        # up to MAX_PD (W/m^2) times the cell area.
        cell_area = float(CHIP_HEIGHT / f32(grid)) * float(CHIP_WIDTH / f32(grid))
        temp = rng.uniform(322.0, 345.0, size=(grid, grid)).astype(np.float32)
        power = rng.uniform(0.0, MAX_PD * cell_area, size=(grid, grid)).astype(np.float32)
        return {"temp": temp, "power": power}

    def execute(self, dev, module, inputs, grid, pyramid_height, total_iterations):
        kernel = module["calculate_temp"]
        rows = cols = grid  # hotspot takes one size for both axes
        border_rows, block_rows = pyramid(rows, pyramid_height)
        border_cols, block_cols = pyramid(cols, pyramid_height)
        phys = physical_params(cols, rows)
        matrix_temp = [dev.upload(inputs["temp"]), dev.alloc(4 * rows * cols)]
        matrix_power = dev.upload(inputs["power"])
        src, dst = 1, 0
        for iteration in launch_iterations(total_iterations, pyramid_height):
            src, dst = dst, src
            dev.launch(kernel, grid=(block_cols, block_rows), block=(BLOCK_SIZE, BLOCK_SIZE),
                       params=[iteration, matrix_power, matrix_temp[src], matrix_temp[dst], cols, rows,
                               border_cols, border_rows, phys["Cap"], phys["Rx"], phys["Ry"], phys["Rz"],
                               phys["step"], phys["time_elapsed"]])
        return {"temp": dev.copy_out(matrix_temp[dst], rows * cols, np.float32).reshape(rows, cols)}

    def reference(self, inputs, grid, pyramid_height, total_iterations):
        phys = physical_params(grid, grid)
        one = f32(1.0)
        step_div_cap = phys["step"] / phys["Cap"]
        rx_1, ry_1, rz_1 = one / phys["Rx"], one / phys["Ry"], one / phys["Rz"]
        t = inputs["temp"].astype(np.float32)
        p = inputs["power"].astype(np.float32)
        rows, cols = t.shape
        up = np.maximum(np.arange(rows) - 1, 0)  # N, clamped at the grid edge
        down = np.minimum(np.arange(rows) + 1, rows - 1)  # S
        left = np.maximum(np.arange(cols) - 1, 0)  # W
        right = np.minimum(np.arange(cols) + 1, cols - 1)  # E
        with np.errstate(over="raise", invalid="raise"):
            for _ in range(total_iterations):
                two_t = t * f32(2)
                vert = ((t[down, :] + t[up, :]) - two_t) * ry_1
                horiz = ((t[:, right] + t[:, left]) - two_t) * rx_1
                amb = (AMB_TEMP - t) * rz_1
                t = t + step_div_cap * (((p + vert) + horiz) + amb)
        return {"temp": t}

    def check(self, outputs, expected, grid, pyramid_height, total_iterations):
        got = np.asarray(outputs["temp"], np.float32)
        want = np.asarray(expected["temp"], np.float32)
        bad = np.argwhere(got.view(np.uint32) != want.view(np.uint32))
        if bad.size:
            y, x = (int(v) for v in bad[0])
            raise CheckFailed(f"hotspot: {len(bad)} of {want.size} temperatures differ from numpy; first at "
                              f"index ({y}, {x}): got {got[y, x]!r}, expected {want[y, x]!r}")
        return f"{want.size} temperatures bit-exact (range {float(want.min()):.6g} .. {float(want.max()):.6g} K)"

"""Polybench/GPU workloads compiled from CUDA C: each runs at size tiny in both forms and matches
numpy exactly, launches in Polybench's order and shapes, fills the paper's GPU at size paper, and
its check and exactness guard can fail."""

import numpy as np
import pytest

from dualflow.common.errors import ConfigError
from dualflow.isa import Form
from dualflow.kernels.cuda.polybench import POLYBENCH
from dualflow.kernels.cuda.polybench.base import BLOCK_2D, BLOCK_BATCHED
from dualflow.kernels.cuda.polybench.conv2d import WEIGHTS
from dualflow.kernels.cuda.polybench.exact import STEP, dyadic, require_exact
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.machine.presets import preset

NAMES = list(POLYBENCH)

#: per workload: the kernels one run launches, in order, at size tiny
TINY_LAUNCHES = {
    "gemm": ["gemm_kernel"],
    "2mm": ["mm2_kernel1", "mm2_kernel2"],
    "atax": ["atax_kernel1", "atax_kernel2"],
    "bicg": ["bicg_kernel1", "bicg_kernel2"],
    "mvt": ["mvt_kernel1", "mvt_kernel2"],
    "gesummv": ["gesummv_kernel"],
    "syrk": ["syrk_kernel"],
    "conv2d": ["convolution2d_kernel"],
    "fdtd-2d": ["fdtd_step1_kernel", "fdtd_step2_kernel", "fdtd_step3_kernel"] * 3,
    "jacobi-2d": ["jacobi2d_kernel1", "jacobi2d_kernel2"] * 3,
}
BATCHED = {"atax", "bicg", "mvt", "gesummv"}


@pytest.fixture(scope="module")
def modules():
    """Each workload's REG-form module, compiled once for the whole file."""
    return {name: POLYBENCH[name]().module(Form.REG) for name in NAMES}


def test_registry_names_and_suite():
    assert NAMES == ["gemm", "2mm", "atax", "bicg", "mvt", "gesummv", "syrk", "conv2d", "fdtd-2d", "jacobi-2d"]
    for name, workload in POLYBENCH.items():
        assert workload.name == name and workload.suite == "polybench" and workload.origin == "compiled"
        assert workload.cuda_source.is_file() and set(workload.sizes) == {"tiny", "small", "paper"}


@pytest.mark.parametrize("form", [Form.REG, Form.DFLOW], ids=lambda f: f.value)
@pytest.mark.parametrize("name", NAMES)
def test_tiny_matches_numpy_exactly(name, form):
    run = run_workload(POLYBENCH[name], "tiny", form)
    assert run.verdict.count("exact") == len(POLYBENCH[name].outputs)
    assert [launch.kernel for launch in run.launches] == TINY_LAUNCHES[name]
    # the kernels did something: every output differs from all zeros
    assert all(np.any(run.outputs[key] != 0) for key in POLYBENCH[name].outputs)


#: per workload: the grid of each launch at size tiny (the blocks that cover its output)
TINY_GRIDS = {
    "gemm": [(2, 2)],  # 12 x 40
    "2mm": [(1, 2), (2, 2)],  # tmp 12 x 24, D 12 x 40
    "atax": [(1, 2), (1, 2)],  # 40, then 72 elements, 3 problems
    "bicg": [(1, 2), (1, 2)],
    "mvt": [(1, 2), (1, 2)],  # 72 elements, 3 problems
    "gesummv": [(1, 2)],
    "syrk": [(2, 5)],  # 40 x 40
    "conv2d": [(2, 3)],  # 20 x 40
    "fdtd-2d": [(2, 2)] * 9,  # 12 x 40, 3 steps
    "jacobi-2d": [(1, 3)] * 6,  # 20 x 20, 3 steps
}


@pytest.mark.parametrize("name", NAMES)
def test_launch_shapes_follow_polybench(name):
    """2-D kernels on 32 x 8 blocks, x along the output's columns; the matrix-vector ones on
    256-thread blocks of 128 elements x 2 problems."""
    run = run_workload(POLYBENCH[name], "tiny", Form.REG)
    block = BLOCK_BATCHED if name in BATCHED else BLOCK_2D
    assert all(tuple(launch.block) == block for launch in run.launches)
    assert [tuple(launch.grid) for launch in run.launches] == TINY_GRIDS[name]
    assert np.prod(BLOCK_BATCHED) == np.prod(BLOCK_2D) == 256


def test_fdtd_passes_the_time_step():
    run = run_workload(POLYBENCH["fdtd-2d"], "tiny", Form.REG)
    steps = [launch.params[-1] for launch in run.launches if launch.kernel == "fdtd_step1_kernel"]
    assert steps == [0, 1, 2]
    # row 0 of ey is fict[t] of the last step, t = tmax - 1
    assert np.all(run.outputs["ey"][0] == 2.0)


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_one_problem_is_the_original(name):
    """A batch of one is Polybench's single problem; odd extents leave parts of blocks idle."""
    params = {"problems": 1, **({"nx": 33, "ny": 65} if "nx" in POLYBENCH[name].sizes["tiny"] else {"n": 65})}
    run = run_workload(POLYBENCH[name], "tiny", Form.REG, params=params)
    assert all(launch.grid[1] == 1 for launch in run.launches)


class LaunchRecorder:
    """A device that records launches without running them (paper sizes are for the timing model)."""

    def __init__(self):
        self.launches, self.next_address = [], 256

    def alloc(self, nbytes):
        address, self.next_address = self.next_address, self.next_address + nbytes
        return address

    def upload(self, data):
        return self.alloc(np.asarray(data).nbytes)

    def launch(self, kernel, grid, block, params):
        assert len(params) == len(kernel.params), f"{kernel.name}: {len(params)} parameters for {kernel.params}"
        self.launches.append((kernel.name, tuple(np.atleast_1d(grid)), tuple(np.atleast_1d(block))))

    def copy_out(self, address, count, dtype):
        return np.zeros(count, dtype)


@pytest.mark.parametrize("name", NAMES)
def test_paper_size_fills_the_paper_gpu(name, modules):
    """At least one launch holds more threads than every SM of paper-rtx3080 can (68 x 2048)."""
    gpu = preset("paper-rtx3080")
    workload, params = POLYBENCH[name](), POLYBENCH[name].sizes["paper"]
    dev = LaunchRecorder()
    workload.execute(dev, modules[name], workload.generate(np.random.default_rng(1), **params), **params)
    largest = max(int(np.prod(grid) * np.prod(block)) for _, grid, block in dev.launches)
    assert largest > gpu.num_sms * gpu.sm.max_threads
    assert all(int(np.prod(block)) == 256 for _, _, block in dev.launches)


@pytest.mark.parametrize("name", NAMES)
def test_check_can_fail(name):
    workload = POLYBENCH[name]
    key = workload.outputs[-1]

    class Corrupted(workload):
        def reference(self, inputs, **params):
            ref = super().reference(inputs, **params)
            index = tuple(s // 2 for s in ref[key].shape)
            ref[key][index] = np.nextafter(ref[key][index], np.float32(np.inf))  # one ulp
            return ref

    tiny = workload.sizes["tiny"]
    shape = workload().reference(workload().generate(np.random.default_rng(1), **tiny), **tiny)[key].shape
    index = tuple(s // 2 for s in shape)
    with pytest.raises(CheckFailed, match=rf"{key} differ from numpy; first at index \({index[0]}, {index[1]}\)"):
        run_workload(Corrupted, "tiny", Form.REG)


def test_dyadic_inputs_and_the_exactness_guard():
    values = dyadic(np.random.default_rng(3), 10_000)
    assert values.dtype == np.float32 and values.min() == -1 and values.max() == 1
    assert np.all(values / STEP == np.round(values / STEP))
    require_exact(np.array([2.0**24 - 1]), 1.0, "just fits")
    with pytest.raises(ConfigError, match="too big: partial sums up to 1.67772e\\+07"):
        require_exact(np.array([1.0, 2.0**24]), 1.0, "too big")


def test_reference_refuses_sizes_fp32_would_round():
    """A gemm whose dot products can reach 2**24 steps is refused instead of checked loosely."""
    inputs = {"a": np.ones((1, 2**17), np.float32), "b": np.ones((2**17, 1), np.float32),
              "c": np.zeros((1, 1), np.float32)}
    with pytest.raises(ConfigError, match="gemm"):
        POLYBENCH["gemm"]().reference(inputs, ni=1, nj=1, nk=2**17)


def _conv2d_loops(a):
    """Polybench's 2DCONV loop nest in float32, element by element."""
    weights = WEIGHTS
    ni, nj = a.shape
    b = np.zeros_like(a)
    for i in range(1, ni - 1):
        for j in range(1, nj - 1):
            acc = np.float32(0)
            for di in range(3):
                for dj in range(3):
                    term = weights[di, dj] * a[i + di - 1, j + dj - 1]
                    acc = term if di == dj == 0 else np.float32(acc + term)
            b[i, j] = acc
    return b


def _jacobi_loops(a, b, tsteps):
    """Polybench's JACOBI2D loop nest in float32, element by element."""
    a, b, n = a.copy(), b.copy(), a.shape[0]
    for _ in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                b[i, j] = np.float32(0.2) * (a[i, j] + a[i, j - 1] + a[i, j + 1] + a[i + 1, j] + a[i - 1, j])
        a[1:-1, 1:-1] = b[1:-1, 1:-1]
    return a, b


def _fdtd_loops(fict, ex, ey, hz):
    """Polybench's FDTD-2D loop nest in float32, element by element."""
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    nx, ny = ex.shape
    half, c = np.float32(0.5), np.float32(0.7)
    for t in range(len(fict)):
        ey[0, :] = fict[t]
        for i in range(1, nx):
            for j in range(ny):
                ey[i, j] = ey[i, j] - half * (hz[i, j] - hz[i - 1, j])
        for i in range(nx):
            for j in range(1, ny):
                ex[i, j] = ex[i, j] - half * (hz[i, j] - hz[i, j - 1])
        for i in range(nx - 1):
            for j in range(ny - 1):
                hz[i, j] = hz[i, j] - c * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])
    return ex, ey, hz


def test_stencil_references_are_polybench_loops():
    """The vectorized numpy references equal Polybench's loop nests, bit for bit."""
    rng = np.random.default_rng(5)
    conv, p = POLYBENCH["conv2d"](), POLYBENCH["conv2d"].sizes["tiny"]
    inputs = conv.generate(rng, **p)
    np.testing.assert_array_equal(conv.reference(inputs, **p)["b"].view(np.uint32),
                                  _conv2d_loops(inputs["a"]).view(np.uint32))
    jac, p = POLYBENCH["jacobi-2d"](), POLYBENCH["jacobi-2d"].sizes["tiny"]
    inputs = jac.generate(rng, **p)
    ref, loops = jac.reference(inputs, **p), _jacobi_loops(inputs["a"], inputs["b"], p["tsteps"])
    for got, want in zip((ref["a"], ref["b"]), loops):
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    fdtd, p = POLYBENCH["fdtd-2d"](), POLYBENCH["fdtd-2d"].sizes["tiny"]
    inputs = fdtd.generate(rng, **p)
    ref = fdtd.reference(inputs, **p)
    loops = _fdtd_loops(inputs["fict"], inputs["ex"], inputs["ey"], inputs["hz"])
    for got, want in zip((ref["ex"], ref["ey"], ref["hz"]), loops):
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_paper_size_runs_checked_within_budget(name):
    """Paper size in the functional model: exact, and at most about 3e8 thread-instructions."""
    run = run_workload(POLYBENCH[name], "paper", Form.REG)
    assert run.total.thread_instructions <= 3e8


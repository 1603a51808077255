"""Sample kernels with host drivers and numpy references: the foundation's smoke workloads.

Each sample exists in both operand forms (``samples/NAME.reg.s`` and ``samples/NAME.dflow.s``);
``run_sample`` launches one form on a fresh device, checks the output against numpy and returns
the statistics. The Rodinia workloads follow the same pattern in their own modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from dualflow.isa import Form, Kernel, assemble_file
from dualflow.models import Device, FunctionalConfig, LaunchStats, Trace

from dualflow.errors import DualflowError

SOURCE_DIR = Path(__file__).parent / "samples"


class CheckFailed(DualflowError):
    """A workload's output differs from its numpy reference."""


def source_path(name: str, form: Form) -> Path:
    return SOURCE_DIR / f"{name}.{form.value}.s"


def load_kernel(name: str, form: Form) -> Kernel:
    return assemble_file(source_path(name, form)).only


@dataclass
class SampleRun:
    name: str
    form: Form
    stats: LaunchStats
    output: np.ndarray
    trace: Trace | None


def _vadd(dev: Device, kernel: Kernel, rng: np.random.Generator, n: int, trace: bool):
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    da, db, dc = dev.upload(a), dev.upload(b), dev.alloc(4 * n)
    res = dev.launch(kernel, grid=-(-n // 128), block=128, params=[da, db, dc, n], trace=trace)
    return res, dev.copy_out(dc, n, np.float32), a + b


def _reduce(dev: Device, kernel: Kernel, rng: np.random.Generator, n: int, trace: bool):
    block = 128
    blocks = -(-n // block)
    x = rng.integers(-1000, 1000, n).astype(np.float32) / 8  # exact sums in any order
    dx, dout = dev.upload(x), dev.alloc(4 * blocks)
    res = dev.launch(kernel, grid=blocks, block=block, params=[dx, dout, n], trace=trace)
    padded = np.zeros(blocks * block, np.float32)
    padded[:n] = x
    return res, dev.copy_out(dout, blocks, np.float32), padded.reshape(blocks, block).sum(axis=1)


def _divloop(dev: Device, kernel: Kernel, rng: np.random.Generator, n: int, trace: bool):
    x = rng.standard_normal(n).astype(np.float32)
    dx, dout = dev.upload(x), dev.alloc(4 * n)
    res = dev.launch(kernel, grid=-(-n // 96), block=96, params=[dx, dout, n], trace=trace)
    last = np.arange(n) & 7
    acc = (last * (last + 1) * (2 * last + 1) // 6).astype(np.float32)  # sum of k^2, k = 0..last
    return res, dev.copy_out(dout, n, np.float32), acc * x


#: name -> (driver, description). A driver returns (launch result, output, reference).
SAMPLES: dict[str, tuple[Callable, str]] = {
    "vadd": (_vadd, "vector add, early exit past n"),
    "reduce": (_reduce, "shared-memory tree reduction with barriers"),
    "divloop": (_divloop, "divergent loop with a lane-dependent trip count"),
}


def run_sample(name: str, form: Form, n: int = 1000, seed: int = 1, trace: bool = False,
               config: FunctionalConfig | None = None) -> SampleRun:
    """Run one sample in one form; raises ``CheckFailed`` if the output is not bit-exact."""
    driver, _ = SAMPLES[name]
    dev = Device(config)
    res, out, ref = driver(dev, load_kernel(name, form), np.random.default_rng(seed), n, trace)
    bad = np.flatnonzero(out.view(np.uint32) != np.asarray(ref, np.float32).view(np.uint32))
    if bad.size:
        i = int(bad[0])
        raise CheckFailed(f"sample {name} ({form.value}): {bad.size} of {out.size} outputs differ from "
                          f"numpy; first at index {i}: got {out[i]!r}, expected {ref[i]!r}")
    return SampleRun(name, form, res.stats, out, res.trace)

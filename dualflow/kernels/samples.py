"""Sample kernels: the foundation's smoke workloads, each hand-written in both operand forms
(``samples/NAME.reg.s`` and ``samples/NAME.dflow.s``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dualflow.isa import Form
from dualflow.models import FunctionalConfig

from .workload import CheckFailed, Workload, WorkloadRun, run_workload

SOURCE_DIR = Path(__file__).parent / "samples"


def bit_exact(name: str, got: np.ndarray, want: np.ndarray) -> str:
    """Raise ``CheckFailed`` unless the FP32 arrays are identical bit for bit."""
    got32, want32 = np.asarray(got, np.float32), np.asarray(want, np.float32)
    bad = np.flatnonzero(got32.view(np.uint32) != want32.view(np.uint32))
    if bad.size:
        i = int(bad[0])
        raise CheckFailed(f"{name}: {bad.size} of {got32.size} outputs differ from numpy; first at index {i}: "
                          f"got {got32[i]!r}, expected {want32[i]!r}")
    return f"{got32.size} outputs bit-exact"


class _Sample(Workload):
    sizes = {"tiny": {"n": 64}, "small": {"n": 4096}, "paper": {"n": 1 << 20}}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.origin != "hand-written":  # a compiled twin (kernels/cuda/twins) names its own sources
            return
        cls.source = SOURCE_DIR / f"{cls.name}.reg.s"
        cls.dflow_source = SOURCE_DIR / f"{cls.name}.dflow.s"

    def check(self, outputs, expected, **params) -> str:
        return bit_exact(self.name, outputs["out"], expected["out"])


class Vadd(_Sample):
    name = "vadd"
    description = "vector add, one thread per element, early exit past n"

    def generate(self, rng, n):
        return {"a": rng.standard_normal(n).astype(np.float32), "b": rng.standard_normal(n).astype(np.float32)}

    def execute(self, dev, module, inputs, n):
        da, db, dc = dev.upload(inputs["a"]), dev.upload(inputs["b"]), dev.alloc(4 * n)
        dev.launch(module["vadd"], grid=-(-n // 128), block=128, params=[da, db, dc, n])
        return {"out": dev.copy_out(dc, n, np.float32)}

    def reference(self, inputs, n):
        return {"out": inputs["a"] + inputs["b"]}


class Reduce(_Sample):
    name = "reduce"
    description = "per-block FP32 tree reduction in shared memory, a barrier per step"
    block = 128

    def generate(self, rng, n):
        return {"x": rng.integers(-1000, 1000, n).astype(np.float32) / 8}  # sums exact in any order

    def execute(self, dev, module, inputs, n):
        blocks = -(-n // self.block)
        dx, dout = dev.upload(inputs["x"]), dev.alloc(4 * blocks)
        dev.launch(module["reduce"], grid=blocks, block=self.block, params=[dx, dout, n])
        return {"out": dev.copy_out(dout, blocks, np.float32)}

    def reference(self, inputs, n):
        blocks = -(-n // self.block)
        padded = np.zeros(blocks * self.block, np.float32)
        padded[:n] = inputs["x"]
        return {"out": padded.reshape(blocks, self.block).sum(axis=1)}


class Divloop(_Sample):
    name = "divloop"
    description = "a loop whose trip count differs between the lanes of a warp"

    def generate(self, rng, n):
        return {"x": rng.standard_normal(n).astype(np.float32)}

    def execute(self, dev, module, inputs, n):
        dx, dout = dev.upload(inputs["x"]), dev.alloc(4 * n)
        dev.launch(module["divloop"], grid=-(-n // 96), block=96, params=[dx, dout, n])
        return {"out": dev.copy_out(dout, n, np.float32)}

    def reference(self, inputs, n):
        last = np.arange(n) & 7
        acc = (last * (last + 1) * (2 * last + 1) // 6).astype(np.float32)  # sum of k^2, k = 0..last
        return {"out": acc * inputs["x"]}


SAMPLES: dict[str, type[Workload]] = {w.name: w for w in (Vadd, Reduce, Divloop)}


def run_sample(name: str, form: Form, n: int = 1000, seed: int = 1, trace: bool = False,
               config: FunctionalConfig | None = None) -> WorkloadRun:
    """Run one sample at ``n`` elements in one form, checked bit-exact against numpy."""
    return run_workload(SAMPLES[name], "small", form, seed=seed, params={"n": n}, config=config, trace=trace)

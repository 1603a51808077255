"""Both timing engines on the same work: the reference (the specification) and the compiled one
must leave everything equal. Shared by the tests that compare them (timing, DRAM, converter)."""

from __future__ import annotations

import numpy as np

from dualflow.kernels.registry import get_workload
from dualflow.kernels.workload import run_workload
from dualflow.machine.config import GpuConfig
from dualflow.models.timing.device import TimingDevice

ENGINES = ("reference", "compiled")


def devices(config: GpuConfig) -> dict[str, TimingDevice]:
    return {engine: TimingDevice(config, record_issue=True, engine=engine) for engine in ENGINES}


def assert_same(ref: TimingDevice, got: TimingDevice) -> None:
    """Everything the two engines leave behind is equal (launch by launch, first difference named)."""
    assert len(got.timing) == len(ref.timing)
    for i, (a, b) in enumerate(zip(ref.timing, got.timing)):
        a, b = a.to_dict(), b.to_dict()
        differ = [key for key in a if a[key] != b.get(key)]
        assert not differ, f"launch {i} ({a['kernel']}): {differ} differ"
    assert got.gpu.cycle == ref.gpu.cycle
    assert got.gpu.issue_log == ref.gpu.issue_log
    assert np.array_equal(got.memory.words, ref.memory.words)


def run_both(name: str, config: GpuConfig, size: str = "tiny") -> None:
    devs = devices(config)
    runs = {e: run_workload(get_workload(name), size=size, form=config.mode.form, seed=1, device=d)
            for e, d in devs.items()}
    assert runs["compiled"].verdict == runs["reference"].verdict
    assert runs["compiled"].total.to_dict() == runs["reference"].total.to_dict()  # per-pc counts and more
    assert_same(devs["reference"], devs["compiled"])


# ------------------------------------------------------------------ rules copied into numba

"""The compiled suite as a whole: every workload is compiled from CUDA C and names its suite, and
at paper size every workload written for the suite (the twins keep their originals' sizes)
launches more threads than the paper's GPU holds at once. Each workload's check at size tiny, in
both forms, is in tests/kernels/test_workloads_forms.py; the engines' agreement in
tests/models/timing/test_timing_compiled.py."""

import numpy as np
import pytest
from launch_recorder import LaunchRecorder, threads

from dualflow.isa import Form
from dualflow.kernels.cuda import COMPILED
from dualflow.kernels.cuda.twins import TWINS
from dualflow.kernels.registry import HAND_WRITTEN, HELD_BACK, TRAINING, WORKLOADS, kernel_set
from dualflow.machine.presets import preset

WRITTEN_FOR_THE_SUITE = sorted(set(COMPILED) - set(TWINS))


def test_the_suite_has_25_or_more_compiled_workloads():
    assert len(COMPILED) >= 25
    for name, wl in COMPILED.items():
        assert wl.origin == "compiled" and wl.cuda_source.suffix == ".cu", name
        assert wl.suite in ("rodinia", "polybench", "sdk", "samples"), name
        assert {"tiny", "small", "paper"} <= set(wl.sizes), name


def test_training_and_held_back_split_every_workload_and_keep_the_twins_in_training():
    assert set(TRAINING) | set(HELD_BACK) == set(WORKLOADS) and not set(TRAINING) & set(HELD_BACK)
    assert set(HAND_WRITTEN) | set(TWINS) == set(TRAINING)  # the kernels written here
    assert sorted(HELD_BACK) == WRITTEN_FOR_THE_SUITE  # the ones written after public sources
    assert kernel_set("conv2d") == "held-back" and kernel_set("hotspot-cu") == "training"


@pytest.mark.parametrize("name", WRITTEN_FOR_THE_SUITE)
def test_paper_size_launches_more_threads_than_the_paper_gpu_holds(name):
    gpu = preset("paper-rtx3080")
    wl, params = COMPILED[name](), COMPILED[name].sizes["paper"]
    dev = LaunchRecorder()
    wl.execute(dev, wl.module(Form.REG), wl.generate(np.random.default_rng(1), **params), **params)
    assert max(threads(grid, block) for _, grid, block in dev.shapes) > gpu.num_sms * gpu.sm.max_threads

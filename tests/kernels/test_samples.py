"""The three sample kernels run in both forms and match numpy bit for bit."""

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.samples import SAMPLES, Vadd, run_sample
from dualflow.kernels.workload import CheckFailed, run_workload
from dualflow.models import FunctionalConfig


@pytest.mark.parametrize("form", list(Form), ids=lambda f: f.value)
@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("n", [1, 37, 1000])
def test_sample_matches_numpy(name, form, n):
    run = run_sample(name, form, n=n, seed=n)
    assert run.total.warp_instructions > 0
    assert run.outputs['out'].size > 0


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_forms_agree_and_small_batches_agree(name):
    """Both forms give identical outputs; so does running one block at a time."""
    reg = run_sample(name, Form.REG, n=700)
    dflow = run_sample(name, Form.DFLOW, n=700)
    one_block = run_sample(name, Form.DFLOW, n=700, config=FunctionalConfig(batch_warps=1))
    np.testing.assert_array_equal(reg.outputs['out'].view(np.uint32), dflow.outputs['out'].view(np.uint32))
    np.testing.assert_array_equal(dflow.outputs['out'].view(np.uint32), one_block.outputs['out'].view(np.uint32))
    assert one_block.total.warp_instructions == dflow.total.warp_instructions


@pytest.mark.parametrize("warp_size", [4, 8, 16])
def test_samples_at_other_warp_sizes(warp_size):
    for name in SAMPLES:
        for form in Form:
            run_sample(name, form, n=300, config=FunctionalConfig(warp_size=warp_size))


def test_check_can_fail():
    """The reference check is real: a corrupted reference is reported."""

    class Corrupted(Vadd):
        def reference(self, inputs, n):
            ref = super().reference(inputs, n)
            ref["out"][3] += 1
            return ref

    with pytest.raises(CheckFailed, match="index 3"):
        run_workload(Corrupted, "small", Form.REG, params={"n": 100})


def test_statistics_by_hand_vadd():
    """vadd at n = 100, block 128: one block of 4 warps; lanes past n exit after 7 instructions."""
    run = run_sample("vadd", Form.REG, n=100)
    s = run.total
    # Warps 0-2 (96 threads) run all 19 instructions; warp 3 has 4 live lanes in range
    # and 28 out of range: it runs the 7-instruction prologue, the exit of the 28, then 12 more.
    assert s.warp_instructions == 3 * 19 + 7 + 1 + 12
    assert s.thread_instructions == 128 * 7 + 28 + 100 * 12
    # Memory class: `ldc n` in the prologue, then 3 ldc, 2 ldg and 1 stg on the in-range path.
    assert s.by_class["mem"] == {"warp": 4 * 7, "thread": 128 * 1 + 100 * 6}
    assert s.by_opcode["exit"] == {"warp": 4 + 1, "thread": 128}

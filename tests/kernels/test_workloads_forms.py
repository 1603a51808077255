"""Every workload, at every size but paper, runs in both operand forms (DFLOW through the
converter, or hand-written for the samples), passes its reference check, and the two forms
produce bit-identical outputs."""

import numpy as np
import pytest

from dualflow.isa import Form
from dualflow.kernels.registry import HAND_WRITTEN, WORKLOADS
from dualflow.kernels.workload import run_workload

# the compiled suite at size tiny: its own test files (tests/kernels/test_cuda_*.py) run the same check
CASES = ([(name, size) for name, wl in HAND_WRITTEN.items() for size in wl.sizes if size != "paper"]
         + [(name, "tiny") for name in WORKLOADS if name not in HAND_WRITTEN])


@pytest.mark.parametrize("name, size", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_both_forms_pass_and_agree(name, size):
    reg = run_workload(WORKLOADS[name], size, Form.REG)
    dflow = run_workload(WORKLOADS[name], size, Form.DFLOW)
    assert reg.outputs.keys() == dflow.outputs.keys()
    for key in reg.outputs:
        a, b = np.ascontiguousarray(reg.outputs[key]), np.ascontiguousarray(dflow.outputs[key])
        assert a.shape == b.shape, key
        assert a.view(np.uint8).tobytes() == b.view(np.uint8).tobytes(), f"{name} {size}: output {key} differs"
    assert reg.by_kernel.keys() == dflow.by_kernel.keys()
    for kname in reg.by_kernel:
        assert reg.by_kernel[kname].launches == dflow.by_kernel[kname].launches
    assert dflow.total.ring_writes > 0

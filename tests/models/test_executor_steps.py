"""``BatchExecutor.next_step``'s shortcut (after an instruction that only moved its warps, the next
step is found from the last one) picks exactly the steps of the full lowest-pc rule."""

from __future__ import annotations

import numpy as np
import pytest
from programs import asm

from dualflow.isa import Form
from dualflow.isa.convert import convert_kernel
from dualflow.kernels.registry import get_workload
from dualflow.kernels.samples import SAMPLES
from dualflow.kernels.workload import run_workload
from dualflow.models import Device, FunctionalConfig
from dualflow.models import device as device_module
from dualflow.models.executor import BatchExecutor

#: Warp 0 runs one more instruction than the others, which wait for it at LATE: the step after it
#: is found by the shortcut, with the other warps joining warp 0.
JOIN = """
.kernel join
.form reg
.param out
    s2r r1, %warpid
    brnz r1, LATE
    iadd r2, r2, 1
LATE:
    iadd r2, r2, 2
    s2r r3, %tid.x
    ishl r3, r3, 2
    ldc r4, out
    iadd r4, r4, r3
    stg [r4], r2
    exit
"""


class _FullRule(BatchExecutor):
    """Every step by the full rule: the shortcut's memory of the last step dropped."""

    def next_step(self):
        self._last = None
        return super().next_step()


class _Counted(BatchExecutor):
    """Counts the steps found by the shortcut, and those where warps joined the last step's."""

    shortcut = joined = 0

    def next_step(self):
        last = self._last
        step = super().next_step()
        if last is not None and step is not None and step[0] == last[0] + 1:
            _Counted.shortcut += 1
            _Counted.joined += len(step[1]) > len(last[1])
        return step


def _workload(monkeypatch, executor: type, name: str, form: Form):
    monkeypatch.setattr(device_module, "BatchExecutor", executor)
    if name in SAMPLES:
        run = run_workload(SAMPLES[name], "small", form, params={"n": 300}, trace=True)
    else:
        run = run_workload(get_workload(name), "tiny", form, trace=True)
    return [trace.records for trace in run.traces], run.total.to_dict()


def _join(monkeypatch, executor: type, form: Form):
    monkeypatch.setattr(device_module, "BatchExecutor", executor)
    kernel = asm(JOIN)
    if form is Form.DFLOW:
        kernel, _ = convert_kernel(kernel)
    dev = Device(FunctionalConfig())
    out = dev.alloc(4 * 128)
    result = dev.launch(kernel, grid=1, block=128, params=[out], trace=True)
    values = dev.copy_out(out, 128, np.uint32)
    assert values.tolist() == [3] * 32 + [2] * 96
    return result.trace.records, result.stats.to_dict()


@pytest.mark.parametrize("form", [Form.REG, Form.DFLOW])
@pytest.mark.parametrize("name", ["join", "divloop", "gaussian"])
def test_shortcut_steps_equal_the_full_rule(monkeypatch, name: str, form: Form):
    """Same retirement order (the trace lists every step's warps in order), values, addresses and
    per-pc counts with and without the shortcut, which is taken (with warps joining, in ``join``)."""
    _Counted.shortcut = _Counted.joined = 0
    if name == "join":
        fast, full = _join(monkeypatch, _Counted, form), _join(monkeypatch, _FullRule, form)
    else:
        fast, full = _workload(monkeypatch, _Counted, name, form), _workload(monkeypatch, _FullRule, name, form)
    assert fast == full
    assert _Counted.shortcut > 0
    assert _Counted.joined > 0 or name != "join"

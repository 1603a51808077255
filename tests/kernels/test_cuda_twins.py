"""The CUDA C twins of the hand-written workloads (dualflow/kernels/cuda/twins): each compiled
twin passes its original's check at size tiny in the functional model, in REG form and in DFLOW
form (the converter's default conversion), and declares the original's kernels with the same
names and parameter counts, so the original's host driver launches it unchanged."""

import pytest

from dualflow.isa import Form
from dualflow.kernels.cuda.twins import ORIGINALS, TWINS
from dualflow.kernels.workload import run_workload

#: (twin, form) -> the front-end defect that makes it fail (strict xfail: a fix shows up as XPASS).
FRONTEND_DEFECTS: dict[tuple[str, Form], str] = {}


def _case(name: str, form: Form):
    reason = FRONTEND_DEFECTS.get((name, form))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(name, form, marks=marks, id=f"{name}-{form.value}")


@pytest.mark.parametrize("name, form", [_case(n, f) for n in TWINS for f in (Form.REG, Form.DFLOW)])
def test_twin_passes_the_original_check(name, form):
    run = run_workload(TWINS[name], "tiny", form)
    assert run.verdict  # the check raises CheckFailed on any difference
    assert run.total.launches == run_workload(ORIGINALS[name], "tiny", Form.REG).total.launches
    if form is Form.DFLOW:
        assert run.total.ring_writes > 0


@pytest.mark.parametrize("name", list(TWINS))
def test_twin_declares_the_original_kernels(name):
    twin = {k.name: len(k.params) for k in TWINS[name]().module(Form.REG)}
    original = {k.name: len(k.params) for k in ORIGINALS[name]().module(Form.REG)}
    assert twin == original


def test_twins_are_compiled_and_keep_their_suite():
    assert len(TWINS) == 10
    for name, twin in TWINS.items():
        assert name == f"{ORIGINALS[name].name}-cu"
        assert twin.origin == "compiled" and ORIGINALS[name].origin == "hand-written"
        assert twin.suite == ORIGINALS[name].suite
        assert twin.sizes == ORIGINALS[name].sizes
        assert twin().source.suffix == ".cu" and twin().source.is_file()
        assert twin.dflow_source is None  # DFLOW through the converter, never the sample's hand-written form

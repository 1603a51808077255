"""The converter's work limit (dualflow/isa/convert/work.py): a count of steps, not a time."""

from __future__ import annotations

import pytest
from random_programs import check_conversion

from dualflow.isa import Form
from dualflow.isa.convert import DEFAULT_VARIANTS, WORK_LIMIT, WorkLimitExceeded, convert_kernel
from dualflow.isa.convert.work import charge, metered
from dualflow.kernels.registry import WORKLOADS


def _kernel(name: str = "hotspot"):
    return WORKLOADS[name]().module(Form.REG).only


def test_a_conversion_reports_its_steps_and_the_same_ones_every_time():
    first = convert_kernel(_kernel(), variants=DEFAULT_VARIANTS)[1].work
    again = convert_kernel(_kernel(), variants=DEFAULT_VARIANTS)[1].work
    assert 0 < first == again < WORK_LIMIT


def test_a_conversion_past_its_limit_stops_with_a_message_and_at_its_limit_finishes():
    kernel = _kernel()
    steps = convert_kernel(kernel)[1].work
    with pytest.raises(WorkLimitExceeded, match=f"did not finish within {steps - 1:,} steps"):
        convert_kernel(kernel, work_limit=steps - 1)
    assert convert_kernel(kernel, work_limit=steps)[1].work == steps


def test_a_loop_that_does_not_end_is_stopped_by_the_count():
    with pytest.raises(WorkLimitExceeded, match="within 100 steps"), metered(100) as meter:
        while True:
            charge()
    assert meter.steps == 101


def test_a_conversion_inside_another_counts_towards_the_outer_limit():
    with metered(None) as outer:
        charge(5)
        with metered(10) as inner:
            charge(3)
    assert inner is outer and outer.steps == 8


def test_the_property_harness_reports_a_hang_for_a_conversion_past_its_limit():
    kernel = _kernel()
    failure, report = check_conversion(kernel, ref=None, dmax=31, ring=32, runner=None, slots=1, work_limit=10)
    assert report is None and failure.kind == "hang" and "10 steps" in failure.detail


def test_the_work_benchmark_measures_each_configuration_that_converts():
    import benchmark_scripts

    work = benchmark_scripts.load("converter_work")
    rows = work.measure(_kernel("vadd"))
    assert len(rows) == len(work.CONFIGS)  # vadd converts at every one
    assert all(steps > 0 and seconds >= 0 for _, steps, seconds in rows)
    assert rows[-1][1] == convert_kernel(_kernel("vadd"), variants=DEFAULT_VARIANTS)[1].work

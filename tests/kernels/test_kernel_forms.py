"""The form of a mode's kernels (``kernel_form``), and the converter's options as one value
(``ConversionOptions``) from a workload down to the converter."""

import pytest
from dummy_mode import DUMMY, refused

from dualflow.common.errors import ConfigError
from dualflow.isa import DEFAULT_DMAX, DEFAULT_RING, Form, Variant, assemble_file
from dualflow.isa.convert import convert_module
from dualflow.isa.convert.options import DEFAULT_CONVERSION, ConversionOptions
from dualflow.kernels.mode_form import kernel_form
from dualflow.kernels.registry import WORKLOADS
from dualflow.machine.mode import Mode


def test_each_mode_runs_the_form_of_its_capabilities():
    assert kernel_form(Mode.BASE) is Form.REG and kernel_form("dflow") is Form.DFLOW


def test_a_mode_whose_kernels_the_toolkit_does_not_make_is_refused():
    with pytest.raises(ConfigError, match=refused("the REG-to-DFLOW converter")):
        kernel_form(DUMMY)


def test_options_resolve_to_the_converters_defaults():
    assert not DEFAULT_CONVERSION.given
    assert DEFAULT_CONVERSION.keywords() == {"variants": frozenset(), "ring": DEFAULT_RING, "dmax": DEFAULT_DMAX}
    small = ConversionOptions([Variant.HANDS], ring=16)
    assert small.given and small.variants == frozenset({Variant.HANDS})
    assert small.keywords() == {"variants": frozenset({Variant.HANDS}), "ring": 16, "dmax": 15}
    assert ConversionOptions(ring=16, dmax=9).keywords()["dmax"] == 9


def code(module) -> dict[str, list]:
    return {k.name: list(k.code) for k in module}


def test_a_workload_converts_with_the_options_it_is_given():
    wl = WORKLOADS["vadd"]()  # has a hand-written DFLOW form
    reg = wl.module(Form.REG)
    assert code(wl.module(Form.DFLOW)) == code(assemble_file(wl.dflow_source))
    asked = ConversionOptions(ring=16)
    assert code(wl.module(Form.DFLOW, asked)) == code(convert_module(reg, ring=16, dmax=15)[0])
    assert code(wl.module(Form.REG, asked)) == code(reg)

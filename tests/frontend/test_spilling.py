"""Register pressure on real kernels: the compiled suite compiled for 12 registers per thread
spills to local memory and still passes every check, in both operand forms."""

import pytest

from dualflow.frontend import CompileOptions, compile_file
from dualflow.isa import Form
from dualflow.kernels.cuda import COMPILED
from dualflow.kernels.workload import run_workload

REGISTERS = 12
#: the heaviest spillers at 12 registers, in the default suite; every workload in the slow one
DEFAULT = ("lud-cu", "hotspot-cu", "kmeans")


def _tight(name: str):
    wl = COMPILED[name]

    class Tight(wl):
        def reg_module(self):
            return compile_file(self.cuda_source, CompileOptions(flags=self.cuda_flags, max_registers=REGISTERS)).module

    return Tight


def _check(name: str) -> None:
    compiled = compile_file(COMPILED[name].cuda_source, CompileOptions(COMPILED[name].cuda_flags,
                                                                       max_registers=REGISTERS))
    assert all(r.registers <= REGISTERS for r in compiled.reports.values())
    for form in (Form.REG, Form.DFLOW):
        run_workload(_tight(name), "tiny", form)  # raises CheckFailed on a wrong output


@pytest.mark.parametrize("name", DEFAULT)
def test_heavy_spillers_pass_at_12_registers(name):
    reports = compile_file(COMPILED[name].cuda_source, CompileOptions(COMPILED[name].cuda_flags,
                                                                      max_registers=REGISTERS)).reports
    assert sum(r.spilled_values for r in reports.values()) >= 20
    _check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(COMPILED) - set(DEFAULT)))
def test_every_compiled_workload_passes_at_12_registers(name):
    _check(name)

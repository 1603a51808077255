"""The directed program suite (``dualflow.kernels.directed``) as co-simulation cases for the core."""

from __future__ import annotations

from dualflow.isa import Form
from dualflow.kernels.directed import kernel, program
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CosimCase


def directed_case(name: str, params: CoreParams, *, seed: int = 1) -> CosimCase:
    """Program ``name`` as a co-simulation case for a core built with ``params``."""
    prog = program(name)
    form = Form.DFLOW if params.dflow else Form.REG
    return CosimCase(name, kernel(name, form, ring=params.ring), prog.block, prog.setup, seed=seed,
                     min_latency=prog.latency[0], max_latency=prog.latency[1], grid=prog.grid)

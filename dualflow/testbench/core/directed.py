"""The directed program suite (``dualflow.kernels.directed``) on the core: each program as a
co-simulation case, and each co-simulation result held to the program's expected results."""

from __future__ import annotations

from dualflow.kernels.directed import fault_mismatch, kernel, output_mismatches, program
from dualflow.models.device import Device
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CaseResult, CosimCase


def directed_case(name: str, params: CoreParams, *, seed: int = 1) -> CosimCase:
    """Program ``name`` as a co-simulation case for a core built with ``params``."""
    prog = program(name)
    return CosimCase(name, kernel(name, params.mode.form, ring=params.ring), prog.block, prog.setup, seed=seed,
                     min_latency=prog.latency[0], max_latency=prog.latency[1], grid=prog.grid)


def expectation_mismatches(result: CaseResult, params: CoreParams) -> list[str]:
    """How the co-simulated run ``result`` of directed program ``result.name`` departs from the
    suite's expected results: the core's final memory against the program's reference output,
    or, for a faulting program, the golden model's fault against the expected one (that the core
    stopped for the same reason as the golden model is ``result.ok``'s part)."""
    name = result.name
    if program(name).fault is not None:
        mismatch = fault_mismatch(name, result.golden_fault, params.mode.form, ring=params.ring)
        return [] if mismatch is None else [mismatch]
    if result.memory is None:
        return [f"{name}: the core returned no final memory"]
    words = result.memory
    launch_params = program(name).setup(Device())  # the set-up allocates alike on every device: the case's addresses
    return output_mismatches(name, lambda address, n: words[address // 4:address // 4 + n], launch_params,
                             warp_size=params.warp_size)

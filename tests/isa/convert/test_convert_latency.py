"""The converter weighs local memory by its latency (``LOCAL_LOAD_COST``, ``LOCAL_STORE_COST`` in
dualflow/isa/convert/costs.py): where the ring can hold a loop's values, it relays them instead of
storing and reloading them every iteration. hotspot at Dmax 31 is such a loop (docs/converter.md,
"Latency"): counted as plain instructions, the conversion runs more local-memory instructions than
with the latency weights, and both conversions give the reference's results."""

from __future__ import annotations

import dualflow.isa.convert.costs as costs
from dualflow.isa import Form, Opcode
from dualflow.isa.convert import convert_module
from dualflow.kernels.registry import WORKLOADS
from dualflow.kernels.workload import run_workload, with_dflow_form


def _local_in_loops(name: str, size: str) -> int:
    """Local-memory instructions the converted workload runs inside loops (its run is checked)."""
    wl = WORKLOADS[name]
    reg = wl().module(Form.REG)
    dflow, reports = convert_module(reg)

    Converted = with_dflow_form(wl, dflow)

    run = run_workload(Converted, size, Form.DFLOW)
    total = 0
    for kernel, stats in run.by_kernel.items():
        code, loop_of = dflow[kernel].code, reports[kernel].loop_of
        total += sum(int(n) for pc, n in enumerate(stats.per_pc)
                     if code[pc].op in (Opcode.LDL, Opcode.STL) and loop_of[pc] is not None)
    return total


def test_latency_weights_keep_loop_values_in_the_ring(monkeypatch):
    weighted = _local_in_loops("hotspot", "tiny")
    monkeypatch.setattr(costs, "LOCAL_LOAD_COST", 1.0)
    monkeypatch.setattr(costs, "LOCAL_STORE_COST", 1.0)
    counted = _local_in_loops("hotspot", "tiny")
    assert weighted < counted, (weighted, counted)


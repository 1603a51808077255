"""The REG-to-DFLOW converter.

    from dualflow.isa.convert import convert_module
    dflow_module, reports = convert_module(reg_module, dmax=31, ring=32)

Pipeline (``driver``): unrolling of loops by two (or four) where it pays (``unroll``), control-flow
graph with reconvergence regions (``cfg``), isolation of critical edges and loop exits into joins
(``surgery``), liveness and recomputable values (``liveness``, ``remat``), layout-driven code
generation with join frames and tails (``codegen``), refinement of loop-header frames from the
loop latch (a few rounds, keeping the cheapest by the loop-weighted cost of ``costs``), trials of
loop invariants and if/else live values in local memory and of recomputable loop values in the
ring (kept where cheaper), linking, memory-ordering colors (``colors``), the per-loop map of the
report (``breakdown``), and the DFLOW variants asked for (``uniform``: ``uniform-operands``, chosen
in the REG blocks before code generation; ``reserve``: ``reserved-ssy``, on the linked code;
``hands``, ``carried``: values on hands of their own). docs/converter.md explains the algorithm.

This module only names the public surface. The cost weights stay in ``costs`` (not re-exported):
code that sets them to measure others sets ``dualflow.isa.convert.costs.LOCAL_LOAD_COST``, which
is what the converter reads.
"""

from .cfg import ConvertError
from .codegen import MIN_DMAX
from .driver import DEFAULT_VARIANTS, VARIANTS, ConversionReport, base_capacity_ring, convert_kernel, convert_module
from .options import DEFAULT_CONVERSION, ConversionOptions
from .work import WORK_LIMIT, WorkLimitExceeded

__all__ = ["DEFAULT_CONVERSION", "DEFAULT_VARIANTS", "MIN_DMAX", "VARIANTS", "ConversionOptions", "ConversionReport",
           "ConvertError", "WORK_LIMIT", "WorkLimitExceeded", "base_capacity_ring", "convert_kernel", "convert_module"]

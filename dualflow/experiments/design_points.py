"""The design points ``dualflow reproduce`` compares, in one table: each is a machine (a mode), the
conversion its kernels go through, and how it appears in tables and plots. Every comparison is
against a named baseline, so a new point (GPU-CC, say) is a new row here plus the runs that use it.

A point's ``name`` prefixes its columns in the tables (``base_cycles``, ``dflow_cycles``,
``variant_speedup``); its ``experiment`` names its figure-9 runs in ``runs.csv``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from dualflow.isa import Form, Module
from dualflow.isa.convert import DEFAULT_VARIANTS, base_capacity_ring
from dualflow.isa.convert.options import DEFAULT_CONVERSION, ConversionOptions
from dualflow.isa.convert.ring_choice import spill_free_ring
from dualflow.isa.kernel import MAX_RING
from dualflow.kernels.registry import get_workload
from dualflow.machine.config import SmConfig
from dualflow.machine.footprint import entries_at_full_occupancy
from dualflow.machine.mode import Mode


@dataclass(frozen=True)
class Style:
    """How a point is drawn: a matplotlib format (marker and line) and a colour."""

    line: str
    colour: str


@dataclass(frozen=True)
class DesignPoint:
    """One machine the experiments run, with the conversion of its kernels."""

    name: str  # column prefix in the tables
    mode: Mode
    conversion: ConversionOptions  # the converter's options for its DFLOW-form kernels
    label: str  # in text and plots
    abbreviation: str  # in narrow table headings and plot ticks ("B | D")
    style: Style
    experiment: str = "paper"  # its figure-9 runs' experiment in runs.csv
    ring_at_base_capacity: bool = False  # each workload's ring budget: ``variant_ring`` on the SM

    def conversion_for(self, workload: str, sm: SmConfig) -> ConversionOptions:
        """The conversion options of ``workload``'s kernels on this point, on SMs ``sm``."""
        if not self.ring_at_base_capacity:
            return self.conversion
        return _variant_conversion(workload, self.conversion, sm)


@cache
def _variant_conversion(workload: str, conversion: ConversionOptions, sm: SmConfig) -> ConversionOptions:
    """``conversion`` at ``variant_ring`` (a search of several conversions: once per process)."""
    ring = variant_ring(get_workload(workload)().module(Form.REG), sm, conversion)
    return ConversionOptions(conversion.variants, ring=ring, dmax=conversion.dmax)


def capacity_ring(reg: Module, sm: SmConfig) -> int:
    """The ring budget per warp at BASE's register capacity: the SM's register file shared by the
    most threads it holds, or BASE's registers per thread where more (there registers limit BASE's
    warps, and a ring of as many entries limits D-FLOW's alike). Either way D-FLOW keeps the same
    warps resident as BASE in the same register file. Not BASE's registers per thread alone: a
    compiler that allocates 9 registers leaves the rest of the file idle, and a ring squeezed to
    that spills (docs/converter.md, "The default variant")."""
    return min(max(base_capacity_ring(reg), entries_at_full_occupancy(sm)), MAX_RING)


#: How far ``variant_ring`` may grow a ring past ``capacity_ring`` to spill less: to twice its
#: entries, half BASE's resident warps at worst. Set before measuring, not chosen by it.
SPILL_FREE_GROWTH = 2


def variant_ring(reg: Module, sm: SmConfig, conversion: ConversionOptions) -> int:
    """The ring budget the variant form converts ``reg`` for: ``capacity_ring``, or the smallest
    larger one (up to ``SPILL_FREE_GROWTH`` times it) at which the converter spills no more than
    at that limit (``ring_choice.spill_free_ring``): a spill costs memory traffic per thread, which
    on a full GPU costs more than the warps a larger ring gives up (docs/converter.md, "The ring:
    spills against warps")."""
    least = capacity_ring(reg, sm)
    return spill_free_ring(reg, least, min(SPILL_FREE_GROWTH * least, MAX_RING), conversion)


BASE = DesignPoint("base", Mode.BASE, DEFAULT_CONVERSION, Mode.BASE.label, "B", Style("o-", "C0"))
#: D-FLOW in the paper's original form (a workload's hand-written DFLOW form, else the converter's defaults).
DFLOW = DesignPoint("dflow", Mode.DFLOW, DEFAULT_CONVERSION, Mode.DFLOW.label, "D", Style("s--", "C1"))
#: D-FLOW in the default variant form, its rings summing to its share of BASE's register file
#: (``capacity_ring``), or more where that spills (``variant_ring``).
VARIANT = DesignPoint("variant", Mode.DFLOW, ConversionOptions(DEFAULT_VARIANTS), "D-FLOW variant form", "V",
                      Style("^:", "C2"), experiment="variant", ring_at_base_capacity=True)

#: Every point, in the order their runs are planned and their columns written.
DESIGN_POINTS = (BASE, DFLOW, VARIANT)
#: The point every other one is compared against.
BASELINE = BASE
#: The paper's comparison with the baseline: figures 9 and 10, the energy table and the warps study.
COMPARED = DFLOW
#: Further points of figure 9's table, each compared with the baseline (columns ``NAME_*``).
FURTHER = (VARIANT,)
#: The points of the warps-per-SM study.
STUDY_POINTS = (BASELINE, COMPARED)


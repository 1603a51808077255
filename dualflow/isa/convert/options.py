"""The converter's options as one value: what a workload, a simulation or a design point asks of
the REG-to-DFLOW conversion, passed whole from ``dualflow reproduce`` down to ``convert_module``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dualflow.isa.kernel import DEFAULT_DMAX, DEFAULT_RING
from dualflow.isa.opcodes import Variant


@dataclass(frozen=True)
class ConversionOptions:
    """How a REG-form module is converted to DFLOW form.

    variants: the DFLOW variants the converter may use where they save instructions.
    ring: the ring budget per warp (entries); None: the converter's ``DEFAULT_RING``.
    dmax: the largest distance; None: ``DEFAULT_DMAX``, at most ``ring`` - 1.
    Options left at their defaults (``given`` false) let a workload use its hand-written DFLOW form.
    """

    variants: frozenset[Variant] = frozenset()
    ring: int | None = None
    dmax: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "variants", frozenset(self.variants))  # a set or tuple given: hashable

    @property
    def given(self) -> bool:
        """Some option differs from the converter's defaults as asked (not merely resolved to them)."""
        return bool(self.variants) or self.ring is not None or self.dmax is not None

    def keywords(self) -> dict[str, Any]:
        """The options as ``convert_module``/``convert_kernel`` keywords, defaults resolved."""
        ring = DEFAULT_RING if self.ring is None else self.ring
        dmax = min(DEFAULT_DMAX, ring - 1) if self.dmax is None else self.dmax
        return {"variants": self.variants, "ring": ring, "dmax": dmax}


#: No option given: the converter's defaults (or a workload's hand-written DFLOW form).
DEFAULT_CONVERSION = ConversionOptions()

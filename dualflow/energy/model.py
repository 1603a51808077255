"""Energy of a whole-GPU run: the sum over events of count x energy per event, plus static power
x time, from the timing model's statistics (``TimingStats``) and an ``EnergyTable``.

``EVENT_COUNTS`` says which statistic counts each event (one function per event); the run's time
is ``cycles / core clock``. Events and static powers without a sourced figure are reported with
their counts but are not in the total (``EnergyReport.pending``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dualflow.machine.config import GpuConfig
from dualflow.models.timing.stats import TimingStats

from .table import EnergyTable, energy_table


def _memory(group: str, name: str) -> Callable[[TimingStats], float]:
    return lambda t: t.memory[group][name]["value"]


def _lanes(unit: str) -> Callable[[TimingStats], float]:
    return lambda t: t.thread_instructions[unit]


#: Event -> the statistic that counts it.
EVENT_COUNTS: dict[str, Callable[[TimingStats], float]] = {
    "rf_read": lambda t: sum(t.rf_reads),
    "rf_write": lambda t: sum(t.rf_writes),
    "collector": lambda t: sum(t.rf_reads),
    "writeback": lambda t: sum(t.rf_writes),
    "fetch": lambda t: t.total_warp_instructions,
    "decode": lambda t: t.total_warp_instructions,
    "int_op": _lanes("int"),
    "fp_op": _lanes("fp"),
    "sfu_op": _lanes("sfu"),
    "lsu_address": _lanes("mem"),
    "ctrl_op": lambda t: t.warp_instructions["ctrl"],
    "logic_clock": lambda t: t.sm_active_cycles,
    "shared_round": _memory("shared", "bank_rounds"),
    "l1_read": _memory("l1", "load_transactions"),
    "l1_write": _memory("l1", "store_transactions"),
    "l1_fill": _memory("l1", "missed_sectors"),
    "l2_read": _memory("l2", "reads"),
    "l2_write": _memory("l2", "writes"),
    "l2_fill": _memory("l2", "missed_sectors"),
    "noc_flit": lambda t: _memory("interconnect", "request_flits")(t) + _memory("interconnect", "reply_flits")(t),
    "dram_bit": lambda t: 8 * (_memory("dram", "read_bytes")(t) + _memory("dram", "write_bytes")(t)),
}
#: The parts of the register file: its share of the total is theirs.
RF_PARTS = ("rf_read", "rf_write", "rf_leakage")
#: Power of the board rather than the chip: left out of ``chip_joules``.
BOARD_PARTS = ("constant_power",)


@dataclass(frozen=True)
class Component:
    name: str
    count: float | None  # events (None for a static power)
    joules: float | None  # None: no sourced figure, not in the total
    source: str


@dataclass(frozen=True)
class EnergyReport:
    seconds: float
    components: tuple[Component, ...]  # events, then static powers
    table: EnergyTable

    @property
    def total_joules(self) -> float:
        return sum(c.joules for c in self.components if c.joules is not None)

    @property
    def pending(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.components if c.joules is None)

    @property
    def average_watts(self) -> float:
        return self.total_joules / self.seconds if self.seconds else 0.0

    @property
    def edp(self) -> float:
        """Energy-delay product, J s."""
        return self.total_joules * self.seconds

    @property
    def chip_edp(self) -> float:
        """The chip's energy-delay product, J s (``chip_joules`` x time)."""
        return self.chip_joules * self.seconds

    @property
    def rf_joules(self) -> float:
        return sum(c.joules or 0.0 for c in self.components if c.name in RF_PARTS)

    @property
    def rf_share(self) -> float:
        total = self.total_joules
        return self.rf_joules / total if total else 0.0

    @property
    def chip_joules(self) -> float:
        """The total without the board's constant power: what the two machines' designs change."""
        return sum(c.joules for c in self.components if c.joules is not None and c.name not in BOARD_PARTS)

    @property
    def rf_chip_share(self) -> float:
        return self.rf_joules / self.chip_joules if self.chip_joules else 0.0

    @property
    def dynamic_joules(self) -> float:
        """The events' energy (no static power)."""
        return sum(c.joules for c in self.components if c.joules is not None and c.count is not None)

    @property
    def rf_dynamic_share(self) -> float:
        """Register-file reads and writes over all events' energy: what published GPU models
        compare (the RF's share of dynamic power)."""
        rf = sum(c.joules or 0.0 for c in self.components if c.name in RF_PARTS and c.count is not None)
        return rf / self.dynamic_joules if self.dynamic_joules else 0.0

    def to_dict(self) -> dict[str, Any]:
        t = self.table
        return {
            "technology": {"node": t.technology.node, "vdd": t.technology.vdd, "source": t.technology.source},
            "rf_registers_per_sm": t.rf_registers, "clock_gating": t.clock_gating,
            "rf_area_mm2_per_sm": {"value": t.rf_area_mm2, "source": t.rf_area_source},
            "seconds": self.seconds,
            "total_joules": self.total_joules, "chip_joules": self.chip_joules, "average_watts": self.average_watts,
            "edp_joule_seconds": self.edp, "chip_edp_joule_seconds": self.chip_edp,
            "rf_joules": self.rf_joules, "rf_share": self.rf_share, "rf_chip_share": self.rf_chip_share,
            "dynamic_joules": self.dynamic_joules,
            "rf_dynamic_share": self.rf_dynamic_share, "not_modelled": list(self.pending),
            "components": {c.name: {"count": c.count, "joules": c.joules, "source": c.source}
                           for c in self.components},
        }


def gpu_energy(stats: TimingStats, config: GpuConfig, *, table: EnergyTable | None = None,
               rf_registers: int | None = None) -> EnergyReport:
    """Energy of the run ``stats`` on ``config`` (``table``: its energy table, built here from
    ``config`` and ``rf_registers`` when not given)."""
    table = table or energy_table(config, rf_registers)
    seconds = stats.cycles / (config.core_clock_mhz * 1e6)
    parts = []
    for name, e in table.events.items():
        count = EVENT_COUNTS[name](stats)
        parts.append(Component(name, count, None if e.pj is None else count * e.pj * 1e-12, e.source))
    for name, s in table.static.items():
        parts.append(Component(name, None, None if s.watts is None else s.watts * seconds, s.source))
    return EnergyReport(seconds, tuple(parts), table)

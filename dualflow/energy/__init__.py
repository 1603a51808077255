"""Energy of the whole GPU from the timing model's statistics: per-event energies with their
sources (``table``), the technology each preset is scaled to (``technology``), the sum
(``model``); the RTL flow's figures scaled to a preset's node (``rtl_scaled``) and the core
logic's per-event energies from its measured power runs (``rtl_events``, ``data/rtl_power.json``).
docs/energy.md gives every source and assumption."""

from .model import EVENT_COUNTS, Component, EnergyReport, gpu_energy
from .rtl_scaled import RtlScaler, rtl_scaler
from .table import EnergyTable, energy_table
from .technology import TECHNOLOGIES, Technology, technology

__all__ = ["EVENT_COUNTS", "TECHNOLOGIES", "Component", "EnergyReport", "EnergyTable", "RtlScaler", "Technology",
           "energy_table", "gpu_energy", "rtl_scaler", "technology"]

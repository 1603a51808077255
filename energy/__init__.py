"""Energy of the whole GPU from the timing model's statistics: per-event energies with their
sources (``table``), the technology each preset is scaled to (``technology``), and the sum
(``model``). docs/energy.md gives every source and assumption."""

from .model import EVENT_COUNTS, Component, EnergyReport, gpu_energy
from .table import EnergyTable, energy_table
from .technology import TECHNOLOGIES, Technology, technology

__all__ = ["EVENT_COUNTS", "TECHNOLOGIES", "Component", "EnergyReport", "EnergyTable", "Technology", "energy_table",
           "gpu_energy", "technology"]

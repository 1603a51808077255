"""The silicon and memory each GPU preset is built in, for the energy model: the one place that
decides which node the 180 nm CACTI figures and the 45 nm published figures are scaled to.

``Technology.node`` is a node of the scaling model (``dualflow/synth/scaling.py``, Stillmaker & Baas 2017),
``vdd`` the supply the scaled figures assume, ``dram_pj_per_bit`` the DRAM's device energy per
bit moved. Every entry states its source and every choice that is ours.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.common.errors import ConfigError
from dualflow.synth import scaling


@dataclass(frozen=True)
class Technology:
    node: str  # a node of dualflow/synth/scaling.py
    vdd: float  # volts the scaled figures assume
    dram_pj_per_bit: float  # DRAM device energy per bit read or written
    source: str  # where the process, the DRAM and the choices come from

    def __post_init__(self) -> None:
        scaling.check_node(self.node)


#: GA102 / GA104 (Ampere GeForce) are made in Samsung's 8 nm (8N); the scaling model has no 8 nm
#: node. Samsung's 8 nm is a refinement of its 10 nm process, so we scale to HP10 (the larger,
#: conservative neighbour; HP7 would lower dynamic energies by a further ~20%), at 0.83 V, the
#: ITRS nominal supply the paper lists for its 10 nm node (its Table 2, as a public project
#: transcribes it; we could not read the table ourselves). The RTX 3080 carries GDDR6X and the
#: RTX 3070 GDDR6: Micron's "Ultra-Bandwidth Solutions" comparison gives 7.25 and 7.5 pJ/bit
#: average device power.
_AMPERE_8NM = ("Samsung 8 nm (8N), scaled as HP10 (no 8 nm node in the scaling model; 8N derives from "
               "Samsung's 10 nm) at 0.83 V (the paper's nominal supply of 10 nm, its Table 2)")
TECHNOLOGIES: dict[str, Technology] = {
    "paper-rtx3080": Technology("HP10", 0.83, 7.25, f"RTX 3080 (GA102): {_AMPERE_8NM}; GDDR6X 7.25 pJ/bit "
                                "(Micron, Ultra-Bandwidth Solutions memory comparison)"),
    "ampere-rtx3070": Technology("HP10", 0.83, 7.5, f"RTX 3070 (GA104): {_AMPERE_8NM}; GDDR6 7.5 pJ/bit "
                                 "(Micron, Ultra-Bandwidth Solutions memory comparison)"),
}


def technology(preset: str) -> Technology:
    """The technology of GPU preset ``preset`` (a configuration's ``name``); a ConfigError naming
    the presets that have one otherwise (fermi-gtx480 has none: 40 nm is not a node of the scaling
    model and we have no sourced GDDR5 energy per bit)."""
    try:
        return TECHNOLOGIES[preset]
    except KeyError:
        raise ConfigError(f"no energy technology for GPU {preset!r} (have: {', '.join(TECHNOLOGIES)}); "
                          "dualflow/energy/technology.py lists them with their sources") from None

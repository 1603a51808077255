"""The RTL flow's figures, measured in the cell library's node, scaled to a GPU preset's node.

``dualflow synth --liberty`` and ``dualflow power`` measure at the library's node (OSU 0.18 um:
180 nm, 1.8 V); the paper's GPU is 8 nm. ``RtlScaler`` turns an area, a delay, a dynamic energy
or a leakage power at the library's node and supply into one at the node and supply
``technology.py`` gives the preset, with Stillmaker & Baas (``dualflow/synth/scaling.py``). Every result
is a ``Scaled`` whose label names both nodes and the model: a printed scaled figure says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from dualflow.common.errors import ConfigError
from dualflow.synth import scaling

from .technology import Technology, technology

__all__ = ["RtlScaler", "rtl_scaler"]


@dataclass(frozen=True)
class RtlScaler:
    """Scales figures measured at node ``src`` (a node of the scaling model) and ``src_vdd`` volts."""

    src: str
    src_vdd: float
    preset: str
    tech: Technology

    def area(self, value: float) -> scaling.Scaled:
        return scaling.scale_area(value, self.src, self.tech.node)

    def delay(self, value: float) -> scaling.Scaled:
        return scaling.scale_delay(value, self.src, self.src_vdd, self.tech.node, self.tech.vdd)

    def energy(self, value: float) -> scaling.Scaled:
        return scaling.scale_energy(value, self.src, self.src_vdd, self.tech.node, self.tech.vdd)

    def leakage(self, value: float) -> scaling.Scaled:
        return scaling.scale_leakage(value, self.src, self.src_vdd, self.tech.node, self.tech.vdd)

    @property
    def heading(self) -> str:
        return (f"scaled, not measured: from {self.src} nm at {self.src_vdd:g} V to {self.preset}'s node "
                f"({self.tech.node} at {self.tech.vdd:g} V) by {scaling.SOURCE}")


def rtl_scaler(node_nm: int | None, vdd: float, preset: str) -> RtlScaler:
    """The scaler from a library of ``node_nm`` nm at ``vdd`` volts to ``preset``'s technology; a
    ConfigError when the library's node is unknown or not a node of the scaling model."""
    if node_nm is None:
        raise ConfigError("the cell library's node is unknown (dualflow/synth/liberty.py NODE_NM): its figures "
                          "cannot be "
                          "scaled to a GPU's node")
    src = str(node_nm)
    scaling.check_node(src)
    return RtlScaler(src, vdd, preset, technology(preset))

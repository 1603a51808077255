"""Technology scaling: Stillmaker and Baas, "Scaling equations for the accurate prediction of CMOS
device performance from 180 nm to 7 nm", Integration, the VLSI Journal 58 (2017) 74-81.

The paper fits, per technology node and device class, a polynomial in the supply voltage ``V``
to HSpice results (PTM and ITRS models) for three figures of a circuit: its delay (cubic,
``a V^3 + b V^2 + c V + d``), its dynamic energy per operation and its static power (quadratic,
``a V^2 + b V + c``). A figure measured at node X and voltage Vx becomes, at node Y and voltage Vy,
``value * factor_Y(Vy) / factor_X(Vx)``. Nodes 180 to 65 nm have one device class; 45 nm and
below have HP (high performance) and LP (low power) classes, named ``HP45`` ... ``LP7``. Area
scales by the paper's node-to-node area factor table (no voltage).

``COEFFICIENTS`` holds the paper's Table 5 (the authors' erratum on their page confirms the 65 nm
and HP32 energy rows); ``AREA`` its area factors. Every result is a ``Scaled`` carrying a label
that names the two nodes, voltages and the model: a scaled figure never passes for a measured one.

Nodes the paper lacks (8 nm, 40 nm, ...) are not interpolated here: ``check_node`` names the
tabulated ones, and a caller chooses one and says why (dualflow/energy/technology.py).
"""

from __future__ import annotations

from typing import NamedTuple

from dualflow.common.errors import ConfigError

__all__ = ["AREA", "COEFFICIENTS", "NODES", "SOURCE", "Scaled", "node_nm", "scale_area", "scale_delay",
           "scale_energy", "scale_leakage"]

SOURCE = "Stillmaker & Baas, Integration 58 (2017), Table 5"


class Coefficients(NamedTuple):
    """One node's fitted polynomials in the supply voltage (highest power first)."""

    delay: tuple[float, float, float, float]
    energy: tuple[float, float, float]
    power: tuple[float, float, float]  # static power


def _row(*c: float) -> Coefficients:
    return Coefficients(c[0:4], c[4:7], c[7:10])


#: Table 5 of the paper: delay a..d, energy a..c, static power a..c, per node and device class.
COEFFICIENTS: dict[str, Coefficients] = {
    "180": _row(0, 97.09, -356.7, 406.5, 0, 24.64, -17.98, 0, 101000, -79720),
    "130": _row(-76.65, 334.9, -493.4, 275.8, 7.171, -6.709, 2.904, 27020, -15450, 5630),
    "90": _row(-60.34, 262.5, -384.2, 210.9, 4.762, -4.781, 2.092, 17320, -11230, 4328),
    "65": _row(-53.3, 230.4, -333.9, 178.6, 3.755, -4.398, 1.975, 12890, -10510, 4362),
    "HP45": _row(-501.6, 1567, -1619, 566.1, 1.018, -0.3107, 0.1539, 5462, -1760, 522.4),
    "HP32": _row(-1047, 2982, -2797, 873.5, 0.8367, -0.4341, 0.1701, 4001, -1733, 533.6),
    "HP20": _row(0, 34.63, -66.37, 41.15, 0.373, -0.1582, 0.04104, 2922, -1286, 299.9),
    "HP16": _row(0, 24.8, -47.52, 28.87, 0.2958, -0.1241, 0.03024, 2133, -882.6, 197.7),
    "HP14": _row(-40.66, 109.2, -100.6, 35.92, 0.2363, -0.09675, 0.02239, 1675, -711, 159),
    "HP10": _row(-34.95, 93.65, -85.99, 30.4, 0.2068, -0.09311, 0.02375, 1456, -621.6, 143.8),
    "HP7": _row(-28.58, 76.6, -70.26, 24.69, 0.1776, -0.09097, 0.02447, 1179, -515.7, 123.4),
    "LP45": _row(-285.7, 1239, -1795, 898.8, 1.103, -0.362, 0.2767, 6297, -3009, 1124),
    "LP32": _row(-325.9, 1374, -1922, 913.2, 0.9559, -0.7823, 0.471, 4557, -3037, 1323),
    "LP20": _row(-160.5, 514.1, -558.6, 217.5, 0.2632, -0.14, 0.06841, 2096, -962.4, 287.1),
    "LP16": _row(-114.6, 366.7, -397.4, 153.6, 0.2139, -0.1187, 0.05639, 1609, -715.5, 205.7),
    "LP14": _row(-85.37, 271.6, -292.2, 111.4, 0.1556, -0.06472, 0.03066, 1259, -554.1, 152.3),
    "LP10": _row(-71.76, 228.6, -246.3, 93.91, 0.1261, -0.0518, 0.02769, 1046, -422.7, 118.9),
    "LP7": _row(-61.79, 196.1, -210.3, 79.55, 0.09365, -0.03409, 0.02043, 815.2, -307.3, 87.54),
}
NODES = tuple(COEFFICIENTS)

_AREA_NODES = (180, 130, 90, 65, 45, 32, 20, 16, 14, 10, 7)
#: The paper's area factors: ``AREA[x][y]`` multiplies an area at node x (nm) into one at node y.
AREA: dict[int, dict[int, float]] = {x: dict(zip(_AREA_NODES, row)) for x, row in zip(_AREA_NODES, (
    (1, 0.34, 0.15, 0.08, 0.053, 0.025, 0.011, 0.01, 0.0093, 0.0055, 0.0032),
    (2.9, 1, 0.44, 0.23, 0.16, 0.072, 0.033, 0.03, 0.027, 0.016, 0.0092),
    (6.6, 2.3, 1, 0.53, 0.35, 0.16, 0.075, 0.067, 0.061, 0.036, 0.021),
    (12, 4.3, 1.9, 1, 0.66, 0.31, 0.14, 0.13, 0.12, 0.068, 0.039),
    (19, 6.4, 2.8, 1.5, 1, 0.46, 0.21, 0.19, 0.17, 0.1, 0.059),
    (40, 14, 6.1, 3.3, 2.2, 1, 0.46, 0.41, 0.38, 0.22, 0.13),
    (88, 30, 13, 7.1, 4.7, 2.2, 1, 0.89, 0.82, 0.48, 0.28),
    (99, 34, 15, 7.9, 5.3, 2.4, 1.1, 1, 0.91, 0.54, 0.31),
    (110, 37, 16, 8.7, 5.8, 2.7, 1.2, 1.1, 1, 0.59, 0.34),
    (180, 63, 28, 15, 9.8, 4.5, 2.1, 1.9, 1.7, 1, 0.58),
    (320, 110, 48, 25, 17, 7.8, 3.6, 3.2, 2.9, 1.7, 1),
))}


class Scaled(NamedTuple):
    """A figure scaled to another node, with what was done to it."""

    value: float
    label: str  # "scaled from ... to ... (model)"


def check_node(node: str) -> Coefficients:
    """The coefficients of ``node`` (``"180"`` ... ``"65"``, ``"HP45"`` ... ``"LP7"``); a
    ConfigError naming the tabulated nodes otherwise."""
    try:
        return COEFFICIENTS[node]
    except KeyError:
        raise ConfigError(f"technology node {node!r} is not in the scaling model (have: {', '.join(NODES)}; "
                          "45 nm and below need a device class, HP or LP)") from None


def node_nm(node: str) -> int:
    """The feature size of ``node`` in nm (``"HP10"`` -> 10)."""
    check_node(node)
    return int(node.removeprefix("HP").removeprefix("LP"))


def _poly(coefficients: tuple[float, ...], vdd: float) -> float:
    out = 0.0
    for c in coefficients:
        out = out * vdd + c
    return out


def _factor(kind: str, node: str, vdd: float) -> float:
    if not isinstance(vdd, (int, float)) or isinstance(vdd, bool) or not vdd > 0:
        raise ConfigError(f"supply voltage of {node} must be a positive number of volts, not {vdd!r}")
    f = _poly(getattr(check_node(node), kind), vdd)
    if not f > 0:  # outside the voltage range the fit was made for
        raise ConfigError(f"{vdd} V is outside the range of the {kind} fit of {node} (factor {f:.4g} <= 0)")
    return f


def _scale(kind: str, what: str, value: float, src: str, src_vdd: float, dst: str, dst_vdd: float) -> Scaled:
    ratio = _factor(kind, dst, dst_vdd) / _factor(kind, src, src_vdd)
    return Scaled(value * ratio, f"{what} scaled from node {src} at {src_vdd:g} V to node {dst} at {dst_vdd:g} V "
                                 f"(x{ratio:.4g}, {SOURCE})")


def scale_delay(value: float, src: str, src_vdd: float, dst: str, dst_vdd: float) -> Scaled:
    """A delay at node ``src`` and ``src_vdd`` volts, at node ``dst`` and ``dst_vdd``."""
    return _scale("delay", "delay", value, src, src_vdd, dst, dst_vdd)


def scale_energy(value: float, src: str, src_vdd: float, dst: str, dst_vdd: float) -> Scaled:
    """A dynamic energy (per access or operation) scaled the same way."""
    return _scale("energy", "dynamic energy", value, src, src_vdd, dst, dst_vdd)


def scale_leakage(value: float, src: str, src_vdd: float, dst: str, dst_vdd: float) -> Scaled:
    """A static (leakage) power scaled by the paper's static-power fit."""
    return _scale("power", "leakage power", value, src, src_vdd, dst, dst_vdd)


def scale_area(value: float, src: str, dst: str) -> Scaled:
    """An area at node ``src`` at node ``dst`` (the device class does not matter for area)."""
    x, y = node_nm(src), node_nm(dst)
    ratio = AREA[x][y]
    return Scaled(value * ratio, f"area scaled from {x} nm to {y} nm (x{ratio:g}, Stillmaker & Baas 2017, "
                                 "area factor table)")

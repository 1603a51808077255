"""A standard-cell library in Liberty format: where it is, and what the area flow needs from it.

The library is the OSU 0.18 um cell set that Debian ships in ``qflow-tech-osu018``; ``make tech``
(a prerequisite of ``make test`` and ``make run``) downloads that package with ``apt-get download``
and unpacks it with ``dpkg-deb -x`` under ``build/tech/`` (no root, none of qflow's dependencies).

The parser reads Liberty's generic syntax (groups ``kind (args) { ... }``, simple attributes
``name : value ;``, complex attributes ``name (args) ;``) into a tree of :class:`LibertyGroup`, and
:class:`Library` takes from it each cell's area, leakage and whether it stores state (an ``ff`` or
``latch`` group). Liberty leaves area unitless; in the OSU libraries it is the cell's footprint in
um^2 (the LEF of the same package: AND2X1 is 3.2 x 10.0 um, area 32), except for three cells of
``osu018_stdcells.lib`` whose Liberty area is not their footprint: OAI21X1 23 (LEF 32), NAND3X1 36
(LEF 32), LATCH 0 (LEF 56). So a library whose LEF lies beside it (same name, ``.lef``) also gets
each cell's footprint (``SIZE w BY h``), and the report gives the total both ways.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.build_dir import tech_dirs
from dualflow.common.errors import DualflowError

__all__ = ["LIBRARIES", "NODE_NM", "LibertyCell", "LibertyGroup", "LibertyPin", "Library", "PowerTable", "Units",
           "find_liberty", "parse_liberty", "read_footprints", "read_library"]

#: Known libraries: name -> (Debian package, path of the Liberty inside the package, make target).
LIBRARIES: dict[str, tuple[str, str, str]] = {
    "osu018": ("qflow-tech-osu018", "usr/share/qflow/tech/osu018/osu018_stdcells.lib", "tech"),
}
#: Process node (nm) of each known library: the node its memories are modelled at (dualflow/synth/sram.py).
NODE_NM: dict[str, int] = {"osu018": 180}

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[(){}:;,]|[^\s(){}:;,"]+')


@dataclass
class LibertyGroup:
    """One Liberty group: ``kind (args) { attributes; groups }``."""

    kind: str
    args: list[str]
    attributes: dict[str, list[str]] = field(default_factory=dict)
    groups: list[LibertyGroup] = field(default_factory=list)

    def attribute(self, name: str, default: str | None = None) -> str | None:
        values = self.attributes.get(name)
        return values[0] if values else default

    def children(self, kind: str) -> list[LibertyGroup]:
        return [g for g in self.groups if g.kind == kind]


@dataclass(frozen=True)
class PowerTable:
    """One ``rise_power`` / ``fall_power`` table of an ``internal_power`` group: energy per
    transition (library energy unit, :attr:`Units.energy_j`) by input transition time and, for an
    output pin, total output load. ``transition`` and ``load`` are the axes (empty when the table
    does not depend on that variable); ``values[i][j]`` is at ``transition[i]``, ``load[j]``."""

    transition: tuple[float, ...]
    load: tuple[float, ...]
    values: tuple[tuple[float, ...], ...]

    def lookup(self, transition: float, load: float = 0.0) -> float:
        """Bilinear interpolation, linear extrapolation past the table's edges (as timing tools do)."""
        rows = [_interpolate(self.load, row, load) for row in self.values]
        return _interpolate(self.transition, tuple(rows), transition)


def _interpolate(axis: tuple[float, ...], values: tuple[float, ...], x: float) -> float:
    if len(axis) < 2:
        return values[0]
    i = 1
    while i < len(axis) - 1 and x > axis[i]:
        i += 1
    x0, x1 = axis[i - 1], axis[i]
    return values[i - 1] + (values[i] - values[i - 1]) * (x - x0) / (x1 - x0)


@dataclass(frozen=True)
class LibertyPin:
    """One pin: its direction, input capacitance (library capacitance unit) and internal energy.

    ``power`` maps the related pin (``""`` for a pin's own, passive, energy: the energy an input
    draws per transition of its own) to the (rise, fall) tables; on an output pin the tables give
    the energy per rise / fall of the output caused by that related input.
    """

    name: str
    direction: str
    capacitance: float = 0.0
    clock: bool = False
    power: dict[str, tuple[PowerTable | None, PowerTable | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class Units:
    """The library's units, in SI: what one unit of each Liberty quantity is worth, and the
    nominal supply. Internal energy tables are in capacitance unit x voltage unit^2 (Liberty's
    rule for ``internal_power``), i.e. pJ for pF and V."""

    time_s: float = 1e-9
    capacitance_f: float = 1e-12
    voltage_v: float = 1.0
    leakage_w: float = 1e-9
    nominal_voltage: float = 1.8

    @property
    def energy_j(self) -> float:
        return self.capacitance_f * self.voltage_v ** 2


@dataclass(frozen=True)
class LibertyCell:
    """What the area and power flows use of one cell: area, leakage (library leakage unit), whether
    it stores state, and its pins."""

    name: str
    area: float
    leakage: float
    sequential: bool
    pins: dict[str, LibertyPin] = field(default_factory=dict)

    def outputs(self) -> list[str]:
        return [p.name for p in self.pins.values() if p.direction == "output"]


@dataclass
class Library:
    """A parsed Liberty library: its cells by name, with the file it came from."""

    name: str
    path: Path
    cells: dict[str, LibertyCell]
    root: LibertyGroup
    #: cell -> footprint in um^2 from the LEF beside the Liberty file (empty without one)
    footprints: dict[str, float] = field(default_factory=dict)
    units: Units = field(default_factory=Units)

    def area_of(self, counts: dict[str, int]) -> float:
        """Total area of ``{cell name: count}``; a cell the library does not have is an error."""
        unknown = sorted(set(counts) - set(self.cells))
        if unknown:
            raise DualflowError(f"{self.path}: no cell {', '.join(unknown)} in Liberty library {self.name}")
        return sum(self.cells[c].area * n for c, n in counts.items())

    def footprint_of(self, counts: dict[str, int]) -> float | None:
        """Total LEF footprint of ``{cell name: count}``; None when a cell has no footprint."""
        if not set(counts) <= set(self.footprints):
            return None
        return sum(self.footprints[c] * n for c, n in counts.items())


def _strip_comments(text: str) -> str:
    # keep the newlines of block comments, so that error messages give true line numbers
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return text.replace("\\\n", " \n").replace("\\\r\n", " \r\n")


def parse_liberty(text: str, source: str = "<liberty>") -> LibertyGroup:
    """The top-level group (``library (...) { ... }``) of a Liberty text."""
    clean = _strip_comments(text)
    tokens, line, seen = [], 1, 0
    for m in _TOKEN.finditer(clean):
        line, seen = line + clean.count("\n", seen, m.start()), m.start()
        tokens.append((m.group(0), line))
    pos = 0

    def fail(message: str) -> DualflowError:
        line = tokens[min(pos, len(tokens) - 1)][1] if tokens else 1
        return DualflowError(f"{source}:{line}: malformed Liberty: {message}")

    def take(expected: str | None = None) -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise fail("unexpected end of file")
        tok = tokens[pos][0]
        if expected is not None and tok != expected:
            raise fail(f"expected {expected!r}, found {tok!r}")
        pos += 1
        return tok

    def peek() -> str | None:
        return tokens[pos][0] if pos < len(tokens) else None

    def value(tok: str) -> str:
        return tok[1:-1] if tok.startswith('"') else tok

    def args() -> list[str]:
        take("(")
        out = []
        while peek() != ")":
            tok = take()
            if tok != ",":
                out.append(value(tok))
        take(")")
        return out

    def body(group: LibertyGroup) -> None:
        while peek() != "}":
            name = take()
            if peek() == ":":
                take(":")
                group.attributes[name] = [value(take())]
                if peek() == ";":
                    take(";")
                continue
            a = args()
            if peek() == "{":
                take("{")
                child = LibertyGroup(name, a)
                body(child)
                take("}")
                group.groups.append(child)
            else:
                group.attributes[name] = a
                if peek() == ";":
                    take(";")

    kind = take()
    root = LibertyGroup(kind, args())
    take("{")
    body(root)
    take("}")
    if kind != "library":
        raise fail(f"the file's top-level group is {kind!r}, not 'library'")
    return root


def _number(group: LibertyGroup, name: str, where: str) -> float:
    raw = group.attribute(name, "0")
    try:
        return float(raw)
    except ValueError:
        raise DualflowError(f"{where}: {name} {raw!r} is not a number") from None


def read_library(path: str | os.PathLike) -> Library:
    """Parse the Liberty file at ``path``; a missing or malformed file is a :class:`DualflowError`."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise DualflowError(f"cannot read Liberty file {path}: {e.strerror}") from None
    root = parse_liberty(text, str(path))
    templates = {g.args[0]: g for g in root.children("power_lut_template") if g.args}
    cells = {}
    for g in root.children("cell"):
        if not g.args:
            raise DualflowError(f"{path}: a cell group without a name")
        name = g.args[0]
        where = f"{path}: cell {name}"
        cells[name] = LibertyCell(name, _number(g, "area", where), _number(g, "cell_leakage_power", where),
                                  bool(g.children("ff") or g.children("latch")), _pins(g, templates, where))
    if not cells:
        raise DualflowError(f"{path}: no cells in this Liberty file")
    lef = path.with_suffix(".lef")
    footprints = read_footprints(lef) if lef.is_file() else {}
    return Library(root.args[0] if root.args else path.stem, path, cells, root, footprints, _units(root, str(path)))


_SCALE = {"f": 1e-15, "p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0}


def _unit(text: str, suffix: str, where: str) -> float:
    """``"1ns"`` -> 1e-9 for ``suffix`` ``s``; ``"10pW"``, ``"1V"`` alike."""
    m = re.fullmatch(r"\s*([\d.eE+-]+)\s*([fpnum]?)" + suffix + r"\s*", text)
    if not m:
        raise DualflowError(f"{where}: unit {text!r} is not a number with a {suffix} unit")
    return float(m.group(1)) * _SCALE[m.group(2)]


def _units(root: LibertyGroup, where: str) -> Units:
    cap = root.attributes.get("capacitive_load_unit", ["1", "pf"])
    try:
        capacitance = float(cap[0]) * _SCALE[cap[1].lower().removesuffix("f")]
    except (ValueError, KeyError, IndexError):
        raise DualflowError(f"{where}: capacitive_load_unit {cap!r} is not (number, ff|pf|nf)") from None
    return Units(time_s=_unit(root.attribute("time_unit", "1ns"), "s", where),
                 capacitance_f=capacitance,
                 voltage_v=_unit(root.attribute("voltage_unit", "1V"), "V", where),
                 leakage_w=_unit(root.attribute("leakage_power_unit", "1nW"), "W", where),
                 nominal_voltage=_number(root, "nom_voltage", where))


def _floats(text: str, where: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.replace(",", " ").split())
    except ValueError:
        raise DualflowError(f"{where}: {text!r} is not a list of numbers") from None


def _table(g: LibertyGroup, templates: dict[str, LibertyGroup], where: str) -> PowerTable:
    """A power table with its axes named by its template's variables (the table's own
    ``index_N`` replace the template's)."""
    template = templates.get(g.args[0]) if g.args else None
    axes: dict[str, tuple[float, ...]] = {}
    for n in (1, 2):
        variable = template.attribute(f"variable_{n}") if template else None
        index = g.attributes.get(f"index_{n}") or (template.attributes.get(f"index_{n}") if template else None)
        if variable is None or index is None:
            continue
        kind = "load" if "capacitance" in variable else "transition" if "transition" in variable else None
        if kind is None:
            raise DualflowError(f"{where}: power table variable {variable!r} is neither a transition nor a load")
        axes[f"{kind}{n}"] = _floats(index[0], where)
    rows = tuple(_floats(row, where) for row in g.attributes.get("values", []))
    if not rows:
        raise DualflowError(f"{where}: a power table without values")
    names = list(axes)
    transition = next((axes[k] for k in names if k.startswith("transition")), ())
    load = next((axes[k] for k in names if k.startswith("load")), ())
    if names and names[0].startswith("load") and len(names) == 2:  # rows run along the load: transpose
        rows = tuple(zip(*rows))
    elif names and names[0].startswith("load"):  # one axis, the load: one row of loads
        rows = (tuple(v for row in rows for v in row),)
    elif len(names) == 1:  # one axis, the transition: one value per row
        rows = tuple((v,) for row in rows for v in row)
    if (len(rows), len(rows[0])) != (max(1, len(transition)), max(1, len(load))):
        raise DualflowError(f"{where}: a power table's values do not match its indices")
    return PowerTable(transition, load, rows)


def _pins(cell: LibertyGroup, templates: dict[str, LibertyGroup], where: str) -> dict[str, LibertyPin]:
    pins = {}
    for g in cell.children("pin"):
        for name in g.args:
            power = {}
            for ip in g.children("internal_power"):
                at = f"{where} pin {name}"
                rise, fall = (next((_table(t, templates, at) for t in ip.children(kind)), None)
                              for kind in ("rise_power", "fall_power"))
                power[ip.attribute("related_pin", "") or ""] = (rise, fall)
            pins[name] = LibertyPin(name, g.attribute("direction", "input") or "input",
                                    _number(g, "capacitance", f"{where} pin {name}"),
                                    g.attribute("clock", "false") == "true", power)
    return pins


_MACRO = re.compile(r"^\s*MACRO\s+(\S+)(.*?)^\s*END\s+\1\b", re.S | re.M)
_SIZE = re.compile(r"^\s*SIZE\s+([\d.]+)\s+BY\s+([\d.]+)\s*;", re.M)


def read_footprints(lef: Path) -> dict[str, float]:
    """Cell name -> width x height (um^2) of every ``MACRO`` with a ``SIZE`` in a LEF file."""
    out = {}
    for macro in _MACRO.finditer(lef.read_text()):
        size = _SIZE.search(macro.group(2))
        if size:
            out[macro.group(1)] = float(size.group(1)) * float(size.group(2))
    return out


def find_liberty(name: str) -> Path:
    """The Liberty file of a known library (:data:`LIBRARIES`) or a path to a ``.lib`` file.

    A known library is looked for in ``build/tech/<package>/`` of the working directory (or
    ``$DUALFLOW_BUILD_DIR``), of this source checkout, and where Debian installs the package.
    """
    if name not in LIBRARIES:
        path = Path(name)
        if path.is_file():
            return path
        known = ", ".join(sorted(LIBRARIES))
        raise DualflowError(f"Liberty {name!r}: neither a known library ({known}) nor an existing file")
    package, inner, target = LIBRARIES[name]
    candidates = [tech / package / inner for tech in tech_dirs()] + [Path("/") / inner]
    for path in candidates:
        if path.is_file():
            return path
    raise DualflowError(f"Liberty library {name} is not installed: run `make {target}` (it unpacks the Debian "
                        f"package {package} into build/tech/); looked in {', '.join(map(str, candidates))}")

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

from dualflow.build_dir import TECH_DIR
from dualflow.errors import DualflowError

__all__ = ["LIBRARIES", "NODE_NM", "LibertyCell", "LibertyGroup", "Library", "find_liberty", "parse_liberty",
           "read_footprints", "read_library"]

#: Known libraries: name -> (Debian package, path of the Liberty inside the package, make target).
LIBRARIES: dict[str, tuple[str, str, str]] = {
    "osu018": ("qflow-tech-osu018", "usr/share/qflow/tech/osu018/osu018_stdcells.lib", "tech"),
}
#: Process node (nm) of each known library: the node its memories are modelled at (synth/sram.py).
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
class LibertyCell:
    """What the area flow uses of one cell."""

    name: str
    area: float
    leakage: float
    sequential: bool


@dataclass
class Library:
    """A parsed Liberty library: its cells by name, with the file it came from."""

    name: str
    path: Path
    cells: dict[str, LibertyCell]
    root: LibertyGroup
    #: cell -> footprint in um^2 from the LEF beside the Liberty file (empty without one)
    footprints: dict[str, float] = field(default_factory=dict)

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
    cells = {}
    for g in root.children("cell"):
        if not g.args:
            raise DualflowError(f"{path}: a cell group without a name")
        name = g.args[0]
        where = f"{path}: cell {name}"
        cells[name] = LibertyCell(name, _number(g, "area", where), _number(g, "cell_leakage_power", where),
                                  bool(g.children("ff") or g.children("latch")))
    if not cells:
        raise DualflowError(f"{path}: no cells in this Liberty file")
    lef = path.with_suffix(".lef")
    footprints = read_footprints(lef) if lef.is_file() else {}
    return Library(root.args[0] if root.args else path.stem, path, cells, root, footprints)


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
    checkout = Path(__file__).resolve().parents[1] / "build"
    places = [tech / package / inner for tech in (TECH_DIR, checkout / "tech")] + [Path("/") / inner]
    candidates = list(dict.fromkeys(places))  # the checkout's build/ is often the working directory's
    for path in candidates:
        if path.is_file():
            return path
    raise DualflowError(f"Liberty library {name} is not installed: run `make {target}` (it unpacks the Debian "
                        f"package {package} into build/tech/); looked in {', '.join(map(str, candidates))}")

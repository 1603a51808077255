"""The mapped netlist (``mapped.v`` of ``synth.asic.map_design``) read back and flattened.

Yosys's ``write_verilog -noattr -noexpr`` writes a regular subset of Verilog: per module its port
list, ``input``/``output``/``wire`` declarations with ``[msb:lsb]`` ranges, cell instances
``TYPE NAME ( .PIN(expr), ... );`` and ``assign lhs = rhs;``, where an expression is a net, a bit
or part select, a sized constant or a concatenation of those. :func:`read_netlist` parses that
subset (anything else is an error naming the line) and :func:`flatten` elaborates the hierarchy
from the top: every library-cell and macro instance with its full path, and every electrical net
(the bits that ports and ``assign`` join into one) with the names it has in each scope, so that
activity dumped under any of its names can be found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError

from .macros import MemoryInstance

__all__ = ["Module", "Instance", "FlatCell", "FlatNetlist", "read_netlist", "flatten", "macro_geometry"]

#: A bit of an expression: (net name, index) or a constant ``"0"``, ``"1"``, ``"x"``, ``"z"``.
Bit = tuple[str, int] | str


@dataclass
class Instance:
    """A cell or submodule instance: type, name and each pin's bits (LSB first)."""

    type: str
    name: str
    pins: dict[str, list[Bit]]


@dataclass
class Module:
    name: str
    ports: list[str]
    directions: dict[str, str]
    #: net name -> (msb, lsb)
    ranges: dict[str, tuple[int, int]]
    instances: list[Instance] = field(default_factory=list)
    assigns: list[tuple[list[Bit], list[Bit]]] = field(default_factory=list)

    def bits(self, net: str) -> list[Bit]:
        msb, lsb = self.ranges[net]
        step = 1 if msb >= lsb else -1
        return [(net, i) for i in range(lsb, msb + step, step)]


_TOKEN = re.compile(r"\\\S+|[A-Za-z_][\w$]*|\d+'[sS]?[bBhHdDoO][0-9a-fA-FxXzZ_?]+|\d+|[()\[\]{}:;,.=]")


def _name(tok: str) -> str:
    return tok[1:] if tok.startswith("\\") else tok


def _constant(tok: str) -> list[Bit]:
    width, value = tok.split("'")
    base = value.lstrip("sS")[0].lower()
    digits = value.lstrip("sS")[1:].replace("_", "").lower()
    if base == "d":
        text = bin(int(digits))[2:]
    else:
        per = {"b": 1, "h": 4, "o": 3}[base]
        text = "".join(c * per if c in "xz?" else format(int(c, 16), f"0{per}b") for c in digits)
    text = text.rjust(int(width), "0")[-int(width):]
    return [("x" if c == "?" else c) for c in reversed(text)]


_NAME = r"(\\\S+|[A-Za-z_][\w$]*)"
_MODULE = re.compile(r"module\s+" + _NAME + r"\s*\((.*)\);$")
_DECL = re.compile(r"(input|output|inout|wire|reg)\s+(?:signed\s+)?(?:\[(-?\d+):(-?\d+)\]\s*)?" + _NAME + r"\s*;$")
_ASSIGN = re.compile(r"assign\s+(.*?)\s*=\s*(.*);$")
_INSTANCE = re.compile(_NAME + r"\s+" + _NAME + r"\s*\($")
_PIN = re.compile(r"\.\s*" + _NAME + r"\s*\((.*)\),?$")


class _Parser:
    """Line by line, as Yosys writes: one declaration, assign or pin connection per line."""

    def __init__(self, text: str, source: str):
        self.lines = text.splitlines()
        self.source = source
        self.lineno = 0

    def fail(self, what: str) -> DualflowError:
        return DualflowError(f"{self.source}:{self.lineno}: {what} (not the Verilog subset Yosys writes)")

    def modules(self) -> dict[str, Module]:
        out: dict[str, Module] = {}
        mod: Module | None = None
        inst: Instance | None = None
        header = ""  # a module's port list, which Yosys wraps over several lines
        for lineno, raw in enumerate(self.lines, 1):
            self.lineno = lineno
            line = raw.strip()
            if not line or (line.startswith("/*") and line.endswith("*/")) or line.startswith("//"):
                continue
            if mod is None:
                header += " " + line
                if not line.endswith(";"):
                    continue
                line, header = header.strip(), ""
                m = _MODULE.match(line)
                if m is None:
                    raise self.fail(f"expected a module, found {line[:60]!r}")
                mod = Module(_name(m.group(1)), [_name(p.strip()) for p in m.group(2).split(",") if p.strip()], {}, {})
                continue
            if inst is not None:
                if line == ");":
                    mod.instances.append(inst)
                    inst = None
                    continue
                m = _PIN.match(line)
                if m is None:
                    raise self.fail(f"expected a pin connection, found {line[:60]!r}")
                inst.pins[_name(m.group(1))] = self.expr(mod, m.group(2)) if m.group(2).strip() else []
                continue
            if line == "endmodule":
                out[mod.name] = mod
                mod = None
                continue
            m = _DECL.match(line)
            if m is not None:
                kind, msb, lsb, name = m.groups()
                name = _name(name)
                mod.ranges[name] = (int(msb), int(lsb)) if msb is not None else (0, 0)
                if kind not in ("wire", "reg"):
                    mod.directions[name] = kind
                continue
            m = _ASSIGN.match(line)
            if m is not None:
                lhs, rhs = self.expr(mod, m.group(1)), self.expr(mod, m.group(2))
                if len(lhs) != len(rhs):
                    raise self.fail("an assign of unequal widths")
                mod.assigns.append((lhs, rhs))
                continue
            m = _INSTANCE.match(line)
            if m is None:
                raise self.fail(f"unexpected {line[:60]!r}")
            inst = Instance(_name(m.group(1)), _name(m.group(2)), {})
        if mod is not None:
            raise self.fail(f"module {mod.name} has no endmodule")
        return out

    def expr(self, mod: Module, text: str) -> list[Bit]:
        """Bits of an expression, LSB first."""
        tokens = _TOKEN.findall(text)
        pos = 0

        def take() -> str:
            nonlocal pos
            if pos >= len(tokens):
                raise self.fail(f"incomplete expression {text[:60]!r}")
            pos += 1
            return tokens[pos - 1]

        def one() -> list[Bit]:
            nonlocal pos
            tok = take()
            if tok == "{":
                parts = []
                while True:
                    parts.append(one())
                    if take() == "}":
                        break
                return [b for part in reversed(parts) for b in part]
            if "'" in tok:
                return _constant(tok)
            name = _name(tok)
            if name not in mod.ranges:
                raise self.fail(f"net {name!r} is not declared in module {mod.name}")
            if pos >= len(tokens) or tokens[pos] != "[":
                return mod.bits(name)
            take()
            hi = int(take())
            lo = hi
            if take() == ":":
                lo = int(take())
                take()
            return [(name, i) for i in range(min(hi, lo), max(hi, lo) + 1)]

        bits = one()
        if pos != len(tokens):
            raise self.fail(f"unexpected {' '.join(tokens[pos:])[:60]!r} in an expression")
        return bits


def read_netlist(*paths: str | Path) -> dict[str, Module]:
    """Every module of the Verilog files (``mapped.v``, ``macros.v``), by name (escapes removed)."""
    out: dict[str, Module] = {}
    for path in paths:
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise DualflowError(f"cannot read netlist {path}: {e.strerror}") from None
        out.update(_Parser(text, str(path)).modules())
    return out


_MACRO_NAME = re.compile(r"sram_(\d+)x(\d+)_(\d+)r(\d+)w(?:_m(\d+))?")


def macro_geometry(name: str, block: str = "", instance: str = "") -> MemoryInstance | None:
    """The geometry a macro's name encodes (dualflow/synth/macros.py's naming); None for another name."""
    m = _MACRO_NAME.fullmatch(name)
    if m is None:
        return None
    words, bits, r, w, mask = m.groups()
    return MemoryInstance(block, instance, int(words), int(bits), int(r), int(w), int(mask or bits))


@dataclass
class FlatCell:
    """One leaf instance (library cell or macro): its path, type, block and pins' net ids."""

    path: str
    type: str
    block: str
    pins: dict[str, list[int]]


@dataclass
class FlatNetlist:
    """The design elaborated from its top: leaf instances, nets, and each net's names.

    ``names[n]``: the (scope path, net, bit) names of net ``n`` (scope ``""`` is the top);
    ``constant[n]``: ``"0"``/``"1"`` for a net tied to a constant, else absent.
    """

    top: str
    cells: list[FlatCell]
    nets: int
    names: list[list[tuple[str, str, int]]]
    constant: dict[int, str]
    scopes: list[str]


def _block(module: str, top: str) -> str:
    """The block a first-level submodule's module stands for: the area report's rule
    (``synth.asic.ModuleArea.block``: the first name below the top, ``$N`` suffixes dropped)."""
    return re.sub(r"\$\d+", "", module.removeprefix(top + ".")).split(".", 1)[0]


def flatten(modules: dict[str, Module], top: str, leaves: set[str]) -> FlatNetlist:
    """Elaborate ``top``; ``leaves`` are the cell and macro types (all others must be modules)."""
    parent: list[int] = []

    def new() -> int:
        parent.append(len(parent))
        return len(parent) - 1

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def union(a: int, b: int) -> None:
        a, b = find(a), find(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    consts = {c: new() for c in "01xz"}
    cells: list[tuple[str, str, str, dict[str, list[int]]]] = []
    names: list[tuple[int, str, str, int]] = []
    scopes: list[str] = []
    if top not in modules:
        raise DualflowError(f"the netlist has no module {top!r}")

    def elaborate(mod: Module, path: str, bound: dict[str, list[int]], block: str) -> None:
        scopes.append(path)
        local: dict[tuple[str, int], int] = {}
        for net in mod.ranges:
            given = bound.get(net)
            for k, bit in enumerate(mod.bits(net)):
                local[bit] = given[k] if given is not None and k < len(given) else new()
                names.append((local[bit], path, net, bit[1]))

        def ids(bits: list[Bit]) -> list[int]:
            return [consts[b] if isinstance(b, str) else local[b] for b in bits]

        for lhs, rhs in mod.assigns:
            for a, b in zip(ids(lhs), ids(rhs)):
                union(a, b)
        for inst in mod.instances:
            where = f"{path}.{inst.name}" if path else inst.name
            pins = {pin: ids(bits) for pin, bits in inst.pins.items()}
            if inst.type in leaves:
                cells.append((where, inst.type, block, pins))
            elif inst.type in modules:
                elaborate(modules[inst.type], where, pins, block if path else _block(inst.type, top))
            else:
                raise DualflowError(f"instance {where} of {inst.type!r}: neither a library cell, a macro nor a "
                                    "module of the netlist")

    elaborate(modules[top], "", {}, "(top)")
    roots: dict[int, int] = {}
    for i in range(len(parent)):
        roots.setdefault(find(i), len(roots))
    net_names: list[list[tuple[str, str, int]]] = [[] for _ in roots]
    for raw, path, net, bit in names:
        net_names[roots[find(raw)]].append((path, net, bit))
    constant = {roots[find(consts[c])]: c for c in "01"}
    flat = [FlatCell(p, t, b, {pin: [roots[find(i)] for i in ids] for pin, ids in pins.items()})
            for p, t, b, pins in cells]
    return FlatNetlist(top, flat, len(roots), net_names, constant, scopes)

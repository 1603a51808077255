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

from dualflow.errors import DualflowError

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


_IDENT = r"(?:\\\S+|[A-Za-z_][\w$]*)"
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


class _Parser:
    def __init__(self, text: str, source: str):
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        self.tokens: list[tuple[str, int]] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            self.tokens += [(m.group(0), lineno) for m in _TOKEN.finditer(line)]
        self.pos, self.source = 0, source

    def fail(self, what: str) -> DualflowError:
        line = self.tokens[min(self.pos, len(self.tokens) - 1)][1] if self.tokens else 0
        return DualflowError(f"{self.source}:{line}: {what} (not the Verilog subset Yosys writes)")

    def peek(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self, want: str | None = None) -> str:
        if self.pos >= len(self.tokens):
            raise self.fail("unexpected end of file")
        tok = self.tokens[self.pos][0]
        if want is not None and tok != want:
            raise self.fail(f"expected {want!r}, found {tok!r}")
        self.pos += 1
        return tok

    def modules(self) -> dict[str, Module]:
        out = {}
        while self.peek() is not None:
            self.take("module")
            mod = self.module()
            out[mod.name] = mod
        return out

    def module(self) -> Module:
        mod = Module(_name(self.take()), [], {}, {})
        self.take("(")
        while self.peek() != ")":
            tok = self.take()
            if tok != ",":
                mod.ports.append(_name(tok))
        self.take(")")
        self.take(";")
        while (tok := self.peek()) != "endmodule":
            if tok in ("input", "output", "inout", "wire", "reg"):
                self.declaration(mod)
            elif tok == "assign":
                self.take()
                lhs = self.expr(mod)
                self.take("=")
                rhs = self.expr(mod)
                self.take(";")
                if len(lhs) != len(rhs):
                    raise self.fail("an assign of unequal widths")
                mod.assigns.append((lhs, rhs))
            else:
                mod.instances.append(self.instance(mod))
        self.take("endmodule")
        return mod

    def declaration(self, mod: Module) -> None:
        kind = self.take()
        msb = lsb = 0
        if self.peek() == "signed":
            self.take()
        if self.peek() == "[":
            self.take("[")
            msb = int(self.take())
            self.take(":")
            lsb = int(self.take())
            self.take("]")
        while True:
            name = _name(self.take())
            mod.ranges[name] = (msb, lsb)
            if kind != "wire" and kind != "reg":
                mod.directions[name] = kind
            if self.peek() == "=":
                raise self.fail("a net with an initial value")
            if self.take() == ";":
                break

    def instance(self, mod: Module) -> Instance:
        kind = _name(self.take())
        name = _name(self.take())
        self.take("(")
        pins: dict[str, list[Bit]] = {}
        while self.peek() != ")":
            if self.peek() == ",":
                self.take()
                continue
            self.take(".")
            pin = _name(self.take())
            self.take("(")
            pins[pin] = self.expr(mod) if self.peek() != ")" else []
            self.take(")")
        self.take(")")
        self.take(";")
        return Instance(kind, name, pins)

    def expr(self, mod: Module) -> list[Bit]:
        """Bits of an expression, LSB first."""
        tok = self.take()
        if tok == "{":
            parts = []
            while True:
                parts.append(self.expr(mod))
                if self.take() == "}":
                    break
            return [b for part in reversed(parts) for b in part]
        if "'" in tok:
            return _constant(tok)
        name = _name(tok)
        if name not in mod.ranges:
            raise self.fail(f"net {name!r} is not declared in module {mod.name}")
        if self.peek() != "[":
            return mod.bits(name)
        self.take("[")
        hi = int(self.take())
        lo = hi
        if self.peek() == ":":
            self.take()
            lo = int(self.take())
        self.take("]")
        return [(name, i) for i in range(min(hi, lo), max(hi, lo) + 1)]


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
    """The geometry a macro's name encodes (synth/macros.py's naming); None for another name."""
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

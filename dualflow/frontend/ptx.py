"""The PTX parser: the subset clang's NVPTX back end writes for 32-bit CUDA kernels.

It reads a module into kernels (``.entry``), their parameters, register declarations,
shared/local arrays and instructions, and module-scope variables with their initializers.
It checks syntax only; what an instruction means is ``lower``'s business. Every error names
the PTX file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import FrontendError


@dataclass(frozen=True)
class Reg:
    """A PTX register operand (``%r12``, ``%f3``, ``%p1``, ``%tid.x``)."""

    name: str


@dataclass(frozen=True)
class Imm:
    """An immediate: ``bits`` is the 32-bit pattern; ``is_float`` for ``0f...`` literals."""

    bits: int
    is_float: bool = False


@dataclass(frozen=True)
class Sym:
    """A symbol used as a value (a variable's address) or a label."""

    name: str


@dataclass(frozen=True)
class Mem:
    """A memory operand ``[base+offset]``: base is a Reg, a Sym or None (an absolute address)."""

    base: Reg | Sym | None
    offset: int


@dataclass(frozen=True)
class Vec:
    """A vector operand ``{%f1, %f2}``."""

    items: tuple[Reg | Imm, ...]


Operand = Reg | Imm | Sym | Mem | Vec


@dataclass(frozen=True)
class Instr:
    """One PTX instruction: ``[@[!]guard] opcode.mod1.mod2 operands`` at ``line``.

    ``dual`` is the second destination of a ``setp`` written ``p|q``."""

    opcode: str
    mods: tuple[str, ...]
    operands: tuple[Operand, ...]
    line: int
    guard: Reg | None = None
    guard_negated: bool = False
    dual: Reg | None = None

    @property
    def text(self) -> str:
        return ".".join((self.opcode,) + self.mods)


@dataclass(frozen=True)
class Label:
    name: str
    line: int


@dataclass
class Variable:
    """A ``.shared``, ``.local``, ``.global`` or ``.const`` array or scalar."""

    name: str
    space: str
    size: int  #: bytes
    align: int
    line: int
    init: bytes | None = None  #: initial bytes (module-scope variables with ``= {...}``)


@dataclass
class Param:
    name: str
    type: str
    line: int


@dataclass
class Entry:
    """A kernel: ``.entry NAME(params) { body }``."""

    name: str
    line: int
    params: list[Param] = field(default_factory=list)
    body: list[Instr | Label] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)  #: kernel-scope shared/local arrays


@dataclass
class PtxModule:
    path: str
    entries: list[Entry] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)  #: module-scope
    functions: list[tuple[str, int]] = field(default_factory=list)  #: ``.func`` names and lines


_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "b32": 4, "u32": 4,
               "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "pred": 1}
_VAR_RE = re.compile(r"^(?:\.(?:visible|extern|weak|global\b)\s+)*\.(shared|local|global|const)\s+(.*)$")
_DECL_RE = re.compile(r"^(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d*)\])?\s*(?:=\s*(.*))?$")
_TOKEN_SPLIT = re.compile(r",(?![^{]*\})(?![^\[]*\])")


def _strip_comments(text: str) -> list[str]:
    """Lines without ``//`` and ``/* */`` comments (line numbers kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return [line.split("//", 1)[0] for line in text.split("\n")]


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.lines = _strip_comments(text)

    def error(self, line: int, message: str) -> FrontendError:
        return FrontendError(f"{self.path}:{line}: {message}")

    def statements(self):
        """(line, statement) pairs: statements end at ``;``, ``{``, ``}`` or a label's ``:``."""
        buf, start = "", 0
        for number, raw in enumerate(self.lines, 1):
            for ch in raw:
                if not buf.strip():
                    start = number
                if ch == ";":
                    yield start, buf.strip()
                    buf = ""
                elif (ch == "{" and (not buf.strip() or buf.rstrip().endswith(")"))) or (ch == "}" and not buf.strip()):
                    if buf.strip():
                        yield start, buf.strip()
                    yield number, ch
                    buf = ""
                else:
                    buf += ch
            if re.fullmatch(r"\s*[\w$]+:\s*", buf) or re.match(r"\s*\.(version|target|address_size)\b", buf):
                yield start, buf.strip()
                buf = ""
            buf += " "
        if buf.strip():
            yield start, buf.strip()

    def parse(self) -> PtxModule:
        module = PtxModule(self.path)
        entry: Entry | None = None
        depth = 0
        header: list[str] | None = None  # collecting an .entry/.func header up to ``{``
        header_line = 0
        for line, stmt in self.statements():
            if header is not None:
                if stmt == "{":
                    kind, name, params = self._header(" ".join(header), header_line)
                    if kind == "entry":
                        entry = Entry(name, header_line, params)
                        module.entries.append(entry)
                    else:
                        module.functions.append((name, header_line))
                        entry = None
                    header = None
                    depth = 1
                    continue
                header.append(stmt)
                continue
            if stmt == "{":
                depth += 1
                if depth > 1 and entry is not None:
                    raise self.error(line, "nested scope blocks are not supported")
                continue
            if stmt == "}":
                depth -= 1
                if depth == 0:
                    entry = None
                continue
            if depth == 0:
                if re.match(r"^(\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\b", stmt):
                    if ";" in stmt or stmt.startswith(".extern"):
                        continue  # a prototype
                    header, header_line = [stmt], line
                    continue
                self._module_statement(module, line, stmt)
                continue
            if entry is None:
                continue  # the body of a .func: reported only if something calls it
            self._body_statement(entry, line, stmt)
        return module

    def _header(self, text: str, line: int) -> tuple[str, str, list[Param]]:
        m = re.match(r"^(?:\.\w+\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)\s*(?:\((.*)\))?", text, re.S)
        if not m:
            raise self.error(line, f"cannot read the kernel header {text[:60]!r}")
        kind, name, plist = m.group(1), m.group(2), m.group(3) or ""
        params = []
        for item in filter(None, (p.strip() for p in plist.split(","))):
            pm = re.match(r"^\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(\[\d+\])?$", item)
            if not pm:
                raise self.error(line, f"kernel {name}: cannot read the parameter {item!r}")
            ptype = pm.group(1) + (pm.group(3) or "")
            params.append(Param(pm.group(2), ptype, line))
        return kind, name, params

    def _module_statement(self, module: PtxModule, line: int, stmt: str) -> None:
        if stmt.startswith(".version") or stmt.startswith(".target"):
            return
        if stmt.startswith(".address_size"):
            if stmt.split()[-1] != "32":
                raise self.error(line, "the machine is 32-bit: compile with -m32 (.address_size 32)")
            return
        m = _VAR_RE.match(stmt)
        if m:
            module.variables.append(self._variable(m.group(1), m.group(2), line))
            return
        raise self.error(line, f"unsupported module-level PTX statement {stmt[:60]!r}")

    def _variable(self, space: str, rest: str, line: int) -> Variable:
        m = _DECL_RE.match(rest.strip())
        if not m:
            raise self.error(line, f"cannot read the .{space} declaration {rest[:60]!r}")
        align, vtype, name, count, init = m.groups()
        if vtype not in _TYPE_BYTES:
            raise self.error(line, f"unsupported type .{vtype} of {name}")
        elem = _TYPE_BYTES[vtype]
        n = 1 if count is None else (int(count) if count else 0)
        data = None if init is None else self._initializer(init, vtype, elem, n, line)
        return Variable(name, space, elem * n, int(align) if align else elem, line, data)

    def _initializer(self, text: str, vtype: str, elem: int, n: int, line: int) -> bytes:
        items = [t.strip() for t in text.strip().strip("{}").split(",") if t.strip()]
        out = bytearray()
        for item in items:
            value = _number(item)
            if value is None:
                raise self.error(line, f"unsupported initializer {item!r} (only numbers)")
            out += (value & ((1 << (8 * elem)) - 1)).to_bytes(elem, "little")
        out += bytes(elem * n - len(out))
        return bytes(out[: elem * n])

    def _body_statement(self, entry: Entry, line: int, stmt: str) -> None:
        if stmt.endswith(":"):
            entry.body.append(Label(stmt[:-1].strip(), line))
            return
        if re.match(r"\.(reg|pragma|loc|file|maxntid|reqntid|minnctapersm|maxnreg)\b", stmt):
            return  # register declarations and hints: registers are found from their uses
        m = _VAR_RE.match(stmt)
        if m:
            entry.variables.append(self._variable(m.group(1), m.group(2), line))
            return
        if stmt.startswith("."):
            raise self.error(line, f"unsupported PTX directive {stmt.split()[0]}")
        entry.body.append(self._instruction(stmt, line))

    def _instruction(self, stmt: str, line: int) -> Instr:
        guard, negated = None, False
        m = re.match(r"^@(!?)(%[\w.]+)\s+(.*)$", stmt, re.S)
        if m:
            negated, guard, stmt = bool(m.group(1)), Reg(m.group(2)), m.group(3)
        parts = stmt.split(None, 1)
        names = parts[0].split(".")
        operands_text = parts[1] if len(parts) > 1 else ""
        if names[0] == "call":  # refused by lowering with its line; its operand syntax is not ours to read
            return Instr("call", tuple(names[1:]), (), line, guard, negated)
        operands: list[Operand] = []
        dual = None
        for i, tok in enumerate(t.strip() for t in _TOKEN_SPLIT.split(operands_text) if t.strip()):
            if i == 0 and "|" in tok:
                first, second = (t.strip() for t in tok.split("|"))
                dual = Reg(second)
                tok = first
            operands.append(self._operand(tok, line))
        return Instr(names[0], tuple(names[1:]), tuple(operands), line, guard, negated, dual)

    def _operand(self, tok: str, line: int) -> Operand:
        if tok.startswith("["):
            inner = tok.strip("[]").replace(" ", "")
            m = re.fullmatch(r"([%\w.$]+)?(?:\+?(-?(?:0x[0-9a-fA-F]+|\d+)))?", inner)
            if not m or not (m.group(1) or m.group(2)):
                raise self.error(line, f"cannot read the address {tok!r}")
            base_text, off_text = m.group(1), m.group(2)
            if base_text and _number(base_text) is not None and off_text is None:
                return Mem(None, _number(base_text))
            base = None if base_text is None else (Reg(base_text) if base_text.startswith("%") else Sym(base_text))
            return Mem(base, int(off_text, 0) if off_text else 0)
        if tok.startswith("{"):
            return Vec(tuple(self._operand(t.strip(), line) for t in tok.strip("{}").split(",")))
        if tok.startswith("%"):
            return Reg(tok)
        if tok.startswith("!"):
            raise self.error(line, f"negated predicate operand {tok!r} is not supported")
        value = _number(tok)
        if value is not None:
            return Imm(value & 0xFFFFFFFF, tok.lower().startswith("0f"))
        if tok.lower().startswith("0d"):
            raise self.error(line, f"64-bit float literal {tok}: the machine has no double")
        if re.fullmatch(r"[\w$]+", tok):
            return Sym(tok)
        raise self.error(line, f"cannot read the operand {tok!r}")


def _number(tok: str) -> int | None:
    tok = tok.strip()
    if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", tok):
        return int(tok[2:], 16)
    if re.fullmatch(r"-?0[xX][0-9a-fA-F]+U?", tok):
        return int(tok.rstrip("U"), 16)
    if re.fullmatch(r"-?\d+U?", tok):
        return int(tok.rstrip("U"))
    return None


def parse_ptx(text: str, path: str = "<ptx>") -> PtxModule:
    """Parse PTX text; raises ``FrontendError`` naming ``path`` and the line."""
    return _Parser(text, path).parse()


def type_bytes(ptx_type: str) -> int | None:
    return _TYPE_BYTES.get(ptx_type)

"""Where a kernel's data lives, and which memory space each pointer points into.

``Layout`` places the parameters (32-bit words in order), the shared arrays (one block's
shared memory from 0), the local arrays (clang's ``__local_depot``) and, for private globals,
the module's global variables (per-thread copies in local memory after the depot).

The machine has no generic addresses: each load and store names its space. PTX written by
clang mostly names it too, but not always (a generic ``ld``/``st`` through a pointer), and with
private globals a ``.global`` access may be to a variable that now lives in local memory. So
``pointer_spaces`` follows each register's pointer origin through the instructions that keep
a pointer a pointer (moves, address arithmetic, ``selp``, ``cvta``), flow-insensitively, and
decides each access's space from it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .ptx import Entry, Imm, Instr, Mem, PtxModule, Reg, Sym, Variable


class Space(enum.Enum):
    PARAM = "param"
    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"


@dataclass
class Layout:
    params: dict[str, int]
    symbols: dict[str, tuple[Space, int]]  #: variable -> (space, byte offset or address)
    shared_bytes: int
    local_bytes: int
    inits: list[tuple[Variable, int]] = field(default_factory=list)
    error: object = None

    @classmethod
    def of(cls, module: PtxModule, entry: Entry, private_globals: bool, error) -> Layout:
        params = {}
        for i, p in enumerate(entry.params):
            if p.type not in ("u32", "s32", "b32", "f32"):
                raise error(p.line, f"kernel {entry.name}: parameter {p.name} is .{p.type}; kernel parameters "
                                    "must be 32-bit scalars (pointers, int, unsigned, float)")
            params[p.name] = 4 * i
        symbols: dict[str, tuple[Space, int]] = {}
        shared = local = 0
        inits = []
        used = _symbols_used(entry)
        for var in module.variables + entry.variables:
            if var.space in ("global", "const"):
                if var.name not in used:
                    continue
                if not private_globals:
                    raise error(var.line, f"module-scope variable {var.name} (.{var.space}): the machine has "
                                          "no initialized global data; pass its contents through a pointer parameter")
                local = _align(local, max(4, var.align))
                symbols[var.name] = (Space.LOCAL, local)
                if var.init is not None:
                    inits.append((var, local))
                local += _align(var.size, 4)
            elif var.space == "shared":
                shared = _align(shared, max(4, var.align))
                symbols[var.name] = (Space.SHARED, shared)
                shared += _align(var.size, 4)
            elif var.space == "local":
                local = _align(local, max(4, var.align))
                symbols[var.name] = (Space.LOCAL, local)
                local += _align(var.size, 4)
        # private globals after the depot would be nicer to read, but order is not observable
        return cls(params, symbols, shared, _align(local, 4), inits, error)

    def address(self, name: str, line: int) -> int:
        if name in self.symbols:
            return self.symbols[name][1]
        if name in self.params:
            raise self.error(line, f"the address of parameter {name} is taken: parameters are read with ld.param only")
        raise self.error(line, f"unknown symbol {name}")

    def param_offset(self, name: str, line: int) -> int:
        if name not in self.params:
            raise self.error(line, f"unknown parameter {name}")
        return self.params[name]

    def initialized_locals(self) -> list[tuple[Variable, int]]:
        return self.inits


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def _symbols_used(entry: Entry) -> set[str]:
    out = set()
    for item in entry.body:
        if isinstance(item, Instr):
            for op in item.operands:
                if isinstance(op, Sym):
                    out.add(op.name)
                elif isinstance(op, Mem) and isinstance(op.base, Sym):
                    out.add(op.base.name)
    return out


#: instructions whose result points where their pointer operand points
_KEEPS_POINTER = {"mov", "add", "sub", "mad", "selp", "and", "or", "xor", "cvta", "max", "min"}
_CONFLICT = "conflict"


class _Origins:
    """Flow-insensitive pointer origin of every register: None (not a pointer), PARAM (loaded
    from a parameter: a global pointer or an integer), a Space, or conflicting spaces."""

    def __init__(self) -> None:
        self.origin: dict[str, object] = {}

    @staticmethod
    def join(a, b):
        if a is None or a is Space.PARAM and b is not None:
            return b
        if b is None or b is Space.PARAM or a == b:
            return a
        return _CONFLICT

    def of(self, op, layout: Layout):
        if isinstance(op, Reg):
            return self.origin.get(op.name)
        if isinstance(op, Sym) and op.name in layout.symbols:
            return layout.symbols[op.name][0]
        return None


class PointerSpaces:
    def __init__(self, origins: _Origins, layout: Layout, error) -> None:
        self.origins, self.layout, self.error = origins, layout, error

    def access(self, instr: Instr, mem: Mem) -> Space:
        """The space a load or store goes to."""
        named = next((m for m in instr.mods if m in ("param", "global", "shared", "local", "const")), None)
        if named == "param":
            return Space.PARAM
        if named == "shared":
            return Space.SHARED
        if named == "local":
            return Space.LOCAL
        origin = self.origins.of(mem.base, self.layout) if mem.base is not None else None
        if origin == _CONFLICT:
            raise self.error(instr.line, f"{instr.text}: the address may point into more than one memory space "
                                         "(the machine has no generic addresses)")
        if named in ("global", "const"):
            return Space.LOCAL if origin is Space.LOCAL else Space.GLOBAL
        if origin in (Space.SHARED, Space.LOCAL):
            return origin
        return Space.GLOBAL


def pointer_spaces(entry: Entry, layout: Layout, error) -> PointerSpaces:
    origins = _Origins()
    instrs = [i for i in entry.body if isinstance(i, Instr)]
    changed = True
    while changed:
        changed = False
        for ins in instrs:
            if not ins.operands or not isinstance(ins.operands[0], Reg):
                continue
            if ins.opcode == "ld" and "param" in ins.mods:
                new = Space.PARAM
            elif ins.opcode == "cvta":
                space = next((Space(m) for m in ins.mods if m in ("global", "shared", "local")), None)
                new = space
            elif ins.opcode in _KEEPS_POINTER:
                new = None
                for op in ins.operands[1:]:
                    if not isinstance(op, Imm):
                        new = _Origins.join(new, origins.of(op, layout))
            else:
                continue
            if new is None:
                continue
            d = ins.operands[0].name
            old = origins.origin.get(d)
            merged = _Origins.join(old, new)
            if merged != old:
                origins.origin[d] = merged
                changed = True
    return PointerSpaces(origins, layout, error)

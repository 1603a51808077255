"""How the compiled engine's settings, state arrays and counters are declared once, and what is
derived from a declaration (the tables themselves are in layout.py).

A declaration is a tuple of fields. From it come the named tuple Python code reads, the numba
structref njit code reads (``struct``), the structref's constructor, and the values of settings
read off a ``GpuConfig`` (``settings_values``). As gem5 generates its parameter structs from the
``Param`` declarations, the constructors are generated source: numba builds a structref from
positional arguments only, one per field, and a constructor built at import would compile anew
in every process, where ``njit(cache=True)`` keeps it on disk. numba caches only a function
whose source is a file, so generated source is written to a file of numba's cache folder
(``generated``), named by a digest of its text, and compiled from there.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from numba import njit, types
from numba.experimental import structref

from dualflow.machine.config import GpuConfig

from .codes import BY_ENUM

CONFIG, ENGINE, LAUNCH = "config", "engine", "launch"


@dataclass(frozen=True)
class Setting:
    """One int64 of the settings: ``source`` says where its value comes from: CONFIG, the
    ``GpuConfig`` attribute path ``path`` (a bool as 0/1, an enum member as its code, codes.py);
    ENGINE, an option the engine is made with; LAUNCH, a quantity of each launch (``default``
    until the engine knows the launch)."""

    name: str
    source: str
    path: str = ""
    default: int = 0
    doc: str = ""


def config(name: str, path: str, doc: str = "") -> Setting:
    return Setting(name, CONFIG, path, doc=doc)


def engine(name: str, doc: str = "") -> Setting:
    return Setting(name, ENGINE, doc=doc)


def launch(name: str, default: int = 0, doc: str = "") -> Setting:
    return Setting(name, LAUNCH, default=default, doc=doc)


def encode(value: Any) -> int:
    """A setting's value as the int njit code reads."""
    codes = BY_ENUM.get(type(value))
    return codes.code(value) if codes is not None else int(value)


def settings_values(declared: Sequence[Setting], cfg: GpuConfig, **options: int) -> dict[str, int]:
    """Every declared setting's value: CONFIG ones read off ``cfg``, ENGINE ones from ``options``
    (each must be given), LAUNCH ones at their default."""
    names = {s.name for s in declared if s.source == ENGINE}
    if set(options) != names:
        raise TypeError(f"settings_values: engine options {sorted(names)} expected, got {sorted(options)}")
    out = {}
    for s in declared:
        if s.source == CONFIG:
            out[s.name] = encode(attrgetter(s.path)(cfg))
        elif s.source == ENGINE:
            out[s.name] = int(options[s.name])
        else:
            out[s.name] = s.default
    return out


EVERY_SM, WHOLE, USED_SLOTS, USED_SMS, NOT_RESET, CARRIED = (
    "every SM", "whole", "used slots", "used SMs", "not reset", "carried")


@dataclass(frozen=True)
class Array:
    """One array of the SM state: its shape from the settings and the pipelines per unit class
    (``shape(s, pipe_count)``), its fill (``fill``; ``columns``: other fills of last-axis
    columns), or ``make(s, heap_capacity)`` for a member that is no array (stored as is, not as
    a borrowed view). ``reset``: what ``reset_state`` does with it at a launch's start: EVERY_SM
    (every SM's row but the last-axis columns ``keeps``, which carry), WHOLE (an array not per SM), USED_SLOTS (in
    the SMs the last launch used, the warp slots it used, axis ``slot_axis``), USED_SMS (those
    SMs' rows), NOT_RESET (written before read), CARRIED (left for the next launch). ``feeds``:
    the statistic source (``TimingStats``) the array's column sums are: one path, its columns
    as a list or, with ``keys``, a dict; or one path per column."""

    name: str
    shape: Callable[[Any, int], tuple[int, ...]] | None
    reset: str
    fill: int = 0
    columns: tuple[tuple[int, int], ...] = ()
    keeps: tuple[int, ...] = ()
    slot_axis: int = 1
    make: Callable[[Any, int], Any] | None = None
    feeds: str | tuple[str, ...] = ""
    keys: tuple[str, ...] | None = None
    doc: str = ""


class Fields(types.StructRef):
    """A structref type whose fields are typed by value, not as literals."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


def struct(name: str, fields: Sequence[str], module: str, doc: str) -> tuple[type, type, type]:
    """A named tuple type ``name``, the structref type ``name + "Type"`` of the same fields and
    its proxy ``name + "Ref"``. ``module`` (the caller's ``__name__``) must bind the three under
    those names: numba's disk cache pickles the types by reference."""
    tuple_type = namedtuple(name, list(fields), module=module)
    struct_type = structref.register(type(f"{name}Type", (Fields,), {"__module__": module}))
    proxy = type(f"{name}Ref", (structref.StructRefProxy,), {"__doc__": doc, "__module__": module})
    structref.define_proxy(proxy, struct_type, list(fields))
    return tuple_type, struct_type, proxy


def generated_njit(name: str, source: str, scope: dict[str, Any]) -> Callable:
    """The function ``name`` of ``source``, defined in ``scope`` (the calling module's
    ``globals()``, whose names the source uses: numba's disk cache finds a function's globals
    by importing its module) and compiled by numba with caching. The source is written once to
    a file of numba's cache folder named by its digest (the folder is itself named by a digest
    of the engine's sources: compiled/__init__.py)."""
    folder = Path(os.environ["NUMBA_CACHE_DIR"]) / "generated"
    path = folder / f"{name}_{hashlib.sha256(source.encode()).hexdigest()[:16]}.py"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as out:
            out.write(source)
        os.replace(out.name, path)  # whole or not at all: another process may be reading it
    exec(compile(source, str(path), "exec"), scope)  # noqa: S102 - our own generated source
    return njit(cache=True)(scope[name])


def borrowed(field: str) -> str:
    """A constructor argument as a borrowed view (borrowed.py; the scope imports ``borrowed_view``)."""
    return f"borrowed_view({field})"


def constructor(name: str, proxy: type, fields: Sequence[str], scope: dict[str, Any],
                wrap: Callable[[str], str] = str) -> Callable:
    """A cached njit function ``name(<fields>)`` returning ``proxy(<wrap(field)>...)``, defined in
    ``scope`` (``generated_njit``), which binds ``proxy`` under its name: ``wrap`` gives each
    argument's expression (``borrowed``, or the argument as it is)."""
    source = (f"def {name}({', '.join(fields)}):\n"
              f"    return {proxy.__name__}({', '.join(wrap(f) for f in fields)})\n")
    return generated_njit(name, source, scope)

"""Statistics declared once, in the spirit of gem5's ``ADD_STAT``.

A statistics class (``LaunchStats``, ``TimingStats``) is a dataclass deriving from
``Statistics`` whose statistics are declared with the helpers below, each once, with its unit,
its description and how two results merge:

- ``counter``: a count; two results add (numbers add, per-bank lists element by element, keyed
  counts key by key).
- ``label``: what the result is of (kernel, form); kept when equal, else ``mixed``.
- ``setting``: a machine parameter a derived statistic needs; the same for every launch, kept
  from the first; not written.
- ``tree``: an already-written tree of statistics (the memory system's), merged by its own rule.
- ``derived``: a formula of the other statistics (IPC, rates), evaluated when read, so a merged
  result's rate is the rate of the merged counts.

From these, ``merge`` and ``to_dict`` are derived: ``to_dict`` writes the statistics in
declaration order, each as ``{"value", "unit", "description"}`` (a statistic declared without a
unit is written as its bare value, one without a description without that key). ``values``
gives the same keys with plain values. Attribute access (``stats.cycles``, ``stats.ipc``) gives
plain values too.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import add as _plus
from operator import sub as _minus
from typing import Any, ClassVar, TypeVar

__all__ = ["Stat", "Statistics", "add", "copy_counts", "counter", "derived", "label", "setting", "subtract", "tree"]


@dataclass(frozen=True)
class Stat:
    """The declaration of one statistic."""

    kind: str  # "counter", "label", "setting", "tree" or "derived" (the helpers below)
    unit: str | None  # None: written as its bare value
    description: str | None = None  # None: written without one
    merge: Callable[[Any, Any], Any] | None = None  # two results' values -> the merged value
    written: bool = True  # False: kept for derived statistics only
    keys: tuple[str, ...] | None = None  # a count per key: its keys, written in this order (a missing one as 0)
    sort: bool = False  # a count per key: written sorted by key
    source: str | None = None  # where a producer reads the value (an attribute path; see its module)
    digits: int | None = None  # derived: written rounded to this many decimals

    def ordered(self, value: Any) -> Any:
        """A keyed count in its written key order; any other value as it is."""
        if self.sort:
            return dict(sorted(value.items()))
        if self.keys is not None:
            return {k: value.get(k, 0) for k in self.keys}
        return value

    def write(self, value: Any) -> Any:
        """``value`` as written in JSON (keyed counts in their order, derived ones rounded)."""
        value = self.ordered(value)
        if self.digits is not None:
            value = round(value, self.digits)
        if self.unit is None:
            return value
        out = {"value": value, "unit": self.unit}
        if self.description is not None:
            out["description"] = self.description
        return out


def _combine(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def combine(a: Any, b: Any) -> Any:
        if isinstance(a, dict):
            return {k: combine(a[k], b[k]) if k in a and k in b else copy_counts(a[k] if k in a else b[k])
                    for k in a | b}
        if isinstance(a, list):
            return [combine(x, y) for x, y in zip(a, b)]
        return op(a, b)
    return combine


def copy_counts(value: Any) -> Any:
    """A copy of a count with fresh containers (a snapshot of live counters)."""
    if isinstance(value, dict):
        return {k: copy_counts(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


#: Counts of two results added: numbers add, lists element by element, dicts key by key (fresh containers).
add = _combine(_plus)
#: ``a - b`` the same way (``b`` a snapshot of the same counters taken earlier).
subtract = _combine(_minus)


def _first(a: Any, b: Any) -> Any:
    return a


def _field(stat: Stat, **kwargs: Any) -> Any:
    return dataclasses.field(metadata={"stat": stat}, **kwargs)


def counter(unit: str | None, description: str | None = None, *, keys: tuple[str, ...] | None = None,
            sort: bool = False, written: bool = True, source: str | None = None, **kwargs: Any) -> Any:
    """A count (number, per-bank list or per-key dict); merged results add. ``kwargs``: the
    dataclass field's ``default``/``default_factory``."""
    return _field(Stat("counter", unit, description, add, written, keys, sort, source), **kwargs)


def label(mixed: str, **kwargs: Any) -> Any:
    """What a result is of (kernel, form), written bare; merged: kept if equal, else ``mixed``."""
    return _field(Stat("label", None, merge=lambda a, b: a if a == b else mixed), **kwargs)


def setting(*, source: str | None = None, **kwargs: Any) -> Any:
    """A machine parameter (not written); merged results keep the first one's."""
    return _field(Stat("setting", None, merge=_first, written=False, source=source), **kwargs)


def tree(merge: Callable[[Any, Any], Any], **kwargs: Any) -> Any:
    """A tree of statistics already in the written form, merged by ``merge``."""
    return _field(Stat("tree", None, merge=merge), **kwargs)


class derived:  # noqa: N801 - used like a field declaration, named like one
    """A statistic computed from the others when read: ``formula(stats)``."""

    def __init__(self, unit: str, description: str, formula: Callable[[Any], Any], *, digits: int | None = None):
        self.stat = Stat("derived", unit, description, digits=digits)
        self.formula = formula

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else self.formula(obj)


class Statistics:
    """Base of a statistics dataclass: ``merge``, ``to_dict`` and ``values`` derived from its
    declarations (see the module docstring)."""

    _declared: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # declaration order = written order; read here, before @dataclass turns the fields into
        # class-level defaults (or removes them)
        cls._declared = tuple(name for name, v in vars(cls).items()
                              if isinstance(v, derived)
                              or isinstance(v, dataclasses.Field) and "stat" in v.metadata)

    @classmethod
    @functools.cache
    def declarations(cls) -> dict[str, Stat]:
        """Every statistic's declaration, in declaration order (written or not)."""
        fields = {f.name: f.metadata["stat"] for f in dataclasses.fields(cls) if "stat" in f.metadata}
        return {name: fields[name] if name in fields else vars(cls)[name].stat for name in cls._declared}

    def merge(self, other: Statistics) -> Statistics:
        """Two results of launches run one after another, by each statistic's merge rule. Fields
        that are not statistics keep their defaults (a subclass merges them itself)."""
        merged = {name: stat.merge(getattr(self, name), getattr(other, name))
                  for name, stat in self.declarations().items() if stat.merge is not None}
        return type(self)(**merged)

    def to_dict(self) -> dict:
        """JSON-ready: every written statistic with its unit and description, in declaration order."""
        return {name: stat.write(getattr(self, name)) for name, stat in self.declarations().items()
                if stat.written}

    def values(self) -> dict:
        """The keys of ``to_dict`` with plain values (derived ones unrounded; a tree's leaves bare)."""
        return {name: _plain(stat.ordered(getattr(self, name))) for name, stat in self.declarations().items()
                if stat.written}


S = TypeVar("S", bound=Statistics)


def merge_launches(launches: Sequence[S]) -> tuple[S, dict[str, S]]:
    """The total of launches run one after another, and the total per kernel (in order of first
    launch); each launch's ``kernel`` names its kernel."""
    by_kernel: dict[str, S] = {}
    for stats in launches:
        name = stats.kernel
        by_kernel[name] = by_kernel[name].merge(stats) if name in by_kernel else stats
    total = functools.reduce(lambda a, b: a.merge(b), launches[1:], launches[0])
    return total, by_kernel


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        if "value" in value and "unit" in value:
            return value["value"]
        return {k: _plain(v) for k, v in value.items()}
    return value

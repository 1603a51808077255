"""How a field of the machine description is documented and checked, for every configuration
class in machine/: each field carries its unit and meaning (``doc``), and construction rejects a
bad value with a ConfigError naming the class, the field, the rule and the value.

Upper limits: every integer field is at most ``INT_MAXIMUM`` unless its ``doc`` gives another
``maximum``, and every real number is finite and within ``NUMBER_RANGE`` (clocks in MHz);
``describe()`` lists each field's maximum. The limits keep a mistyped value from building a model
that fills the host's memory or runs for ever (``num_sms=1000000`` would need gigabytes)."""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any

from dualflow.common.errors import ConfigError

#: The largest value of an integer field whose ``doc`` names no ``maximum`` (2**20: a million
#: cycles of latency, a MiB of a per-SM structure).
INT_MAXIMUM = 1 << 20
#: The range of a real-valued field (a clock in MHz, a bandwidth in bytes per cycle).
NUMBER_RANGE = (1e-3, 1e6)


def doc(unit: str, description: str, *, maximum: int | None = None) -> dict:
    """A field's metadata: its unit and what it means (``describe()`` lists them), and for an
    integer field its largest value when that is not ``INT_MAXIMUM``."""
    out: dict[str, Any] = {"unit": unit, "description": description}
    if maximum is not None:
        out["maximum"] = maximum
    return out


def maximum(obj: Any, name: str) -> int:
    """The largest value integer field ``name`` of dataclass ``obj`` takes."""
    for f in dataclasses.fields(obj):
        if f.name == name:
            return f.metadata.get("maximum", INT_MAXIMUM)
    return INT_MAXIMUM


def check_int(obj: Any, name: str, minimum: int = 1) -> int:
    """Field ``name`` of ``obj`` is an integer (not a bool) of at least ``minimum`` and at most its
    maximum (``maximum``)."""
    value = getattr(obj, name)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        rule = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise ConfigError(f"{type(obj).__name__}.{name} must be {rule}, not {value!r}")
    top = maximum(obj, name)
    if value > top:
        raise ConfigError(f"{type(obj).__name__}.{name} must be at most {top:,}, not {value:,}")
    return value


def check_ints(obj: Any, *names: str, minimum: int = 1) -> None:
    for name in names:
        check_int(obj, name, minimum)


def check_power_of_two(obj: Any, name: str) -> int:
    value = check_int(obj, name)
    if value & (value - 1):
        raise ConfigError(f"{type(obj).__name__}.{name} must be a power of two, not {value}")
    return value


def check_positive_number(obj: Any, name: str) -> float:
    """Field ``name`` of ``obj`` is a finite number in ``NUMBER_RANGE``."""
    value = getattr(obj, name)
    low, high = NUMBER_RANGE
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise ConfigError(f"{type(obj).__name__}.{name} must be a positive number, not {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise ConfigError(f"{type(obj).__name__}.{name} must be a finite number in {low:g}..{high:g}, "
                          f"not {value!r}")
    return value


def check_type(obj: Any, name: str, cls: type) -> None:
    """Field ``name`` of ``obj`` is a ``cls`` (a sub-tree of the configuration, not a number)."""
    value = getattr(obj, name)
    if not isinstance(value, cls):
        raise ConfigError(f"{type(obj).__name__}.{name} is a group of {cls.__name__} fields, not {value!r}; "
                          f"set one of its fields ({name}.FIELD=VALUE)")


class Choice(enum.StrEnum):
    """A named choice of the machine (a mode, a policy): a string enum, so a member equals its
    name (``Mode.DFLOW == "dflow"``) and JSON output reads the plain strings."""

    @classmethod
    def parse(cls, value: str | Choice, what: str | None = None) -> Choice:
        """``value`` as a member; a ConfigError naming ``what`` (default: the class, in lower case)
        and the choices otherwise."""
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ConfigError(f"{what or cls.__name__.lower()} must be one of {choices}, not {value!r}") from None

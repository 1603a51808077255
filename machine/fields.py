"""How a field of the machine description is documented and checked, for every configuration
class in machine/: each field carries its unit and meaning (``doc``), and construction rejects a
bad value with a ConfigError naming the class, the field, the rule and the value."""

from __future__ import annotations

import enum
from typing import Any

from dualflow.errors import ConfigError


def doc(unit: str, description: str) -> dict:
    """A field's metadata: its unit and what it means (``describe()`` lists them)."""
    return {"unit": unit, "description": description}


def check_int(obj: Any, name: str, minimum: int = 1) -> int:
    """Field ``name`` of ``obj`` is an integer (not a bool) of at least ``minimum``."""
    value = getattr(obj, name)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        rule = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise ConfigError(f"{type(obj).__name__}.{name} must be {rule}, not {value!r}")
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
    value = getattr(obj, name)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise ConfigError(f"{type(obj).__name__}.{name} must be a positive number, not {value!r}")
    return value


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

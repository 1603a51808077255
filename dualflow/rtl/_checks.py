"""Constructor checks shared by the core's blocks: reject bad parameters with a ``ConfigError``."""

from dualflow.common.errors import ConfigError


def reject(component: object, message: str) -> ConfigError:
    """The error to raise from a component's ``__init__``; the half-built component is marked so
    that Amaranth does not also warn that it was never elaborated."""
    component._MustUse__silence = True  # type: ignore[attr-defined]
    return ConfigError(message)

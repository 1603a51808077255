"""One configuration file drives a run: the ``GpuConfig`` written with every result, read back."""

from __future__ import annotations

import json
from pathlib import Path

from dualflow.common.errors import ConfigError

from .config import GpuConfig


def load_config(path: str | Path) -> GpuConfig:
    """The GPU configuration in the JSON file ``path``.

    The file holds either a configuration as ``GpuConfig.to_dict`` writes it (fields left out take
    their defaults), or a result that carries one under ``"config"`` (``dualflow sim --json``, and
    each run under ``runs/`` of ``dualflow reproduce``). Every problem is a ConfigError that names
    the file and, for a bad value, the field.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: cannot read the configuration file: {reason}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if isinstance(data, dict) and "config" in data:
        data = data["config"]  # a result file: its effective configuration
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object with the GpuConfig fields (or a result with a "
                          f"\"config\" object), not {type(data).__name__}")
    try:
        return GpuConfig.from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except TypeError as exc:  # a value of a type no check anticipated (for example a list for a number)
        raise ConfigError(f"{path}: {exc}") from None

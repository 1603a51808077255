"""Every workload of the toolkit, by name."""

from __future__ import annotations

from dualflow.common.errors import ConfigError

from .rodinia import RODINIA
from .samples import SAMPLES
from .workload import Workload

WORKLOADS: dict[str, type[Workload]] = {**RODINIA, **SAMPLES}


def get_workload(name: str) -> type[Workload]:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ConfigError(f"unknown workload {name!r} (have: {', '.join(WORKLOADS)})") from None

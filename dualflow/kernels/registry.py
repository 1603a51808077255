"""Every workload of the toolkit, by name."""

from __future__ import annotations

from dualflow.common.errors import ConfigError

from .cuda import COMPILED
from .rodinia import RODINIA
from .samples import SAMPLES
from .workload import Workload

#: The workloads written by hand in our ISA: the converter and the D-FLOW window were tuned on
#: these (its training set), and the RTL's directed workload tests are these.
HAND_WRITTEN: dict[str, type[Workload]] = {**RODINIA, **SAMPLES}
#: Every workload: the hand-written ones and the compiled suite (CUDA C through the front end).
WORKLOADS: dict[str, type[Workload]] = {**HAND_WRITTEN, **COMPILED}


def get_workload(name: str) -> type[Workload]:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ConfigError(f"unknown workload {name!r} (have: {', '.join(WORKLOADS)})") from None

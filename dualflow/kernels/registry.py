"""Every workload of the toolkit, by name."""

from __future__ import annotations

from dualflow.common.errors import ConfigError

from .cuda import COMPILED, HELD_BACK_COMPILED
from .rodinia import RODINIA
from .samples import SAMPLES
from .workload import Workload

#: The workloads written by hand in our ISA: the converter and the D-FLOW window were tuned on
#: these (its training set), and the RTL's directed workload tests are these.
HAND_WRITTEN: dict[str, type[Workload]] = {**RODINIA, **SAMPLES}
#: Every workload: the hand-written ones and the compiled suite (CUDA C through the front end).
WORKLOADS: dict[str, type[Workload]] = {**HAND_WRITTEN, **COMPILED}
#: The kernels a heuristic of the converter or the D-FLOW window may be chosen on: the ones written
#: here, the hand-written ten and their CUDA twins (docs/converter.md, "Training and held-back").
TRAINING: dict[str, type[Workload]] = {n: w for n, w in WORKLOADS.items() if n not in HELD_BACK_COMPILED}
#: The kernels such a choice is judged on and never chosen on: Polybench, Rodinia and SDK kernels
#: written after their public sources, independently of the converter.
HELD_BACK: dict[str, type[Workload]] = dict(HELD_BACK_COMPILED)


def kernel_set(name: str) -> str:
    """``"training"`` or ``"held-back"``: which side of the split workload ``name`` is on."""
    get_workload(name)
    return "held-back" if name in HELD_BACK else "training"


def get_workload(name: str) -> type[Workload]:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ConfigError(f"unknown workload {name!r} (have: {', '.join(WORKLOADS)})") from None

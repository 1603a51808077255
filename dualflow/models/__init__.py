"""The models of the GPU: the functional SIMT simulator (the golden model every other part is
checked against: its results, statistics and retirement trace) and, in ``timing``, the
cycle-level performance model that runs it."""

from dualflow.machine.functional import FunctionalConfig

from .device import Device, LaunchResult
from .stats import LaunchStats
from .trace import Trace, TraceRecord

__all__ = ["FunctionalConfig", "Device", "LaunchResult", "LaunchStats", "Trace", "TraceRecord"]

"""Golden models: the functional SIMT simulator (this issue) and, later, the cycle-level
performance simulator. The functional model is the reference every other part is checked
against: its results, statistics and retirement trace."""

from dualflow.machine.functional import FunctionalConfig

from .device import Device, LaunchResult
from .stats import LaunchStats
from .trace import Trace, TraceRecord

__all__ = ["FunctionalConfig", "Device", "LaunchResult", "LaunchStats", "Trace", "TraceRecord"]

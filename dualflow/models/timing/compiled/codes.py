"""The integer codes the compiled engine uses for the values of the machine description's enums
and of the stall reasons, generated from them: one mapping, so no code is written down twice.

numba compares ints, not enum members, so each value gets the code of its place in its enum
(``Codes.code``) and a module constant named ``<PREFIX>_<MEMBER>`` holding it: ``SCHEDULER_GTO``,
``WINDOW_RESERVE``, ``REGISTER_FILE_RING``, ``STALL_SCOREBOARD``... (``CODED`` lists the prefixes).
njit code imports the constants it compares against; numba freezes them as compile-time ints.
A setting holding a code is compared against every constant of its enum, and a code no branch
knows is an error, never a fallthrough to another value's behaviour:
``tests/models/timing/test_compiled_codes.py`` fails when a value has no branch in the compiled
engine or in the reference.

Stall reasons are coded in ``STALL_REASONS`` order, which is their precedence (the reference's
``sm._RANK``): a smaller code is closer to issuing.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from dualflow.common.errors import ConfigError
from dualflow.machine.mode import Dispatch, RegisterFile
from dualflow.machine.schedulers import Scheduler
from dualflow.machine.window import DflowWindow, IssueOrder, SendAhead

from ..stats import STALL_REASONS


class Codes:
    """The codes of one enum's members (or of a tuple of names), 0, 1, ... in their order."""

    def __init__(self, prefix: str, values: type[enum.Enum] | Iterable[str]):
        self.prefix = prefix
        self.enum = values if isinstance(values, type) else None
        self.values = tuple(values)
        self.names = tuple(v.name if self.enum else v.upper() for v in self.values)

    def code(self, value: object) -> int:
        """The code of ``value`` (a ConfigError for a value that is not one of them)."""
        if value not in self.values:
            raise ConfigError(f"the compiled timing engine has no {self.prefix} code for {value!r}")
        return self.values.index(value)

    def constants(self) -> dict[str, int]:
        """``<PREFIX>_<NAME>`` -> code, for every value."""
        return {f"{self.prefix}_{name}": i for i, name in enumerate(self.names)}


#: Every coded set of values: the enum-valued settings, and the stall reasons.
CODED: tuple[Codes, ...] = (
    Codes("SCHEDULER", Scheduler),         # SmConfig.scheduler
    Codes("WINDOW", DflowWindow),          # SmConfig.dflow_window
    Codes("ISSUE_ORDER", IssueOrder),      # SmConfig.dflow_issue_order
    Codes("SEND_AHEAD", SendAhead),        # SmConfig.dflow_send_ahead
    Codes("REGISTER_FILE", RegisterFile),  # the mode's register file (GpuConfig.mode.register_file)
    Codes("DISPATCH", Dispatch),           # the mode's dispatch order (GpuConfig.mode.dispatch)
    Codes("STALL", STALL_REASONS),         # stats.STALL_REASONS, in precedence order
)
#: The codes of each enum, for settings whose value is one of its members.
BY_ENUM: dict[type[enum.Enum], Codes] = {c.enum: c for c in CODED if c.enum is not None}
STALLS = CODED[-1]
NUM_REASONS = len(STALL_REASONS)
#: ``warp.stall`` None: nothing cached (no stall reason)
NO_STALL = -1

globals().update({name: code for codes in CODED for name, code in codes.constants().items()})

"""The machine description shared by every model of the GPU: the functional model, the timing
model, the RTL core and its benches, and the experiments.

``GpuConfig`` -> ``SmConfig`` -> ``UnitConfig`` and ``MemoryConfig`` describe the GPU (``config``,
``memory``, named presets in ``presets``, read back from a result or configuration file by
``load_config``); ``FunctionalConfig`` the limits the functional model checks. A quantity has one
name here and a rule one pure function: the operand mode (``Mode``), the warp-scheduler policy
(``Scheduler``), where a register-file entry lives (``register_bank``, ``bank_row``), and what
one block occupies (``entries_per_warp``, ``block_registers``).
"""

from .banks import bank_row, register_bank, rows_per_warp
from .config import GpuConfig, SmConfig, UnitConfig
from .config_file import load_config
from .footprint import block_registers, entries_per_warp
from .functional import FunctionalConfig
from .memory import MemoryConfig
from .mode import CAPABILITIES, MODES, Capabilities, Dispatch, Mode, RegisterFile, ScoreboardKind, check_implemented
from .presets import PRESETS, preset
from .schedulers import SCHEDULERS, Scheduler

__all__ = ["CAPABILITIES", "MODES", "PRESETS", "SCHEDULERS", "Capabilities", "Dispatch", "FunctionalConfig",
           "GpuConfig", "MemoryConfig", "Mode", "RegisterFile", "Scheduler", "ScoreboardKind", "SmConfig", "UnitConfig",
           "check_implemented", "bank_row", "block_registers", "entries_per_warp", "load_config", "preset",
           "register_bank", "rows_per_warp"]

"""Parameters of the RTL SIMT core: one keyword-only, checked dataclass shared by every block.

Names mirror the performance model's configuration (``dualflow.models.timing``) so that one
configuration can drive both: lanes, warps, banks, collector units, ring entries, latencies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from dualflow.errors import ConfigError

MODES = ("base", "dflow")
SCHEDULERS = ("gto", "lrr")


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True, kw_only=True)
class CoreParams:
    """One SIMT core (streaming multiprocessor) as generated to Verilog.

    Parameters
    ----------
    mode: ``"base"`` (register operands, in-order dispatch) or ``"dflow"`` (distance operands,
        ring register file, out-of-order dispatch).
    lanes: threads per warp (4, 8, ..., 32).
    warps: resident warps (power of two, 2..64).
    banks: register-file banks (power of two, 1..16).
    collector_units: operand-collector units (1..16).
    ring: DFLOW ring entries per warp (power of two, > dmax).
    regs: BASE registers per thread (1..255).
    dmax: largest encodable DFLOW distance (1..ring-1).
    scheduler: warp-scheduler policy, ``"gto"`` or ``"lrr"``.
    alu_latency: cycles of the pipelined integer ALU (1..8).
    shared_bytes: on-core shared memory (bytes, power of two).
    imem_words: instruction-memory depth (64-bit words, power of two).
    """

    mode: str = "dflow"
    lanes: int = 8
    warps: int = 4
    banks: int = 4
    collector_units: int = 4
    ring: int = 32
    regs: int = 32
    dmax: int = 31
    scheduler: str = "gto"
    alu_latency: int = 2
    shared_bytes: int = 4096
    imem_words: int = 1024

    def __post_init__(self) -> None:
        def bad(name: str, rule: str) -> ConfigError:
            return ConfigError(f"core parameter {name} must be {rule}, not {getattr(self, name)!r}")

        def is_int(name: str) -> bool:
            v = getattr(self, name)
            return isinstance(v, int) and not isinstance(v, bool)

        if self.mode not in MODES:
            raise bad("mode", f"one of {', '.join(MODES)}")
        if self.scheduler not in SCHEDULERS:
            raise bad("scheduler", f"one of {', '.join(SCHEDULERS)}")
        rules = {
            "lanes": (lambda n: n in (4, 8, 16, 32), "4, 8, 16 or 32"),
            "warps": (lambda n: _power_of_two(n) and 2 <= n <= 64, "a power of two in 2..64"),
            "banks": (lambda n: _power_of_two(n) and n <= 16, "a power of two in 1..16"),
            "collector_units": (lambda n: 1 <= n <= 16, "an integer in 1..16"),
            "ring": (lambda n: _power_of_two(n) and 2 <= n <= 256, "a power of two in 2..256"),
            "regs": (lambda n: 1 <= n <= 255, "an integer in 1..255"),
            "dmax": (lambda n: 1 <= n < self.ring, f"an integer in 1..ring-1 = {self.ring - 1}"),
            "alu_latency": (lambda n: 1 <= n <= 8, "an integer in 1..8"),
            "shared_bytes": (lambda n: _power_of_two(n) and 64 <= n <= 1 << 17, "a power of two in 64..131072"),
            "imem_words": (lambda n: _power_of_two(n) and 16 <= n <= 1 << 16, "a power of two in 16..65536"),
        }
        for name, (ok, rule) in rules.items():
            if not is_int(name) or not ok(getattr(self, name)):
                raise bad(name, rule)

    @property
    def dflow(self) -> bool:
        return self.mode == "dflow"

    @property
    def entries_per_warp(self) -> int:
        """Register-file entries (per lane) one warp owns: ring slots or registers."""
        return self.ring if self.dflow else self.regs

    def to_dict(self) -> dict:
        return asdict(self)

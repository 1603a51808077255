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
    dflow_waiting_per_warp: DFLOW issue policy: collector units one warp may hold while some of
        their operands are not ready (1..16; the performance model's field of the same name).
    dflow_waiting_per_sm: DFLOW issue policy: collector units of the whole core that may hold such
        waiting instructions (1..16); a value above ``collector_units`` means all of them
        (``waiting_limit_sm``). The rest stay free for instructions that can dispatch at once.
    stack_depth: SIMT-stack entries per warp (1..64; deeper nesting traps).
    param_words: kernel parameter words the core holds (1..128; ``ldc`` beyond them traps).
    requests_in_flight: global/local memory requests the load/store unit keeps in flight
        (1..64; the width of the ``mem_req``/``mem_resp`` tag follows).
    shared_banks: shared-memory banks (power of two, 1..32, at most ``shared_bytes / 4``);
        ``None`` (default) resolves at construction to one bank per lane,
        ``min(lanes, shared_bytes / 4)``.

    The issue policy fields are checked in both modes and used in DFLOW only (BASE never sends
    an instruction with a pending source to a collector unit).
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
    dflow_waiting_per_warp: int = 2
    dflow_waiting_per_sm: int = 4
    stack_depth: int = 16
    param_words: int = 16
    requests_in_flight: int = 8
    shared_banks: int | None = None

    def __post_init__(self) -> None:
        def bad(name: str, rule: str) -> ConfigError:
            return ConfigError(f"core parameter {name} must be {rule}, not {getattr(self, name)!r}")

        def is_int(name: str) -> bool:
            v = getattr(self, name)
            return isinstance(v, int) and not isinstance(v, bool)

        if self.shared_banks is None and is_int("lanes") and is_int("shared_bytes"):
            object.__setattr__(self, "shared_banks", max(1, min(self.lanes, self.shared_bytes // 4)))
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
            "dflow_waiting_per_warp": (lambda n: 1 <= n <= 16, "an integer in 1..16"),
            "dflow_waiting_per_sm": (lambda n: 1 <= n <= 16, "an integer in 1..16"),
            "stack_depth": (lambda n: 1 <= n <= 64, "an integer in 1..64"),
            "param_words": (lambda n: 1 <= n <= 128, "an integer in 1..128"),
            "requests_in_flight": (lambda n: 1 <= n <= 64, "an integer in 1..64"),
            "shared_banks": (lambda n: _power_of_two(n) and n <= min(32, self.shared_bytes // 4),
                             f"a power of two in 1..min(32, shared_bytes / 4) = {min(32, self.shared_bytes // 4)}"),
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

    @property
    def waiting_limit_sm(self) -> int:
        """DFLOW: collector units of the core that may hold instructions with operands not ready:
        ``dflow_waiting_per_sm``, at most ``collector_units``."""
        return min(self.dflow_waiting_per_sm, self.collector_units)

    @property
    def waiting_limit_warp(self) -> int:
        """DFLOW: such collector units per warp: ``dflow_waiting_per_warp``, at most
        ``waiting_limit_sm``."""
        return min(self.dflow_waiting_per_warp, self.waiting_limit_sm)

    def to_dict(self) -> dict:
        return asdict(self)

"""Configuration of the functional model: a typed, documented, validated dataclass."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from dualflow.common.errors import ConfigError

from .fields import doc

#: The default instruction budget of a launch, per warp of the launch: a warp that retires this
#: many instructions is taken to be looping forever. The workloads here need at most a few
#: thousand per warp (lud at 2.6 thousand); an endless loop of one warp stops in about two
#: seconds of the functional model instead of running for days.
BUDGET_PER_WARP = 100_000
#: The default of ``max_warp_instructions``: it selects the per-warp rule, and is its ceiling.
LARGEST_BUDGET = 2_000_000_000


@dataclass(frozen=True)
class FunctionalConfig:
    """What the functional SIMT model needs to know about the machine it executes on.

    Each field's metadata gives its unit and meaning; ``describe()`` lists them.
    """

    warp_size: int = field(default=32, metadata=doc("lanes", "threads per warp (1..32)"))
    max_threads_per_block: int = field(default=1024, metadata=doc("threads", "largest block"))
    max_block_dim: tuple[int, int, int] = field(
        default=(1024, 1024, 64), metadata=doc("threads", "largest block extent per dimension"))
    max_grid_dim: tuple[int, int, int] = field(
        default=(2**31 - 1, 65535, 65535), metadata=doc("blocks", "largest grid extent per dimension"))
    max_shared_bytes: int = field(default=48 * 1024, metadata=doc("bytes", "shared memory per block"))
    max_local_bytes: int = field(default=16 * 1024, metadata=doc("bytes", "local memory per thread"))
    global_memory_bytes: int = field(
        default=1 << 30, metadata=doc("bytes", "capacity of device global memory"))
    max_warp_instructions: int | None = field(
        default=LARGEST_BUDGET,
        metadata=doc("warp-instructions", "budget per launch; exceeding it is reported as a runaway kernel. "
                     f"At its default ({LARGEST_BUDGET:,}) a launch of W warps may retire {BUDGET_PER_WARP:,} "
                     "per warp (BUDGET_PER_WARP x W, at most the default); any other value is every launch's "
                     "budget; None stands for the default"))
    batch_warps: int = field(
        default=8192,
        metadata=doc("warps", "warps executed together (whole blocks); bounds the model's memory"))

    def __post_init__(self) -> None:
        if not isinstance(self.warp_size, int) or not 1 <= self.warp_size <= 32:
            raise ConfigError(f"warp_size must be an integer in 1..32, not {self.warp_size!r}")
        if self.max_warp_instructions is None:  # "not given": the default rule
            object.__setattr__(self, "max_warp_instructions", LARGEST_BUDGET)
        for name in ("max_threads_per_block", "max_shared_bytes", "global_memory_bytes",
                     "max_warp_instructions", "batch_warps"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, not {value!r}")
        if not isinstance(self.max_local_bytes, int) or self.max_local_bytes < 0:
            raise ConfigError(f"max_local_bytes must be a non-negative integer, not {self.max_local_bytes!r}")
        for name in ("max_block_dim", "max_grid_dim"):
            value = getattr(self, name)
            if len(value) != 3 or any(not isinstance(v, int) or v <= 0 for v in value):
                raise ConfigError(f"{name} must be three positive integers, not {value!r}")
        if self.global_memory_bytes % 4:
            raise ConfigError("global_memory_bytes must be a multiple of 4")

    @property
    def per_warp_budget(self) -> bool:
        """Is the budget the default rule (``BUDGET_PER_WARP`` per warp of the launch)?"""
        return self.max_warp_instructions == LARGEST_BUDGET

    def instruction_budget(self, warps: int) -> int:
        """The most warp instructions a launch of ``warps`` warps may retire: ``BUDGET_PER_WARP`` per
        warp at the default ``max_warp_instructions`` (at most ``LARGEST_BUDGET``), else
        ``max_warp_instructions``."""
        if self.per_warp_budget:
            return min(LARGEST_BUDGET, BUDGET_PER_WARP * warps)
        return self.max_warp_instructions

    def budget_exceeded(self, warps: int) -> str:
        """The message of a launch of ``warps`` warps that ran past its budget."""
        limit = self.instruction_budget(warps)
        rule = (f"the default, {BUDGET_PER_WARP:,} for each of the launch's {warps} warps" if self.per_warp_budget
                else "max_warp_instructions")
        return (f"instruction budget exceeded: more than {limit} warp instructions ({rule}); is the kernel "
                "looping forever? (a longer run: --max-instructions N)")

    def to_dict(self) -> dict:
        """Plain JSON types (tuples become lists), so a dict read back from JSON compares equal."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def describe(cls) -> dict[str, dict]:
        """Field name -> {default, unit, description}."""
        return {f.name: {"default": f.default, **f.metadata} for f in fields(cls)}

"""Parameters of the RTL SIMT core: one keyword-only, checked dataclass shared by every block.

A quantity the timing model also has carries the timing model's name (``SmConfig``'s
``warp_size``, ``register_banks``, ``collector_units``, ...; ``dualflow.machine.Mode`` for the
mode), and ``CoreParams.from_sm`` builds the core from the same ``SmConfig`` a timing run uses
(``SM_FIELDS`` says which field comes from where). The other fields exist only in the RTL (sizes of
the generated memories and tables) and are given as keywords.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from dualflow.common.errors import ConfigError
from dualflow.isa.kernel import DEFAULT_DMAX, DEFAULT_RING
from dualflow.isa.opcodes import MAX_HANDS, Form
from dualflow.machine import Mode, Scheduler, SmConfig
from dualflow.machine.mode import check_implemented

#: The modes the RTL core is built in; any other (a design point without a register file, say) is
#: refused by ``CoreParams``, not generated as a BASE or D-FLOW core.
RTL_MODES = (Mode.BASE, Mode.DFLOW)

#: Core parameter <- the ``SmConfig`` field (dotted: a field of a unit) it is taken from by
#: ``CoreParams.from_sm``. Every other field (``RTL_ONLY``) has no counterpart in the timing model.
SM_FIELDS: dict[str, str] = {
    "warp_size": "warp_size",
    "register_banks": "register_banks",
    "collector_units": "collector_units",
    "scheduler": "scheduler",
    "alu_latency": "int_unit.latency",
    "fp_latency": "fp_unit.latency",
    "fp_interval": "fp_unit.interval",
    "fp_count": "fp_unit.count",
    "sfu_latency": "sfu_unit.latency",
    "sfu_interval": "sfu_unit.interval",
    "sfu_count": "sfu_unit.count",
    "dflow_waiting_per_warp": "dflow_waiting_per_warp",
    "dflow_waiting_per_sm": "dflow_waiting_per_sm",
}
#: Fields of the RTL alone: the resident warps of the one block the core runs, the register-file
#: depth (ring, regs, dmax), and the sizes of the core's memories and tables.
RTL_ONLY: tuple[str, ...] = ("warps", "ring", "rings", "uniform_operands", "regs", "dmax", "shared_bytes",
                             "imem_words", "stack_depth", "param_words", "requests_in_flight", "shared_banks",
                             "read_check", "trace")


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True, kw_only=True)
class CoreParams:
    """One SIMT core (streaming multiprocessor) as generated to Verilog.

    Parameters
    ----------
    mode: one of ``RTL_MODES``: ``Mode.BASE`` (register operands, in-order dispatch) or
        ``Mode.DFLOW`` (distance operands, ring register file, out-of-order dispatch); the strings
        ``"base"``/``"dflow"`` are accepted and stored as the ``Mode``.
    warp_size: threads (lanes) per warp (4, 8, 16, 32). ``SmConfig.warp_size``.
    warps: resident warps (power of two, 2..64). RTL only.
    register_banks: register-file banks (power of two, 1..16). ``SmConfig.register_banks``.
    collector_units: operand-collector units (1..16). ``SmConfig.collector_units``.
    ring: DFLOW ring entries per warp (power of two, > dmax); with ``rings``, hand 0's (s), which
        it defaults to. RTL only.
    rings: DFLOW, ``Variant.HANDS``: the ring entries of each hand per warp (2 to ``MAX_HANDS``
        powers of two, as the kernel's ``.ring N0 N1 ..``): one RP per hand and warp, hand h's
        slot s at entry ``hand_base[h] + s`` of the warp's register-file space. ``None``
        (default; also what one ring normalizes to) is the original form: one ring of ``ring``
        entries, and a core whose Verilog does not mention hands. RTL only.
    uniform_operands: DFLOW, ``Variant.UNIFORM_OPERANDS``: a source field flagged uniform reads a
        kernel parameter word or a ``UNIFORM_SREGS`` special register (the values ``ldc`` and
        ``s2r`` read) instead of a ring slot. ``False`` (default) is a core whose Verilog does not
        mention them and whose decoder flags such words illegal. RTL only.
    regs: BASE registers per thread (1..255). RTL only.
    dmax: largest encodable DFLOW distance (1..ring-1; with ``rings``, below the largest). RTL only.
    scheduler: warp-scheduler policy, ``Scheduler.GTO`` or ``Scheduler.LRR`` (or its string).
        ``SmConfig.scheduler``.
    alu_latency: cycles of the pipelined integer ALU (1..8). ``SmConfig.int_unit.latency``.
    fp_latency: cycles of the pipelined FP32 unit, entry to result (1..32). ``SmConfig.fp_unit.latency``.
    fp_interval: cycles between two instructions entering the FP32 unit (1..16).
        ``SmConfig.fp_unit.interval``.
    fp_count: FP32 pipelines (1..4), each over all lanes; an instruction enters one that is free.
        ``SmConfig.fp_unit.count``.
    sfu_latency: cycles of the special-function unit (fdiv, fsqrt), entry to result when its
        output does not wait (sfu_interval+1..64). ``SmConfig.sfu_unit.latency``.
    sfu_interval: cycles between two instructions entering the SFU (2..28): the recurrence
        does ceil(27 / (sfu_interval - 1)) steps per cycle (dualflow/rtl/fp/sfu.py). ``SmConfig.sfu_unit.interval``.
    sfu_count: special-function units (1..4), each over all lanes. ``SmConfig.sfu_unit.count``.
    shared_bytes: on-core shared memory (bytes, power of two). RTL only.
    imem_words: instruction-memory depth (64-bit words, power of two). RTL only.
    dflow_waiting_per_warp: DFLOW issue policy: collector units one warp may hold while some of
        their operands are not ready (1..16). ``SmConfig.dflow_waiting_per_warp``.
    dflow_waiting_per_sm: DFLOW issue policy: collector units of the whole core that may hold such
        waiting instructions (1..16); a value above ``collector_units`` means all of them
        (``waiting_limit_sm``). The rest stay free for instructions that can dispatch at once.
        ``SmConfig.dflow_waiting_per_sm``.
    stack_depth: SIMT-stack entries per warp (1..64; deeper nesting traps). RTL only.
    param_words: kernel parameter words the core holds (1..128; ``ldc`` beyond them traps). RTL only.
    requests_in_flight: global/local memory requests the load/store unit keeps in flight
        (1..64; the width of the ``mem_req``/``mem_resp`` tag follows). RTL only.
    shared_banks: shared-memory banks (power of two, 1..32, at most ``shared_bytes / 4``);
        ``None`` (default) resolves at construction to one bank per lane,
        ``min(warp_size, shared_bytes / 4)``. RTL only.
    read_check: DFLOW: trap an illegal DFLOW read (a source an active lane did not write at that
        position: ``DFLOW_READ``, ``written_bits.py``), as the functional model faults. A
        verification feature, like the retirement-trace port: a chip need not pay for it (BASE
        has no such fault), so ``False`` builds the core without it for area and power figures;
        a program without illegal reads runs identically either way. RTL only.
    trace: the retirement-trace port (``stages.TraceSignature``) and the side-band fields only it
        reads (each instruction's sequence number and RP, a memory access's per-lane addresses
        and store data). A verification port, as RISC-V's RVFI: ``False`` builds the core without
        it, for area and power figures; the core then runs the same cycles. RTL only.

    The issue policy fields are checked in both modes and used in DFLOW only (BASE never sends
    an instruction with a pending source to a collector unit).
    """

    mode: Mode = Mode.DFLOW
    warp_size: int = 8
    warps: int = 4
    register_banks: int = 4
    collector_units: int = 4
    ring: int = None  # type: ignore[assignment]  # rings[0] with rings, else DEFAULT_RING
    rings: tuple[int, ...] | None = None
    uniform_operands: bool = False
    regs: int = 32
    dmax: int = DEFAULT_DMAX
    scheduler: Scheduler = Scheduler.GTO
    alu_latency: int = 2
    fp_latency: int = 4
    fp_interval: int = 1
    fp_count: int = 1
    sfu_latency: int = 21
    sfu_interval: int = 8
    sfu_count: int = 1
    shared_bytes: int = 4096
    imem_words: int = 1024
    dflow_waiting_per_warp: int = 2
    dflow_waiting_per_sm: int = 4
    stack_depth: int = 16
    param_words: int = 16
    requests_in_flight: int = 8
    shared_banks: int | None = None
    read_check: bool = True
    trace: bool = True

    def __post_init__(self) -> None:
        def bad(name: str, rule: str) -> ConfigError:
            return ConfigError(f"core parameter {name} must be {rule}, not {getattr(self, name)!r}")

        def is_int(name: str) -> bool:
            v = getattr(self, name)
            return isinstance(v, int) and not isinstance(v, bool)

        mode = Mode.parse(self.mode, "core parameter mode") if type(self.mode) is str else self.mode
        object.__setattr__(self, "mode", check_implemented(mode, RTL_MODES, "the RTL core"))
        object.__setattr__(self, "scheduler", Scheduler.parse(self.scheduler, "core parameter scheduler"))
        self._resolve_rings()
        if self.shared_banks is None and is_int("warp_size") and is_int("shared_bytes"):
            object.__setattr__(self, "shared_banks", max(1, min(self.warp_size, self.shared_bytes // 4)))
        rules = {
            "warp_size": (lambda n: n in (4, 8, 16, 32), "4, 8, 16 or 32"),
            "warps": (lambda n: _power_of_two(n) and 2 <= n <= 64, "a power of two in 2..64"),
            "register_banks": (lambda n: _power_of_two(n) and n <= 16, "a power of two in 1..16"),
            "collector_units": (lambda n: 1 <= n <= 16, "an integer in 1..16"),
            "ring": (lambda n: _power_of_two(n) and 2 <= n <= 256, "a power of two in 2..256"),
            "regs": (lambda n: 1 <= n <= 255, "an integer in 1..255"),
            "dmax": (lambda n: 1 <= n < max(self.ring_sizes),
                     f"an integer in 1..ring-1 = {self.ring - 1}" if self.rings is None else
                     f"an integer in 1..max(rings)-1 = {max(self.ring_sizes) - 1}"),
            "alu_latency": (lambda n: 1 <= n <= 8, "an integer in 1..8"),
            "fp_latency": (lambda n: 1 <= n <= 32, "an integer in 1..32"),
            "fp_interval": (lambda n: 1 <= n <= 16, "an integer in 1..16"),
            "fp_count": (lambda n: 1 <= n <= 4, "an integer in 1..4"),
            "sfu_interval": (lambda n: 2 <= n <= 28, "an integer in 2..28"),
            "sfu_count": (lambda n: 1 <= n <= 4, "an integer in 1..4"),
            "sfu_latency": (lambda n: self.sfu_interval < n <= 64 if isinstance(self.sfu_interval, int) else False,
                            f"an integer in sfu_interval+1..64 = {self.sfu_interval!r}+1..64"),
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
        for name in ("read_check", "trace", "uniform_operands"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, "True or False")
        if self.uniform_operands and self.mode.form is not Form.DFLOW:
            raise ConfigError(f"core parameter uniform_operands: uniform operands are of the DFLOW form, not mode "
                              f"{self.mode}")

    def _resolve_rings(self) -> None:
        """``rings`` as a tuple of 2..MAX_HANDS powers of two (None for one ring), ``ring`` as hand 0's."""
        rings = self.rings
        if rings is not None:
            if not (isinstance(rings, (tuple, list)) and 1 <= len(rings) <= MAX_HANDS
                    and all(type(r) is int and _power_of_two(r) and 2 <= r <= 256 for r in rings)):
                raise ConfigError(f"core parameter rings must be 1 to {MAX_HANDS} powers of two in 2..256 (one "
                                  f"ring per hand), not {rings!r}")
            rings = tuple(rings)
            if self.ring is not None and self.ring != rings[0]:
                raise ConfigError(f"core parameter ring {self.ring!r} must be hand 0's ring of rings {rings} "
                                  "(give either)")
            object.__setattr__(self, "ring", rings[0])
            object.__setattr__(self, "rings", rings if len(rings) > 1 else None)
            if len(rings) > 1 and not self.mode.ring:  # the mode is checked before the rings
                raise ConfigError(f"core parameter rings {rings}: hands are of the DFLOW form, not mode "
                                  f"{self.mode}")
        elif self.ring is None:
            object.__setattr__(self, "ring", DEFAULT_RING)

    @classmethod
    def from_sm(cls, sm: SmConfig, mode: Mode | str, *, warps: int, **rtl_only: int) -> CoreParams:
        """The core of one SM of the timing model (gem5's parent-derived parameters).

        The fields of ``SM_FIELDS`` come from ``sm``; ``warps`` and the other ``RTL_ONLY`` fields
        are keywords (defaults otherwise). Every value is checked as in the constructor, so an
        ``SmConfig`` the RTL cannot build (a warp size of 12, 6 register banks) is a ``ConfigError``
        naming the core parameter."""
        if not isinstance(sm, SmConfig):
            raise ConfigError(f"CoreParams.from_sm needs an SmConfig, not {sm!r}")
        for name in rtl_only:
            if name in SM_FIELDS:
                raise ConfigError(f"core parameter {name} comes from the SmConfig (sm.{SM_FIELDS[name]}); "
                                  f"change it there")
            if name not in RTL_ONLY:
                raise ConfigError(f"CoreParams has no RTL-only field {name!r} (have: {', '.join(RTL_ONLY)})")
        # the core's D-FLOW window is the timing model's pool-limited one with the SM's two limits,
        # whatever window the SM names (the RTL has no other yet: docs/rtl.md)
        derived = {}
        for name, path in SM_FIELDS.items():
            value = sm
            for part in path.split("."):
                value = getattr(value, part)
            derived[name] = value
        return cls(mode=mode, warps=warps, **derived, **rtl_only)

    @property
    def checks_reads(self) -> bool:
        """The core traps illegal DFLOW reads (DFLOW with ``read_check``)."""
        return self.mode.ring and self.read_check

    @property
    def ring_sizes(self) -> tuple[int, ...]:
        """The ring of every hand: ``rings``, or ``(ring,)`` in the original form (``Kernel.rings``)."""
        return self.rings if self.rings is not None else (self.ring,)

    @property
    def hands(self) -> int:
        """Hands (rings with an RP each) per warp: 1 in the original form."""
        return len(self.ring_sizes)

    @property
    def hand_base(self) -> tuple[int, ...]:
        """Entry of the warp's register-file space where each hand's ring starts (slot 0)."""
        out, base = [], 0
        for n in self.ring_sizes:
            out.append(base)
            base += n
        return tuple(out)

    @property
    def entries_per_warp(self) -> int:
        """Register-file entries (per lane) one warp owns: ring slots (every hand's) or registers."""
        return sum(self.ring_sizes) if self.mode.ring else self.regs

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
        """The fields as plain values (mode and scheduler as strings), for JSON and ``CoreParams(**d)``;
        ``rings`` only with hands and ``uniform_operands`` only when on (so the original form's
        dictionary is as it was)."""
        out = {**asdict(self), "mode": self.mode.value, "scheduler": self.scheduler.value}
        if not self.uniform_operands:
            del out["uniform_operands"]
        if self.rings is None:
            del out["rings"]
        else:
            out["rings"] = list(self.rings)
        return out

"""Configuration of the memory system: L1 data cache, shared memory, interconnect, L2 slices, DRAM.

Every field carries its unit and meaning in its metadata (``describe()`` lists them) and is
validated at construction; a violation raises ``ConfigError`` naming the class, the field, the
rule and the value. Defaults are the seed paper's RTX 3080 (Table 1 of Matsuo et al., 2021):
L1D 64 KB 8-way LRU with 128 B lines, L2 4 MB in 64 slices 16-way, memory latency 100 cycles
at 1523 MHz, interconnect at the 1440 MHz core clock. Where the paper is silent the default is
taken from Accel-Sim's tested Ampere configuration (``SM86_RTX3070/gpgpusim.config``) or from
the RTX 3080 data sheet; each such description says which.

Clock domains: the SM, L1, interconnect and L2 run at the core clock (as in the paper, where the
interconnect clock equals the core clock, and in Accel-Sim's SM86 configuration); only DRAM has
a clock of its own, converted to core cycles by ``MemorySystem``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dualflow.common.errors import ConfigError

from .fields import check_int, check_positive_number, check_power_of_two, doc

SLICE_HASHES = ("linear", "ipoly")


def _geometry(obj: Any, size: int, ways: int, line: int, sector: int, parts: int = 1) -> None:
    """Check that a sectored set-associative cache of ``parts`` equal slices has whole sets."""
    name = type(obj).__name__
    if sector > line:
        raise ConfigError(f"{name}.sector_bytes ({sector}) must not exceed line_bytes ({line})")
    if line // sector > 32:
        raise ConfigError(f"{name}: at most 32 sectors per line, not {line // sector} ({line} B / {sector} B)")
    per_part = size // parts
    if size % parts or per_part % (ways * line):
        raise ConfigError(f"{name}: size_bytes ({size}) must divide into {parts} slice(s) of whole sets of "
                          f"{ways} ways x {line} B lines")


class _Described:
    """``to_dict`` and ``describe`` shared by the memory configuration classes."""

    def to_dict(self) -> dict:
        """Plain JSON types, nested for ``MemoryConfig``."""
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def describe(cls) -> dict[str, dict]:
        """Field name -> {default, unit, description}."""
        out = {}
        for f in fields(cls):  # type: ignore[arg-type]
            default = f.default_factory() if callable(f.default_factory) else f.default
            out[f.name] = {"default": default.to_dict() if isinstance(default, _Described) else default,
                           **f.metadata}
        return out


@dataclass(frozen=True)
class L1Config(_Described):
    """One SM's L1 data cache: sectored, set-associative, LRU, with sector-granular MSHRs.

    Global stores are write-through without write-allocate; local memory is write-back with
    write-allocate (see ``MemorySystem``); either space can bypass the L1.
    """

    size_bytes: int = field(default=64 * 1024, metadata=doc("bytes", "capacity (paper Table 1: 64 KB)"))
    ways: int = field(default=8, metadata=doc("lines", "associativity (paper Table 1: 8-way, LRU replacement)"))
    line_bytes: int = field(default=128, metadata=doc(
        "bytes", "line size, also the coalescing granularity (paper Table 1: 128 B)"))
    sector_bytes: int = field(default=32, metadata=doc(
        "bytes", "sector size: the unit of valid bits and of fills (Accel-Sim SM86 sectored 'S' L1, 32 B sectors)"))
    hit_latency: int = field(default=39, metadata=doc(
        "cycles", "from a transaction passing the port to its data back at the SM on a hit "
        "(Accel-Sim SM86 -gpgpu_l1_latency 39)"))
    mshr_entries: int = field(default=384, metadata=doc(
        "sectors", "miss-status holding registers, one per missing sector in flight "
        "(Accel-Sim SM86 dl1 'A:384:48': 384 entries, sector-granular as in GPGPU-Sim's sector caches)"))
    max_merges: int = field(default=48, metadata=doc(
        "requests", "later requests one MSHR entry can absorb while its fill is in flight (Accel-Sim SM86 dl1: 48)"))
    transactions_per_cycle: int = field(default=1, metadata=doc(
        "transactions/cycle", "transactions the L1/shared-memory port accepts per cycle; a warp access of n "
        "transactions holds the port ceil(n / this) cycles (one line per cycle, as GPGPU-Sim's L1)"))

    caches_global: bool = field(default=True, metadata=doc(
        "", "global loads allocate in and hit the L1 (Fermi and later); False: they go to L2 as if there were "
        "no L1 (GT200, or Fermi's -dlcm=cg), still holding MSHRs while in flight"))
    caches_local: bool = field(default=True, metadata=doc(
        "", "local memory (spills) is cached in the L1, write-back with write-allocate (Fermi and later); False: "
        "local loads and stores go to L2 like uncached global ones (GT200; or to measure what L1 caching of "
        "spills is worth)"))

    def __post_init__(self) -> None:
        for name in ("size_bytes", "ways", "hit_latency", "mshr_entries", "max_merges", "transactions_per_cycle"):
            check_int(self, name)
        for name in ("caches_global", "caches_local"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"L1Config.{name} must be True or False, not {getattr(self, name)!r}")
        line = check_power_of_two(self, "line_bytes")
        sector = check_power_of_two(self, "sector_bytes")
        _geometry(self, self.size_bytes, self.ways, line, sector)
        if self.mshr_entries < line // sector:
            raise ConfigError(f"L1Config.mshr_entries ({self.mshr_entries}) must hold at least one whole line "
                              f"({line // sector} sectors)")

    @property
    def sets(self) -> int:
        return self.size_bytes // (self.ways * self.line_bytes)


@dataclass(frozen=True)
class SharedMemoryConfig(_Described):
    """One SM's shared memory: banks serving one distinct word each per round, broadcast for equal words."""

    banks: int = field(default=32, metadata=doc("banks", "independent banks (Volkov 2.6, Accel-Sim SM86: 32)"))
    bank_bytes: int = field(default=4, metadata=doc(
        "bytes", "bank width: consecutive words of this size go to consecutive banks (Volkov 2.6: 32 bits)"))
    latency: int = field(default=29, metadata=doc(
        "cycles", "from the last bank cycle of an access to its data back at the SM (Accel-Sim SM86 "
        "-gpgpu_smem_latency 29)"))
    bank_interval: int = field(default=1, metadata=doc(
        "cycles", "cycles a bank needs per access round: 1 on Kepler and later, 2 on Fermi and earlier "
        "(Volkov 2.6)"))
    warp_parts: int = field(default=1, metadata=doc(
        "parts", "groups of consecutive lanes a warp access is served in, one after another: 1 since Fermi "
        "(Accel-Sim SM86 -gpgpu_shmem_warp_parts 1), 2 half-warps on G80/GT200 (Volkov 2.6); pass it to "
        "conflict_degree"))

    def __post_init__(self) -> None:
        check_int(self, "banks")
        check_power_of_two(self, "bank_bytes")
        for name in ("latency", "bank_interval", "warp_parts"):
            check_int(self, name)


@dataclass(frozen=True)
class InterconnectConfig(_Described):
    """Crossbar between the SMs and the L2 slices, at the core clock (paper: 1440 MHz = core clock).

    Modelled as a fixed latency each way plus, per L2 slice, one request port (into the slice)
    and one reply port (out of it), each passing ``flits_per_cycle`` flits per cycle.
    """

    latency: int = field(default=8, metadata=doc(
        "cycles", "one-way traversal, SM to slice or slice to SM. Neither the paper nor Accel-Sim gives one number "
        "(Accel-Sim simulates the crossbar); 8 is an assumed arbitration + traversal pipeline, small beside "
        "the L2 latency"))
    flit_bytes: int = field(default=40, metadata=doc("bytes", "flit size (Accel-Sim SM86 -icnt_flit_size 40)"))
    header_bytes: int = field(default=8, metadata=doc(
        "bytes", "address/control part of every packet (GPGPU-Sim's 8-byte read/write packet header); a read "
        "request is a header only, its reply header + data, a write header + data"))
    flits_per_cycle: int = field(default=1, metadata=doc(
        "flits/cycle", "flits one L2 slice port accepts (requests) or sends (replies) per cycle"))

    def __post_init__(self) -> None:
        check_int(self, "latency", 0)
        check_int(self, "flit_bytes")
        check_int(self, "header_bytes", 0)
        check_int(self, "flits_per_cycle")


@dataclass(frozen=True)
class L2Config(_Described):
    """The shared L2: ``slices`` equal slices chosen by a hash of the line address; sectored,
    set-associative, LRU, write-back with write-allocate (no fetch on a write miss)."""

    size_bytes: int = field(default=4 * 1024 * 1024, metadata=doc("bytes", "total capacity (paper Table 1: 4 MB)",
                                                                  maximum=1 << 28))
    slices: int = field(default=64, metadata=doc("slices", "independent slices (paper Table 1: 64)"))
    ways: int = field(default=16, metadata=doc("lines", "associativity of each slice (paper Table 1: 16-way)"))
    line_bytes: int = field(default=128, metadata=doc(
        "bytes", "line size; must equal the L1's (Accel-Sim SM86 dl2: 128 B)"))
    sector_bytes: int = field(default=32, metadata=doc(
        "bytes", "sector size; must equal the L1's (Accel-Sim SM86 sectored 'S' L2, 32 B)"))
    hit_latency: int = field(default=187, metadata=doc(
        "cycles", "from a request reaching its slice to the tag result and, on a hit, the data ready to reply "
        "(Accel-Sim SM86 -gpgpu_l2_rop_latency 187); a miss goes to DRAM after it"))
    mshr_entries: int = field(default=192, metadata=doc(
        "sectors", "miss-status holding registers per slice, one per missing sector (Accel-Sim SM86 dl2 'A:192:4')"))
    max_merges: int = field(default=4, metadata=doc(
        "requests", "later requests one L2 MSHR entry can absorb (Accel-Sim SM86 dl2: 4); more wait for the fill"))
    slice_hash: str = field(default="ipoly", metadata=doc(
        "", "line address -> slice: 'linear' (line index mod slices) or 'ipoly' (the line index as a GF(2) "
        "polynomial modulo a primitive polynomial of degree log2(slices), which spreads power-of-two strides; "
        "Accel-Sim SM86 uses -gpgpu_memory_partition_indexing 2, an IPOLY hash)"))

    def __post_init__(self) -> None:
        for name in ("size_bytes", "slices", "ways", "hit_latency", "mshr_entries", "max_merges"):
            check_int(self, name)
        line = check_power_of_two(self, "line_bytes")
        sector = check_power_of_two(self, "sector_bytes")
        _geometry(self, self.size_bytes, self.ways, line, sector, self.slices)
        if self.mshr_entries < line // sector:
            raise ConfigError(f"L2Config.mshr_entries ({self.mshr_entries}) must hold at least one whole line "
                              f"({line // sector} sectors)")
        if self.slice_hash not in SLICE_HASHES:
            raise ConfigError(f"L2Config.slice_hash must be one of {', '.join(SLICE_HASHES)}, not {self.slice_hash!r}")
        if self.slice_hash == "ipoly" and (self.slices & (self.slices - 1) or self.slices > 1024):
            raise ConfigError(f"L2Config.slice_hash 'ipoly' needs a power-of-two number of slices up to 1024, "
                              f"not {self.slices}; use 'linear'")

    @property
    def sets_per_slice(self) -> int:
        return self.size_bytes // (self.slices * self.ways * self.line_bytes)


#: DRAM scheduler policies (``DramConfig.scheduler``; docs/memory-system.md, "DRAM").
#: ``fcfs`` and ``frfcfs`` answer a request when the L2 makes it (reservation); the ``queued-*``
#: ones keep it in a controller queue until its bank picks it (``dualflow/models/timing/memory/dram_queue.py``).
DRAM_SCHEDULERS = ("fcfs", "frfcfs", "queued-fcfs", "queued-frfcfs")

#: DRAM address mappings (``DramConfig.mapping``): what consecutive lines of one channel fill first.
DRAM_MAPPINGS = ("line-interleaved", "row-interleaved")


def dram_place(line: int, channels: int, banks: int, lines_per_row: int, row_interleaved: bool) -> tuple[int, int, int]:
    """The DRAM address mapping (``DramConfig``): line index ``line``'s channel, bank (numbered
    ``channel * banks + bank``) and row. Pure integer arithmetic: the compiled engine compiles this
    same function."""
    channel = line % channels
    local = line // channels
    if row_interleaved:  # a bank's row holds consecutive lines of the channel; then the next bank
        return channel, channel * banks + (local // lines_per_row) % banks, local // lines_per_row // banks
    return channel, channel * banks + local % banks, local // banks // lines_per_row

# The device timing of Accel-Sim's tested SM86 (RTX 3070) configuration, in its DRAM clock of
# 3500.5 MHz (SM86_RTX3070/gpgpusim.config: -gpgpu_dram_timing_opt "nbk=16:CCD=4:RRD=12:RCD=24:
# RAS=55:RP=24:RC=78:CL=24:WL=8:CDLR=10:WR=24:nbkgrp=4:CCDL=6:RTPL=4"). The paper's RTX 3080
# defaults below are the same times in nanoseconds counted in its 1523 MHz DRAM clock, rounded up
# (n x 1523 / 3500.5): the paper gives no device timing, and both are GDDR6-class parts.
_SM86_TO_PAPER = "SM86's {n} cycles at 3500.5 MHz = {ns:.2f} ns, x 1523 MHz rounded up"


def _paper(n: int) -> str:
    return _SM86_TO_PAPER.format(n=n, ns=n / 3.5005)


@dataclass(frozen=True)
class DramConfig(_Described):
    """DRAM: ``channels`` independent channels of ``banks`` banks with one open row each.

    Address mapping (``mapping``, ``dram_place``): line index ``L`` goes to channel ``L mod
    channels``; with ``l = L div channels`` and ``n = row_bytes / line_bytes`` lines per row,
    ``line-interleaved`` puts it in bank ``l mod banks``, row ``l div (banks x n)`` (consecutive
    lines of a channel go to consecutive banks); ``row-interleaved`` in bank ``(l div n) mod
    banks``, row ``l div (n x banks)`` (a bank's row holds n consecutive lines of the channel).
    An L2 miss reaches its channel's controller ``latency`` core cycles after it leaves the slice
    (GPGPU-Sim's ``-dram_latency``, also counted in core cycles and also before the device);
    then a row hit needs tCL (tWL for a write), another row tRP + tRCD + tCL, and the burst
    takes its transfer time on the channel's data bus. Timing fields count DRAM cycles of
    ``clock_mhz``.

    Paper preset: Table 1's "memory latency 100 cycles at 1523 MHz" is taken as the unloaded
    latency of a row hit, from the L2 to the data back: ``latency`` (82 core cycles = 86.7 DRAM
    cycles) + tCL (11) + a 128 B burst (2.6) = 100.3 DRAM cycles = 95 core cycles.
    """

    clock_mhz: float = field(default=1523.0, metadata=doc(
        "MHz", "DRAM clock in which the timing fields count (paper Table 1: 1523 MHz; Accel-Sim SM86: the "
        "fourth -gpgpu_clock_domains value, 3500.5)"))
    latency: int = field(default=82, metadata=doc(
        "core cycles", "fixed latency from an L2 miss leaving its slice to the request reaching the DRAM "
        "controller, before the device timing (GPGPU-Sim's -dram_latency, in core cycles; Accel-Sim SM86: 254). "
        "Paper default 82: with tCL and a line's burst, a row hit takes 95 core cycles = 100 DRAM cycles at "
        "1523 MHz, Table 1's memory latency"))
    channels: int = field(default=10, metadata=doc(
        "channels", "independent channels (RTX 3080: 320-bit GDDR6X bus = 10 x 32-bit controllers)"))
    bytes_per_cycle: float = field(default=49.9, metadata=doc(
        "bytes/DRAM cycle", "data bandwidth of one channel (RTX 3080: 760 GB/s = 19 Gb/s x 320 bit; "
        "/ 10 channels / 1523 MHz = 49.9 B per DRAM cycle)"))
    banks: int = field(default=16, metadata=doc(
        "banks", "banks per channel, each with one open row (GDDR6/6X: 16; Accel-Sim SM86 nbk=16)", maximum=1024))
    row_bytes: int = field(default=2048, metadata=doc(
        "bytes", "row (page) size of one bank of a channel: the bytes a row hit can reach (GDDR6: 2 KB; Accel-Sim "
        "SM86's address mapping has 11 column and burst bits below the bank bits = 2 KB)", maximum=1 << 24))
    tcl: int = field(default=11, metadata=doc(
        "DRAM cycles", f"CAS latency: read command to first data (Accel-Sim SM86 CL=24; paper: {_paper(24)})"))
    twl: int = field(default=4, metadata=doc(
        "DRAM cycles", f"write latency: write command to first data (Accel-Sim SM86 WL=8; paper: {_paper(8)})"))
    trcd: int = field(default=11, metadata=doc(
        "DRAM cycles", f"activate to read or write command (Accel-Sim SM86 RCD=24; paper: {_paper(24)})"))
    trp: int = field(default=11, metadata=doc(
        "DRAM cycles", f"precharge to activate of the same bank (Accel-Sim SM86 RP=24; paper: {_paper(24)})"))
    tras: int = field(default=24, metadata=doc(
        "DRAM cycles", f"activate to precharge of the same bank (Accel-Sim SM86 RAS=55; paper: {_paper(55)})"))
    trc: int = field(default=34, metadata=doc(
        "DRAM cycles", f"activate to activate of the same bank (Accel-Sim SM86 RC=78; paper: {_paper(78)})"))
    trrd: int = field(default=6, metadata=doc(
        "DRAM cycles", f"activate to activate of different banks of a channel (Accel-Sim SM86 RRD=12; paper: "
        f"{_paper(12)})"))
    trtp: int = field(default=2, metadata=doc(
        "DRAM cycles", f"read command to precharge of the same bank (Accel-Sim SM86 RTPL=4; paper: {_paper(4)})"))
    twr: int = field(default=11, metadata=doc(
        "DRAM cycles", f"write recovery: end of write data to precharge of the same bank (Accel-Sim SM86 WR=24; "
        f"paper: {_paper(24)})"))
    tccd: int = field(default=3, metadata=doc(
        "DRAM cycles", f"column command to column command of the same bank, hence of its bank group (Accel-Sim "
        f"SM86 CCDL=6; paper: {_paper(6)}); across banks the data bus spaces bursts"))
    scheduler: str = field(default="queued-frfcfs", metadata=doc(
        "", "bank scheduling: 'fcfs' (each bank serves requests in the order the L2 makes them) or 'frfcfs' "
        "(also a row hit to a bank's previous row in the time before its committed precharge; a reservation "
        "model's part of first-ready first-come-first-served, docs/memory-system.md) (Accel-Sim SM86 "
        "-gpgpu_dram_scheduler 1 = FR-FCFS); 'queued-frfcfs' and 'queued-fcfs': a controller queue of queue_entries "
        "per channel from which each bank, when free, picks the oldest request to its open row (FR-FCFS) or the "
        "oldest; a read completes when picked"))
    mapping: str = field(default="line-interleaved", metadata=doc(
        "", "address mapping: 'line-interleaved' (consecutive lines of a channel go to consecutive banks; a "
        "stream keeps every bank on one row) or 'row-interleaved' (a bank's row holds consecutive lines of "
        "the channel, then the next bank: Accel-Sim's RBBBCCCC.BCCSSSSS column bits below the bank bits, "
        "without its one low bank bit)"))
    queue_entries: int = field(default=64, metadata=doc(
        "requests", "queued schedulers: controller queue entries per channel (Accel-Sim SM86 "
        "-gpgpu_frfcfs_dram_sched_queue_size 64)", maximum=1 << 16))

    @property
    def row_interleaved(self) -> bool:
        """``mapping`` as ``dram_place`` takes it."""
        return self.mapping == "row-interleaved"

    def __post_init__(self) -> None:
        check_positive_number(self, "clock_mhz")
        check_int(self, "latency", 0)
        check_int(self, "channels")
        check_positive_number(self, "bytes_per_cycle")
        check_int(self, "banks")
        check_int(self, "queue_entries")
        check_power_of_two(self, "row_bytes")
        for name in ("tcl", "twl", "trcd", "trp", "tras", "trc", "trrd", "trtp", "twr", "tccd"):
            check_int(self, name, 0)
        if self.mapping not in DRAM_MAPPINGS:
            raise ConfigError(f"DramConfig.mapping must be one of {', '.join(DRAM_MAPPINGS)}, not {self.mapping!r}")
        if self.scheduler not in DRAM_SCHEDULERS:
            raise ConfigError(f"DramConfig.scheduler must be one of {', '.join(DRAM_SCHEDULERS)}, "
                              f"not {self.scheduler!r}")


@dataclass(frozen=True)
class MemoryConfig(_Described):
    """The memory system of the whole GPU: per-SM L1 and shared memory, interconnect, L2, DRAM."""

    l1: L1Config = field(default_factory=L1Config, metadata=doc("", "L1 data cache of each SM"))
    shared: SharedMemoryConfig = field(default_factory=SharedMemoryConfig, metadata=doc(
        "", "shared memory of each SM"))
    interconnect: InterconnectConfig = field(default_factory=InterconnectConfig, metadata=doc(
        "", "SM <-> L2 crossbar"))
    l2: L2Config = field(default_factory=L2Config, metadata=doc("", "shared L2 cache"))
    dram: DramConfig = field(default_factory=DramConfig, metadata=doc("", "device memory"))

    def __post_init__(self) -> None:
        for name, cls in (("l1", L1Config), ("shared", SharedMemoryConfig), ("interconnect", InterconnectConfig),
                          ("l2", L2Config), ("dram", DramConfig)):
            if not isinstance(getattr(self, name), cls):
                raise ConfigError(f"MemoryConfig.{name} must be a {cls.__name__}, not {getattr(self, name)!r}")
        if (self.l1.line_bytes, self.l1.sector_bytes) != (self.l2.line_bytes, self.l2.sector_bytes):
            raise ConfigError(f"L1 and L2 must have the same line and sector sizes (L1 {self.l1.line_bytes}/"
                              f"{self.l1.sector_bytes} B, L2 {self.l2.line_bytes}/{self.l2.sector_bytes} B)")
        if self.dram.row_bytes < self.l2.line_bytes:
            raise ConfigError(f"DramConfig.row_bytes ({self.dram.row_bytes}) must hold at least one line "
                              f"({self.l2.line_bytes} B)")

"""Named GPU configurations. Each states where its numbers come from.

- ``paper-rtx3080``: exactly the seed paper's Table 1 (RTX 3080 in GPGPU-Sim): 68 SMs at
  1440 MHz, 4 GTO schedulers, 2048 threads, 65536 registers, 8 collector units and 128 KB shared
  memory per SM; L1D 64 KB 8-way LRU, 128 B lines; L2 4 MB in 64 slices, 16-way; memory latency
  100 cycles at 1523 MHz; interconnect at 1440 MHz. What Table 1 leaves open (unit latencies,
  banks, L1/L2 hit latencies, DRAM bandwidth) are the defaults of ``SmConfig``/``MemoryConfig``,
  each documented there; the SM's structure (front end, register-file ports, writeback width) is
  GPGPU-Sim's SM86, and its D-FLOW window the one docs/timing-model.md chooses by measurement.
- ``ampere-rtx3070``: Accel-Sim's tested SM86 (RTX 3070) configuration facts
  (``SM86_RTX3070/gpgpusim.config``): 46 SMs at 1132 MHz, LRR, 8 banks with 2 accesses a cycle
  (-gpgpu_reg_file_port_throughput 2), 8 collector units split among the 4 schedulers' sub-cores
  (-gpgpu_sub_core_model 1), 4 fetches a cycle (-gpgpu_inst_fetch_throughput 4), 8 writebacks a
  cycle (EX_WB width), int/fp latency 4, SFU 21 with initiation 8, L1 latency 39, shared memory
  latency 29, L2 latency 187, DRAM latency 254 and GDDR6 device timing, kernel launch latency
  5000 (-gpgpu_kernel_launch_latency). Its D-FLOW window: a sub-core's waiting instruction
  leaves one of its 2 units free.
- ``fermi-gtx480``: the Fermi GPU of the Volkov seed (GTX 480, its Table 2.1): 15 SMs at 1401 MHz,
  2 schedulers, 32 lanes in two groups of 16 (a warp instruction every 2 cycles per group), 4 SFU
  lanes (8 cycles per warp), 1536 threads, 8 blocks, 32768 registers, 48 KB shared memory and
  16 KB L1 per SM, shared-memory banks that need 2 cycles per round (Volkov 2.6); about 18-cycle
  arithmetic latency; 768 KB L2 in 6 slices; 384-bit GDDR5 at 924 MHz (177 GB/s, 6 channels).
  Its front end and register file are GPGPU-Sim's defaults, which its Fermi configurations keep:
  one fetch per cycle, one access per bank per cycle; its D-FLOW window leaves 3 of its 4
  collector units free (one per scheduler and one more, the rule of the 4-scheduler presets).
"""

from __future__ import annotations

from dualflow.common.errors import ConfigError

from .config import GpuConfig, UnitConfig


def _paper_rtx3080() -> GpuConfig:
    return GpuConfig(name="paper-rtx3080")


def _ampere_rtx3070() -> GpuConfig:
    return GpuConfig(name="ampere-rtx3070").replace(**{
        "num_sms": 46, "core_clock_mhz": 1132.0,
        "sm.scheduler": "lrr", "sm.max_threads": 1536, "sm.max_ctas": 16, "sm.shared_bytes": 100 * 1024,
        "kernel_launch_latency": 5000, "sm.collector_partition": "scheduler", "sm.dflow_reserve": 1,
        "sm.int_unit": UnitConfig(4, 2, 4), "sm.fp_unit": UnitConfig(4, 1, 4), "sm.sfu_unit": UnitConfig(21, 8, 4),
        **AMPERE_MEMORY,
    })


def _fermi_gtx480() -> GpuConfig:
    return GpuConfig(name="fermi-gtx480").replace(**{
        "num_sms": 15, "core_clock_mhz": 1401.0,
        "sm.schedulers": 2, "sm.scheduler": "lrr", "sm.max_threads": 1536, "sm.max_ctas": 8,
        "sm.registers": 32768, "sm.shared_bytes": 48 * 1024, "sm.collector_units": 4, "sm.register_banks": 4,
        "sm.writeback_ports": 2, "sm.fetch_warps": 1, "sm.register_bank_ports": 1, "sm.dflow_reserve": 3,
        "sm.int_unit": UnitConfig(18, 2, 2), "sm.fp_unit": UnitConfig(18, 2, 2), "sm.sfu_unit": UnitConfig(40, 8, 1),
        "sm.ctrl_unit": UnitConfig(4, 2, 2),
        "memory.l1.size_bytes": 16 * 1024, "memory.l1.ways": 4, "memory.l1.hit_latency": 18,
        "memory.l1.mshr_entries": 128, "memory.l1.max_merges": 8,
        "memory.shared.latency": 18, "memory.shared.bank_interval": 2,
        "memory.l2.size_bytes": 768 * 1024, "memory.l2.slices": 6, "memory.l2.ways": 8,
        "memory.l2.slice_hash": "linear", "memory.l2.hit_latency": 120,
        # the latency is in core cycles before the device: 364 keeps the unloaded DRAM access at
        # 387 core cycles, what 250 cycles of the 924 MHz DRAM clock gave before device timing
        "memory.dram.clock_mhz": 924.0, "memory.dram.latency": 364, "memory.dram.channels": 6,
        "memory.dram.bytes_per_cycle": 32.0,
    })


#: Accel-Sim SM86 memory facts (BACKGROUND.md; SM86_RTX3070/gpgpusim.config): L1 128 KB (latency 39),
#: shared-memory latency 29, L2 latency 187 (-gpgpu_l2_rop_latency), DRAM: -dram_latency 254 core
#: cycles before the device; 16 channels (-gpgpu_n_mem 16, 2 L2 slices each), 16-bit each at a
#: 3500.5 MHz DRAM clock with 4 data transfers per clock (-gpgpu_dram_buswidth 2,
#: -dram_data_command_freq_ratio 4): 8 B per DRAM cycle, 16 x 8 B x 3500.5 MHz = 448 GB/s, the
#: RTX 3070's 14 Gb/s x 256 bit; device timing of -gpgpu_dram_timing_opt in those cycles (nbk=16,
#: CL=24, WL=8, RCD=24, RP=24, RAS=55, RC=78, RRD=12, RTPL=4, WR=24, CCDL=6 for one bank); FR-FCFS
#: (-gpgpu_dram_scheduler 1); 2 KB rows (11 column and burst bits in -gpgpu_mem_addr_mapping); 4 MB L2.
AMPERE_MEMORY: dict = {
    "memory.l1.size_bytes": 128 * 1024, "memory.l1.hit_latency": 39, "memory.shared.latency": 29,
    "memory.l2.slices": 32, "memory.l2.hit_latency": 187,
    "memory.dram.clock_mhz": 3500.5, "memory.dram.latency": 254, "memory.dram.channels": 16,
    "memory.dram.bytes_per_cycle": 8.0, "memory.dram.banks": 16, "memory.dram.row_bytes": 2048,
    "memory.dram.tcl": 24, "memory.dram.twl": 8, "memory.dram.trcd": 24, "memory.dram.trp": 24,
    "memory.dram.tras": 55, "memory.dram.trc": 78, "memory.dram.trrd": 12, "memory.dram.trtp": 4,
    "memory.dram.twr": 24, "memory.dram.tccd": 6, "memory.dram.scheduler": "queued-frfcfs",
}

PRESETS = {
    "paper-rtx3080": _paper_rtx3080,
    "ampere-rtx3070": _ampere_rtx3070,
    "fermi-gtx480": _fermi_gtx480,
}


def preset(name: str) -> GpuConfig:
    """The named configuration (``PRESETS``)."""
    try:
        return PRESETS[name]()
    except KeyError:
        raise ConfigError(f"unknown preset {name!r} (have: {', '.join(PRESETS)})") from None

"""Energy per event and static power of one GPU configuration, each with its source.

``energy_table(config)`` decides every figure once, at the technology of the configuration's
preset (``technology.py``):

- **SRAM arrays** (register-file banks, shared-memory banks, the L1 and L2 data arrays, the
  instruction memory): CACTI 7 (``dualflow/synth/sram.py``) at 22 nm, or at 180 nm (``sram_node``;
  ``SRAM_BASES`` says why 22 is the default), for the geometry the machine description gives,
  scaled to the preset's node with Stillmaker & Baas (``dualflow/synth/scaling.py``): dynamic energies by
  the energy fit, leakage by the static-power fit, area by the area table.
  The register file is built lane-sliced (one 32-bit macro per lane and bank, docs/sram.md), so a
  warp-wide bank access is ``warp_size`` macro accesses; its capacity is the SM's
  ``sm.registers`` unless the caller builds a smaller one (``rf_registers``: fewer warps or a
  smaller ring need less).
- **Arithmetic**: Horowitz, ISSCC 2014, 45 nm at 0.9 V, scaled from HP45 at 0.9 V.
- **DRAM**: the preset's device energy per bit (``Technology.dram_pj_per_bit``), not scaled.
- **Core logic** (``collector``, ``writeback``, ``decode``, ``ctrl_op``, ``sfu_op``, the
  ``logic_clock`` per active SM cycle and the static ``logic_leakage``): the RTL power flow's
  measured runs (``dualflow power --json``, kept in ``rtl_events.DATA_FILE``), per event as
  ``rtl_events.py`` derives them, for the configuration's mode (BASE and D-FLOW cores differ),
  scaled to the preset's node. ``clock_gating`` (``rtl_events.CLOCK_GATING``): "gated" (the
  default) charges no clock beyond the events' data energy, "ungated" the RTL's clock on every
  cycle an SM has a resident warp (docs/energy.md shows both).
- Events with no sourced figure (``pj`` None) are listed, counted and left out of the total; a
  source is swapped per event by changing its one entry here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dualflow.common.errors import ConfigError
from dualflow.machine.config import GpuConfig
from dualflow.machine.mode import Mode, check_implemented
from dualflow.synth import scaling

from .rtl_events import CLOCK_GATING, DATA_FILE, rtl_figures
from .technology import Technology, technology

DEFAULT_CLOCK_GATING = "gated"
#: The modes the table prices: a register file of SRAM lane macros (named registers or a ring),
#: fetch and decode per instruction. Another mode (no register file, say) is refused, not priced as these.
TABLE_MODES = (Mode.BASE, Mode.DFLOW)
#: The CACTI technology an SRAM array is modelled in -> (the scaling model's node it is scaled
#: from, the supply CACTI's file gives that technology: ``-Vdd`` of its ``hp`` column).
#: 22 nm (the default) is CACTI's smallest node here; the paper has no 22 nm row, so its nearest,
#: HP20, stands for it. 180 nm is the RTL flow's node (docs/sram.md), nine nodes from the GPU's:
#: its leakage, scaled by the paper's static-power fit, comes out about 600 x below CACTI's own
#: 22 nm leakage (docs/energy.md), so it is kept as a cross-check, not the default.
SRAM_BASES = {22: ("HP20", 0.8), 180: ("180", 1.5)}
DEFAULT_SRAM_NODE = 22
HOROWITZ = "Horowitz, 'Computing's energy problem', ISSCC 2014, 45 nm at 0.9 V"
HOROWITZ_NODE, HOROWITZ_VDD = "HP45", 0.9
INT32_ADD_PJ = 0.1  # Horowitz: 32-bit integer add
FP32_MUL_PJ = 3.7  # Horowitz: 32-bit floating-point multiply (FP32 add: 0.9)
#: AccelWattch's constant power (fans, regulators, peripheral circuits: power that does not depend
#: on the chip's activity), fitted to hardware measurements of the Quadro GV100 (Volta, 12 nm):
#: ``constant_power`` in accel-sim/gpgpu-sim_distribution configs/tested-cfgs/SM7_QV100/
#: accelwattch_sass_sim_alt.xml. Board level, so not scaled; another board's would differ.
ACCELWATTCH_CONSTANT_W = 32.32522272
ACCELWATTCH = ("AccelWattch (Kandiah et al., MICRO 2021) constant power of the Quadro GV100, "
               "configs/tested-cfgs/SM7_QV100/accelwattch_sass_sim_alt.xml; board level, not scaled")


@dataclass(frozen=True)
class EventEnergy:
    """Energy of one event (``pj`` None: no sourced figure yet, not in the total)."""

    unit: str  # what one count is
    pj: float | None
    source: str


@dataclass(frozen=True)
class StaticPower:
    watts: float | None  # whole GPU; None: not modelled yet
    source: str


@dataclass(frozen=True)
class EnergyTable:
    config_name: str
    technology: Technology
    rf_registers: int  # register-file capacity per SM the table is for
    events: dict[str, EventEnergy]
    static: dict[str, StaticPower]
    rf_area_mm2: float  # one SM's register file at the preset's node
    rf_area_source: str
    clock_gating: str = DEFAULT_CLOCK_GATING  # how the core logic's clock is charged (CLOCK_GATING)
    mode: str = "base"  # the core whose RTL runs priced the logic (the configuration's mode)


@dataclass(frozen=True)
class _Sram:
    """SRAM arrays modelled by CACTI at ``node_nm`` and scaled to ``tech``."""

    node_nm: int
    tech: Technology

    def macro(self, words: int, bits: int):
        from dualflow.synth.sram import macro

        return macro(max(1, words), bits, node_nm=self.node_nm)

    def energy(self, pj: float) -> scaling.Scaled:
        node, vdd = SRAM_BASES[self.node_nm]
        return scaling.scale_energy(pj, node, vdd, self.tech.node, self.tech.vdd)

    def leakage_w(self, uw: float) -> scaling.Scaled:
        node, vdd = SRAM_BASES[self.node_nm]
        return scaling.scale_leakage(uw * 1e-6, node, vdd, self.tech.node, self.tech.vdd)

    def area_mm2(self, um2: float) -> scaling.Scaled:
        return scaling.scale_area(um2 / 1e6, SRAM_BASES[self.node_nm][0], self.tech.node)

    def array(self, name: str, words: int, bits: int, per_event: int, unit: str, write: bool = False) -> EventEnergy:
        """``per_event`` accesses of a ``words`` x ``bits`` CACTI array per event."""
        f = self.macro(words, bits)
        s = self.energy(per_event * (f.write_energy_pj if write else f.read_energy_pj))
        what = "write" if write else "read"
        return EventEnergy(unit, s.value, f"{per_event} x {what} of a {words} x {bits} {name} ({f.source}, "
                                          f"{self.node_nm} nm); {s.label}")

    def static(self, name: str, words: int, bits: int, count: int) -> StaticPower:
        f = self.macro(words, bits)
        s = self.leakage_w(count * f.leakage_uw)
        return StaticPower(s.value, f"{count} x {words} x {bits} {name} leakage ({f.source}, {self.node_nm} nm); "
                                    f"{s.label}")


def _arith(pj: float, what: str, tech: Technology) -> EventEnergy:
    s = scaling.scale_energy(pj, HOROWITZ_NODE, HOROWITZ_VDD, tech.node, tech.vdd)
    return EventEnergy("lane operations", s.value, f"{what} {pj} pJ ({HOROWITZ}); {s.label}")


def imem_words() -> int:
    """Instruction-memory depth of the RTL core (64-bit words): the SM's instruction store here."""
    from dualflow.rtl.params import CoreParams

    return CoreParams().imem_words


def _rtl(figure, unit: str) -> EventEnergy:
    return EventEnergy(unit, figure.value, figure.source)


def energy_table(config: GpuConfig, rf_registers: int | None = None,
                 sram_node: int = DEFAULT_SRAM_NODE, *, clock_gating: str = DEFAULT_CLOCK_GATING,
                 rtl_data=DATA_FILE) -> EnergyTable:
    """Every event's energy and every static power of ``config`` (its ``name`` picks the
    technology, its ``mode`` the RTL runs); ``rf_registers``: the register file's capacity per SM
    in 32-bit registers (default ``config.sm.registers``); ``sram_node``: the CACTI node of the
    SRAM arrays (``SRAM_BASES``); ``clock_gating``: how the core logic's clock is charged
    (``CLOCK_GATING``); ``rtl_data``: the RTL power runs' data file."""
    check_implemented(config.mode, TABLE_MODES, "the energy table")
    tech = technology(config.name)
    if sram_node not in SRAM_BASES:
        raise ConfigError(f"SRAM arrays are modelled at {' or '.join(map(str, SRAM_BASES))} nm, not {sram_node!r}")
    if clock_gating not in CLOCK_GATING:
        raise ConfigError(f"clock gating is {' or '.join(CLOCK_GATING)}, not {clock_gating!r}")
    rtl = rtl_figures(config, path=rtl_data)
    if clock_gating == "ungated":
        clock = _rtl(rtl.clock_pj_per_sm_cycle, "active SM cycles")
    else:
        clock = EventEnergy("active SM cycles", 0.0, "clock gated (a lower bound): a flip-flop's clock is charged "
                            "only through the events' data energy (the RTL's enable multiplexers become clock-gating "
                            f"cells in a production flow); ungated {rtl.clock_pj_per_sm_cycle.value:.4g} pJ per active "
                            "SM cycle (--clock-gating ungated)")
    arrays = _Sram(sram_node, tech)
    sm, mem = config.sm, config.memory
    lanes, banks = sm.warp_size, sm.register_banks
    registers = sm.registers if rf_registers is None else rf_registers
    if not isinstance(registers, int) or isinstance(registers, bool) or registers < 1:
        raise ConfigError(f"register-file capacity must be a positive number of registers, not {registers!r}")
    rf_rows = max(1, math.ceil(registers / (lanes * banks)))
    line_bits = 8 * mem.l1.line_bytes
    l1_words = mem.l1.size_bytes // mem.l1.line_bytes
    l2_words = mem.l2.size_bytes // mem.l2.slices // mem.l2.line_bytes
    sectors = mem.l1.line_bytes // mem.l1.sector_bytes
    shared_words = max(1, sm.shared_bytes // mem.shared.bank_bytes // mem.shared.banks)
    shared_bits = 8 * mem.shared.bank_bytes
    rf = "register-file lane macro"
    l1_write = arrays.array("L1 data array (line-wide)", l1_words, line_bits, 1, "store transactions (lines)",
                            write=True)
    l2_write = arrays.array("L2 slice data array (line-wide)", l2_words, line_bits, 1, "write requests",
                            write=True)
    events = {
        "rf_read": arrays.array(rf, rf_rows, 32, lanes, "bank reads (warp-wide operand)"),
        "rf_write": arrays.array(rf, rf_rows, 32, lanes, "bank writes (warp-wide result)", write=True),
        "collector": _rtl(rtl.events["collector"], "operand transfers (bank to collector, warp-wide)"),
        "writeback": _rtl(rtl.events["writeback"], "result transfers (unit to bank, warp-wide)"),
        "fetch": arrays.array("instruction memory (the RTL core's)", imem_words(), 64, 1,
                              "warp-instructions issued"),
        "decode": _rtl(rtl.events["decode"], "warp-instructions issued (fetch, decode, scheduling, scoreboard)"),
        "int_op": _arith(INT32_ADD_PJ, "32-bit integer add", tech),
        "fp_op": _arith(FP32_MUL_PJ, "FP32 multiply (every FP32 op charged as one; add 0.9, FMA = mul + add)",
                        tech),
        "sfu_op": _rtl(rtl.events["sfu_op"], "lane operations"),
        "lsu_address": _arith(INT32_ADD_PJ, "one 32-bit address add per lane, as an integer add", tech),
        "ctrl_op": _rtl(rtl.events["ctrl_op"], "warp-instructions"),
        "logic_clock": clock,
        "shared_round": arrays.array("shared-memory bank", shared_words, shared_bits, mem.shared.banks,
                                     "bank rounds (every bank read once)"),
        "l1_read": arrays.array("L1 data array (line-wide)", l1_words, line_bits, 1, "load transactions (lines)"),
        "l1_write": l1_write,
        "l1_fill": EventEnergy("sectors filled from L2", l1_write.pj / sectors,
                               f"1/{sectors} of l1_write (a sector of the line)"),
        "l2_read": arrays.array("L2 slice data array (line-wide)", l2_words, line_bits, 1, "read requests"),
        "l2_write": l2_write,
        "l2_fill": EventEnergy("sectors filled from DRAM", l2_write.pj / sectors,
                               f"1/{sectors} of l2_write (a sector of the line)"),
        "noc_flit": EventEnergy("flits", None, "not modelled: no published per-flit crossbar energy found yet"),
        "dram_bit": EventEnergy("bits read or written", tech.dram_pj_per_bit, tech.source),
    }
    n = config.num_sms
    rf_macro = arrays.macro(rf_rows, 32)
    static = {
        "rf_leakage": arrays.static(rf, rf_rows, 32, n * banks * lanes),
        "shared_leakage": arrays.static("shared-memory bank", shared_words, shared_bits, n * mem.shared.banks),
        "l1_leakage": arrays.static("L1 data array", l1_words, line_bits, n),
        "l2_leakage": arrays.static("L2 slice data array", l2_words, line_bits, mem.l2.slices),
        "imem_leakage": arrays.static("instruction memory", imem_words(), 64, n),
        "logic_leakage": StaticPower(rtl.leakage_w_per_sm.value * n,
                                     f"{n} SMs x {rtl.leakage_w_per_sm.value:.4g} W: {rtl.leakage_w_per_sm.source}"),
        "constant_power": StaticPower(ACCELWATTCH_CONSTANT_W, ACCELWATTCH),
    }
    area = arrays.area_mm2(banks * lanes * rf_macro.area_um2)
    return EnergyTable(config.name, tech, registers, events, static, area.value,
                       f"{banks * lanes} x {rf_rows} x 32 lane macros ({rf_macro.source}, {sram_node} nm); "
                       f"{area.label}", clock_gating, config.mode.value)

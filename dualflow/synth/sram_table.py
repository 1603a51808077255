"""The memories of the RTL core and of the paper's SM as SRAM macros: a table of their figures.

``core_memories(params)`` lists the RTL core's memories with the geometry the RTL gives them (the
same rules: ``rows_per_warp`` for the register-file banks, ``shared_bytes / 4 / shared_banks``
rows for the shared banks, ``warps * TID_ROWS`` rows for the tid table); ``sm_memories(gpu)`` the
register file and shared memory of a timing-model GPU (``paper-rtx3080``: 65,536 registers in
``register_banks`` = 8 banks of ``warp_size`` = 32 lanes, 128 KB of shared memory in 32 banks of 4
bytes). Every memory is 1 read + 1 write port. ``python -m dualflow.synth.sram_table`` prints both
(docs/sram.md).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from dualflow.common.errors import DualflowError

from .sram import SramFigures, macro

__all__ = ["MemorySpec", "core_memories", "sm_memories", "table"]


@dataclass(frozen=True)
class MemorySpec:
    """``count`` identical memories of ``words`` x ``bits``; an ``alternative`` is another way to
    build the memory listed before it, left out of the totals."""

    name: str
    count: int
    words: int
    bits: int
    read_ports: int = 1
    write_ports: int = 1
    alternative: bool = False


def core_memories(params) -> list[MemorySpec]:
    """The memories of ``SimtCore(params)`` (``params``: ``rtl.params.CoreParams``)."""
    from dualflow.machine import rows_per_warp
    from dualflow.rtl.interfaces import TID_ROWS

    lanes_bits = 32 * params.warp_size
    banks = params.register_banks
    return [
        MemorySpec("register-file bank", banks, params.warps * rows_per_warp(params.entries_per_warp, banks),
                   lanes_bits),
        MemorySpec("instruction memory", 1, params.imem_words, 64),
        MemorySpec("shared-memory bank", params.shared_banks, max(1, params.shared_bytes // 4 // params.shared_banks),
                   32),
        MemorySpec("tid table", 1, params.warps * TID_ROWS, lanes_bits),
    ]


def sm_memories(gpu) -> list[MemorySpec]:
    """Register file and shared memory of one SM of ``gpu`` (``machine.GpuConfig``)."""
    sm, shared = gpu.sm, gpu.memory.shared
    return [
        MemorySpec("register-file bank", sm.register_banks, sm.registers // sm.warp_size // sm.register_banks,
                   32 * sm.warp_size),
        MemorySpec("shared-memory bank", shared.banks, sm.shared_bytes // shared.bank_bytes // shared.banks,
                   8 * shared.bank_bytes),
    ]


def lane_sliced(spec: MemorySpec, lanes: int) -> MemorySpec:
    """The same bank built as one 32-bit-wide macro per lane (sharing the address)."""
    return MemorySpec(f"(alternative) {spec.name} as {lanes} macros of 32 bits", spec.count * lanes, spec.words, 32,
                      spec.read_ports, spec.write_ports, alternative=True)


def _row(spec: MemorySpec, f: SramFigures, model: str) -> str:
    return (f"| {spec.name} | {spec.count} | {spec.words} x {spec.bits} | {f.area_um2:,.0f} | "
            f"{spec.count * f.area_um2 / 1e6:.3f} | {f.read_energy_pj:.2f} | {f.write_energy_pj:.2f} | "
            f"{spec.count * f.leakage_uw:.2f} | {f.access_time_ns:.2f} | {f.cycle_time_ns:.2f} | {model} |")


def table(title: str, specs: list[MemorySpec], *, node_nm: int = 180) -> list[str]:
    """Markdown lines: one row per memory kind, then the total area and leakage (alternatives
    left out), then the models used."""
    lines = [f"**{title}** ({node_nm} nm, 1 read + 1 write port each)", "",
             "| memory | count | words x bits | area each (um^2) | area all (mm^2) | read (pJ) | write (pJ) | "
             "leakage all (uW) | access (ns) | cycle (ns) | model |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    area = leak = 0.0
    sources: dict[str, int] = {}  # source -> its footnote number
    for spec in specs:
        f = macro(spec.words, spec.bits, spec.read_ports, spec.write_ports, node_nm=node_nm)
        lines.append(_row(spec, f, f"[{sources.setdefault(f.source, len(sources) + 1)}]"))
        if not spec.alternative:
            area += spec.count * f.area_um2
            leak += spec.count * f.leakage_uw
    lines.append(f"| **total** | | | | **{area / 1e6:.3f}** | | | **{leak:.2f}** | | | |")
    lines += [""] + [f"[{n}] {source}  " for source, n in sources.items()]
    return lines


def report(*, lanes: int, warps: int, preset: str, node_nm: int) -> list[str]:
    from dualflow.machine import preset as gpu_preset
    from dualflow.rtl.params import CoreParams

    out: list[str] = []
    for mode in ("base", "dflow"):
        specs = core_memories(CoreParams(mode=mode, warp_size=lanes, warps=warps))
        specs.insert(1, lane_sliced(specs[0], lanes))
        out += table(f"RTL core, {mode.upper()}, {lanes} lanes x {warps} warps (core defaults otherwise)", specs,
                     node_nm=node_nm) + [""]
    gpu = gpu_preset(preset)
    specs = sm_memories(gpu)
    specs.insert(1, lane_sliced(specs[0], gpu.sm.warp_size))
    return out + table(f"one SM of {preset}", specs, node_nm=node_nm)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dualflow.synth.sram_table",
                                 description="SRAM macro figures (CACTI 7) of the core's memories and of one SM")
    ap.add_argument("--lanes", type=int, default=4, help="warp size of the RTL core (default 4)")
    ap.add_argument("--warps", type=int, default=2, help="resident warps of the RTL core (default 2)")
    ap.add_argument("--preset", default="paper-rtx3080", help="GPU preset for the SM table (default paper-rtx3080)")
    ap.add_argument("--node", type=int, default=180, help="technology node in nm (default 180)")
    args = ap.parse_args(argv)
    try:
        print("\n".join(report(lanes=args.lanes, warps=args.warps, preset=args.preset, node_nm=args.node)))
    except DualflowError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

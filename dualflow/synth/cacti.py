"""Run CACTI 7 on one SRAM array: our own configuration file in, CACTI's CSV result out.

``config_text`` writes the input file (the option names and their syntax are CACTI 7's, as in its
sample ``cache.cfg``); ``run`` calls the binary that ``cacti_build`` made and reads the one-row CSV
CACTI writes beside the input file (``<input>.out``: a header row of names with units, then the
values), not its printed report.

What the configuration says, and why:

- a scratch RAM (``cache type "ram"``: data array only, no tags), direct mapped, one bank (UCA);
- one access reads or writes one word: block size = output width = the word (whole bytes);
- ports: ``-exclusive read port`` and ``-exclusive write port`` as given, no read-write port (our
  memories have separate read and write ports, e.g. 1R1W: one port that only reads, one that
  only writes, both usable in the same cycle); CACTI sizes the cell and its bit lines and word
  lines for every port;
- ITRS high-performance devices for the cells and the periphery: 180 nm's technology file
  (``tech_params/180nm.dat``) has values only in its ``hp`` column (the other four flavours are
  zero there);
- 300 K, the lowest temperature CACTI takes (a multiple of 10 in 300..400 K), near a standard-cell
  library's typical corner (25 C);
- the design objective gives delay, dynamic energy, leakage, cycle time and area equal weights
  (each normalised by CACTI to its best organisation) with no deviation limit, so CACTI neither
  optimises area alone nor delay alone; ED/ED^2 optimisation is off so these weights decide;
- repeated global wires with 30% delay penalty (``Global_30``, CACTI's sample), semi-global
  wires inside and outside the mats, conservative wire projection, no ECC, no power gating;
- CACTI's off-chip IO model (CACTI-IO, the ``-dram_type`` ... block) is computed on every run
  whatever the array; its inputs are required (zero values divide by zero), so they are given
  as in CACTI's sample and its results are ignored.
"""

from __future__ import annotations

import csv
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dualflow.common.errors import DualflowError

from .cacti_build import WHEEL_VERSION, require_cacti

__all__ = ["CactiResult", "CactiNoOrganisation", "config_text", "run", "VERSION"]

#: How results name the model.
VERSION = f"CACTI 7.0 (hwcomponents-cacti {WHEEL_VERSION} source, node check relaxed to 180 nm)"
#: Seconds one CACTI run may take (a few for the arrays here).
TIMEOUT = 300

#: Options that are the same for every array (see the module docstring), in CACTI's syntax.
FIXED_OPTIONS = """\
-associativity 1
-read-write port 0
-single ended read ports 0
-UCA bank count 1
-page size (bits) 8192
-burst length 8
-internal prefetch width 8
-Data array cell type - "itrs-hp"
-Data array peripheral type - "itrs-hp"
-Tag array cell type - "itrs-hp"
-Tag array peripheral type - "itrs-hp"
-operating temperature (K) 300
-cache type "ram"
-tag size (b) "default"
-access mode (normal, sequential, fast) - "normal"
-design objective (weight delay, dynamic power, leakage power, cycle time, area) 1:1:1:1:1
-deviate (delay, dynamic power, leakage power, cycle time, area) 1000000:1000000:1000000:1000000:1000000
-NUCAdesign objective (weight delay, dynamic power, leakage power, cycle time, area) 100:100:0:0:100
-NUCAdeviate (delay, dynamic power, leakage power, cycle time, area) 10:10000:10000:10000:10000
-Optimize ED or ED^2 (ED, ED^2, NONE): "NONE"
-Cache model (NUCA, UCA)  - "UCA"
-NUCA bank count 0
-Wire signaling (fullswing, lowswing, default) - "Global_30"
-Wire inside mat - "semi-global"
-Wire outside mat - "semi-global"
-Interconnect projection - "conservative"
-Core count 1
-Cache level (L2/L3) - "L2"
-Add ECC - "false"
-Print level (DETAILED, CONCISE) - "CONCISE"
-Print input parameters - "false"
-Array Power Gating - "false"
-WL Power Gating - "false"
-CL Power Gating - "false"
-Bitline floating - "false"
-Interconnect Power Gating - "false"
-Power Gating Performance Loss 0.01
-dram_type "DDR3"
-io state "WRITE"
-addr_timing 1.0
-mem_density 4 Gb
-bus_freq 800 MHz
-duty_cycle 1.0
-activity_dq 1.0
-activity_ca 0.5
-num_dq 72
-num_dqs 18
-num_ca 25
-num_clk  2
-num_mem_dq 2
-mem_data_width 8
-rtt_value 10000
-ron_value 34
-tflight_value
-num_bobs 1
-capacity 80
-num_channels_per_bob 1
-first metric "Cost"
-second metric "Bandwidth"
-third metric "Energy"
-DIMM model "ALL"
-mirror_in_bob "F"
"""


class CactiNoOrganisation(DualflowError):
    """CACTI ran but found no organisation of the array (too few rows, too small)."""


@dataclass(frozen=True)
class CactiResult:
    """One CACTI run, in CACTI's units (its CSV columns)."""

    access_time_ns: float
    cycle_time_ns: float
    read_energy_nj: float
    write_energy_nj: float
    leakage_mw: float  # "Standby leakage per bank": subthreshold + gate leakage
    area_mm2: float
    organisation: tuple[int, ...]  # (Ndwl, Ndbl, Nspd, Ndcm, Ndsam1, Ndsam2) as CACTI chose or was told


def config_text(*, words: int, bits: int, read_ports: int, write_ports: int, node_nm: int,
                organisation: tuple[int, ...] | None = None) -> str:
    """CACTI's input for ``words`` x ``bits`` with the given exclusive read and write ports;
    ``organisation`` (Ndwl, Ndbl, Nspd, Ndcm, Ndsam1, Ndsam2) forces CACTI's partitioning."""
    if bits % 8:
        raise DualflowError(f"CACTI needs whole bytes per word, not {bits} bits")
    size = words * bits // 8
    forced = organisation is not None
    org = organisation if forced else (1, 1, 0, 1, 0, 0)  # CACTI's sample values, unused unless forced
    return (f"-size (bytes) {size}\n-block size (bytes) {bits // 8}\n-output/input bus width {bits}\n"
            f"-exclusive read port {read_ports}\n-exclusive write port {write_ports}\n"
            f"-technology (u) {node_nm / 1000:.3f}\n"
            f"-Force cache config - \"{'true' if forced else 'false'}\"\n"
            + "".join(f"-{name} {value}\n" for name, value in zip(ORGANISATION_OPTIONS, org)) + FIXED_OPTIONS)


#: CSV column -> CactiResult field.
_COLUMNS = {
    "Access time (ns)": "access_time_ns",
    "Random cycle time (ns)": "cycle_time_ns",
    "Dynamic read energy (nJ)": "read_energy_nj",
    "Dynamic write energy (nJ)": "write_energy_nj",
    "Standby leakage per bank(mW)": "leakage_mw",
    "Area (mm2)": "area_mm2",
}
_ORGANISATION = ("Ndwl", "Ndbl", "Nspd", "Ndcm", "Ndsam_level_1", "Ndsam_level_2")
#: The same, as input options.
ORGANISATION_OPTIONS = ("Ndwl", "Ndbl", "Nspd", "Ndcm", "Ndsam1", "Ndsam2")


def parse_csv(text: str, where: str) -> CactiResult:
    """The last row of CACTI's CSV output."""
    rows = [[c.strip() for c in row] for row in csv.reader(text.splitlines()) if row]
    if len(rows) < 2:
        raise DualflowError(f"{where}: CACTI wrote no result row")
    header, values = rows[0], rows[-1]
    index = {name: i for i, name in enumerate(header) if name}
    missing = [c for c in (*_COLUMNS, *_ORGANISATION) if c not in index]
    if missing:
        raise DualflowError(f"{where}: CACTI's CSV lacks the columns {missing}")
    try:
        figures = {field: float(values[index[col]]) for col, field in _COLUMNS.items()}
    except (ValueError, IndexError) as err:
        raise DualflowError(f"{where}: unreadable CACTI result row {values!r}: {err}") from None
    try:
        org = tuple(int(float(values[index[c]])) for c in _ORGANISATION)
    except (ValueError, IndexError) as err:
        raise DualflowError(f"{where}: unreadable CACTI organisation in {values!r}: {err}") from None
    return CactiResult(organisation=org, **figures)


def run(*, words: int, bits: int, read_ports: int, write_ports: int, node_nm: int = 180,
        organisation: tuple[int, ...] | None = None) -> CactiResult:
    """CACTI's figures for one array; ``CactiNoOrganisation`` when it finds none (or the forced
    ``organisation`` is not valid for the array)."""
    folder = require_cacti()
    binary = folder / "cacti"
    cfg = config_text(words=words, bits=bits, read_ports=read_ports, write_ports=write_ports, node_nm=node_nm,
                      organisation=organisation)
    with tempfile.TemporaryDirectory(prefix="cacti-run-") as scratch:
        infile = Path(scratch) / "array.cfg"
        infile.write_text(cfg)
        # CACTI opens tech_params/<node>.dat relative to the working directory
        done = subprocess.run([str(binary), "-infile", str(infile)], cwd=folder, capture_output=True,
                              text=True, timeout=TIMEOUT)
        out = Path(str(infile) + ".out")
        what = f"CACTI on {words} x {bits} bits, {read_ports}R{write_ports}W, {node_nm} nm"
        if done.returncode != 0 or not out.exists():
            log = (done.stdout + done.stderr).strip()
            if "No valid" in log or "no valid" in log:
                raise CactiNoOrganisation(f"{what}: no valid organisation")
            raise DualflowError(f"{what} failed (exit {done.returncode}): {log[-1500:]}")
        return parse_csv(out.read_text(), what)

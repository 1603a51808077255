"""Figures of one SRAM macro (area, access energies, leakage, access and cycle time) from CACTI 7.

``macro(words, bits, read_ports, write_ports, node_nm=180)`` models a memory of ``words`` rows of
``bits`` bits with separate read and write ports (the RTL's memories: register-file banks,
instruction memory, shared-memory banks and the tid table are 1 read + 1 write port) as one CACTI
array (``dualflow/synth/cacti.py`` says how it is configured). docs/sram.md gives the figures and sources.

CACTI cannot organise every array; two rules cover the rest, and ``SramFigures.source`` names
the one used:

- **Fewer than 32 rows** (``MIN_ROWS``): CACTI's smallest mat is 2 x 2 subarrays and a subarray
  needs at least 16 rows (``Ndbl >= 2``, ``MINSUBARRAYROWS``), so it finds no organisation. The
  figures come from CACTI at 32 rows and at 64 rows in the same organisation (same width and
  ports; the 64-row run is forced to the partitioning CACTI chose for 32 rows), extrapolated
  linearly in the row count down to ``words``: ``f(r) = f32 - (f64 - f32) / 32 * (32 - r)``. The
  line's slope is what each further row costs (bit-line length and its cells, a larger decoder),
  its intercept what does not shrink with the rows (sense amplifiers, precharge, output drivers,
  column periphery), so the rule keeps CACTI's own split between them. The result is kept
  between ``f32 * r / 32`` (all of the figure proportional to the rows, its lowest physical
  bound) and ``f32`` (a smaller array never costs more), which also keeps it positive and
  monotonic in ``r``.
- **Words not of whole bytes, or under 64 bytes in all**: CACTI takes whole bytes per word and at
  least 64 bytes; the word is padded to the next multiple of 8 bits and to at least 16 bits (at
  32 rows, 64 bytes); the figures are those of the padded array (an overestimate by the padding).

Results are cached per geometry as JSON in ``<build>/tech/sram/`` (keyed by the geometry and a
hash of the model's configuration, so a change of either runs CACTI again); CACTI is
deterministic, so a cached and a fresh result are equal.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from dualflow.common.errors import ConfigError

from . import cacti
from .cacti_build import tech_dir

__all__ = ["SramFigures", "macro", "MIN_ROWS", "NODES_NM"]

#: Fewest rows CACTI organises: a mat of 2 x 2 subarrays of at least 16 rows each.
MIN_ROWS = 32
#: Nodes CACTI has a technology file for (tech_params/<node>nm.dat); 180 nm needs the relaxed check.
NODES_NM = (180, 90, 65, 45, 32, 22)
#: Most ports of either kind we ask CACTI for (each adds wires to every cell).
MAX_PORTS = 8


@dataclass(frozen=True)
class SramFigures:
    """One memory macro. Energies are per access of one word; leakage is the whole macro's."""

    words: int
    bits: int
    read_ports: int
    write_ports: int
    node_nm: int
    area_um2: float
    read_energy_pj: float
    write_energy_pj: float
    leakage_uw: float  # subthreshold and gate leakage, at 300 K
    access_time_ns: float
    cycle_time_ns: float
    source: str  # the model and, for arrays CACTI cannot organise, the rule applied


def _check(words, bits, read_ports, write_ports, node_nm) -> None:
    def is_int(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    for name, value, low, high in (("words", words, 1, 1 << 24), ("bits", bits, 1, 1 << 16),
                                   ("read_ports", read_ports, 1, MAX_PORTS),
                                   ("write_ports", write_ports, 0, MAX_PORTS)):
        if not is_int(value) or not low <= value <= high:
            raise ConfigError(f"SRAM macro {name} must be an integer in {low}..{high}, not {value!r}")
    if node_nm not in NODES_NM:
        raise ConfigError(f"SRAM macro node_nm must be one of {', '.join(map(str, NODES_NM))} (CACTI's "
                          f"technology files), not {node_nm!r}")


def _padded_bits(bits: int) -> int:
    return max(16, -(-bits // 8) * 8)


def _significant(x: float) -> float:
    """CACTI prints 6 significant digits; keep that many (no unit-conversion noise in tables)."""
    return float(f"{x:.6g}")


def _from_cacti(r: cacti.CactiResult) -> dict[str, float]:
    return {"area_um2": r.area_mm2 * 1e6, "read_energy_pj": r.read_energy_nj * 1e3,
            "write_energy_pj": r.write_energy_nj * 1e3, "leakage_uw": r.leakage_mw * 1e3,
            "access_time_ns": r.access_time_ns, "cycle_time_ns": r.cycle_time_ns}


def extrapolate_rows(at_min: dict[str, float], at_twice: dict[str, float], rows: int) -> dict[str, float]:
    """Each figure at ``rows`` < ``MIN_ROWS`` from its values at ``MIN_ROWS`` and ``2 * MIN_ROWS``
    (the rule in the module docstring)."""
    out = {}
    for name, f32 in at_min.items():
        slope = (at_twice[name] - f32) / MIN_ROWS
        line = f32 - slope * (MIN_ROWS - rows)
        out[name] = min(f32, max(f32 * rows / MIN_ROWS, line))
    return out


def _model(words, bits, read_ports, write_ports, node_nm) -> SramFigures:
    modelled = _padded_bits(bits)
    ports = dict(read_ports=read_ports, write_ports=write_ports, node_nm=node_nm)
    padding = f"; word padded from {bits} to {modelled} bits" if modelled != bits else ""
    if words >= MIN_ROWS:
        figures = _from_cacti(cacti.run(words=words, bits=modelled, **ports))
        source = f"{cacti.VERSION}{padding}"
    else:
        small = cacti.run(words=MIN_ROWS, bits=modelled, **ports)
        twice = cacti.run(words=2 * MIN_ROWS, bits=modelled, organisation=small.organisation, **ports)
        figures = extrapolate_rows(_from_cacti(small), _from_cacti(twice), words)
        source = (f"{cacti.VERSION} at {MIN_ROWS} and {2 * MIN_ROWS} rows (same organisation), "
                  f"extrapolated linearly to {words} rows (CACTI organises no array under {MIN_ROWS} rows)"
                  f"{padding}")
    figures = {name: _significant(value) for name, value in figures.items()}
    return SramFigures(words=words, bits=bits, **ports, **figures, source=source)


#: Changes whenever what CACTI is asked changes, so that cached results of another model are not reused.
_MODEL_KEY = hashlib.sha256((cacti.VERSION + cacti.FIXED_OPTIONS + "rows<32: linear from 32/64 rows; "
                             "pad to bytes, >=16 bits").encode()).hexdigest()[:12]


def cache_dir() -> Path:
    return tech_dir() / "sram"


def macro(words: int, bits: int, read_ports: int = 1, write_ports: int = 1, *, node_nm: int = 180) -> SramFigures:
    """Figures of a ``words`` x ``bits`` SRAM with ``read_ports`` read and ``write_ports`` write
    ports at ``node_nm``, from CACTI 7 or the documented fallback (``source`` says which);
    cached per geometry. Bad geometry: ``ConfigError``."""
    _check(words, bits, read_ports, write_ports, node_nm)
    path = cache_dir() / f"{words}x{bits}-{read_ports}r{write_ports}w-{node_nm}nm-{_MODEL_KEY}.json"
    if path.exists():
        try:
            return SramFigures(**json.loads(path.read_text()))
        except (ValueError, TypeError):
            path.unlink(missing_ok=True)  # unreadable (an older layout): model it again
    figures = _model(words, bits, read_ports, write_ports, node_nm)
    path.parent.mkdir(parents=True, exist_ok=True)
    # write-then-rename: parallel workers never read a half-written file
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(figures), f, indent=1)
    os.replace(tmp, path)
    return figures

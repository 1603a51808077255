"""Timing models of the memory macros: a Liberty library with one cell per macro geometry.

``dualflow/synth/macros.py`` turns each memory into a black-box instance named by its geometry; static
timing (``dualflow/synth/sta.py``) needs each of those cells in Liberty. :func:`macro_liberty` writes them
from three sources, and nothing else:

- **the SRAM model** (``dualflow/synth/sram.py``, CACTI 7 at the library's node): area, leakage, the
  access time (clock to read data at the array's edge) and the cycle time (the clock pins'
  ``min_period``);
- **the macro's ports** as Yosys wrote them in ``macros.v`` (names, directions, widths);
- **the standard-cell library** the logic is mapped to, for what CACTI does not model:
  the macro registers its inputs (address, enable, write data) at the clock edge like the
  library's flip-flop ``REGISTER_CELL``, so each input pin gets that flip-flop's data-pin
  capacitance and its setup and hold tables (looked up at the actual slews), and each clock pin that
  flip-flop's clock-pin capacitance (one load: the macro buffers its clock inside); the read data
  leave through an output driver modelled as the library's ``DRIVER_CELL``, so the read data's
  delay is the access time plus that buffer's delay at the actual load and clock slew, and its
  slew is the buffer's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dualflow.common.errors import DualflowError

from .liberty import LibertyGroup, Library
from .macros import MemoryInstance
from .sram import macro

__all__ = ["MacroPort", "REGISTER_CELL", "DRIVER_CELL", "read_macro_ports", "macro_liberty", "LIBRARY_NAME"]

#: The library cell standing for the macro's input registers (setup, hold, pin capacitances).
REGISTER_CELL = "DFFPOSX1"
#: The library cell standing for the macro's read-data output drivers (delay and slew versus load).
DRIVER_CELL = "BUFX4"
#: The name of the written library.
LIBRARY_NAME = "dualflow_macros"

#: Library-level attributes copied from the standard-cell library: units, thresholds, conditions.
_COPIED = ("time_unit", "voltage_unit", "current_unit", "pulling_resistance_unit", "leakage_power_unit",
           "capacitive_load_unit", "slew_upper_threshold_pct_rise", "slew_lower_threshold_pct_rise",
           "slew_upper_threshold_pct_fall", "slew_lower_threshold_pct_fall", "input_threshold_pct_rise",
           "input_threshold_pct_fall", "output_threshold_pct_rise", "output_threshold_pct_fall",
           "nom_process", "nom_voltage", "nom_temperature")
_COMPLEX = {"capacitive_load_unit"}
_TIME_UNITS_NS = {"1ns": 1.0, "100ps": 0.1, "10ps": 0.01, "1ps": 0.001}
_LEAKAGE_UNITS_UW = {"1uW": 1.0, "1nW": 1e-3, "1pW": 1e-6, "1mW": 1e3}
_PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):(\d+)\]\s+)?(\w+)\s*;", re.M)
_MODULE = re.compile(r"^module\s+\\?(\S+)\s*\(.*?\);(.*?)^endmodule", re.M | re.S)


@dataclass(frozen=True)
class MacroPort:
    """One port of a macro: name, direction (``input``/``output``), width in bits."""

    name: str
    direction: str
    width: int

    @property
    def clock(self) -> bool:
        return self.name.endswith("_CLK")

    @property
    def port(self) -> str:
        """The memory port it belongs to (``R0``, ``W0``): its clock is ``<port>_CLK``."""
        return self.name.split("_", 1)[0]


def read_macro_ports(verilog: str) -> dict[str, list[MacroPort]]:
    """Macro name -> its ports, from the black-box modules Yosys writes (``macros.v``)."""
    out = {}
    for m in _MODULE.finditer(verilog):
        ports = [MacroPort(name, d, 1 if not msb else abs(int(msb) - int(lsb)) + 1)
                 for d, msb, lsb, name in _PORT.findall(m.group(2))]
        bad = [p.name for p in ports if p.port + "_CLK" not in {q.name for q in ports}]
        if not ports or bad:
            raise DualflowError(f"macro {m.group(1)}: ports {', '.join(bad) or '(none)'} have no clock "
                                "<port>_CLK (not a macro written by dualflow/synth/macros.py)")
        out[m.group(1)] = ports
    return out


def _unit(library: Library, name: str, table: dict[str, float]) -> float:
    value = (library.root.attribute(name) or "").replace(" ", "")
    if value not in table:
        raise DualflowError(f"{library.path}: {name} {value!r} is not one of {', '.join(table)}")
    return table[value]


def _cell(library: Library, name: str) -> LibertyGroup:
    for g in library.root.children("cell"):
        if g.args and g.args[0] == name:
            return g
    raise DualflowError(f"{library.path}: no cell {name} (the macro timing models take their pins from it)")


def _pin(cell: LibertyGroup, name: str) -> LibertyGroup:
    for g in cell.children("pin"):
        if g.args and g.args[0] == name:
            return g
    raise DualflowError(f"cell {cell.args[0]}: no pin {name}")


def _numbers(group: LibertyGroup, attribute: str) -> list[float]:
    return [float(x) for v in group.attributes.get(attribute, []) for x in v.split(",")]


def _constraint_tables(pin: LibertyGroup, timing_type: str, where: str) -> list[LibertyGroup]:
    """The rise and fall tables of a pin's ``timing_type`` check."""
    for t in pin.children("timing"):
        if t.attribute("timing_type") == timing_type:
            tables = [g for g in t.groups if g.kind in ("rise_constraint", "fall_constraint")]
            if tables:
                return tables
    raise DualflowError(f"{where}: no {timing_type} table")


@dataclass
class _Borrowed:
    """What the macros take from the standard cells: the register cell's pin capacitances and its
    data pin's setup and hold tables; the driver cell's delay and slew tables and its output pin."""

    clock_pf: float
    data_pf: float
    checks: dict[str, list[LibertyGroup]]
    driver: list[LibertyGroup]
    driver_pin: LibertyGroup

    @classmethod
    def of(cls, library: Library) -> _Borrowed:
        cell = _cell(library, REGISTER_CELL)
        clk, data = _pin(cell, "CLK"), _pin(cell, "D")
        where = f"{library.path}: {REGISTER_CELL} pin D"
        checks = {kind: _constraint_tables(data, kind, where) for kind in ("setup_rising", "hold_rising")}
        return cls(float(clk.attribute("capacitance", "0")), float(data.attribute("capacitance", "0")), checks,
                   *_driver_tables(library))


def _driver_tables(library: Library) -> tuple[list[LibertyGroup], LibertyGroup]:
    """The driver cell's delay and slew tables (input pin to output) and its output pin."""
    cell = _cell(library, DRIVER_CELL)
    out = next((p for p in cell.children("pin") if p.attribute("direction") == "output"), None)
    timing = out and out.children("timing")
    if not timing:
        raise DualflowError(f"{library.path}: cell {DRIVER_CELL} has no output pin with timing")
    tables = [g for g in timing[0].groups if g.kind in ("cell_rise", "cell_fall", "rise_transition", "fall_transition")]
    if len(tables) != 4:
        raise DualflowError(f"{library.path}: cell {DRIVER_CELL}: expected cell_rise, cell_fall, rise_transition "
                            "and fall_transition tables")
    return tables, out


def _template(library: Library, name: str) -> LibertyGroup:
    for g in library.root.children("lu_table_template"):
        if g.args and g.args[0] == name:
            return g
    raise DualflowError(f"{library.path}: no lu_table_template {name}")


def _quoted(values: list[float]) -> str:
    return '"' + ", ".join(f"{v:.6g}" for v in values) + '"'


def _simple(value: str) -> str:
    """A simple attribute's value as Liberty writes it: numbers bare, anything else quoted."""
    try:
        float(value)
        return value
    except ValueError:
        return f'"{value}"'


def _table(table: LibertyGroup, add: float, indent: str) -> list[str]:
    """A copy of a delay or slew table with ``add`` added to every value."""
    rows = [[float(x) + add for x in row.split(",")] for row in table.attributes["values"]]
    lines = [f"{indent}{table.kind} ({table.args[0]}) {{"]
    for index in ("index_1", "index_2", "index_3"):
        if index in table.attributes:
            lines.append(f"{indent}  {index} ({_quoted(_numbers(table, index))});")
    lines.append(f"{indent}  values ({', '.join(_quoted(r) for r in rows)});")
    lines.append(f"{indent}}}")
    return lines


def _check(kind: str, clock: str, tables: list[LibertyGroup], indent: str) -> list[str]:
    return [f"{indent}timing () {{", f'{indent}  related_pin : "{clock}";', f"{indent}  timing_type : {kind};",
            *(line for t in tables for line in _table(t, 0.0, indent + "  ")), f"{indent}}}"]


def _pin_lines(p: MacroPort, cycle: float, access: float, cells: _Borrowed) -> list[str]:
    """One pin or bus of a macro: a clock (capacitance, ``min_period`` = the cycle time), a registered
    input (capacitance, setup and hold) or the read data (clock to data = access time + driver)."""
    lines = [f"    pin ({p.name}) {{" if p.width == 1 else f"    bus ({p.name}) {{"]
    lines += [f"      bus_type : bus{p.width};"] if p.width > 1 else []
    lines.append(f"      direction : {p.direction};")
    clock = f"{p.port}_CLK"
    if p.clock:
        lines += ["      clock : true;", f"      capacitance : {cells.clock_pf:.6g};",
                  f"      min_period : {cycle:.6g};"]
    elif p.direction == "input":
        lines.append(f"      capacitance : {cells.data_pf:.6g};")
        for kind, tables in cells.checks.items():
            lines += _check(kind, clock, tables, "      ")
    else:
        if cells.driver_pin.attribute("max_capacitance"):
            lines.append(f"      max_capacitance : {cells.driver_pin.attribute('max_capacitance')};")
        lines += ["      timing () {", f'        related_pin : "{clock}";', "        timing_type : rising_edge;",
                  "        timing_sense : non_unate;"]
        for t in cells.driver:
            lines += _table(t, access if t.kind.startswith("cell_") else 0.0, "        ")
        lines.append("      }")
    return lines + ["    }"]


def macro_liberty(memories: list[MemoryInstance], ports: dict[str, list[MacroPort]], library: Library,
                  node_nm: int) -> str:
    """The Liberty text of one cell per macro geometry of ``memories`` (ports from
    :func:`read_macro_ports`), in the units of ``library``, figures from ``dualflow/synth/sram.py`` at ``node_nm``."""
    ns = _unit(library, "time_unit", _TIME_UNITS_NS)
    uw = _unit(library, "leakage_power_unit", _LEAKAGE_UNITS_UW)
    cells = _Borrowed.of(library)
    templates = sorted({t.args[0] for t in cells.driver + [g for tables in cells.checks.values() for g in tables]})
    lines = [f"library ({LIBRARY_NAME}) {{", "  delay_model : table_lookup;"]
    for name in _COPIED:
        value = library.root.attributes.get(name)
        if value is None:
            continue
        lines.append(f"  {name} ({', '.join(value)});" if name in _COMPLEX else f"  {name} : {_simple(value[0])};")
    for name in templates:
        t = _template(library, name)
        lines += [f"  lu_table_template ({name}) {{"] + [
            f"    {k} : {t.attribute(k)};" for k in ("variable_1", "variable_2", "variable_3") if t.attribute(k)] + [
            f"    {k} ({_quoted(_numbers(t, k))});" for k in ("index_1", "index_2", "index_3") if k in t.attributes
        ] + ["  }"]
    widths = sorted({p.width for plist in ports.values() for p in plist if p.width > 1})
    for w in widths:
        lines += [f"  type (bus{w}) {{", "    base_type : array;", "    data_type : bit;", f"    bit_width : {w};",
                  f"    bit_from : {w - 1};", "    bit_to : 0;", "    downto : true;", "  }"]
    done = set()
    for mem in memories:
        if mem.macro in done:
            continue
        done.add(mem.macro)
        if mem.macro not in ports:
            raise DualflowError(f"macro {mem.macro} of memory {mem.block}.{mem.name} is not in the macros' ports")
        fig = macro(mem.words, mem.bits, mem.read_ports, mem.write_ports, node_nm=node_nm)
        lines += [f"  cell ({mem.macro}) {{", f"    area : {fig.area_um2:.6g};", "    dont_use : true;",
                  "    dont_touch : true;", "    interface_timing : true;",
                  f"    cell_leakage_power : {fig.leakage_uw / uw:.6g};"]
        for p in ports[mem.macro]:
            lines += _pin_lines(p, fig.cycle_time_ns / ns, fig.access_time_ns / ns, cells)
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"

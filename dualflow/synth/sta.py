"""Static timing of a mapped netlist with OpenSTA: the critical path and the achievable clock.

The input is what ``synth.asic.map_design(..., out_dir=DIR)`` keeps: ``mapped.v`` (hierarchical
Verilog of library cells and macro instances; Debian's OpenSTA reads Yosys's escaped module names
such as ``\\core_dflow.alu`` as they are, so nothing is renamed or flattened; :func:`for_opensta`
removes what its parser rejects) and ``macros.v`` (the macros' ports). :func:`run_sta` writes,
in a temporary folder, the cell library, the macros' timing models (``dualflow/synth/macro_liberty.py``)
and a Tcl script, runs ``sta`` (Debian package ``opensta``, installed by ``make sta``) and reads
its reports into a :class:`TimingReport`.

The constraints (``constraints_tcl``): one ideal clock on the clock port (no clock tree, no
uncertainty, no skew: the mapped netlist has no clock tree); every other input arrives at the
clock edge (input delay 0) through the driving cell of ``dualflow/synth/boundary.py``, and every output
is captured at the next edge (output delay 0) under that module's load: the outside of the design
is flip-flops at its ports. No wire load model (the OSU library has none): a net's load is its
pins' capacitance. So the achievable period is the worst path's arrival plus its endpoint's
setup time, i.e. the constraining period minus the worst slack, and no shorter than the macros'
cycle time (their clock pins' ``min_period``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dualflow.common.errors import DualflowError

from .asic import block_name
from .boundary import Boundary
from .liberty import Library
from .macro_liberty import macro_liberty, read_macro_ports
from .macros import MemoryInstance

__all__ = ["PathPoint", "TimingPath", "TimingReport", "run_sta", "for_opensta", "sta_command", "constraints_tcl",
           "STA_PERIOD_NS", "TOP_BLOCK", "OUTPUTS_BLOCK"]

#: The clock period the design is constrained at (ns); the achievable period does not depend on it.
STA_PERIOD_NS = 10.0
#: The block name of cells at the top of the hierarchy (as in dualflow/synth/asic.py's area report).
TOP_BLOCK = "(top)"
_DIGITS = 4
#: More paths than any design here has endpoints: report_checks lists one path per endpoint.
_ALL = 10_000_000
#: The block of paths that end at an output port.
OUTPUTS_BLOCK = "(outputs)"
_MARK = "DUALFLOW-"
#: Files of the work folder and the step of the flow that reads each (an error names the step).
_STEPS = {"cells.lib": "reading the cell library", "macros.lib": "reading the macro timing models",
          "netlist.v": "reading the netlist", "run.tcl": "the timing script"}


def sta_command() -> list[str]:
    """OpenSTA's command line; missing is a clear error."""
    exe = shutil.which("sta")
    if exe is None:
        raise DualflowError("OpenSTA (`sta`) is not installed: run `make sta` (Debian package opensta)")
    return [exe, "-no_splash", "-no_init", "-exit"]


@dataclass(frozen=True)
class PathPoint:
    """One pin along a path: its name, the cell it belongs to (or ``port``), the edge (``^``/``v``),
    the delay to it and its arrival time (ns), and the block of the hierarchy it is in."""

    pin: str
    cell: str
    edge: str
    delay_ns: float
    time_ns: float
    block: str
    #: a memory macro's pin (its delay is the macro's clock-to-data)
    macro: bool = False


@dataclass
class TimingPath:
    """The worst path: where it starts and ends, its pins, arrival, required time and slack (ns)."""

    startpoint: str
    endpoint: str
    arrival_ns: float
    required_ns: float
    slack_ns: float
    #: the endpoint's setup time (a flip-flop's or a macro's), or the output delay at a port
    setup_ns: float
    points: list[PathPoint] = field(default_factory=list)

    @property
    def blocks(self) -> list[str]:
        """The blocks the path passes through, in order (a block left and entered again repeats)."""
        out: list[str] = []
        for p in self.points:
            if p.cell != "port" and (not out or out[-1] != p.block):
                out.append(p.block)
        return out

    @property
    def instances(self) -> list[str]:
        """The hierarchical instances the path's cells are in, in order (``fpu/fpu0/lane3/round``);
        ``(top)`` for cells at the top."""
        out: list[str] = []
        for p in self.points:
            if p.cell == "port":
                continue
            inst = "/".join(_hierarchy(p.pin)) or TOP_BLOCK
            if not out or out[-1] != inst:
                out.append(inst)
        return out

    @property
    def macros(self) -> list[PathPoint]:
        """The points that are a macro's pins (their delay is the macro's clock-to-data)."""
        return [p for p in self.points if p.macro]

    def summary(self) -> str:
        start, end = (p.split(" ", 1)[0] for p in (self.startpoint, self.endpoint))
        return f"{start} -> {' -> '.join(self.blocks) or '-'} -> {end}, {self.arrival_ns:.2f} ns"


@dataclass
class TimingReport:
    """Static timing of one design: the worst path, the slacks and the clock they allow."""

    top: str
    period_ns: float
    worst: TimingPath | None
    wns_ns: float
    tns_ns: float
    endpoints: int
    #: per block, the worst path ending in it (``OUTPUTS_BLOCK``: at an output port)
    block_paths: dict[str, TimingPath]
    #: the largest ``min_period`` of a clock pin (the macros' cycle time), 0 without one
    min_period_ns: float
    min_period_pin: str
    seconds: float = 0.0
    text: str = ""  # OpenSTA's own report of the worst path

    @property
    def achievable_period_ns(self) -> float:
        """The shortest clock period that meets every check: the constraining period minus the
        worst slack (its arrival plus setup), and no shorter than any clock pin's ``min_period``."""
        paths = 0.0 if self.worst is None else round(self.period_ns - self.worst.slack_ns, _DIGITS)
        return max(paths, self.min_period_ns)

    @property
    def block_periods(self) -> dict[str, float]:
        """Per block, the period its endpoints need: its worst path's arrival plus setup."""
        return {b: round(self.period_ns - p.slack_ns, _DIGITS) for b, p in self.block_paths.items()}

    @property
    def frequency_mhz(self) -> float:
        return 1000.0 / self.achievable_period_ns if self.achievable_period_ns > 0 else float("inf")

    def to_dict(self) -> dict:
        return {"top": self.top, "period_ns": self.period_ns, "achievable_period_ns": self.achievable_period_ns,
                "frequency_mhz": self.frequency_mhz, "wns_ns": self.wns_ns, "tns_ns": self.tns_ns,
                "endpoints": self.endpoints,
                "blocks": {b: {"period_ns": self.block_periods[b], "path": p.summary(), "startpoint": p.startpoint,
                               "endpoint": p.endpoint, "arrival_ns": p.arrival_ns, "setup_ns": p.setup_ns,
                               "instances": p.instances} for b, p in self.block_paths.items()},
                "min_period_ns": self.min_period_ns,
                "min_period_pin": self.min_period_pin,
                "seconds": self.seconds,
                "worst": None if self.worst is None else {**asdict(self.worst), "blocks": self.worst.blocks,
                                                          "instances": self.worst.instances}}


def constraints_tcl(clock: str, period_ns: float, boundary: Boundary) -> str:
    """The SDC part of the script (see the module docstring)."""
    data_in = f"[delete_from_list [all_inputs] [get_ports {clock}]]"
    return (f"create_clock -name {clock} -period {period_ns} [get_ports {clock}]\n"
            f"set_input_delay -clock {clock} 0 {data_in}\n"
            f"set_output_delay -clock {clock} 0 [all_outputs]\n"
            f"set_driving_cell -lib_cell {boundary.driving_cell} -pin {boundary.driving_pin} {data_in}\n"
            f"set_load {boundary.load_pf:.6g} [all_outputs]\n")


def _setup(top: str, constraints: str) -> list[str]:
    return ["read_liberty cells.lib", "read_liberty macros.lib", "read_verilog netlist.v", f"link_design {top}",
            constraints]


def _path_report(to: str = "") -> str:
    return f"report_checks -path_delay max{to} -format full_clock_expanded -fields {{input_pins}} -digits {_DIGITS}"


def _script(top: str, constraints: str) -> str:
    """The first run: slacks, the macros' min_period, the worst path, each endpoint's slack."""
    return "\n".join(_setup(top, constraints) + [
        f'puts "{_MARK}TNS"', f"report_tns -digits {_DIGITS}",
        f'puts "{_MARK}MIN_PERIOD"', f"report_check_types -min_period -verbose -digits {_DIGITS}",
        f'puts "{_MARK}PATH"', _path_report(),
        f'puts "{_MARK}ENDPOINTS"',
        f"report_checks -path_delay max -format end -group_count {_ALL} -endpoint_count 1 -digits {_DIGITS}",
        f'puts "{_MARK}END"', ""])


def _block_script(top: str, constraints: str, endpoints: dict[str, tuple[str, str]]) -> str:
    """The second run: the worst path to each block's worst endpoint (``{block: (pin, cell)}``)."""
    lines = _setup(top, constraints)
    for i, (pin, cell) in enumerate(endpoints.values()):
        kind = "get_ports" if cell == "output" else "get_pins"
        lines += [f'puts "{_MARK}BLOCK{i}"', _path_report(f" -to [{kind} {{{pin}}}]")]
    return "\n".join(lines + [f'puts "{_MARK}END"', ""])


def _hierarchy(pin: str) -> list[str]:
    """The instances above a cell's pin (``rf/bank0/_12_/Y``: ``rf``, ``bank0``); OpenSTA's divider is ``/``."""
    return re.split(r"(?<!\\)/", pin)[:-2]


def _block(pin: str, cell: str) -> str:
    """The first instance below the top that a pin is in (``rf/bank0/_12_/Y`` is in ``rf``)."""
    above = [] if cell == "port" else _hierarchy(pin)
    return block_name(above[0]) if above else TOP_BLOCK


_POINT = re.compile(r"^\s*(-?[\d.]+)\s+(-?[\d.]+)\s+([\^v])\s+(\S+)\s+\((\S+)\)\s*$")
_VALUE = re.compile(r"^\s*(-?[\d.]+)\s+(data arrival time|data required time|slack \(\w+\))\s*$")
_SETUP = re.compile(r"^\s*(-?[\d.]+)\s+(-?[\d.]+)\s+(library setup time|output external delay)\s*$")


def _parse_path(text: str, macro_cells: set[str]) -> TimingPath | None:
    if "No paths found" in text or "Startpoint:" not in text:
        return None
    start = re.search(r"^Startpoint: (.*)$", text, re.M).group(1).strip()
    end = re.search(r"^Endpoint: (.*)$", text, re.M).group(1).strip()
    # the data path comes before the first "data arrival time"; the required side after it
    arrival_part = text.split("data arrival time", 1)[0]
    points = []
    for line in arrival_part.splitlines():
        m = _POINT.match(line)
        if m:
            delay, at, edge, pin, cell = m.groups()
            cell = "port" if cell in ("in", "out") else cell
            points.append(PathPoint(pin, cell, edge, float(delay), float(at), _block(pin, cell), cell in macro_cells))
    values: dict[str, float] = {}
    for line in text.splitlines():
        m = _VALUE.match(line)
        if m:
            values.setdefault(m.group(2).split(" (")[0], float(m.group(1)))
    setup = next((0.0 - float(m.group(1)) + 0.0 for m in map(_SETUP.match, text.splitlines()) if m), 0.0)
    try:
        return TimingPath(start, end, values["data arrival time"], values["data required time"], values["slack"],
                          setup, points)
    except KeyError as missing:
        raise DualflowError(f"OpenSTA's path report has no {missing.args[0]}:\n{text[-2000:]}") from None


_END = re.compile(r"^(\S.*?) \((\S+)\)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+) \(\w+\)\s*$", re.M)


def _worst_endpoints(text: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """The number of endpoints listed by ``report_checks -format end`` and, per block, its endpoint
    of least slack (pin, cell)."""
    count, slacks, out = 0, {}, {}
    for pin, cell, _required, _arrival, slack in _END.findall(text):
        count += 1
        block = OUTPUTS_BLOCK if cell == "output" else _block(pin, cell)
        if block not in out or float(slack) < slacks[block]:
            out[block], slacks[block] = (pin, cell), float(slack)
    return count, dict(sorted(out.items()))


def _section(out: str, name: str) -> str:
    m = re.search(rf"^{_MARK}{name}\b(.*?)(?=^{_MARK}|\Z)", out, re.M | re.S)
    if m is None:
        raise DualflowError(f"OpenSTA stopped before its {name.lower()} report:\n{out[-2000:]}")
    return m.group(1)


def _errors(stderr: str, stdout: str) -> None:
    """The first error OpenSTA printed (it goes on after most), named by the step it belongs to."""
    lines = (stderr + "\n" + stdout).splitlines()
    for line in lines:
        black_box = re.search(r"module (\S+) not found", line)
        if line.startswith("Error") or black_box:
            step = next((s for f, s in _STEPS.items() if f in line), "static timing")
            why = (f"cell {black_box.group(1)} has no timing model in the cell library or the macro models"
                   if black_box else line)
            raise DualflowError(f"OpenSTA failed ({step}): {why}")


_SIGNED = re.compile(r"^(\s*(?:wire|input|output|inout|reg))\s+signed\b", re.M)


def for_opensta(netlist: str) -> str:
    """The mapped netlist as Debian's OpenSTA parses it: declarations without ``signed`` (its Verilog
    reader rejects the keyword; a netlist of cell instances and plain assignments does not depend on it).
    Assignments must have one net on the left: ``map_design`` writes ``write_verilog -simple-lhs``."""
    return _SIGNED.sub(r"\1", netlist)


def run_sta(netlist_dir: Path, top: str, memories: list[MemoryInstance], library: Library, node_nm: int, *,
            clock: str = "clk", period_ns: float = STA_PERIOD_NS) -> TimingReport:
    """Static timing of the netlist ``map_design`` kept in ``netlist_dir`` (top module ``top``,
    memory macros ``memories`` modelled at ``node_nm``) with ``library``'s cells."""
    start = time.monotonic()
    netlist_dir = Path(netlist_dir)
    try:
        netlist, boxes = ((netlist_dir / n).read_text() for n in ("mapped.v", "macros.v"))
    except OSError as e:
        raise DualflowError(f"cannot read the mapped netlist in {netlist_dir}: {e.strerror} ({e.filename})") from None
    if not re.search(rf"^module\s+\\?{re.escape(top)}\s*\(", netlist, re.M):
        raise DualflowError(f"{netlist_dir / 'mapped.v'}: no module {top}")
    models = macro_liberty(memories, read_macro_ports(boxes), library, node_nm)
    constraints = constraints_tcl(clock, period_ns, Boundary.of(library))
    macro_cells = {m.macro for m in memories}
    with tempfile.TemporaryDirectory(prefix="dualflow-sta-") as tmp:
        work = Path(tmp)
        shutil.copyfile(library.path, work / "cells.lib")
        (work / "macros.lib").write_text(models)
        (work / "netlist.v").write_text(for_opensta(netlist))
        out = _run(work, _script(top, constraints))
        endpoints, worst_ends = _worst_endpoints(_section(out, "ENDPOINTS"))
        per_block = _run(work, _block_script(top, constraints, worst_ends))
    block_paths = {b: _parse_path(_section(per_block, f"BLOCK{i}"), macro_cells) for i, b in enumerate(worst_ends)}
    tns = float(re.search(r"tns\s+(-?[\d.]+)", _section(out, "TNS")).group(1))
    min_period = _section(out, "MIN_PERIOD")
    pin = re.search(r"^Pin: (\S+)", min_period, re.M)
    value = re.search(r"^\s*-?([\d.]+)\s+min_period\s*$", min_period, re.M)
    path_text = _section(out, "PATH").strip("\n")
    worst = _parse_path(path_text, macro_cells)
    wns = 0.0 if worst is None else min(0.0, worst.slack_ns)
    return TimingReport(top, period_ns, worst, wns, tns, endpoints, {b: p for b, p in block_paths.items() if p},
                        float(value.group(1)) if value else 0.0, pin.group(1) if pin else "",
                        time.monotonic() - start, path_text)


def _run(work: Path, script: str) -> str:
    """Run one OpenSTA script in ``work``; its standard output (an error it printed is raised)."""
    (work / "run.tcl").write_text(script)
    done = subprocess.run(sta_command() + ["run.tcl"], cwd=work, capture_output=True, text=True)
    _errors(done.stderr, done.stdout)
    if done.returncode != 0:
        raise DualflowError(f"OpenSTA failed (exit {done.returncode}): {(done.stderr or done.stdout)[-2000:]}")
    return done.stdout

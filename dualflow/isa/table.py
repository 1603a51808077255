"""The instruction-set table as text: what ``dualflow isa`` prints, read off ``SPECS``."""

from __future__ import annotations

from .opcodes import SPECS, BranchIf, OpSpec

#: Short marks of the control and issue properties of an opcode, in the order printed.
FLAG_LEGEND = (
    ("R", "redirects: fetch stops after it; it ends a basic block"),
    ("I", "issue-only: no collector unit, no execution unit"),
    ("nz/z", "conditional branch, taken in a lane when source A is non-zero / zero"),
    ("M", "merges address: the result keeps the parameter base of its sources"),
)


def flags(spec: OpSpec) -> str:
    """The marks of ``FLAG_LEGEND`` that apply to ``spec``, joined by spaces."""
    out = []
    if spec.redirects:
        out.append("R")
    if spec.issue_only:
        out.append("I")
    if spec.branch_if is not None:
        out.append("nz" if spec.branch_if is BranchIf.NONZERO else "z")
    if spec.merges_address:
        out.append("M")
    return " ".join(out)


def format_table() -> str:
    """One line per opcode (number, mnemonic, operands, unit, RP effect, flags, accepted
    suffixes), then the legend of the flags."""
    lines = [f"{'code':>6}  {'mnemonic':<8} {'operands':<16} {'unit':<5} {'RP':<3} {'flags':<5} suffixes"]
    for spec in SPECS.values():
        ops = ", ".join(("d",) + spec.syntax.value if spec.produces else spec.syntax.value)
        rp = "+1" if spec.produces else ("+k" if spec.mnemonic == "rpinc" else "")
        suffixes = " ".join(spec.suffixes.values())
        lines.append(f"{spec.code:#6x}  {spec.mnemonic:<8} {ops:<16} {spec.unit.value:<5} {rp:<3} "
                     f"{flags(spec):<5} {suffixes}".rstrip())
    lines.append("")
    lines.extend(f"flags: {mark:<4} {meaning}" for mark, meaning in FLAG_LEGEND)
    return "\n".join(lines) + "\n"

"""The intermediate form as REG-form assembly text, each instruction with its PTX line."""

from __future__ import annotations

from dualflow.isa.opcodes import Cmp, ModKind, SpecialReg, UnitClass, VoteMode

from .ir import Function, LabelMark, Op


def _imm(op: Op, value: int) -> str:
    if op.spec.unit in (UnitClass.FP, UnitClass.SFU):
        return f"0f{value:08x}"
    signed = value - (1 << 32) if value >= (1 << 31) else value
    return str(signed) if -65536 < signed < 65536 else f"{value:#x}"


def format_op(op: Op) -> str:
    spec = op.spec
    mnemonic = spec.mnemonic
    if spec.mod is ModKind.CMP:
        mnemonic += "." + Cmp(op.mod).name.lower()
    elif spec.mod is ModKind.VOTE:
        mnemonic += "." + VoteMode(op.mod).name.lower()
    parts: list[str] = [op.dst] if spec.produces else []
    srcs = iter(op.srcs)
    for item in spec.syntax.value:
        if item in ("a", "b", "c"):
            parts.append(next(srcs))
        elif item == "bi":
            s = next(srcs)
            parts.append(_imm(op, s) if isinstance(s, int) else s)
        elif item == "mem":
            base = next(srcs)
            off = op.offset
            parts.append(f"[{base}{'+' if off >= 0 else '-'}{abs(off)}]" if off else f"[{base}]")
        elif item == "sreg":
            parts.append(SpecialReg(op.mod).asm_name)
        elif item == "param":
            parts.append(f"[{op.offset}]")
        elif item == "target":
            parts.append(op.target)
    return f"{mnemonic} {', '.join(parts)}" if parts else mnemonic


def emit_kernel(fn: Function, registers: int, source: str) -> str:
    """One ``.kernel`` of REG-form assembly; a comment names the PTX line of each instruction."""
    lines = [f"; {fn.name}: compiled from {source} by dualflow compile",
             f".kernel {fn.name}", ".form reg"]
    if fn.params:
        lines.append(".param " + " ".join(fn.params))
    if fn.shared_bytes:
        lines.append(f".shared {fn.shared_bytes}")
    if fn.local_bytes:
        lines.append(f".local {fn.local_bytes}")
    lines.append(f".regs {max(1, registers)}")
    for item in fn.items:
        if isinstance(item, LabelMark):
            lines.append(f"{item.name}:")
        else:
            text = "    " + format_op(item)
            lines.append(f"{text:<40} ; ptx:{item.line}" if item.line else text)
    return "\n".join(lines) + "\n"

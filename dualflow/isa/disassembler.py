"""Disassembler: kernels back to assembly text that reassembles to the same words."""

from __future__ import annotations

import struct

from .assembler import parse_immediate
from .encoding import Instruction
from .kernel import Kernel, Module
from .opcodes import HAND_NAMES, SPECS, Form, ModKind, SpecialReg, UnitClass, mod_names, uniform_operand


def _float_text(bits: int) -> str:
    """Shortest float literal that reassembles to exactly these bits, else 0f hex."""
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    text = repr(value)
    try:
        if parse_immediate(text) == bits:
            return text
    except ValueError:
        pass
    return f"0f{bits:08x}"


def source_text(field: int, form: Form, hand: int = 0) -> str:
    """Operand field as text: ``rz``, ``rN`` (REG) or ``|N|`` (DFLOW; ``|tN|`` on hand t, ``Variant.HANDS``)."""
    if field == 0:
        return "rz"
    return f"r{field - 1}" if form is Form.REG else f"|{HAND_NAMES[hand] if hand else ''}{field}|"


def uniform_text(field: int, params: list[str] | None = None) -> str:
    """A uniform operand field as text: ``c[name]`` (``c[word]`` without the parameter's name) or
    the special register's name."""
    named = uniform_operand(field)
    if named is None:  # pragma: no cover - Instruction.check_fields refuses such a field
        raise ValueError(f"uniform operand field {field} names nothing")
    if isinstance(named, SpecialReg):
        return named.asm_name
    return f"c[{params[named]}]" if params and named < len(params) else f"c[{named}]"


def format_instruction(ins: Instruction, form: Form, labels: dict[int, str] | None = None,
                       params: list[str] | None = None) -> str:
    """One instruction as assembly text (no label, no indentation)."""
    spec = SPECS[ins.op]
    mnemonic = spec.mnemonic
    if spec.mod in (ModKind.CMP, ModKind.VOTE) or (spec.mod is ModKind.COLOR and ins.mod):
        mnemonic += "." + mod_names(spec.mod)[ins.mod]
    ops: list[str] = []

    def operand(name: str) -> str:
        value = getattr(ins, name)
        if ins.is_uniform(name):
            return uniform_text(value, params)
        return source_text(value, form, ins.hand_of(name) if form is Form.DFLOW else 0)

    if spec.produces and form is Form.REG:
        ops.append(source_text(ins.dst, form))
    for item in spec.syntax.value:
        if item in ("a", "b", "c"):
            ops.append(operand(item))
        elif item == "bi":
            if not ins.bimm:
                ops.append(operand("b"))
            elif spec.unit in (UnitClass.FP, UnitClass.SFU):
                ops.append(_float_text(ins.imm))
            else:
                signed = ins.imm - (1 << 32) if ins.imm >= (1 << 31) else ins.imm
                ops.append(str(signed) if -65536 < signed < 65536 else f"{ins.imm:#x}")
        elif item == "mem":
            base = operand("a")
            ops.append(f"[{base}{'+' if ins.imm >= 0 else '-'}{abs(ins.imm)}]" if ins.imm else f"[{base}]")
        elif item == "target":
            ops.append(labels.get(ins.imm, f"L{ins.imm}") if labels else f"L{ins.imm}")
        elif item == "sreg":
            ops.append(SpecialReg(ins.mod).asm_name)
        elif item == "param":
            index = ins.imm // 4
            ops.append(params[index] if params and index < len(params) and ins.imm % 4 == 0 else f"[{ins.imm}]")
        elif item == "count":
            ops.append(str(ins.imm))
        elif item == "advance" and ins.a:
            ops.append(str(ins.a))
    text = f"{mnemonic} {', '.join(ops)}".rstrip()
    if form is Form.DFLOW and ins.dst_hand:  # the written hand (Variant.HANDS); hand s is not written out
        text += f" -> {HAND_NAMES[ins.dst_hand]}"
    return text


def disassemble_kernel(kernel: Kernel) -> str:
    labels = dict(kernel.labels)
    taken = set(labels.values())
    for ins in kernel.code:
        if "target" in SPECS[ins.op].syntax.value and ins.imm not in labels:
            name = f"L{ins.imm}"
            while name in taken:  # a label of the kernel already has that name (at another pc)
                name += "_"
            labels[ins.imm] = name
            taken.add(name)
    lines = [f".kernel {kernel.name}", f".form {kernel.form.value}"]
    if kernel.params:
        lines.append(".param " + " ".join(kernel.params))
    if kernel.shared_bytes:
        lines.append(f".shared {kernel.shared_bytes}")
    if kernel.local_bytes:
        lines.append(f".local {kernel.local_bytes}")
    if kernel.form is Form.REG:
        lines.append(f".regs {kernel.regs}")
    else:
        lines.append(".ring " + " ".join(map(str, kernel.rings)))
        lines.append(f".dmax {kernel.dmax}")
        if kernel.variants:
            lines.append(".variant " + " ".join(sorted(v.value for v in kernel.variants)))
    for pc, ins in enumerate(kernel.code):
        if pc in labels:
            lines.append(f"{labels[pc]}:")
        lines.append(f"    {format_instruction(ins, kernel.form, labels, kernel.params):<40}; {pc}")
    return "\n".join(lines) + "\n"


def disassemble(module: Module) -> str:
    return "\n".join(disassemble_kernel(k) for k in module)

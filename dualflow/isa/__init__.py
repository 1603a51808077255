"""The Dualflow SIMT instruction set: one definition (``opcodes``, ``encoding``), two operand
forms (REG and DFLOW), the assembler and the disassembler. Specification: docs/isa.md."""

from .assembler import assemble, assemble_file
from .disassembler import disassemble, disassemble_kernel, format_instruction
from .encoding import FIELDS, Instruction
from .kernel import DEFAULT_DMAX, DEFAULT_RING, Kernel, Module
from .opcodes import SPECS, Cmp, Form, Opcode, SpecialReg, UnitClass, Variant

__all__ = [
    "assemble", "assemble_file", "disassemble", "disassemble_kernel", "format_instruction",
    "FIELDS", "Instruction", "DEFAULT_DMAX", "DEFAULT_RING", "Kernel", "Module",
    "SPECS", "Cmp", "Form", "Opcode", "SpecialReg", "UnitClass", "Variant",
]

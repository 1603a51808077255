"""The front end's intermediate form: our ISA's instructions over unbounded virtual registers.

``lower`` writes it from PTX, ``reconverge`` adds ``ssy``/``sync``, ``regalloc`` replaces the
virtual registers by the REG form's, ``emit`` prints it. An operand is a virtual register name
(a string), ``RZ`` (the zero register) or, where the syntax allows an immediate, an int (the
32-bit pattern).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dualflow.isa.opcodes import SPECS, Opcode

RZ = "rz"


@dataclass
class Op:
    """One instruction of our ISA; ``srcs`` in the order of ``SPECS[opcode].sources``."""

    opcode: Opcode
    dst: str | None = None
    srcs: list[str | int] = field(default_factory=list)
    mod: int = 0  #: compare condition, special register or vote mode
    offset: int = 0  #: memory offset or ``ldc`` byte offset
    target: str | None = None  #: label of a branch or ``ssy``
    line: int = 0  #: PTX line it came from (0: made by the front end)

    @property
    def spec(self):
        return SPECS[self.opcode]

    def registers_read(self) -> list[str]:
        return [s for s in self.srcs if isinstance(s, str) and s != RZ]


@dataclass
class LabelMark:
    name: str


Item = Op | LabelMark


@dataclass
class Function:
    """One kernel in the intermediate form."""

    name: str
    params: list[str]
    shared_bytes: int
    local_bytes: int
    items: list[Item]
    ptx_instructions: int
    spill_base: int = 0  #: first local byte the register allocator may use for spills

"""The instruction set, defined once.

Every opcode's number, mnemonic, operand syntax, unit class, whether it produces a value
(and so advances the DFLOW register pointer), and how it affects control flow, issue and the
converter's address analysis is in the table ``SPECS`` below. The assembler,
the disassembler, the functional and timing models and the RTL decoder all read this table;
nothing else in the project may restate it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Form(enum.Enum):
    """Operand form of a kernel: the same opcodes and encodings, two ways of naming operands."""

    REG = "reg"  #: sources and destination name per-thread registers (the BASE GPU)
    DFLOW = "dflow"  #: sources name producer distances; the destination is the ring slot at RP


class UnitClass(enum.Enum):
    """Execution-unit class of an opcode, used for statistics and by the timing models."""

    INT = "int"  #: integer ALU (also moves and special-register reads)
    FP = "fp"  #: FP32 add/mul/fma/min/max/compare/conversions
    SFU = "sfu"  #: special function unit: FP32 divide and square root
    MEM = "mem"  #: loads and stores (global, shared, local, parameter)
    CTRL = "ctrl"  #: branches, reconvergence, barriers, exit, register-pointer control


class ModKind(enum.Enum):
    """What the 4-bit ``mod`` field of an opcode means."""

    NONE = "none"
    CMP = "cmp"  #: comparison condition (``Cmp``)
    SREG = "sreg"  #: special register (``SpecialReg``)
    VOTE = "vote"  #: vote mode (``VoteMode``)
    COLOR = "color"  #: memory-ordering color 0..15 (DFLOW memory ordering)


class Cmp(enum.IntEnum):
    """Comparison conditions. Unordered variants (``*u``) are true when either input is NaN."""

    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5
    EQU = 6
    NEU = 7
    LTU = 8
    LEU = 9
    GTU = 10
    GEU = 11
    NUM = 12  #: neither input is NaN
    NAN = 13  #: either input is NaN


#: Conditions an integer compare accepts (unordered ones are meaningless for integers).
INT_CMPS = frozenset({Cmp.EQ, Cmp.NE, Cmp.LT, Cmp.LE, Cmp.GT, Cmp.GE})


class SpecialReg(enum.IntEnum):
    """Special registers read by ``s2r``. Thread and block indices follow CUDA's meaning."""

    TID_X = 0
    TID_Y = 1
    TID_Z = 2
    NTID_X = 3
    NTID_Y = 4
    NTID_Z = 5
    CTAID_X = 6
    CTAID_Y = 7
    CTAID_Z = 8
    NCTAID_X = 9
    NCTAID_Y = 10
    NCTAID_Z = 11
    LANEID = 12  #: lane index within the warp
    WARPID = 13  #: warp index within the block
    NWARPID = 14  #: warps per block

    @property
    def asm_name(self) -> str:
        return "%" + self.name.lower().replace("_", ".")


#: Kernel parameter words a uniform operand can name (``Variant.UNIFORM_OPERANDS``): field values
#: 0 .. UNIFORM_PARAM_WORDS - 1 are the 32-bit words of the parameter block, as ``ldc [4 * w]``
#: reads them.
UNIFORM_PARAM_WORDS = 64
#: Special registers a uniform operand can name, field value UNIFORM_PARAM_WORDS + index: those
#: whose value is the same in every lane of a warp (not ``%tid.*`` or ``%laneid``). Written out,
#: not derived, so that a special register added later does not renumber these.
UNIFORM_SREGS: tuple[SpecialReg, ...] = (
    SpecialReg.NTID_X, SpecialReg.NTID_Y, SpecialReg.NTID_Z,
    SpecialReg.CTAID_X, SpecialReg.CTAID_Y, SpecialReg.CTAID_Z,
    SpecialReg.NCTAID_X, SpecialReg.NCTAID_Y, SpecialReg.NCTAID_Z,
    SpecialReg.WARPID, SpecialReg.NWARPID,
)


def uniform_operand(field: int) -> int | SpecialReg | None:
    """What a uniform operand field names: a parameter word (an int), a special register, or
    None when the value names nothing."""
    if 0 <= field < UNIFORM_PARAM_WORDS:
        return field
    if 0 <= field - UNIFORM_PARAM_WORDS < len(UNIFORM_SREGS):
        return UNIFORM_SREGS[field - UNIFORM_PARAM_WORDS]
    return None


def uniform_field(value: int | SpecialReg) -> int | None:
    """The uniform operand field that names a parameter word (an int) or a special register;
    None if none can (a word past UNIFORM_PARAM_WORDS, a per-lane special register)."""
    if isinstance(value, SpecialReg):
        return UNIFORM_PARAM_WORDS + UNIFORM_SREGS.index(value) if value in UNIFORM_SREGS else None
    return value if 0 <= value < UNIFORM_PARAM_WORDS else None


class VoteMode(enum.IntEnum):
    """Warp vote: every active lane receives the same result."""

    ANY = 0  #: 1 if the source is non-zero in any active lane
    ALL = 1  #: 1 if the source is non-zero in every active lane
    BALLOT = 2  #: bit i set if the source is non-zero in active lane i


class BranchIf(enum.Enum):
    """When a conditional branch is taken, per lane, from the value of its source A."""

    NONZERO = "nonzero"  #: ``brnz``
    ZERO = "zero"  #: ``brz``


class Syntax(enum.Enum):
    """Operand syntax of an opcode (after the optional REG-form destination).

    Letters name the encoding fields: ``a``, ``b``, ``c`` are source operands, ``bi`` is
    source B or a 32-bit immediate, ``mem`` is ``[a+imm16]``, ``target`` is a branch label.
    Each member's value is the tuple of its items (``NONE``: the empty tuple).
    """

    def __new__(cls, *items: str) -> Syntax:
        # The value is set explicitly: Python 3.11.0-3.11.? (Debian 12 ships 3.11.2) turn a member
        # written `= ()` into an `object()` sentinel under the default enum machinery.
        member = object.__new__(cls)
        member._value_ = tuple(items)
        return member

    NONE = ()
    A = ("a",)
    BI = ("bi",)
    A_BI = ("a", "bi")
    A_B_C = ("a", "b", "c")
    SREG = ("sreg",)
    PARAM = ("param",)  #: ``[byte offset]`` or a parameter name
    LOAD = ("mem",)
    STORE = ("mem", "b")
    TARGET = ("target",)
    A_TARGET = ("a", "target")
    COUNT = ("count",)  #: a positive immediate count
    #: ``ssy``: a label and, with ``Variant.RESERVED_SSY``, an optional reserved advance in field A
    TARGET_ADVANCE = ("target", "advance")


class Variant(enum.Enum):
    """Named options of the DFLOW form a kernel declares with ``.variant`` (docs/isa.md,
    "Variants"). Each adds what the variant's instructions need and nothing to the others."""

    #: ``ssy L, k`` (field A = k, 0..255): the SYNC entry starts at RP + k, so the join's RP is at
    #: least RP + k whichever paths ran, and a shorter path needs no ``rpinc`` before its ``sync``
    RESERVED_SSY = "reserved-ssy"
    #: A source field with its uniform flag set (bits 11:9 of the word) names a value held once
    #: per warp instead of a distance: a kernel parameter word or a uniform special register
    #: (``uniform_operand``). It takes no ring slot, no register-bank read and no dependency.
    UNIFORM_OPERANDS = "uniform-operands"
    #: Clockhands-style multiple rings: ``.ring N0 ..`` declares 1 to ``MAX_HANDS`` rings per warp,
    #: "hands" ``s t u v``, each with its own register pointer. A producer writes the hand its
    #: written-hand selector names and advances that hand's RP only; a source names a hand and a
    #: distance back on it (the hand selectors in the dst field, ``encoding.HAND_FIELDS``).
    HANDS = "hands"


#: Most hands (rings per warp) a kernel of ``Variant.HANDS`` declares: a hand selector is 2 bits.
MAX_HANDS = 4
#: Assembler names of hands 0..3 (Clockhands's letters): ``|t3|`` reads hand t, ``-> t`` writes it.
HAND_NAMES = ("s", "t", "u", "v")


@dataclass(frozen=True)
class OpSpec:
    """One row of the instruction-set table.

    Attributes
    ----------
    code: the 8-bit opcode number.
    mnemonic: base assembler name (a ``.mod`` suffix may follow, see ``mod``).
    syntax: operand syntax (``Syntax``).
    unit: execution-unit class.
    produces: writes a value: has a REG destination and, in DFLOW form, writes the ring slot at
        RP and advances RP by one. Non-producers never touch RP, except ``rpinc``.
    mod: meaning of the ``mod`` field.
    forms: operand forms in which the opcode is legal.
    redirects: the next pc is only known once the instruction executes (a branch target, a
        reconvergence point, the next path of a diverged warp, or none): fetch stops after it,
        and it ends a basic block (the converter's control-flow graph). ``bra``, ``brnz``,
        ``brz``, ``sync``, ``exit``.
    issue_only: does all its work at issue (stack push, RP bump, barrier arrival, fence, nothing):
        the timing model gives it no collector unit and no execution unit. ``nop``, ``rpinc``,
        ``ssy``, ``bar``, ``membar``.
    branch_if: a conditional branch, taken in a lane when its source A is non-zero
        (``BranchIf.NONZERO``, ``brnz``) or zero (``BranchIf.ZERO``, ``brz``); None otherwise.
    merges_address: the result is based on the same kernel parameter as its sources: integer
        arithmetic through which a pointer plus an offset stays a pointer into the same
        allocation (the converter's memory-ordering colors, dualflow/isa/convert/colors.py).
    """

    code: int
    mnemonic: str
    syntax: Syntax
    unit: UnitClass
    produces: bool
    mod: ModKind = ModKind.NONE
    forms: frozenset[Form] = frozenset({Form.REG, Form.DFLOW})
    redirects: bool = False
    issue_only: bool = False
    branch_if: BranchIf | None = None
    merges_address: bool = False

    def __post_init__(self) -> None:
        if self.conditional and not (self.redirects and "a" in self.syntax.value):
            raise ValueError(f"{self.mnemonic}: a conditional branch redirects and reads source A")

    @property
    def conditional(self) -> bool:
        """A conditional branch (``brnz``, ``brz``): taken in some lanes, not in others."""
        return self.branch_if is not None

    @property
    def jumps(self) -> bool:
        """A branch to its label (``bra``, ``brnz``, ``brz``): a redirect with a target operand."""
        return self.redirects and self.has_target

    @property
    def has_target(self) -> bool:
        """Names a label (branches and ``ssy``): its immediate is a pc of the kernel."""
        return "target" in self.syntax.value

    @property
    def falls_through(self) -> bool:
        """The next instruction in program order may follow it (all but ``bra``, ``sync``, ``exit``)."""
        return not self.redirects or self.conditional

    @property
    def conditions(self) -> frozenset[Cmp]:
        """Conditions a compare accepts: the ordered six on the integer unit (unordered ones are
        meaningless for integers), all of ``Cmp`` on the FP unit; empty for other opcodes."""
        if self.mod is not ModKind.CMP:
            return frozenset()
        return INT_CMPS if self.unit is UnitClass.INT else frozenset(Cmp)

    @property
    def suffixes(self) -> dict[int, str]:
        """Assembler ``.suffix`` text of each ``mod`` value this opcode accepts."""
        names = mod_names(self.mod)
        if self.mod is ModKind.CMP:
            return {m: t for m, t in names.items() if Cmp(m) in self.conditions}
        return names

    @property
    def sources(self) -> tuple[str, ...]:
        """Encoding fields read as source operands, in order ("a", "b", "c")."""
        out = []
        for item in self.syntax.value:
            if item in ("a", "b", "c"):
                out.append(item)
            elif item == "bi":
                out.append("b")
            elif item == "mem":
                out.append("a")
        return tuple(out)


class Opcode(enum.IntEnum):
    """Opcode numbers. The table ``SPECS`` gives each one's properties."""

    NOP = 0x00
    MOV = 0x01
    S2R = 0x02
    LDC = 0x03
    SELP = 0x04
    VOTE = 0x05
    # integer ALU
    IADD = 0x10
    ISUB = 0x11
    IMUL = 0x12
    IMAD = 0x13
    IAND = 0x14
    IOR = 0x15
    IXOR = 0x16
    INOT = 0x17
    ISHL = 0x18
    ISHR = 0x19
    ISRA = 0x1A
    IMIN = 0x1B
    IMAX = 0x1C
    UMIN = 0x1D
    UMAX = 0x1E
    ISETP = 0x1F
    USETP = 0x20
    # FP32
    FADD = 0x30
    FSUB = 0x31
    FMUL = 0x32
    FFMA = 0x33
    FMIN = 0x34
    FMAX = 0x35
    FSETP = 0x36
    I2F = 0x37
    U2F = 0x38
    F2I = 0x39
    F2U = 0x3A
    FDIV = 0x3B
    FSQRT = 0x3C
    # memory
    LDG = 0x40
    STG = 0x41
    LDS = 0x42
    STS = 0x43
    LDL = 0x44
    STL = 0x45
    # control
    BRA = 0x50
    BRNZ = 0x51
    BRZ = 0x52
    SSY = 0x53
    SYNC = 0x54
    BAR = 0x55
    MEMBAR = 0x56
    EXIT = 0x57
    RPINC = 0x58


_I, _F, _S, _M, _C = UnitClass.INT, UnitClass.FP, UnitClass.SFU, UnitClass.MEM, UnitClass.CTRL
_DFLOW_ONLY = frozenset({Form.DFLOW})


def _row(op: Opcode, syntax: Syntax, unit: UnitClass, produces: bool, mod: ModKind = ModKind.NONE,
         **properties) -> OpSpec:
    return OpSpec(code=int(op), mnemonic=op.name.lower(), syntax=syntax, unit=unit, produces=produces,
                  mod=mod, **properties)


_TABLE = [
    # opcode, syntax, unit, produces, mod kind, then the OpSpec properties that differ from the default
    _row(Opcode.NOP, Syntax.NONE, _I, False, issue_only=True),
    _row(Opcode.MOV, Syntax.BI, _I, True, merges_address=True),
    _row(Opcode.S2R, Syntax.SREG, _I, True, ModKind.SREG),
    _row(Opcode.LDC, Syntax.PARAM, _M, True),
    _row(Opcode.SELP, Syntax.A_B_C, _I, True, merges_address=True),
    _row(Opcode.VOTE, Syntax.A, _I, True, ModKind.VOTE),
    _row(Opcode.IADD, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.ISUB, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.IMUL, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.IMAD, Syntax.A_B_C, _I, True, merges_address=True),
    _row(Opcode.IAND, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.IOR, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.IXOR, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.INOT, Syntax.A, _I, True),
    _row(Opcode.ISHL, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.ISHR, Syntax.A_BI, _I, True),
    _row(Opcode.ISRA, Syntax.A_BI, _I, True),
    _row(Opcode.IMIN, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.IMAX, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.UMIN, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.UMAX, Syntax.A_BI, _I, True, merges_address=True),
    _row(Opcode.ISETP, Syntax.A_BI, _I, True, ModKind.CMP),
    _row(Opcode.USETP, Syntax.A_BI, _I, True, ModKind.CMP),
    _row(Opcode.FADD, Syntax.A_BI, _F, True),
    _row(Opcode.FSUB, Syntax.A_BI, _F, True),
    _row(Opcode.FMUL, Syntax.A_BI, _F, True),
    _row(Opcode.FFMA, Syntax.A_B_C, _F, True),
    _row(Opcode.FMIN, Syntax.A_BI, _F, True),
    _row(Opcode.FMAX, Syntax.A_BI, _F, True),
    _row(Opcode.FSETP, Syntax.A_BI, _F, True, ModKind.CMP),
    _row(Opcode.I2F, Syntax.A, _F, True),
    _row(Opcode.U2F, Syntax.A, _F, True),
    _row(Opcode.F2I, Syntax.A, _F, True),
    _row(Opcode.F2U, Syntax.A, _F, True),
    _row(Opcode.FDIV, Syntax.A_BI, _S, True),
    _row(Opcode.FSQRT, Syntax.A, _S, True),
    _row(Opcode.LDG, Syntax.LOAD, _M, True, ModKind.COLOR),
    _row(Opcode.STG, Syntax.STORE, _M, False, ModKind.COLOR),
    _row(Opcode.LDS, Syntax.LOAD, _M, True, ModKind.COLOR),
    _row(Opcode.STS, Syntax.STORE, _M, False, ModKind.COLOR),
    _row(Opcode.LDL, Syntax.LOAD, _M, True, ModKind.COLOR),
    _row(Opcode.STL, Syntax.STORE, _M, False, ModKind.COLOR),
    _row(Opcode.BRA, Syntax.TARGET, _C, False, redirects=True),
    _row(Opcode.BRNZ, Syntax.A_TARGET, _C, False, redirects=True, branch_if=BranchIf.NONZERO),
    _row(Opcode.BRZ, Syntax.A_TARGET, _C, False, redirects=True, branch_if=BranchIf.ZERO),
    _row(Opcode.SSY, Syntax.TARGET_ADVANCE, _C, False, issue_only=True),
    _row(Opcode.SYNC, Syntax.NONE, _C, False, redirects=True),
    _row(Opcode.BAR, Syntax.NONE, _C, False, issue_only=True),
    _row(Opcode.MEMBAR, Syntax.NONE, _C, False, issue_only=True),
    _row(Opcode.EXIT, Syntax.NONE, _C, False, redirects=True),
    _row(Opcode.RPINC, Syntax.COUNT, _C, False, forms=_DFLOW_ONLY, issue_only=True),
]

SPECS: dict[Opcode, OpSpec] = {Opcode(spec.code): spec for spec in _TABLE}
assert set(SPECS) == set(Opcode), "every opcode needs a row in the table"

BY_MNEMONIC: dict[str, Opcode] = {spec.mnemonic: op for op, spec in SPECS.items()}

#: Memory opcodes by address space.
LOADS = {Opcode.LDG: "global", Opcode.LDS: "shared", Opcode.LDL: "local"}
STORES = {Opcode.STG: "global", Opcode.STS: "shared", Opcode.STL: "local"}

#: Number of memory-ordering colors (the ``mod`` field is 4 bits wide).
NUM_COLORS = 16


def mod_names(kind: ModKind) -> dict[int, str]:
    """Assembler suffix text for each value of a ``mod`` field of the given kind."""
    if kind is ModKind.CMP:
        return {int(c): c.name.lower() for c in Cmp}
    if kind is ModKind.VOTE:
        return {int(v): v.name.lower() for v in VoteMode}
    if kind is ModKind.COLOR:
        return {i: f"c{i}" for i in range(NUM_COLORS)}
    return {}

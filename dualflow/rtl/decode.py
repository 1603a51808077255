"""Instruction decoder, generated from the one instruction-set definition.

Nothing here restates an opcode: the opcode and unit enums, the per-opcode properties and the
field legality rules are all built from ``isa.opcodes.SPECS`` and the word layout from
``isa.encoding.FIELDS``. A decoded instruction is a ``data.Struct`` view (``DecodedLayout``);
the decoder is purely combinational.

Illegal words (unknown opcode, a field the opcode does not use, an undefined ``mod`` value,
``rpinc`` or an ``ssy`` advance in a BASE core, a uniform-operand flag in a core built without
``Variant.UNIFORM_OPERANDS``) raise ``illegal``. A core built with it (``CoreParams.uniform_operands``)
takes a flag where ``Instruction.check_fields`` does: on a field of ``OpSpec.sources`` (not B when
it is the 32-bit immediate) whose value names something (0..``UNIFORM_MAX``); the flags are passed
on as ``uniform`` and the field keeps its value (``ring_field`` is the field as a ring source).

In a DFLOW core the dst field holds the hand selectors of ``Variant.HANDS``
(``isa.encoding.HAND_FIELDS``): with one hand (the original form) any non-zero dst field is
illegal; with ``hands`` > 1 a selector is legal where ``Instruction.check_form`` allows it (the
written hand on a producer, ``rpinc`` or an ``ssy`` with a reserved advance; a source's hand on a
source the opcode reads from the ring) and names a hand below ``hands``.
"""


import types

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from dualflow.isa.encoding import FIELDS, HAND_FIELDS, UNIFORM_FLAG, UNIFORM_MAX, WORD_BITS
from dualflow.isa.opcodes import (
    INT_CMPS,
    LOADS,
    SPECS,
    STORES,
    Cmp,
    Form,
    ModKind,
    Opcode,
    SpecialReg,
    UnitClass,
    Variant,
    VoteMode,
)
from dualflow.rtl._checks import reject


def _hw_enum(name: str, members: dict[str, int], width: int) -> type[enum.Enum]:
    """An Amaranth enum with an explicit shape, built from a table (the functional API of
    Python's enum cannot pass ``shape``)."""
    return types.new_class(name, (enum.Enum,), {"shape": unsigned(width)},
                           lambda ns: [ns.__setitem__(k, v) for k, v in members.items()])


#: The DFLOW variants every DFLOW core implements (random-program campaigns convert with these,
#: and with ``Variant.UNIFORM_OPERANDS`` for a core built with it: ``core_variants``).
#: ``Variant.HANDS`` is implemented by a core built with hands (``CoreParams.rings``); the converter
#: does not emit it.
VARIANTS = frozenset({Variant.RESERVED_SSY})


#: The DFLOW variants a DFLOW core may run (co-simulation refuses kernels that use others,
#: dualflow/testbench/cosim.py ``check_case``): ``VARIANTS``, ``Variant.HANDS`` for a kernel whose rings
#: are the core's (``CoreParams.ring_sizes``; with one ring, every selector of the kernel is 0) and
#: ``Variant.UNIFORM_OPERANDS`` in a core built with it (``core_variants``).
CORE_VARIANTS = VARIANTS | {Variant.HANDS, Variant.UNIFORM_OPERANDS}


def core_variants(params) -> frozenset[Variant]:
    """The DFLOW variants a DFLOW core of ``params`` (``CoreParams``) runs: ``CORE_VARIANTS``
    without ``Variant.UNIFORM_OPERANDS`` unless it is built with them."""
    return CORE_VARIANTS if params.uniform_operands else CORE_VARIANTS - {Variant.UNIFORM_OPERANDS}


def decoded_layout(params) -> "DecodedLayout":
    """The decoded-instruction layout of a core of ``params`` (``CoreParams``)."""
    return DecodedLayout(distance_operands=params.mode.form is Form.DFLOW, uniform=params.uniform_operands)


def ring_field(decoded, name: str):
    """Source field ``name`` ("a", "b", "c") of a decoded instruction as a ring (or register)
    source: its value, 0 (no ring read) when it is a uniform operand."""
    field = getattr(decoded, name)
    if "uniform" not in dict(decoded.shape()):
        return field
    return Mux(decoded.uniform[UNIFORM_FLAG[name].bit_length() - 1], 0, field)


def hand_selector(decoded, name: str):
    """The hand selector ``name`` ("write", "a", "b", "c"; ``HAND_FIELDS``) of a decoded
    instruction's raw ``dst`` field (DFLOW)."""
    lsb, width = HAND_FIELDS[name]
    lsb -= FIELDS["dst"][0]
    return decoded.dst[lsb:lsb + width]

#: Opcodes as an 8-bit Amaranth enum, members named and numbered as ``isa.opcodes.Opcode``.
Op = _hw_enum("Op", {op.name: int(op) for op in Opcode}, FIELDS["op"][1])
#: Unit classes, numbered in the order ``UnitClass`` declares them.
UNIT_CODES: dict[UnitClass, int] = {u: i for i, u in enumerate(UnitClass)}
Unit = _hw_enum("Unit", {u.name: i for u, i in UNIT_CODES.items()}, max(1, (len(UnitClass) - 1).bit_length()))
#: Address space of a memory opcode.
SPACE_CODES = {"global": 0, "shared": 1, "local": 2}
Space = _hw_enum("Space", {k.upper(): v for k, v in SPACE_CODES.items()}, 2)


def _width(name: str) -> int:
    return FIELDS[name][1]


class DecodedLayout(data.StructLayout):
    """One decoded instruction (``distance_operands``: of a DFLOW-form core, which has ``advance``).

    Members
    -------
    op: opcode (``Op``). unit: unit class (``Unit``). produces: writes a value (and, in DFLOW,
    advances RP). mod: raw ``mod`` field. dst: raw destination field (REG: register + 1).
    a, b, c: raw source fields, forced to 0 when the opcode does not read them (b also when
    ``bimm``), so "field != 0" means "operand present" in both forms. advance (DFLOW only):
    ``ssy``'s reserved advance (field A, ``Variant.RESERVED_SSY``; not a source), else 0. imm: the 32-bit
    immediate when ``bimm``, else the sign-extended 16-bit memory offset. bimm: source B is
    ``imm``. is_load, is_store, space: memory access kind. illegal: the word is not a valid
    instruction for this core. uniform (``uniform``, a core with ``Variant.UNIFORM_OPERANDS``
    only): the word's flags (bit 0: A, 1: B, 2: C); a flagged field is a uniform operand.
    """

    def __init__(self, *, distance_operands: bool = False, uniform: bool = False):
        super().__init__({
            "op": Op, "unit": Unit, "produces": 1, "mod": _width("mod"), "dst": _width("dst"),
            "a": _width("a"), "b": _width("b"), "c": _width("c"),
            **({"advance": _width("a")} if distance_operands else {}),
            "imm": 32, "bimm": 1, "is_load": 1, "is_store": 1, "space": Space, "illegal": 1,
            **({"uniform": _width("uniform")} if uniform else {}),
        })


def _legal_mods(op: Opcode) -> set[int]:
    """Values of ``mod`` the opcode defines (the same rule as ``Instruction.check_fields``)."""
    kind = SPECS[op].mod
    if kind is ModKind.NONE:
        return {0}
    if kind is ModKind.COLOR:
        return set(range(1 << _width("mod")))
    if kind is ModKind.CMP:
        return {int(c) for c in (INT_CMPS if op in (Opcode.ISETP, Opcode.USETP) else Cmp)}
    if kind is ModKind.VOTE:
        return {int(v) for v in VoteMode}
    return {int(r) for r in SpecialReg}


class Decoder(wiring.Component):
    """Combinational instruction decoder.

    Parameters
    ----------
    distance_operands: decode the DFLOW form (``rpinc`` and the advance of ``ssy`` are legal only there).
    hands: DFLOW, the core's hands (``CoreParams.hands``): hand selectors are legal with more than one.
    uniform: DFLOW, the core implements ``Variant.UNIFORM_OPERANDS`` (``CoreParams.uniform_operands``).

    Members
    -------
    word: In(64), the instruction word.
    out: Out(DecodedLayout(distance_operands=distance_operands, uniform=uniform)), the decoded instruction.
    """

    def __init__(self, *, distance_operands: bool, hands: int = 1, uniform: bool = False):
        if not isinstance(distance_operands, bool):
            raise reject(self, f"distance_operands must be a bool, not {distance_operands!r}")
        if type(hands) is not int or not 1 <= hands <= 4 or (hands > 1 and not distance_operands):
            raise reject(self, f"hands must be 1 (BASE) or 1..4 (DFLOW), not {hands!r}")
        if not isinstance(uniform, bool) or (uniform and not distance_operands):
            raise reject(self, f"uniform must be a bool, True only in DFLOW, not {uniform!r}")
        self.distance_operands, self.hands, self.uniform = distance_operands, hands, uniform
        layout = DecodedLayout(distance_operands=distance_operands, uniform=uniform)
        super().__init__({"word": In(WORD_BITS), "out": Out(layout)})

    def elaborate(self, platform) -> Module:
        m = Module()
        word, out = self.word, self.out

        def field(name: str):
            lsb, width = FIELDS[name]
            return word[lsb:lsb + width]

        raw = {name: field(name) for name in FIELDS}
        bimm = raw["bimm"]
        imm16 = raw["imm16"].as_signed()
        m.d.comb += [
            out.op.eq(raw["op"]), out.mod.eq(raw["mod"]), out.dst.eq(raw["dst"]), out.bimm.eq(bimm),
            out.imm.eq(Mux(bimm, raw["imm32"], imm16)),
        ]
        bad_fields = Signal()
        with m.Switch(raw["op"]):
            for op, spec in SPECS.items():
                items = spec.syntax.value
                reads_a = "a" in items or "mem" in items
                reads_b = "b" in items or "bi" in items
                reads_c = "c" in items
                advance = "advance" in items and self.distance_operands  # field A, not a source
                needs_imm = any(i in items for i in ("target", "param", "count"))
                with m.Case(int(op)):
                    m.d.comb += [
                        out.unit.eq(UNIT_CODES[spec.unit]),
                        out.produces.eq(spec.produces),
                        out.a.eq(raw["a"] if reads_a else 0),
                        out.b.eq(Mux(bimm, 0, raw["b"]) if reads_b else 0),
                        out.c.eq(Mux(bimm, 0, raw["c"]) if reads_c else 0),
                        *([out.advance.eq(raw["a"] if advance else 0)] if self.distance_operands else []),
                        out.is_load.eq(op in LOADS), out.is_store.eq(op in STORES),
                        out.space.eq(SPACE_CODES[LOADS.get(op) or STORES.get(op) or "global"]),
                    ]
                    mods = _legal_mods(op)
                    mod_ok = 1 if len(mods) == 1 << _width("mod") else 0
                    for v in sorted(mods):
                        mod_ok = mod_ok | (raw["mod"] == v)
                    checks = [~mod_ok]
                    if self.hands > 1:  # Variant.HANDS: the selectors' rules (Instruction.check_form)
                        sel = {name: hand_selector(out, name) for name in HAND_FIELDS}
                        names_hand = spec.produces or op is Opcode.RPINC
                        if op is Opcode.SSY and advance:
                            names_hand = raw["a"] != 0
                        if names_hand is not True:
                            checks.append(~names_hand & (sel["write"] != 0) if names_hand is not False
                                          else sel["write"] != 0)
                        for name in ("a", "b", "c"):  # 0 unless a ring source is there
                            checks.append((sel[name] != 0) & (ring_field(out, name) == 0))
                        if self.hands < 4:
                            checks += [s >= self.hands for s in sel.values()]
                    elif not spec.produces or self.distance_operands:  # DFLOW: any hand selector (one hand)
                        checks.append(raw["dst"] != 0)
                    if not reads_a and not advance:
                        checks.append(raw["a"] != 0)
                    if not reads_b:
                        checks.append(~bimm & (raw["b"] != 0))
                    if not reads_c:
                        checks.append(~bimm & (raw["c"] != 0))
                    if needs_imm:
                        checks.append(~bimm)
                    elif "bi" not in items:
                        checks.append(bimm)
                    if "mem" not in items:
                        checks.append(~bimm & (raw["imm16"] != 0))
                    if not self.distance_operands and op is Opcode.RPINC:
                        checks.append(1)
                    if self.uniform:  # Variant.UNIFORM_OPERANDS: Instruction.check_fields's rule
                        for name, bit in UNIFORM_FLAG.items():
                            flag = raw["uniform"][bit.bit_length() - 1]
                            if name not in spec.sources:
                                checks.append(flag)
                            else:
                                checks.append(flag & ((bimm if name == "b" else 0) | (raw[name] > UNIFORM_MAX)))
                    bad = 0
                    for c in checks:
                        bad = bad | c
                    m.d.comb += bad_fields.eq(bad)
            with m.Default():
                m.d.comb += bad_fields.eq(1)
        if self.uniform:
            m.d.comb += [out.illegal.eq(bad_fields), out.uniform.eq(raw["uniform"])]
        else:  # a core without the variant
            m.d.comb += out.illegal.eq(bad_fields | (raw["uniform"] != 0))
        return m

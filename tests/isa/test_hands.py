"""The ``hands`` variant of the DFLOW form (docs/isa.md, "Variants"): 1 to 4 rings per warp
("hands" s t u v), each with its own register pointer; a producer writes the hand it names, a
source reads a distance back on the hand it names (Clockhands-style)."""

from __future__ import annotations

import dataclasses
import json
import random
import struct

import numpy as np
import pytest
from programs import hands_divergent, hands_loop, hands_source, hands_unwritten_read, launch_out

from dualflow.common.errors import AsmError, KernelFault
from dualflow.isa import FIELDS, Form, Instruction, Kernel, Module, Opcode, Variant, assemble, disassemble
from dualflow.isa.encoding import HAND_FIELDS, UNIFORM_FLAG, EncodingError
from dualflow.isa.kernel import KernelError
from dualflow.isa.opcodes import HAND_NAMES, MAX_HANDS, SPECS
from dualflow.models.trace import FIELDS as TRACE_FIELDS
from dualflow.models.trace import HAND_FIELDS as TRACE_HAND_FIELDS
from dualflow.models.trace import Trace

HANDS = frozenset({Variant.HANDS})


def _selectors(write=0, a=0, b=0, c=0) -> int:
    """The dst field holding these hand selectors (HAND_FIELDS)."""
    base = FIELDS["dst"][0]
    return sum(h << (HAND_FIELDS[name][0] - base) for name, h in (("write", write), ("a", a), ("b", b), ("c", c)))


# ------------------------------------------------------------------ encoding
def test_layout_is_the_dst_field_in_four_two_bit_selectors():
    assert HAND_FIELDS == {"write": (16, 2), "a": (18, 2), "b": (20, 2), "c": (22, 2)}
    assert FIELDS["dst"] == (16, 8) and MAX_HANDS == 4 and HAND_NAMES == ("s", "t", "u", "v")


@pytest.mark.parametrize("name", ["write", "a", "b", "c"])
@pytest.mark.parametrize("hand", [1, 2, 3])
def test_every_selector_position_encodes_and_decodes(name, hand):
    ins = Instruction(Opcode.IMAD, dst=_selectors(**{name: hand}), a=1, b=2, c=3)
    word = ins.encode()
    lsb, width = HAND_FIELDS[name]
    assert (word >> lsb) & ((1 << width) - 1) == hand
    assert word & ~(((1 << width) - 1) << lsb) == Instruction(Opcode.IMAD, a=1, b=2, c=3).encode()
    back = Instruction.decode(word, Form.DFLOW)
    assert back == ins and back.hand_of(name) == hand
    assert [back.hand_of(n) for n in HAND_FIELDS if n != name] == [0, 0, 0]
    assert (back.dst_hand == hand) == (name == "write")


def test_hand_sources_and_source_fields():
    ins = Instruction(Opcode.IMAD, dst=_selectors(write=3, a=1, b=2), a=1, b=2, c=3)
    assert ins.hand_sources() == [(1, 1), (2, 2), (0, 3)]
    assert ins.source_fields() == [1, 2, 3]  # unchanged: distances only
    uni = Instruction(Opcode.IMAD, dst=_selectors(b=1), a=64, b=2, c=0, uniform=UNIFORM_FLAG["a"])
    assert uni.hand_sources() == [(1, 2)] and uni.source_fields() == [2]
    imm = Instruction(Opcode.IADD, dst=_selectors(a=2), a=4, bimm=True, imm=9)
    assert imm.hand_sources() == [(2, 4)]
    plain = Instruction(Opcode.SELP, a=3, b=1, c=2)  # the original form: all on hand s
    assert plain.hand_sources() == [(0, d) for d in plain.source_fields()]


@pytest.mark.parametrize("ins, message", [
    (Instruction(Opcode.MOV, dst=_selectors(a=1), b=1), "hand selector t on source A, which it does not read"),
    (Instruction(Opcode.INOT, dst=_selectors(c=2), a=1), "hand selector u on source C, which it does not read"),
    (Instruction(Opcode.STG, dst=0, a=1, b=1), None),  # a store reads A and B: no selector, fine
    (Instruction(Opcode.IADD, dst=_selectors(b=1), a=1, b=0), "source B, which is zero"),
    (Instruction(Opcode.IADD, dst=_selectors(a=3), a=64, b=1, uniform=UNIFORM_FLAG["a"]),
     "source A, a uniform operand"),
    (Instruction(Opcode.IADD, dst=_selectors(b=1), a=1, bimm=True, imm=5), "source B, which is a 32-bit immediate"),
    (Instruction(Opcode.BRNZ, dst=_selectors(a=1), a=1, bimm=True, imm=0), None),  # a condition on hand t
    (Instruction(Opcode.STG, dst=_selectors(a=1, b=3), a=1, b=2), None),  # a store's address and value
    (Instruction(Opcode.BRNZ, dst=_selectors(write=1), a=1, bimm=True, imm=0), "writes no value"),
])
def test_decode_in_dflow_form_rejects_misplaced_selectors(ins, message):
    word = ins.encode() if message is None or "writes no value" not in message else None
    if message is None:
        Instruction.decode(word, Form.DFLOW)
        return
    if word is None:  # check_fields refuses it whatever the form: build the word by hand
        with pytest.raises(EncodingError, match=message):
            ins.encode()
        return
    with pytest.raises(EncodingError, match=message):
        Instruction.decode(word, Form.DFLOW)
    assert Instruction.decode(word) == ins  # form-agnostic decoding: REG reads the field as a register


@pytest.mark.parametrize("op, extra, ok", [
    (Opcode.RPINC, dict(bimm=True, imm=3), True),
    (Opcode.SSY, dict(a=2, bimm=True, imm=0), True),
    (Opcode.SSY, dict(bimm=True, imm=0), False),  # no advance: no hand
    (Opcode.STG, dict(a=1, b=1), False),
    (Opcode.BAR, {}, False),
    (Opcode.EXIT, {}, False),
])
def test_written_hand_only_on_producers_rpinc_and_reserving_ssy(op, extra, ok):
    ins = Instruction(op, dst=_selectors(write=2), **extra) if ok else None
    if ok:
        assert Instruction.decode(ins.encode(), Form.DFLOW).dst_hand == 2
        with pytest.raises(EncodingError, match="only its written-hand selector"):
            Instruction(op, dst=_selectors(write=2, a=1), **extra).encode()
    else:
        with pytest.raises(EncodingError, match="writes no value"):
            Instruction(op, dst=_selectors(write=2), **extra).encode()


def test_reg_form_keeps_dst_as_a_register():
    ins = Instruction(Opcode.IADD, dst=0x35, a=1, b=2)  # r52 in REG form
    assert Instruction.decode(ins.encode()) == ins
    k = Kernel("k", Form.REG, [ins, Instruction(Opcode.EXIT)], regs=60)
    assert k.code[0].dst == 0x35 and ins.variant_uses(Form.REG) == {}


# ------------------------------------------------------------------ Kernel and loader
def _hands_kernel(code, rings=(32, 8), **kw) -> Kernel:
    return Kernel("k", Form.DFLOW, code + [Instruction(Opcode.EXIT)], rings=rings, variants=HANDS, **kw)


def test_kernel_rings_ring_and_capacity():
    k = _hands_kernel([Instruction(Opcode.MOV, dst=_selectors(write=1), bimm=True, imm=1)], rings=(16, 8, 4), dmax=7)
    assert k.rings == (16, 8, 4) and k.ring == 16 and k.capacity == 28 and k.hands
    one = Kernel("k", Form.DFLOW, [Instruction(Opcode.EXIT)], ring=40)
    assert one.rings == (40,) and one.ring == 40 and one.capacity == 40 and not one.hands
    assert Kernel("k", Form.DFLOW, [Instruction(Opcode.EXIT)]).rings == (32,)
    moved = dataclasses.replace(one, ring=64)  # one ring: ``ring`` gives its size
    assert moved.rings == (64,) and moved.ring == 64


@pytest.mark.parametrize("kwargs, code, message", [
    (dict(rings=(32, 8), variants=frozenset()), [], "one size per hand, 1 to 4 hands with .variant hands"),
    (dict(rings=(32, 8, 8, 8, 8), variants=HANDS), [], "one size per hand, 1 to 4 hands"),
    (dict(rings=(32, 0), variants=HANDS), [], ".ring 0 outside 1..2048"),
    (dict(rings=(16, 8), dmax=16, variants=HANDS), [], "the largest .ring (16) must exceed .dmax 16"),
    (dict(rings=(32, 8), variants=HANDS), [Instruction(Opcode.MOV, dst=_selectors(b=1), b=8)],
     "distance 8 on hand t must be below its ring of 8 entries"),
    (dict(rings=(32, 8), variants=HANDS), [Instruction(Opcode.MOV, dst=_selectors(write=2), b=1)],
     "pc 0: mov: written hand u is not declared"),
    (dict(rings=(32, 8), variants=HANDS), [Instruction(Opcode.MOV, dst=_selectors(b=3), b=1)],
     "pc 0: mov: source B hand v is not declared"),
    (dict(rings=(32, 8), variants=HANDS), [Instruction(Opcode.IADD, dst=_selectors(b=1), a=1, bimm=True, imm=2)],
     "pc 0: iadd: hand selector t on source B, which is a 32-bit immediate"),
    (dict(ring=32), [Instruction(Opcode.MOV, dst=_selectors(write=1), b=1)],
     "pc 0: a hand selector (dst field 1) needs .variant hands"),
    (dict(ring=32, variants=frozenset({Variant.RESERVED_SSY})),
     [Instruction(Opcode.MOV, dst=_selectors(b=1), b=1)], "needs .variant hands"),
    (dict(ring=32, rings=(16, 8), variants=HANDS), [], "ring 32 is not hand 0's ring"),
])
def test_kernel_refuses(kwargs, code, message):
    with pytest.raises(KernelError) as info:
        Kernel("k", Form.DFLOW, code + [Instruction(Opcode.EXIT)], **kwargs)
    assert message in str(info.value)


def test_one_ring_keeps_the_original_check():
    with pytest.raises(KernelError, match=r"\.ring 8 must exceed \.dmax 8"):
        Kernel("k", Form.DFLOW, [Instruction(Opcode.EXIT)], ring=8, dmax=8)


def test_binary_round_trip_of_a_hands_kernel():
    k = _DIVERGENT
    data = Module({"k": k}).to_bytes()
    header = json.loads(data[12:12 + struct.unpack_from("<I", data, 8)[0]])
    assert header[0]["rings"] == [16, 16] and "ring" not in header[0] and header[0]["variants"] == ["hands"]
    back = Module.from_bytes(data).only
    assert back.rings == k.rings and back.words() == k.words() and back.variants == k.variants
    assert back.code == k.code


def test_binary_of_the_original_form_is_unchanged():
    k = Kernel("k", Form.DFLOW, [Instruction(Opcode.MOV, b=1), Instruction(Opcode.EXIT)])
    header = b'[{"name":"k","form":"dflow","params":[],"shared_bytes":0,"local_bytes":0,"labels":{},' \
             b'"ring":32,"dmax":31,"count":2}]'
    words = [0x0000000100000001, 0x57]
    assert Module({"k": k}).to_bytes() == b"DFLW" + struct.pack("<II", 1, len(header)) + header \
        + struct.pack("<2Q", *words)


def _patched(k: Kernel, pc: int, word: int, meta_change=None) -> bytes:
    meta = [dict(k.metadata(), count=len(k.code))]
    if meta_change:
        meta_change(meta[0])
    words = k.words()
    words[pc] = word
    header = json.dumps(meta, separators=(",", ":")).encode()
    return b"DFLW" + struct.pack("<II", 1, len(header)) + header + struct.pack(f"<{len(words)}Q", *words)


def test_loader_refuses_selectors_naming_the_pc():
    k = _DIVERGENT
    exit_pc = len(k.code) - 1
    stg_pc = next(pc for pc, ins in enumerate(k.code) if ins.op is Opcode.STG)
    stg = k.words()[stg_pc]
    with pytest.raises(KernelError, match=fr"pc {stg_pc}: .*stg writes no value"):
        Module.from_bytes(_patched(k, stg_pc, stg | (1 << 16)))
    mov_pc = next(pc for pc, ins in enumerate(k.code) if ins.op is Opcode.MOV and ins.bimm)
    mov = k.words()[mov_pc]
    with pytest.raises(KernelError, match=fr"pc {mov_pc}: .*hand selector t on source B, which is a 32-bit"):
        Module.from_bytes(_patched(k, mov_pc, mov | (1 << 20)))
    with pytest.raises(KernelError, match=fr"pc {mov_pc}: mov: written hand u is not declared"):
        Module.from_bytes(_patched(k, mov_pc, mov | (2 << 16)))
    plain = Kernel("p", Form.DFLOW, [Instruction(Opcode.MOV, b=1), Instruction(Opcode.EXIT)])
    with pytest.raises(KernelError, match=r"pc 0: a hand selector \(dst field 16\) needs .variant hands"):
        Module.from_bytes(_patched(plain, 0, plain.words()[0] | (1 << 20)))
    with pytest.raises(KernelError, match="header keys 'ring' missing or unexpected"):
        Module.from_bytes(_patched(k, exit_pc, k.words()[exit_pc], lambda m: m.update(ring=16)))
    with pytest.raises(KernelError, match="rings must be a non-empty list"):
        Module.from_bytes(_patched(k, exit_pc, k.words()[exit_pc], lambda m: m.update(rings=16)))


# ------------------------------------------------------------------ assembler and disassembler
def test_assembler_syntax_and_round_trip():
    k = assemble(""".kernel k
.form dflow
.param out
.ring 32 8 4 6
.dmax 31
.variant hands reserved-ssy
    s2r %tid.x -> t
    mov 5 -> v
    imad |t1|, |v1|, |s1|
    iadd | u 1 |, |s2| -> u
    stg [|t1|+4], |v1|
    rpinc 3 -> v
    ssy J, 2 -> u
    sync
J:  exit
""").only
    assert [ins.dst for ins in k.code[:7]] == [
        _selectors(write=1), _selectors(write=3), _selectors(a=1, b=3), _selectors(write=2, a=2),
        _selectors(a=1, b=3), _selectors(write=3), _selectors(write=2)]
    text = disassemble(Module({"k": k}))
    assert ".ring 32 8 4 6" in text and "imad |t1|, |v1|, |1|" in text and "iadd |u1|, |2| -> u" in text
    assert "rpinc 3 -> v" in text and "ssy J, 2 -> u" in text and "-> s" not in text and "|s" not in text
    assert assemble(text).only.code == k.code


def _random_hands_kernel(rng: random.Random) -> Kernel:
    rings = tuple(rng.randrange(2, 40) for _ in range(rng.randrange(1, 5)))
    dmax = rng.randrange(1, max(rings))
    code = []
    producers = [op for op, spec in SPECS.items() if spec.produces and spec.syntax.value
                 and set(spec.syntax.value) <= {"a", "b", "c", "bi"}]
    for _ in range(rng.randrange(1, 12)):
        op = rng.choice(producers)
        fields, dst = {}, rng.randrange(len(rings))
        for name in SPECS[op].sources:
            hand = rng.randrange(len(rings))
            limit = min(dmax, rings[hand] - 1)
            if name == "b" and "bi" in SPECS[op].syntax.value and rng.random() < 0.3:
                fields.update(bimm=True, imm=rng.randrange(1 << 32))
                continue
            fields[name] = rng.randrange(1, limit + 1) if limit else 0
            if fields[name]:
                dst |= hand << (HAND_FIELDS[name][0] - FIELDS["dst"][0])
        mod = min(SPECS[op].suffixes) if SPECS[op].suffixes else 0
        code.append(Instruction(op, dst=dst, mod=mod, **fields))
    code.append(Instruction(Opcode.RPINC, dst=rng.randrange(len(rings)), bimm=True, imm=rng.randrange(1, 256)))
    return Kernel("k", Form.DFLOW, code + [Instruction(Opcode.EXIT)], rings=rings, dmax=dmax, variants=HANDS)


@pytest.mark.parametrize("seed", range(40))
def test_round_trip_of_random_hands_kernels(seed):
    k = _random_hands_kernel(random.Random(seed))
    back = assemble(disassemble(Module({"k": k}))).only
    assert back.code == k.code and back.rings == k.rings and back.dmax == k.dmax
    assert Module.from_bytes(Module({"k": k}).to_bytes()).only.code == k.code


_HEAD = ".kernel k\n.form dflow\n"


@pytest.mark.parametrize("source, where, message", [
    (_HEAD + "    mov 1\n    iadd |t1|, 1\n    exit\n", "4:10", "hand operand |t1| needs .variant hands"),
    (_HEAD + "    mov 1 -> t\n    exit\n", "3:14", "a written hand (-> t) needs .variant hands"),
    (_HEAD + ".variant hands\n    mov 1\n    iadd |t1|, 1\n    exit\n", "5:10",
     "hand t is not declared (.ring declares 1 hand: s)"),
    (_HEAD + ".ring 32 8\n.variant hands\n    mov 1 -> u\n    exit\n", "5:14", "hand u is not declared"),
    (_HEAD + ".ring 32 8\n.variant hands\n    mov 1 -> x\n    exit\n", "5:14", "bad hand 'x': one of s t u v"),
    (_HEAD + ".ring 32 8\n.variant hands\n    mov 1 ->\n    exit\n", "5:13", "bad hand ''"),
    (_HEAD + ".ring 32 8\n.variant hands\n    mov 1\n    stg [|1|], |1| -> t\n    exit\n", "6:23",
     "stg writes and advances no hand"),
    (_HEAD + ".ring 32 8\n.variant hands\n    mov 1 -> t\n    ssy J -> t\nJ:  exit\n", "6:14",
     "ssy writes and advances no hand"),
    (_HEAD + ".ring 32 8\n.variant hands\n    mov 1 -> t\n    mov |t8|\n    exit\n", "6:9",
     "distance 8 on hand t must be below its ring of 8 entries"),
    (_HEAD + ".ring 32 8\n    exit\n", "3:1", ".ring takes one size per hand, 1 to 4 hands with .variant hands; "
     "without it, one number"),
    (_HEAD + ".ring 32 8 8 8 8\n.variant hands\n    exit\n", "3:1", ".ring takes one size per hand, 1 to 4"),
    (_HEAD + ".ring 16 8\n.dmax 20\n.variant hands\n    exit\n", "4:1", "the largest .ring (16) must exceed .dmax 20"),
    (_HEAD + ".ring 32 x\n.variant hands\n    exit\n", "3:1", ".ring: bad number 'x'"),
    (".kernel k\n    mov r1, 1 -> t\n    exit\n", "2:18", "a written hand (-> t) in a REG-form kernel"),
    (".kernel k\n    iadd r1, |t1|, 1\n    exit\n", "2:14", "distance operand |t1| in a REG-form kernel"),
])
def test_assembler_errors(source, where, message):
    with pytest.raises(AsmError) as info:
        assemble(source, "h.s")
    assert f"h.s:{where}: error: {message}" in str(info.value)


# ------------------------------------------------------------------ functional model
def _stores(body: str, rings: str, dmax: int, variants: str = "hands", tail_s: int = 0) -> Kernel:
    return assemble(f"""{_HEAD}.param out
.ring {rings}
.dmax {dmax}
.variant {variants}
{body}""").only


_LOOP = assemble(hands_source("k", "8 2 2 2", 7, hands_loop(40))).only


def test_loop_reads_an_invariant_on_hand_v_while_hand_s_wraps():
    out = launch_out(_LOOP, 1, 32, 32)[2]
    assert np.array_equal(out, np.arange(32, dtype=np.uint32) + 3 * sum(range(40)))


_DIVERGENT = assemble(hands_source("k", "16 16", 8, hands_divergent("isetp.lt |2|, 16"))).only


def test_divergent_if_joins_each_hand_at_its_largest_rp():
    dev, res, out = launch_out(_DIVERGENT, 1, 32, 32, trace=True)
    assert np.array_equal(out, np.full(32, 107, np.uint32))
    join = [r for r in res.trace.records if r.pc == 15]  # the iadd after the join
    assert len(join) == 1 and join[0].rp == 5 and join[0].hand == 0


def test_rpinc_advances_only_the_hand_it_names():
    k = _stores("""    mov 7 -> t                 ; t0
    rpinc 3 -> t               ; RP_t 4
    mov 9                      ; s0
    iadd |1|, |t4|             ; 9 + 7
    s2r %tid.x
    ishl |1|, 2
    ldc out
    iadd |1|, |2|
    stg [|1|], |5|
    exit
""", "16 8", 7)
    dev, res, out = launch_out(k, 1, 32, 32, trace=True)
    assert np.array_equal(out, np.full(32, 16, np.uint32))
    rpinc = next(r for r in res.trace.records if r.op == "rpinc")
    assert rpinc.hand == 1 and rpinc.rp == 1 and rpinc.dst is None


def _reserved(advance: str) -> Kernel:
    return _stores(f"""    mov 7 -> t                 ; t0: read after the join
    s2r %tid.x                 ; s0
    ssy JOIN{advance}
    isetp.lt |1|, 16           ; s1
    brnz |1|, A
    sync                       ; path B: nothing on t
A:  mov 1 -> t                 ; path A: t + 2
    mov 2 -> t
    sync
JOIN:
    ishl |2|, 2                ; tid (s: 0 and 1 written, RP_s 2)
    ldc out
    iadd |1|, |2|
    stg [|1|], |t3|            ; the 7, 3 back on t when RP_t is 1 + 2
    exit
""", "16 8", 7, variants="hands reserved-ssy")


def test_ssy_reserves_its_advance_on_the_hand_it_names():
    dev, res, out = launch_out(_reserved(", 2 -> t"), 2, 32, 32, trace=True)
    assert np.array_equal(out, np.full(32, 7, np.uint32))
    ssy = next(r for r in res.trace.records if r.op == "ssy")
    assert ssy.hand == 1 and ssy.rp == 1


def test_without_the_reservation_the_short_path_reads_what_it_never_wrote():
    """Block-uniform paths: a warp that runs only path B joins at RP_t 1 and |t3| is before t0."""
    k = _stores("""    mov 7 -> t
    s2r %ctaid.x
    ssy JOIN, 2 -> t
    brnz |1|, B
    mov 1 -> t
    mov 2 -> t
    sync
B:  sync
JOIN:
    mov |t3|
    exit
""", "16 8", 7, variants="hands reserved-ssy")
    launch_out(k, 2, 32, 32)  # with the reservation both blocks read the 7
    bad = assemble(disassemble(Module({"k": k})).replace("ssy JOIN, 2 -> t", "ssy JOIN")).only
    with pytest.raises(KernelFault, match=r"illegal DFLOW read of \|t3\| at RP_t 1: this lane's path never wrote "
                                          r"position -2"):
        launch_out(bad, 2, 32, 32)


def test_illegal_read_on_a_small_hand_while_the_large_hand_is_fine():
    k = _stores(hands_unwritten_read(16), "32 2", 7)
    with pytest.raises(KernelFault) as info:
        launch_out(k, 1, 32, 32)
    message = str(info.value)
    assert "illegal DFLOW read of |t1| at RP_t 2: this lane's path never wrote position 1" in message
    assert "lane 16" in message


def test_trace_of_the_original_form_has_no_hand_field(tmp_path):
    plain = _stores("""    s2r %tid.x
    ishl |1|, 2
    ldc out
    iadd |1|, |2|
    stg [|1|], |4|
    exit
""", "32", 31, variants="reserved-ssy")
    res = launch_out(plain, 1, 32, 32, trace=True)[1]
    assert all(r.hand is None for r in res.trace.records) and res.trace.fields == TRACE_FIELDS
    res.trace.write(tmp_path / "plain.jsonl")
    header = json.loads((tmp_path / "plain.jsonl").read_text().splitlines()[0])
    assert "hand" not in header["fields"] and "rings" not in header["config"]
    hands = launch_out(_DIVERGENT, 1, 32, 32, trace=True)[1].trace
    hands.write(tmp_path / "hands.jsonl")
    back = Trace.read(tmp_path / "hands.jsonl")
    assert back.records == hands.records and hands.fields == TRACE_HAND_FIELDS
    assert back.config["rings"] == [16, 16]
    writes_t = [r for r in hands.records if r.hand == 1 and r.dst is not None]
    assert writes_t and all(r.dst == r.rp % 16 for r in writes_t)


# ------------------------------------------------------------------ timing (tests/models/timing/test_timing_hands.py)
@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_timing_models_run_a_hands_kernel(engine):
    from dualflow.machine.presets import preset
    from dualflow.models.timing.device import TimingDevice

    dev = TimingDevice(preset("paper-rtx3080").replace(mode="dflow", num_sms=2), engine=engine)
    out = dev.upload(np.zeros(32, np.uint32))
    dev.launch(_DIVERGENT, grid=1, block=32, params=[out])
    assert np.array_equal(dev.copy_out(out, 32), np.full(32, 107, np.uint32))


# ------------------------------------------------------------------ what does not implement it yet


def test_converter_uses_hands_only_where_a_loop_has_invariants():
    """The converter uses the variant (tests/isa/convert/test_convert_hands.py); a kernel without loops has
    nothing to put on hand t and converts in the original form."""
    from dualflow.isa.convert import convert_kernel

    reg = assemble(".kernel k\n    exit\n").only
    k, _ = convert_kernel(reg, variants=HANDS)
    assert k.rings == (32,) and not k.hands


def test_rtl_implements_hands_on_a_core_built_with_rings():
    """Every DFLOW core implements VARIANTS; a core built with the kernel's rings also runs hands
    (tests/rtl/test_rtl_hands.py co-simulates it)."""
    from dualflow.rtl.decode import CORE_VARIANTS, VARIANTS

    assert Variant.HANDS not in VARIANTS and Variant.HANDS in CORE_VARIANTS


def test_cli_asm_disasm_cosim_refuses_sim_runs(tmp_path, capsys):
    from dualflow.cli import main

    src = tmp_path / "h.s"
    src.write_text(disassemble(Module({"k": _DIVERGENT})))
    assert main(["asm", str(src), "-o", str(tmp_path / "h.bin")]) == 0
    assert "rings 16 16, dmax 8" in capsys.readouterr().out
    assert main(["disasm", str(tmp_path / "h.bin")]) == 0
    assert assemble(capsys.readouterr().out).only.code == _DIVERGENT.code
    assert main(["cosim", str(src), "--mode", "dflow", "--value", "out=0"]) == 1
    err = capsys.readouterr().err
    assert ".variant hands" in err and "Traceback" not in err
    assert main(["sim", str(src), "--mode", "dflow"]) == 0  # the timing engines time hands kernels
    assert "cycles" in capsys.readouterr().out


def test_non_producers_read_other_hands_in_binaries():
    """A store, a branch condition and a store value on hands t and v encode, decode in the DFLOW
    form and survive a binary round trip; in the REG form the same dst field is refused."""
    stg = Instruction(Opcode.STG, dst=_selectors(a=1, b=3), a=1, b=2)
    brnz = Instruction(Opcode.BRNZ, dst=_selectors(a=1), a=1, bimm=True, imm=0)
    for ins in (stg, brnz):
        assert Instruction.decode(ins.encode(), Form.DFLOW) == ins
        with pytest.raises(EncodingError, match="writes no value"):
            Instruction.decode(ins.encode(), Form.REG)
    with pytest.raises(KernelError, match="pc 0: stg writes no value"):
        Kernel("k", Form.REG, [stg, Instruction(Opcode.EXIT)], regs=4)

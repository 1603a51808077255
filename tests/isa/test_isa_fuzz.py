"""Fuzzing of the binary loader and the assembler (issue 17): mutated binaries and sources, and
random token soup, never raise anything but a ``DualflowError``; whatever loads or assembles
disassembles to text that reassembles to the same kernels. Deterministic (``derandomize``)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import REPO

from dualflow.common.errors import DualflowError
from dualflow.isa import Form, Module, assemble, disassemble
from dualflow.isa.opcodes import SPECS, SpecialReg

SAMPLES = REPO / "dualflow" / "kernels" / "samples"
SOURCES = [(SAMPLES / name).read_text() for name in
           ("vadd.reg.s", "vadd.dflow.s", "divloop.reg.s", "divloop.dflow.s", "reduce.reg.s", "reduce.dflow.s")]
BINARIES = [assemble(text).to_bytes() for text in SOURCES]

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def facts(kernel) -> tuple:
    extra = (kernel.regs,) if kernel.form is Form.REG else (kernel.ring, kernel.dmax)
    return (kernel.name, kernel.form, kernel.params, kernel.shared_bytes, kernel.local_bytes, *extra,
            kernel.words())


def assert_round_trip(module: Module) -> None:
    """Disassembly reassembles to the same kernels, and the binary loads back to them."""
    again = assemble(disassemble(module), "<disassembly>")
    assert [facts(k) for k in again] == [facts(k) for k in module]
    assert [facts(k) for k in Module.from_bytes(module.to_bytes())] == [facts(k) for k in module]


@st.composite
def mutated_binary(draw) -> bytes:
    data = bytearray(draw(st.sampled_from(BINARIES)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "flip", "set", "truncate", "extend", "insert", "delete"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and data:
            data[pos] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del data[pos:]
        elif kind == "extend":
            data += draw(st.binary(min_size=1, max_size=16))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[pos:pos + draw(st.integers(1, 8))]
    return bytes(data)


@FUZZ
@given(mutated_binary())
def test_mutated_binaries_load_cleanly_or_round_trip(data):
    try:
        module = Module.from_bytes(data, "fuzz.bin")
    except DualflowError as exc:
        assert str(exc).startswith("fuzz.bin: ")
        return
    assert_round_trip(module)


WORDS = ([".kernel", ".form", ".param", ".shared", ".local", ".regs", ".ring", ".dmax", ".KERNEL", "reg", "dflow"]
         + [spec.mnemonic for spec in SPECS.values()] + ["isetp.lt", "fsetp.nan", "vote.ballot", "ldg.c3"]
         + ["r0", "r1", "r7", "r254", "r255", "rz", "|1|", "|2|", "|31|", "|0|", "|300|", "[r1+4]", "[|1|-8]",
            "[4]", "[r2", "0", "1", "-1", "4", "32", "255", "256", "0x10", "1.5", "-0.0", "1e39", "inf",
            "0f3f800000", "k", "a", "n", "L", "L0", "L1:", "loop:", "%tid.x", SpecialReg.LANEID.asm_name]
         + [",", ", ", ":", "\n", "\n", "\n", " ", "\t", ";", "#", "//", "\ufeff", "\r\n", "é", "\x00"])


@FUZZ
@given(st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join))
def test_token_soup_assembles_cleanly_or_round_trips(text):
    try:
        module = assemble(text, "soup.s")
    except DualflowError:
        return
    assert_round_trip(module)


@st.composite
def mutated_source(draw) -> str:
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = draw(st.sampled_from(WORDS) | st.text(max_size=3))
        if kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 6)):]
        elif kind == "insert":
            text = text[:pos] + piece + text[pos:]
        else:
            text = text[:pos] + piece + text[pos + len(piece):]
    return text


@FUZZ
@given(mutated_source())
def test_mutated_sources_assemble_cleanly_or_round_trip(text):
    try:
        module = assemble(text, "mutant.s")
    except DualflowError as exc:
        assert str(exc).startswith("mutant.s:")
        return
    assert_round_trip(module)

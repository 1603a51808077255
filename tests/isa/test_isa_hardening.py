"""Bad input to the assembler, the binary loader, the converter, a launch and the trace reader:
one clear ``DualflowError`` naming the file and line (issue 17, items 10 to 12)."""

from __future__ import annotations

import json
import struct

import pytest

from dualflow.common.errors import AsmError, ConfigError, DualflowError
from dualflow.isa import Form, Instruction, Kernel, Module, Opcode, assemble, assemble_file, disassemble
from dualflow.isa.assembler import QUOTE_LIMIT
from dualflow.isa.convert import ConvertError, convert_module
from dualflow.isa.kernel import MAX_MEMORY_BYTES, MAX_RING, KernelError
from dualflow.models.device import Device
from dualflow.models.trace import Trace, TraceFileError

REG_SOURCE = ".kernel k\n.param a b\n    ldc r0, b\nL:  iadd r0, r0, -1\n    brnz r0, L\n    exit\n"


def header_and_words(module: Module) -> tuple[list, bytes]:
    data = module.to_bytes()
    size = struct.unpack_from("<I", data, 8)[0]
    return json.loads(data[12:12 + size]), data[12 + size:]


def container(header, words: bytes) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return b"DFLW" + struct.pack("<II", 1, len(text)) + text + words


def load_error(data: bytes) -> str:
    with pytest.raises(KernelError) as info:
        Module.from_bytes(data, "bad.bin")
    assert str(info.value).startswith("bad.bin: "), info.value
    return str(info.value)


# ---------------------------------------------------------------- binary loader (item 10)

def test_deeply_nested_header():
    assert "corrupt header" in load_error(container(b"[" * 100_000 + b"]" * 100_000, b""))


def _meta(**change) -> tuple[list, bytes]:
    header, words = header_and_words(assemble(REG_SOURCE))
    header[0].update(change)
    return header, words


@pytest.mark.parametrize("change, phrase", [
    ({"labels": ["L"]}, "labels must map decimal pcs to names"),
    ({"labels": {"1": "L", "2": "L"}}, "one label name marks two pcs"),
    ({"labels": {"9": "L"}}, "label at pc 9 outside"),
    ({"labels": {"1": "a b"}}, "is not an identifier"),
    ({"name": "k\n.kernel evil"}, "is not an identifier"),
    ({"params": "ab"}, "params must be a list"),
    ({"params": ["a", "a"]}, "duplicate parameter"),
    ({"regs": 2.0}, ".regs 2.0 is not an integer"),
    ({"shared_bytes": 4.0}, ".shared 4.0 is not an integer"),
    ({"shared_bytes": True}, ".shared True is not an integer"),
    ({"shared_bytes": MAX_MEMORY_BYTES + 4}, f"in 0..{MAX_MEMORY_BYTES}"),
    ({"form": "simd"}, "form 'simd' is not one of reg, dflow"),
    ({"extra": 1}, "'extra' missing or unexpected"),
])
def test_header_fields_are_checked(change, phrase):
    assert phrase in load_error(container(*_meta(**change)))


def test_empty_kernel_list_and_duplicate_names():
    header, words = header_and_words(assemble(REG_SOURCE))
    assert "non-empty list of kernels" in load_error(container([], b""))
    assert "duplicate kernel 'k'" in load_error(container(header * 2, words * 2))


def _with_word(index: int, ins: Instruction) -> bytes:
    header, words = header_and_words(assemble(REG_SOURCE))
    words = words[:8 * index] + struct.pack("<Q", ins.encode()) + words[8 * index + 8:]
    return container(header, words)


def test_ldc_offset_past_the_parameters():
    message = load_error(_with_word(0, Instruction(Opcode.LDC, dst=1, bimm=True, imm=8)))
    assert "kernel 'k', pc 0: parameter offset 8 is not one of the 2 declared" in message


def test_branch_target_past_the_end():
    message = load_error(_with_word(2, Instruction(Opcode.BRNZ, a=1, bimm=True, imm=4)))
    assert "kernel 'k', pc 2: branch target 4 outside the kernel's 4 instructions" in message


def test_truncated_words_and_bad_words_name_the_file():
    header, words = header_and_words(assemble(REG_SOURCE))
    assert "needs 4 words, 3 remain" in load_error(container(header, words[:-8]))
    assert "kernel 'k', pc 3: unknown opcode 0xff" in load_error(container(header, words[:-8] + b"\xff" * 8))


def test_auto_label_does_not_collide_with_a_kernel_label():
    # pc 2 is named "L3" and pc 3 (a branch target) has no label: its made-up name must differ.
    k = Kernel("k", Form.REG, [Instruction(Opcode.NOP), Instruction(Opcode.BRA, bimm=True, imm=3),
                               Instruction(Opcode.BRA, bimm=True, imm=2), Instruction(Opcode.EXIT)],
               labels={2: "L3"})
    back = assemble(disassemble(Module({"k": k}))).only
    assert back.words() == k.words()


# ---------------------------------------------------------------- assembler (items 11, 12)

@pytest.mark.parametrize("src, line, phrase", [
    (".kernel k\n.form dflow\n.ring 100000000\n exit\n", 3, f".ring 100000000: at most {MAX_RING}"),
    (".kernel k\n.shared 100000000000000000000\n exit\n", 2, f"at most {MAX_MEMORY_BYTES}"),
    (".kernel k\n.local 100000000000000000000\n exit\n", 2, f"at most {MAX_MEMORY_BYTES}"),
    (".KERNEL k\n exit\n", 1, "unknown directive .KERNEL (directives are lower case)"),
    (".kernel k\n.Form dflow\n exit\n", 2, "unknown directive .Form"),
    (".kernel k\n.form dflow\n.regs 4\n exit\n", 3, ".regs is for REG-form kernels"),
    (".kernel k\n.ring 64\n exit\n", 2, ".ring is for DFLOW-form kernels"),
    (".kernel k\n.dmax 8\n.form reg\n exit\n", 2, ".dmax is for DFLOW-form kernels"),
    (".kernel k\n.shared 4\n.shared 8\n exit\n", 3, "repeated .shared in kernel 'k' (first at line 2)"),
    (".kernel k\n.form reg\n.form dflow\n exit\n", 3, "repeated .form"),
    (".kernel k\n iadd r1, r0, 1.5\n exit\n", 2, "float literal 1.5 on the integer instruction iadd"),
    (".kernel k\n isetp.lt r1, r0, 1e3\n exit\n", 2, "float literal 1e3 on the integer instruction isetp"),
    (".kernel k\n.form dflow\n.ring 20\n\n exit\n", 3, ".ring 20 must exceed .dmax 31"),
    (".kernel k\n.form dflow\n.dmax 40\n exit\n", 3, ".ring 32 must exceed .dmax 40"),
    (".kernel k\n.regs 2\n iadd r3, r1, r2\n", 2, "uses r3 but declares .regs 2"),
])
def test_assembler_rules_point_at_the_line(src, line, phrase):
    with pytest.raises(AsmError) as info:
        assemble(src, "t.s")
    assert info.value.line == line and phrase in info.value.message, info.value


def test_float_literals_stay_legal_where_they_mean_a_float():
    k = assemble(".kernel k\n mov r1, 1.5\n fadd r2, r1, 2.5\n iadd r3, r1, 0x10\n mov r4, 0f3f800000\n exit\n").only
    assert [ins.imm for ins in k.code[:4]] == [0x3FC00000, 0x40200000, 16, 0x3F800000]


def test_a_huge_token_is_not_echoed_whole():
    token = "x" * 2_000_000
    for src in (f".kernel k\n {token}\n", f".kernel k\n iadd r1, r0, {token}\n", f".kernel k\n.shared {token}\n",
                f".{token}\n", f".kernel k\n inot r1, r{'9' * 100_000}\n"):
        with pytest.raises(AsmError) as info:
            assemble(src)
        assert len(str(info.value)) < 4 * QUOTE_LIMIT + 100, str(info.value)[:300]


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.s"
    path.write_bytes(b"\xef\xbb\xbf.kernel k\n exit\n")
    assert assemble_file(path).only.words() == assemble(".kernel k\n exit\n").only.words()


def test_non_utf8_names_line_and_column(tmp_path):
    path = tmp_path / "latin1.s"
    path.write_bytes(b".kernel k\n exit ; caf\xe9\n")
    with pytest.raises(AsmError) as info:
        assemble_file(path)
    assert (info.value.line, info.value.col) == (2, 12)
    assert "not UTF-8 text (byte offset 21)" in info.value.message


def test_missing_file_names_it(tmp_path):
    with pytest.raises(DualflowError, match=r"^cannot read .*nope\.s: No such file or directory$"):
        assemble_file(tmp_path / "nope.s")


def test_convert_loop_at_the_first_instruction_is_a_clear_error():
    with pytest.raises(ConvertError, match="a branch targets the kernel's first instruction") as info:
        convert_module(assemble(".kernel k\nL: bra L\n", "loop.s"))
    assert "internal" not in str(info.value) and "loop.s:2" in str(info.value)


def test_convert_ring_above_the_limit_is_refused_up_front():
    with pytest.raises(ConvertError, match=f"ring 100000000000: at most {MAX_RING} entries per warp"):
        convert_module(assemble(REG_SOURCE), ring=100_000_000_000)


# ---------------------------------------------------------------- launch and trace (item 12)

@pytest.mark.parametrize("params", [None, "ab", 7, {"a": 1}])
def test_launch_params_must_be_a_list(params):
    kernel = assemble(REG_SOURCE).only
    with pytest.raises(ConfigError, match="params must be a list of parameter values \\(a, b\\)"):
        Device().launch(kernel, 1, 32, params=params)


def _trace_file(tmp_path):
    kernel = assemble(".kernel k\n.param n\n ldc r0, n\n exit\n").only
    path = tmp_path / "t.jsonl"
    Device().launch(kernel, 1, 32, [3], trace=True).trace.write(path)
    return path


@pytest.mark.parametrize("damage, where", [
    (lambda lines: ["{not json"] + lines[1:], ":1: not a JSON line"),
    (lambda lines: ["[]"] + lines[1:], ":1: not a dualflow-trace v1 file"),
    (lambda lines: lines[:1] + ["[1, 2]"] + lines[2:], ":2: a record is a list of the 11 fields"),
    (lambda lines: lines[:1] + ['"' + lines[1]] + lines[2:], ":2: not a JSON line"),
    (lambda lines: lines[:2] + ['["x"' + lines[2][lines[2].index(","):]], ":3: record fields of the wrong type"),
    (lambda lines: lines[:1] + ["[" * 100_000], ":2: not a JSON line"),
])
def test_damaged_trace_names_file_and_line(tmp_path, damage, where):
    path = _trace_file(tmp_path)
    assert Trace.read(path).records
    lines = path.read_text().splitlines()
    path.write_text("\n".join(damage(lines)) + "\n")
    with pytest.raises(TraceFileError) as info:
        Trace.read(path)
    assert str(info.value).startswith(f"{path}{where}"), info.value


def test_trace_read_missing_and_binary(tmp_path):
    with pytest.raises(TraceFileError, match="cannot read .*none.jsonl: No such file"):
        Trace.read(tmp_path / "none.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TraceFileError, match="b.jsonl: not UTF-8"):
        Trace.read(tmp_path / "b.jsonl")

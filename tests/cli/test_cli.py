"""The ``dualflow`` command (dualflow/cli/): asm, disasm and isa in-process, clean errors, no
half-written output, and one run through a real subprocess."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

from dualflow.cli import main
from dualflow.isa import SPECS, Form, Instruction, Kernel, Module, Opcode, assemble, assemble_file

SAMPLE_DIR = REPO / "dualflow" / "kernels" / "samples"
SAMPLES = sorted(SAMPLE_DIR.glob("*.s"))
BAD_SOURCE = ".kernel k\n    iadd r1, r2, r3\n  frob r1, r2\n"


def words(module: Module) -> dict[str, list[int]]:
    return {k.name: k.words() for k in module}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------------------------
# asm / disasm
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, summary", [
    ("vadd.reg.s", "vadd: reg, 19 instructions, 13 registers, 0 B shared, 0 B local"),
    ("vadd.dflow.s", "vadd: dflow, 19 instructions, ring 32, dmax 31, 0 B shared, 0 B local"),
    ("reduce.reg.s", "reduce: reg, 38 instructions, 18 registers, 512 B shared, 0 B local"),
    ("reduce.dflow.s", "reduce: dflow, 49 instructions, ring 32, dmax 31, 512 B shared, 0 B local"),
    ("divloop.reg.s", "divloop: reg, 26 instructions, 15 registers, 0 B shared, 0 B local"),
    ("divloop.dflow.s", "divloop: dflow, 32 instructions, ring 32, dmax 31, 0 B shared, 0 B local"),
])
def test_asm_prints_a_summary(capsys, name, summary):
    rc, out, err = run(capsys, "asm", SAMPLE_DIR / name)
    assert rc == 0
    assert out == summary + "\n"
    assert err == ""


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_asm_output_disassembles_to_text_that_reassembles(capsys, tmp_path, path):
    out_dir = tmp_path / "build"
    out_dir.mkdir()
    binary = out_dir / "prog.bin"
    rc, out, err = run(capsys, "asm", path, "-o", binary)
    assert rc == 0 and err == ""
    assert out.splitlines()[-1] == f"wrote {binary}"
    assert sorted(os.listdir(out_dir)) == ["prog.bin"]  # no temporary file left behind
    original = assemble_file(path)
    assert binary.read_bytes() == original.to_bytes()

    rc, text, err = run(capsys, "disasm", binary)
    assert rc == 0 and err == ""
    assert text.startswith(".kernel ")
    again = assemble(text, "disassembled.s")
    assert words(again) == words(original)
    assert {k.name: k.metadata() for k in again} == {k.name: k.metadata() for k in original}


def test_asm_output_into_new_directory(capsys, tmp_path):
    binary = tmp_path / "a" / "b" / "vadd.bin"
    rc, out, _ = run(capsys, "asm", SAMPLE_DIR / "vadd.reg.s", "--output", binary)
    assert rc == 0
    expected = assemble_file(SAMPLE_DIR / "vadd.reg.s").only.words()
    assert Module.from_bytes(binary.read_bytes()).only.words() == expected
    assert sorted(os.listdir(binary.parent)) == ["vadd.bin"]


def test_asm_output_replaces_an_existing_file(capsys, tmp_path):
    binary = tmp_path / "out.bin"
    binary.write_bytes(b"old contents")
    rc, _, _ = run(capsys, "asm", SAMPLE_DIR / "divloop.dflow.s", "-o", binary)
    assert rc == 0
    assert binary.read_bytes()[:4] == b"DFLW"
    assert sorted(os.listdir(tmp_path)) == ["out.bin"]


def test_disasm_of_a_source_file_reformats_it(capsys):
    path = SAMPLE_DIR / "reduce.dflow.s"
    rc, text, err = run(capsys, "disasm", path)
    assert rc == 0 and err == ""
    assert text.splitlines()[:6] == [".kernel reduce", ".form dflow", ".param in out n", ".shared 512",
                                     ".ring 32", ".dmax 31"]
    assert words(assemble(text)) == words(assemble_file(path))


# --------------------------------------------------------------------------------------------
# isa
# --------------------------------------------------------------------------------------------

def test_isa_lists_every_mnemonic(capsys):
    rc, out, err = run(capsys, "isa")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["code", "mnemonic", "operands", "unit", "RP", "flags", "suffixes"]
    rows = lines[1:1 + len(SPECS)]
    assert len(rows) == len(SPECS) == 51
    for row, (op, spec) in zip(rows, SPECS.items()):
        cells = row.split()
        assert int(cells[0], 16) == int(op)
        assert cells[1] == spec.mnemonic
    listed = {row.split()[1] for row in rows}
    assert listed == {spec.mnemonic for spec in SPECS.values()}


@pytest.mark.parametrize("mnemonic, expect", [
    ("iadd", ["0x10", "iadd", "d,", "a,", "bi", "int", "+1"]),
    ("stg", ["0x41", "stg", "mem,", "b", "mem"]),
    ("rpinc", ["0x58", "rpinc", "count", "ctrl", "+k"]),
    ("vote", ["0x5", "vote", "d,", "a", "int", "+1", "any", "all", "ballot"]),
    ("exit", ["0x57", "exit", "ctrl"]),
])
def test_isa_rows(capsys, mnemonic, expect):
    _, out, _ = run(capsys, "isa")
    row = next(line for line in out.splitlines()[1:] if line.split()[1] == mnemonic)
    assert row.split()[: len(expect)] == expect


def test_isa_row_suffixes(capsys):
    _, out, _ = run(capsys, "isa")
    rows = {line.split()[1]: line.split() for line in out.splitlines()[1:1 + len(SPECS)]}
    assert rows["isetp"][-7:] == ["+1", "eq", "ne", "lt", "le", "gt", "ge"]  # integer compares: ordered only
    assert rows["fsetp"][-14:] == ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu",
                                   "geu", "num", "nan"]
    assert rows["ldg"][-16:] == [f"c{i}" for i in range(16)]


# --------------------------------------------------------------------------------------------
# Errors: clean messages, non-zero status, nothing written
# --------------------------------------------------------------------------------------------

def test_asm_malformed_file_reports_location_and_writes_nothing(capsys, tmp_path):
    src = tmp_path / "src" / "bad.s"
    src.parent.mkdir()
    src.write_text(BAD_SOURCE)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    binary = out_dir / "bad.bin"
    rc, out, err = run(capsys, "asm", src, "-o", binary)
    assert rc == 1
    assert out == ""
    assert f"{src}:3:3: error: unknown opcode 'frob'" in err
    assert err == f"dualflow: error: {src}:3:3: error: unknown opcode 'frob'\n"
    assert "Traceback" not in err
    assert not binary.exists()
    assert os.listdir(out_dir) == []
    assert sorted(os.listdir(src.parent)) == ["bad.s"]


def test_asm_malformed_file_leaves_an_existing_output_untouched(capsys, tmp_path):
    src = tmp_path / "bad.s"
    src.write_text(".kernel k\n.form dflow\n    iadd r1, |2|\n")
    binary = tmp_path / "keep.bin"
    binary.write_bytes(b"previous build")
    rc, _, err = run(capsys, "asm", src, "-o", binary)
    assert rc == 1
    assert f"{src}:3:10: error: register operand r1 in a DFLOW-form kernel" in err
    assert binary.read_bytes() == b"previous build"
    assert sorted(os.listdir(tmp_path)) == ["bad.s", "keep.bin"]


@pytest.mark.parametrize("source, location, phrase", [
    (".kernel k\n exit\nEND:\n", "3:1", "marks no instruction"),
    ("exit\n", "1:1", "instruction before any .kernel"),
    (".kernel k\n.form dflow\n.dmax 40\n exit\n", "3:1", ".ring 32 must exceed .dmax 40"),
    (".kernel k\n bra NOWHERE\n", "2:6", "undefined label 'NOWHERE'"),
])
def test_asm_various_errors_are_clean(capsys, tmp_path, source, location, phrase):
    src = tmp_path / "e.s"
    src.write_text(source)
    rc, out, err = run(capsys, "asm", src)
    assert rc == 1 and out == ""
    assert f"{src}:{location}: error: " in err and phrase in err
    assert "Traceback" not in err


def test_asm_missing_input_is_a_clean_error(capsys, tmp_path):
    missing = tmp_path / "nope.s"
    rc, out, err = run(capsys, "asm", missing, "-o", tmp_path / "nope.bin")
    assert rc == 1 and out == ""
    assert err == f"dualflow: error: cannot read {missing}: No such file or directory\n"
    assert os.listdir(tmp_path) == []


def test_disasm_missing_binary_is_a_clean_error(capsys, tmp_path):
    missing = tmp_path / "nope.bin"
    rc, out, err = run(capsys, "disasm", missing)
    assert rc == 1 and out == ""
    assert err == f"dualflow: error: {missing}: cannot read: No such file or directory\n"


@pytest.mark.parametrize("data, phrase", [
    (b"ELF\x7f-not-a-dualflow-binary", "not a dualflow binary (bad magic)"),
    (b"DFLW\x07\x00\x00\x00\x02\x00\x00\x00[]", "binary version 7, expected 1"),
    (b"DFLW\x01\x00\x00\x00\x02\x00\x00\x00[]", "corrupt header: expected a non-empty list of kernels"),
    (assemble(".kernel k\n exit\n").to_bytes() + b"junk", "4 trailing bytes"),
])
def test_disasm_rejects_bad_binaries_cleanly(capsys, tmp_path, data, phrase):
    path = tmp_path / "x.bin"
    path.write_bytes(data)
    rc, out, err = run(capsys, "disasm", path)
    assert rc == 1 and out == ""
    assert err == f"dualflow: error: {path}: {phrase}\n"


@pytest.mark.parametrize("code, byte, message", [
    ([Instruction(Opcode.EXIT)], -7,
     "word 0x0000000000000257: exit: uniform flag on field a, which it does not read as a source"),
    ([Instruction(Opcode.IADD, dst=1, a=1, b=1), Instruction(Opcode.EXIT)], -15,
     "a uniform operand needs .variant uniform-operands (a DFLOW-form variant)"),
], ids=["no-source", "reg-kernel"])
def test_disasm_rejects_uniform_flags_cleanly(capsys, tmp_path, code, byte, message):
    """Bit 9 of pc 0's word (the uniform flag of field A) set in a REG kernel's binary: on exit,
    which reads no source A, the decoder refuses it; on iadd (parameter word 0: a word the decoder
    accepts) the loader does, as a REG-form kernel cannot declare the variant."""
    data = bytearray(Module({"k": Kernel("k", Form.REG, code, params=["p"], regs=1)}).to_bytes())
    data[byte] |= 0x02
    path = tmp_path / "u.bin"
    path.write_bytes(bytes(data))
    rc, out, err = run(capsys, "disasm", path)
    assert rc == 1 and out == ""
    assert err == f"dualflow: error: {path}: kernel 'k', pc 0: {message}\n"


def test_argument_errors_exit_with_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["asm"])
    assert info.value.code == 2
    assert "usage: dualflow asm" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# A real process
# --------------------------------------------------------------------------------------------

def dualflow_command() -> list[str]:
    script = Path(sys.executable).with_name("dualflow")
    if script.exists():
        return [str(script)]
    found = shutil.which("dualflow")
    return [found] if found else [sys.executable, "-m", "dualflow"]


def test_subprocess_bad_file_exits_1_without_traceback(tmp_path):
    src = tmp_path / "bad.s"
    src.write_text(BAD_SOURCE)
    binary = tmp_path / "bad.bin"
    proc = subprocess.run(dualflow_command() + ["asm", str(src), "-o", str(binary)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == f"dualflow: error: {src}:3:3: error: unknown opcode 'frob'\n"
    assert "Traceback" not in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.s"]


def test_subprocess_module_entry_point_good_file(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dualflow", "asm", str(SAMPLE_DIR / "vadd.dflow.s")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "vadd: dflow, 19 instructions, ring 32, dmax 31, 0 B shared, 0 B local\n"


# --------------------------------------------------------------------------------------------
# Bugs found while writing these tests: each escapes main() as a traceback
# --------------------------------------------------------------------------------------------

def test_asm_non_utf8_source_is_a_clean_error(capsys, tmp_path):
    src = tmp_path / "latin1.s"
    src.write_bytes(b".kernel k\n exit ; caf\xe9\n")
    rc, out, err = run(capsys, "asm", src, "-o", tmp_path / "o.bin")
    assert rc == 1 and out == ""
    assert err.startswith(f"dualflow: error: {src}")
    assert sorted(os.listdir(tmp_path)) == ["latin1.s"]


def container(meta: bytes, tail: bytes = b"") -> bytes:
    """A DFLW container with this metadata text and these bytes after it."""
    return b"DFLW" + struct.pack("<II", 1, len(meta)) + meta + tail


GOOD_META = (b'[{"name":"k","form":"reg","params":[],"shared_bytes":0,"local_bytes":0,"regs":0,'
             b'"labels":{},"count":2}]')


def test_container_helper_builds_a_valid_binary():
    data = container(GOOD_META, struct.pack("<2Q", 0x57, 0x57))
    assert Module.from_bytes(data).only.words() == [0x57, 0x57]


@pytest.mark.parametrize("data", [
    b"DFLW\x01\x00",  # header cut short: struct.error
    container(b"[{]"),  # metadata not JSON
    container(b'[{"x":1}]'),  # metadata without the kernel fields: KeyError
    container(GOOD_META, struct.pack("<Q", 0x57)),  # one word of two: struct.error
    container(b"\xff\xfe"),  # metadata not UTF-8
], ids=["short-header", "bad-json", "missing-fields", "truncated-words", "metadata-not-utf8"])
def test_disasm_corrupt_container_is_a_clean_error(capsys, tmp_path, data):
    path = tmp_path / "c.bin"
    path.write_bytes(data)
    rc, out, err = run(capsys, "disasm", path)
    assert rc == 1 and out == ""
    assert err.startswith(f"dualflow: error: {path}")


@pytest.mark.parametrize("ins, bad_mod", [(Instruction(Opcode.ISETP, dst=1, a=1, b=1), 14),
                                          (Instruction(Opcode.VOTE, dst=1, a=1), 3),
                                          (Instruction(Opcode.S2R, dst=1), 15)],
                         ids=["isetp-14", "vote-3", "s2r-15"])
def test_disasm_invalid_mod_is_a_clean_error(capsys, tmp_path, ins, bad_mod):
    """A container whose word carries a mod the opcode does not define (written by hand: the
    encoder refuses it) is rejected cleanly."""
    import struct

    module = Module({"k": Kernel("k", Form.REG, [ins, Instruction(Opcode.EXIT)], regs=1)})
    good = ins.encode()
    data = module.to_bytes().replace(struct.pack("<Q", good), struct.pack("<Q", good | (bad_mod << 12)))
    path = tmp_path / "m.bin"
    path.write_bytes(data)
    rc, out, err = run(capsys, "disasm", path)
    assert rc == 1 and out == ""
    assert err.startswith(f"dualflow: error: {path}: kernel 'k', pc 0: word ") and "is not a valid" in err
    assert "Traceback" not in err


def test_asm_unwritable_output_is_a_clean_error(capsys, tmp_path):
    target = tmp_path / "outdir"
    target.mkdir()
    try:
        rc, _, err = run(capsys, "asm", SAMPLE_DIR / "vadd.reg.s", "-o", target)
    finally:
        # whatever happens, atomic_write must not leave its temporary file behind
        assert sorted(os.listdir(tmp_path)) == ["outdir"]
        assert os.listdir(target) == []
    assert rc == 1
    assert "dualflow: error: " in err and str(target) in err

"""Which PTX constructs the generated programs use: clang's PTX of a kernel, its opcodes counted.

The front end lowers PTX instruction by instruction, so the set of opcodes (with their type and
state-space suffixes: ``ld.global.u8``, ``div.u32``) a campaign's programs produce is the part of
PTX the differential test exercises. ``ptx_of`` runs clang as the front end's first stage does
(device-only, sm_70, 32-bit, -O2, denormals flushed), independently of the front end, so the
census is available even when the front end refuses a program.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

from .errors import StageError
from .transform import INCLUDE_DIR

__all__ = ["CLANG", "CLANG_FLAGS", "ptx_of", "opcodes", "FORBIDDEN"]

CLANG = "clang-14"
#: The flags every generated kernel needs besides the front end's own: C++ narrowing in Csmith's
#: array initialisers is legal C but an error in C++11 (-Wno-c++11-narrowing); Csmith's code is
#: full of constant conditions clang warns about (-w); every function must inline (no calls); a*b+c
#: stays two roundings, as on the host (-ffp-contract=off; --float programs).
CLANG_FLAGS = ("-w", "-Wno-c++11-narrowing", "-mllvm", "-inline-threshold=100000", "-ffp-contract=off")

#: PTX that the machine has no counterpart for (64-bit registers, atomics, calls, printf).
FORBIDDEN = re.compile(r"\.(?:[usbf]64)\b|\batom\.|\bcall(?:\.uni)?\b|vprintf")

_FRONTEND_INCLUDE = Path(__file__).resolve().parents[1] / "include"
_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)[\s;]", re.M)


def ptx_of(cu: Path, ptx: Path, *, extra: tuple[str, ...] = (), timeout: float = 120.0) -> str:
    """Compile ``cu`` to PTX at ``ptx`` with clang alone; returns the PTX text."""
    argv = [CLANG, "--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib", "-m32", "-O2",
            "-fcuda-flush-denormals-to-zero", "-I", str(_FRONTEND_INCLUDE), "-I", str(INCLUDE_DIR),
            *CLANG_FLAGS, *extra, "-S", str(cu), "-o", str(ptx)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise StageError("clang timeout", f"clang did not finish in {timeout} s on {cu}") from e
    if done.returncode != 0:
        raise StageError("clang error", f"clang failed on {cu}: {done.stderr.strip()[:500]}")
    return ptx.read_text()


def opcodes(ptx: str) -> Counter[str]:
    """Static count of each instruction opcode (with its suffixes) in the PTX text; directives
    (``.reg``, ``.global`` ...) and labels are not instructions."""
    counts: Counter[str] = Counter()
    for m in _INSTRUCTION.finditer(ptx):
        counts[m.group(1)] += 1
    return counts

"""CUDA C to PTX with the machine's clang (the NVPTX back end), cached.

The flags make PTX that fits the machine: 32-bit addresses (``-m32``), device code only, no
CUDA headers (``dualflow_cuda.h`` stands in), FP32 denormals flushed as the machine flushes
them, and every device function inlined (the machine has no call instruction). The cache is
keyed by the preprocessed source, the flags and clang's version, so an edited header is
never served stale.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from dualflow.common.atomic_write import atomic_write
from dualflow.common.build_dir import BUILD_BASE

from .errors import FrontendError

INCLUDE_DIR = Path(__file__).parent / "include"
CACHE_DIR = BUILD_BASE / "frontend"
#: Environment variable naming the clang to use (default: clang-14, then clang).
CLANG_ENV = "DUALFLOW_CLANG"
TIMEOUT_S = 300

BASE_FLAGS = ("--cuda-device-only", "--cuda-gpu-arch=sm_70", "-nocudainc", "-nocudalib", "-m32",
              "-fcuda-flush-denormals-to-zero", "-mllvm", "-inline-threshold=100000")


@lru_cache(maxsize=1)
def clang_path() -> str:
    for name in filter(None, (os.environ.get(CLANG_ENV), "clang-14", "clang")):
        found = shutil.which(name)
        if found:
            return found
    raise FrontendError("clang not found: install Debian's clang-14 (`make clang`) or set DUALFLOW_CLANG")


@lru_cache(maxsize=1)
def clang_version() -> str:
    out = subprocess.run([clang_path(), "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def _run(args: list[str], what: str) -> str:
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise FrontendError(f"clang did not finish {what} within {TIMEOUT_S} s") from None
    if proc.returncode != 0:
        errors = [line for line in proc.stderr.splitlines() if line.strip()]
        shown = "\n".join(errors[:20]) + ("\n..." if len(errors) > 20 else "")
        raise FrontendError(f"clang failed {what}:\n{shown}")
    return proc.stdout


def kernel_parameter_names(preprocessed: str) -> dict[str, list[str]]:
    """The C names of each kernel's parameters, read from the preprocessed source (PTX keeps
    only ``NAME_param_N``), so that commands can name parameters as the source does."""
    out = {}
    for m in re.finditer(r"__attribute__\(\(global\)\)\s+void\s+(\w+)\s*\(([^)]*)\)", preprocessed):
        names = []
        for param in filter(None, (p.strip() for p in m.group(2).split(","))):
            pm = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", param)
            names.append(pm.group(1) if pm else "")
        out[m.group(1)] = names
    return out


def cuda_to_ptx(path: Path, flags: tuple[str, ...] = (), opt_level: str = "-O2") -> tuple[str, dict[str, list[str]]]:
    """PTX text of a ``.cu`` file (from the cache when the preprocessed source, the flags and
    clang are unchanged), and the C parameter names of its kernels."""
    if not path.is_file():
        raise FrontendError(f"cannot read {path}: no such file")
    common = [clang_path(), "-x", "cuda", *BASE_FLAGS, opt_level, "-I", str(INCLUDE_DIR), *flags]
    pre = _run(common + ["-E", str(path), "-o", "-"], f"preprocessing {path}")
    key = hashlib.sha256("\0".join([pre, opt_level, *flags, clang_version()]).encode()).hexdigest()[:24]
    names = kernel_parameter_names(pre)
    cached = CACHE_DIR / f"{key}.ptx"
    if cached.is_file():
        return cached.read_text(), names
    ptx = _run(common + ["-S", str(path), "-o", "-"], f"compiling {path}")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    atomic_write(cached, ptx)
    return ptx, names

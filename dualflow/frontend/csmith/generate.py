"""Running Csmith (Debian's ``csmith`` 2.3.0) with the options that keep to what the machine runs.

The machine is 32-bit with no call instruction: no 64-bit values (``--no-longlong --no-math64``),
no pointers, structs, unions or bitfields (each would put aggregates or addresses of private
globals in play, which the front end's per-thread globals do not promise to support), no
volatiles, no goto (``--no-jumps``), floats only when asked (``floats``: the host then flushes
denormals as the machine does, and neither side fuses a*b+c), and small
programs (few functions, shallow blocks, short arrays), because every call is inlined and every
global and local array is per-thread local memory. ``--lang-cpp`` because the CUDA side compiles
the body as C++ (C's implicit conversions that C++ refuses are then avoided by Csmith itself).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from .errors import StageError

__all__ = ["CsmithOptions", "DEFAULT_OPTIONS", "run_csmith", "csmith_path"]

@dataclass(frozen=True)
class CsmithOptions:
    """The Csmith options a campaign uses (each is Csmith's option of the same name).

    The fixed exclusions (64-bit, pointers, aggregates, volatiles, jumps) are always
    passed; these fields size the program.
    """

    max_funcs: int = 3
    max_block_depth: int = 3
    max_block_size: int = 3
    max_expr_complexity: int = 5
    max_array_dim: int = 2
    max_array_len_per_dim: int = 4
    arrays: bool = True
    divs: bool = True
    muls: bool = True
    consts: bool = True
    embedded_assigns: bool = True
    comma_operators: bool = True
    floats: bool = False

    #: What the machine cannot run or the transform does not handle, always excluded.
    EXCLUDED = ("--no-longlong", "--no-math64", "--no-pointers", "--no-structs", "--no-unions",
                "--no-bitfields", "--no-packed-struct", "--no-volatiles", "--no-volatile-pointers",
                "--no-const-pointers", "--no-jumps", "--no-argc", "--no-builtins")

    def argv(self) -> tuple[str, ...]:
        """The command-line options (without the seed and output)."""
        args = ["--lang-cpp", *self.EXCLUDED, "--concise",
                "--max-funcs", str(self.max_funcs),
                "--max-block-depth", str(self.max_block_depth),
                "--max-block-size", str(self.max_block_size),
                "--max-expr-complexity", str(self.max_expr_complexity),
                "--max-array-dim", str(self.max_array_dim),
                "--max-array-len-per-dim", str(self.max_array_len_per_dim)]
        for name in ("arrays", "divs", "muls", "consts", "embedded_assigns", "comma_operators"):
            flag = name.replace("_", "-")
            args.append(f"--{flag}" if getattr(self, name) else f"--no-{flag}")
        args.append("--float" if self.floats else "--no-float")
        return tuple(args)


DEFAULT_OPTIONS = CsmithOptions()


def csmith_path() -> str:
    """The ``csmith`` executable, or a ``StageError`` saying how to install it."""
    path = shutil.which("csmith")
    if path is None:
        raise StageError("no csmith", "csmith is not installed (Debian: apt-get install csmith)")
    return path


def run_csmith(seed: int, options: CsmithOptions = DEFAULT_OPTIONS, timeout: float = 30.0) -> str:
    """Csmith's program for ``seed`` (its text), or a ``StageError``."""
    argv = [csmith_path(), "--seed", str(seed), *options.argv()]
    try:  # in a folder of its own: csmith writes a platform.info file where it runs
        with tempfile.TemporaryDirectory(prefix="csmith-") as cwd:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        raise StageError("csmith timeout", f"csmith --seed {seed} did not finish in {timeout} s") from e
    if done.returncode != 0 or not done.stdout:
        raise StageError("csmith error",
                         f"csmith --seed {seed} failed (status {done.returncode}): {done.stderr.strip()[:300]}")
    return done.stdout

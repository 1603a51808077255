"""Csmith's C++ output -> one program body shared by a host build and a CUDA kernel.

Csmith writes file-scope globals, functions ``func_1`` ... and a ``main`` that calls ``func_1`` and
hashes every global into a CRC. The transform keeps that text and changes only what must change
so that the same body compiles for the host (g++) and for the GPU (clang CUDA, then the front end):

- each global definition gets the ``CSMITH_GLOBAL`` prefix (``__device__`` in the kernel, nothing
  on the host): the front end's ``private_globals`` option gives every thread its own copy;
- each function declaration gets ``CSMITH_FUNC`` (``always_inline`` on the GPU: the machine has no
  call instruction);
- ``main`` becomes ``csmith_run(csmith_seed)``, which XORs the seed into the chosen globals before
  ``func_1`` runs and returns the checksum (``platform_main_end`` in our ``csmith.h``);
- ``printf`` (only under ``if (print_hash_value)``, never set) becomes a no-op;
- Csmith's unused ``static long __undefined`` goes (``long`` is 64 bits on the host), and so do
  the ``<float.h>``/``<math.h>`` includes of ``--float`` programs (``csmith.h`` includes them
  where they exist: the GPU side has no C library).

A seed of 0 leaves every global as Csmith wrote it, so thread 0 runs the original program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import StageError

__all__ = ["CsmithGlobal", "Program", "TransformError", "transform", "kernel_source", "host_source",
           "INCLUDE_DIR", "KERNEL_NAME"]


class TransformError(StageError):
    """Csmith output the transform does not recognise (a construct our option set should exclude)."""

    def __init__(self, message: str):
        super().__init__("transform", message)


#: The exit status UBSan gives a host run that did something undefined (``host.run_host`` sets it).
UBSAN_EXIT = 86

#: The kernel every generated ``.cu`` defines: ``csmith_kernel(seeds, out)``, out[t] = checksum of
#: the program run with seeds[t], t the thread's global index.
KERNEL_NAME = "csmith_kernel"


def _include_dir():
    from pathlib import Path

    return Path(__file__).resolve().parent / "include"


#: Our runtime headers (``csmith.h``, ``safe_math.h``), found by the include Csmith's output has.
INCLUDE_DIR = _include_dir()

_INT_TYPES = {"int8_t": 8, "int16_t": 16, "int32_t": 32, "uint8_t": 8, "uint16_t": 16, "uint32_t": 32}

_GLOBAL = re.compile(
    r"^(?P<static>static\s+)?(?P<quals>(?:(?:const|volatile)\s+)*)(?P<type>u?int(?:8|16|32)_t|float)\s+"
    r"(?P<name>g_\d+)(?P<dims>(?:\[\d+\])*)\s*(?:=.*)?;\s*$")
_FUNC_DECL = re.compile(r"^(?P<static>static\s+)(?P<rest>.*\bfunc_\d+\s*\(.*)$")
_MAIN = re.compile(r"^int\s+main\s*\(\s*(void)?\s*\)\s*$")
_CALL_FUNC_1 = re.compile(r"^(?P<indent>\s*)func_1\(\);\s*$")
_UNDEFINED = re.compile(r"^static\s+long\s+__undefined;\s*$")
#: System headers of --float programs: our csmith.h includes what each side needs.
_SYSTEM_INCLUDE = re.compile(r"^#include\s+<(?:float|math)\.h>\s*$")

#: Odd multipliers that spread one thread seed into different values for different globals.
_SPREAD = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1, 0xD3A2646C | 1, 0xFD7046C5, 0xB55A4F09)


@dataclass(frozen=True)
class CsmithGlobal:
    """One file-scope variable of a generated program."""

    name: str
    ctype: str
    const: bool
    dims: tuple[int, ...]

    @property
    def words(self) -> int:
        """32-bit words of private storage it needs (each element rounded up to a word)."""
        n = 1
        for d in self.dims:
            n *= d
        return n


@dataclass(frozen=True)
class Program:
    """A generated program, transformed.

    seed: Csmith's seed; options: the Csmith command-line options used; original: Csmith's text;
    body: the transformed text (needs ``csmith.h`` from ``INCLUDE_DIR``); globals: its file-scope
    variables; injected: the globals ``csmith_run`` XORs the thread seed into.
    """

    seed: int
    options: tuple[str, ...]
    original: str
    body: str
    globals: tuple[CsmithGlobal, ...]
    injected: tuple[str, ...]

    @property
    def lines(self) -> int:
        return self.original.count("\n")


def _depth_change(line: str) -> int:
    return line.count("{") - line.count("}")


def transform(text: str, seed: int = 0, options: tuple[str, ...] = (), inject: str = "scalars") -> Program:
    """Transform Csmith output ``text``; ``inject`` chooses where the thread seed goes: "scalars"
    (every non-const scalar global, each through its own odd multiplier) or "first" (the first
    non-const scalar global only)."""
    if inject not in ("scalars", "first"):
        raise ValueError(f"inject must be 'scalars' or 'first', not {inject!r}")
    out: list[str] = []
    globals_: list[CsmithGlobal] = []
    depth = 0
    in_main = False
    main_seen = False
    call_line = None
    for number, line in enumerate(text.splitlines(), 1):
        if depth == 0 and not in_main:
            if _UNDEFINED.match(line) or _SYSTEM_INCLUDE.match(line):
                continue
            m = _GLOBAL.match(line)
            if m:
                dims = tuple(int(d) for d in re.findall(r"\[(\d+)\]", m["dims"]))
                globals_.append(CsmithGlobal(m["name"], m["type"], "const" in m["quals"], dims))
                out.append("CSMITH_GLOBAL " + line)
                continue
            if re.match(r"^(static\s+)?(const\s+|volatile\s+)*\w+\s+g_\d+", line):
                raise TransformError(f"line {number}: a global the transform does not recognise: {line.strip()}")
            m = _FUNC_DECL.match(line)
            if m:
                out.append(f"{m['static']}CSMITH_FUNC {m['rest']}")
                continue
            if _MAIN.match(line):
                in_main = main_seen = True
                out.append("static uint32_t csmith_run(uint32_t csmith_seed)")
                continue
        if in_main:
            m = _CALL_FUNC_1.match(line)
            if m:
                call_line = len(out)
            line = line.replace("printf(", "CSMITH_PRINTF(")
        depth += _depth_change(line)
        if in_main and depth == 0 and "}" in line:
            in_main = False
        out.append(line)
    if not main_seen or call_line is None:
        raise TransformError("no main calling func_1() found: was the program generated with --main?")
    scalars = [g for g in globals_ if not g.const and not g.dims and g.ctype in _INT_TYPES]
    chosen = scalars[:1] if inject == "first" else scalars
    indent = re.match(r"\s*", out[call_line]).group(0)
    statements = [f"{indent}{g.name} ^= ({g.ctype})(csmith_seed * {_SPREAD[i % len(_SPREAD)]:#x}u);"
                  for i, g in enumerate(chosen)]
    out[call_line:call_line] = statements
    return Program(seed, tuple(options), text, "\n".join(out) + "\n", tuple(globals_),
                   tuple(g.name for g in chosen))


def kernel_source(program: Program) -> str:
    """The CUDA file: the body as device code (globals ``__device__``, functions host-device and
    always inlined) and the kernel ``csmith_kernel(seeds, out)``."""
    return f"""// Csmith seed {program.seed}, options: {' '.join(program.options)}
// generated by dualflow.frontend.csmith: every thread runs the program on its own globals
#include "dualflow_cuda.h"
#define CSMITH_GLOBAL __device__
#define CSMITH_FUNC __attribute__((always_inline))
#pragma clang force_cuda_host_device begin
{program.body}
#pragma clang force_cuda_host_device end

extern "C" __global__ void {KERNEL_NAME}(const unsigned int *seeds, unsigned int *out)
{{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = csmith_run(seeds[t]);
}}
"""


def host_source(program: Program) -> str:
    """The host C++ file: the body and a driver that runs it once per seed given on its command
    line, each in a forked child (fresh globals, a CPU-time limit), and prints one checksum per
    line in hex, or ``timeout`` / ``undefined`` (UBSan stopped it) / ``signal N`` / ``exit N`` for a
    child that did not finish, after which it stops (a program with such a seed is skipped)."""
    return f"""// Csmith seed {program.seed}, options: {' '.join(program.options)}
// host build of dualflow.frontend.csmith: usage: prog CPU_SECONDS SEED...
#include <signal.h>
#include <stdio.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#define CSMITH_GLOBAL
#define CSMITH_FUNC
{program.body}

int main(int argc, char **argv)
{{
    if (argc < 2) {{
        fprintf(stderr, "usage: %s CPU_SECONDS SEED...\\n", argv[0]);
        return 2;
    }}
    rlim_t limit = (rlim_t)strtoul(argv[1], 0, 0);
    for (int i = 2; i < argc; i++) {{
        uint32_t seed = (uint32_t)strtoul(argv[i], 0, 0);
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {{
            perror("fork");
            return 2;
        }}
        if (pid == 0) {{
#if defined(__SSE__)
            _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ and DAZ: denormals flushed, as on the GPU */
#endif
            struct rlimit cpu = {{limit, limit}};
            setrlimit(RLIMIT_CPU, &cpu);
            printf("%08x\\n", (unsigned)csmith_run(seed));
            fflush(stdout);
            _exit(0);
        }}
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status)) {{
            int sig = WTERMSIG(status);
            printf(sig == SIGXCPU || sig == SIGKILL ? "timeout\\n" : "signal %d\\n", sig);
            break;  /* the program is skipped anyway: do not spend the other seeds' time */
        }}
        if (WEXITSTATUS(status) != 0) {{ /* UBSan's exit status (host.UBSAN_EXIT): the run was undefined */
            printf(WEXITSTATUS(status) == {UBSAN_EXIT} ? "undefined\\n" : "exit %d\\n", WEXITSTATUS(status));
            break;
        }}
    }}
    return 0;
}}
"""

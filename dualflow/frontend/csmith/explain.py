"""Which globals a mismatching program computes differently: the first step of reducing it.

A checksum says that a thread's globals differ, not which. This builds a variant of the program
whose ``csmith_run`` also records every value it hashes (in hashing order: Csmith's main hashes
each global, arrays element by element) into a private array the kernel copies out and the host
prints, runs it on the host and on one target, and lists per thread the globals that differ.
Recording adds stores after ``func_1`` has run, so it does not change what ``func_1`` computes
(the compiled code around it may change, which can hide a defect: then the checksums still
differ but no recorded value does).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import subprocess
from pathlib import Path

import numpy as np

from .device import Target, compile_kernel
from .errors import StageError
from .transform import INCLUDE_DIR, KERNEL_NAME, Program, host_source, kernel_source

__all__ = ["Difference", "hashed_names", "differing_globals"]

#: Values recorded per thread (a program hashing more records its first ``RECORDED``).
RECORDED = 512

_RECORDER = f"""
CSMITH_GLOBAL uint32_t csmith_values[{RECORDED}];
CSMITH_GLOBAL uint32_t csmith_nvalues = 0;
#define CSMITH_RECORD(v, n, f) \\
    (csmith_values[csmith_nvalues++ % {RECORDED}u] = (uint32_t)(v), transparent_crc(v, n, f))
"""


@dataclasses.dataclass(frozen=True)
class Difference:
    """One global element whose final value differs in one thread."""

    thread: int
    seed: int
    name: str  # g_25[0][1][2]
    host: int
    device: int


def hashed_names(program: Program) -> list[str]:
    """The name of each value ``csmith_run`` hashes, in order (array elements row-major)."""
    dims = {g.name: g.dims for g in program.globals}
    names = []
    main = program.body[program.body.index("csmith_run("):]
    for base in re.findall(r"transparent_crc\((g_\d+)", main):
        shape = dims.get(base, ())
        names += [base + "".join(f"[{i}]" for i in idx) for idx in itertools.product(*map(range, shape))]
    return names


def _recording(program: Program) -> Program:
    head, sep, main = program.body.partition("static uint32_t csmith_run(")
    body = head.replace('#include "csmith.h"', '#include "csmith.h"\n' + _RECORDER, 1) + sep + \
        main.replace("transparent_crc(", "CSMITH_RECORD(")
    return dataclasses.replace(program, body=body)


def differing_globals(program: Program, seeds: np.ndarray, target: Target, folder: Path, *,
                      block: int = 32, opt_level: str = "-O2") -> list[Difference]:
    """Every (thread, global element) whose value after ``func_1`` differs between the host and
    ``target``, threads in order."""
    rec = _recording(program)
    folder.mkdir(parents=True, exist_ok=True)
    width = RECORDED + 1
    cu = folder / "explain.cu"
    cu.write_text(kernel_source(rec).replace(
        "out[t] = csmith_run(seeds[t]);",
        f"out[t * {width}u] = csmith_run(seeds[t]);\n"
        f"    for (unsigned int i = 0; i < {RECORDED}u; i++)\n"
        f"        out[t * {width}u + 1u + i] = csmith_values[i];"))
    source = folder / "explain.cpp"
    source.write_text(host_source(rec).replace(
        'printf("%08x\\n", (unsigned)csmith_run(seed));',
        'printf("%08x", (unsigned)csmith_run(seed));\n'
        f'            for (int i = 0; i < {RECORDED}; i++) printf(" %08x", (unsigned)csmith_values[i]);\n'
        '            printf("\\n");'))
    exe = folder / "explain"
    argv = ["g++", "-O1", "-w", "-ffp-contract=off", "-I", str(INCLUDE_DIR), str(source), "-o", str(exe)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise StageError("gcc error", f"g++ failed on {source}: {done.stderr[:300]}")
    run = subprocess.run([str(exe), "2", *(str(int(s)) for s in seeds)], capture_output=True, text=True,
                         timeout=300)
    host = np.array([[int(x, 16) for x in line.split()] for line in run.stdout.splitlines()], dtype=np.uint32)
    if host.shape != (len(seeds), width):
        raise StageError("host error", f"{exe}: expected {len(seeds)} lines of {width} values")
    device = compile_kernel(cu, opt_level=opt_level)
    dev = target.new_device()
    seeds_addr = dev.upload(np.asarray(seeds, dtype=np.uint32))
    out = dev.alloc(4 * width * len(seeds))
    dev.launch(device.module(target.form)[KERNEL_NAME], grid=len(seeds) // block, block=block,
               params=[seeds_addr, out])
    gpu = dev.copy_out(out, width * len(seeds), np.uint32).reshape(len(seeds), width)
    names = hashed_names(program)
    diffs = []
    for t in range(len(seeds)):
        for i in np.nonzero(host[t, 1:] != gpu[t, 1:])[0]:
            name = names[i] if i < len(names) else f"value {i}"
            diffs.append(Difference(t, int(seeds[t]), name, int(host[t, 1 + i]), int(gpu[t, 1 + i])))
    return diffs


def explain_mismatch(seed: int, folder: Path, target: Target, *, threads: int = 32, block: int = 32,
                     opt_level: str = "-O2", inject: str = "scalars", limit: int = 8) -> str:
    """A few lines naming the globals that differ on ``target`` for the failing program kept in
    ``folder`` (its ``csmith.cpp``); also written to ``folder/explain.txt``."""
    from .differential import thread_seeds
    from .transform import transform

    program = transform((folder / "csmith.cpp").read_text(), seed, inject=inject)
    try:
        diffs = differing_globals(program, thread_seeds(seed, threads), target, folder / "explain",
                                  block=block, opt_level=opt_level)
    except StageError as e:
        text = f"could not explain: {e}"
    else:
        if not diffs:
            text = f"{target.name}: no recorded global differs (recording changed the compiled code?)"
        else:
            threads_hit = sorted({d.thread for d in diffs})
            text = "\n".join([f"{target.name}: {len(diffs)} differing values in {len(threads_hit)} thread(s)"] +
                             [f"  thread {d.thread} (seed {d.seed:#x}): {d.name} host {d.host:#x}, "
                              f"device {d.device:#x}" for d in diffs[:limit]])
    (folder / "explain.txt").write_text(text + "\n")
    return text

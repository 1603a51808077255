"""The host side of the differential test: build the program with g++ and run it per thread seed.

The host build is the reference: the same body (``transform.host_source``) compiled by another
compiler for another machine; since the body is free of undefined behaviour (Csmith's guarantee,
kept by our ``safe_math.h``), every correct compiler gives the same checksum for each seed.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import StageError
from .transform import INCLUDE_DIR, UBSAN_EXIT, Program, host_source

__all__ = ["HostRun", "build_host", "run_host"]


@dataclass(frozen=True)
class HostRun:
    """Per-seed outcome of the host run: a checksum, or None where that seed's run did not finish
    (``failures`` gives the reason per seed index)."""

    checksums: tuple[int | None, ...]
    failures: dict[int, str]


def build_host(program: Program, folder: Path, *, sanitize: bool = True, timeout: float = 60.0) -> Path:
    """Compile the host program into ``folder``; returns the executable. ``sanitize`` (the default)
    adds UndefinedBehaviorSanitizer, float-to-int overflow included, with no recovery, so that a
    run that would be undefined aborts and its program is skipped instead of compared: our safe
    math keeps integer programs defined, but Csmith's --float programs convert floats to integers
    unchecked."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "host.cpp"
    source.write_text(host_source(program))
    exe = folder / ("host" if sanitize else "host-plain")
    argv = ["g++", "-O1", "-w", "-ffp-contract=off", "-I", str(INCLUDE_DIR), str(source), "-o", str(exe)]
    if sanitize:
        argv[1:1] = ["-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise StageError("gcc timeout", f"g++ did not finish in {timeout} s on {source}") from e
    if done.returncode != 0:
        raise StageError("gcc error", f"g++ failed on {source}: {done.stderr.strip()[:500]}")
    return exe


def run_host(exe: Path, seeds: list[int], *, cpu_seconds: int = 1, timeout: float = 120.0) -> HostRun:
    """Run the host program once per seed (each in its own process, ``cpu_seconds`` of CPU time
    at most); the whole run is bounded by ``timeout`` seconds of wall time. The driver stops at
    the first seed that does not finish: the later ones are reported "not run"."""
    argv = [str(exe), str(cpu_seconds), *(str(s) for s in seeds)]
    env = dict(os.environ, UBSAN_OPTIONS=f"halt_on_error=1:exitcode={UBSAN_EXIT}:print_stacktrace=0")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        raise StageError("host timeout", f"{exe} did not finish {len(seeds)} seeds in {timeout} s") from e
    if done.returncode != 0:
        raise StageError("host error", f"{exe} failed (status {done.returncode}): {done.stderr.strip()[:300]}")
    words = done.stdout.replace("signal ", "signal_").replace("exit ", "exit_").split()
    if len(words) > len(seeds) or (len(words) < len(seeds) and (not words or _is_checksum(words[-1]))):
        raise StageError("host error", f"{exe} printed {len(words)} results for {len(seeds)} seeds")
    checksums: list[int | None] = []
    failures: dict[int, str] = {}
    for i in range(len(seeds)):
        word = words[i] if i < len(words) else "not run"
        if _is_checksum(word):
            checksums.append(int(word, 16))
        else:
            checksums.append(None)
            failures[i] = word.replace("_", " ")
    return HostRun(tuple(checksums), failures)


def _is_checksum(word: str) -> bool:
    return len(word) == 8 and all(c in "0123456789abcdef" for c in word)

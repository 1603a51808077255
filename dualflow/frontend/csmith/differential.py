"""One program of the differential test, end to end: generate, transform, build and run on the
host, compile through the front end, run on each target, compare per-thread checksums.

Every outcome is one ``ProgramResult`` whose ``status`` is:

- ``match``: every target gave the host's checksum for every thread;
- ``mismatch``: some target gave another checksum for some thread (a front-end, converter or
  model bug: the campaign stops);
- ``failed``: the GPU path broke on a program the host ran (a fault, a runaway launch, a
  converter error): also a bug, also stops the campaign;
- ``unsupported``: the front end refused the program (``reason`` names the construct);
- ``skipped``: our side could not produce a reference (Csmith, the transform, g++ or clang failed,
  or a host run did not finish in its CPU time).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .device import DeviceProgram, Target, compile_kernel, run_target
from .errors import StageError
from .generate import DEFAULT_OPTIONS, CsmithOptions, run_csmith
from .host import build_host, run_host
from .ptx_census import opcodes, ptx_of
from .transform import Program, kernel_source, transform

__all__ = ["DEFAULT_SETTINGS", "Settings", "ProgramResult", "thread_seeds", "check_program", "FAILING", "STATUSES"]

#: Statuses that mean a bug was found.
FAILING = ("mismatch", "failed")
STATUSES = ("match", "mismatch", "failed", "unsupported", "skipped")


@dataclass(frozen=True)
class Settings:
    """How each program is tested.

    threads / block: the launch (one thread per seed; thread 0 runs the program unchanged);
    targets: the machines to run the kernel on, in order (none: compile only); opt_level:
    clang's level for the kernel; inject: where the thread seed goes (``transform.transform``);
    host_cpu_seconds: CPU time each host run may take; ptx_census: also count the PTX opcodes
    (one more clang run).
    """

    csmith: CsmithOptions = DEFAULT_OPTIONS
    threads: int = 32
    block: int = 32
    targets: tuple[Target, ...] = ()
    opt_level: str = "-O2"
    inject: str = "scalars"
    host_cpu_seconds: int = 1
    ptx_census: bool = False


@dataclass
class ProgramResult:
    """What happened to one program."""

    seed: int
    status: str
    reason: str = ""
    message: str = ""
    lines: int = 0
    registers: int | None = None
    local_bytes: int | None = None
    reg_instructions: int | None = None
    distinct_checksums: int = 0  # how many different checksums the host's threads produced
    mismatches: dict[str, list[int]] = field(default_factory=dict)  # target -> threads that differ
    targets_run: tuple[str, ...] = ()
    opcodes: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    folder: Path | None = None

    def summary(self) -> str:
        """One line for a log."""
        parts = [f"seed {self.seed}: {self.status}"]
        if self.reason:
            parts.append(self.reason)
        if self.mismatches:
            parts.append("; ".join(f"{t}: threads {ts[:8]}" for t, ts in self.mismatches.items()))
        if self.registers is not None:
            parts.append(f"{self.registers} registers, {self.reg_instructions} instructions")
        return ", ".join(parts)


#: The settings a campaign uses unless told otherwise.
DEFAULT_SETTINGS = Settings()


def thread_seeds(program_seed: int, n: int) -> np.ndarray:
    """The per-thread seeds: 0 (the program as generated) for thread 0, then well-spread 32-bit
    values that depend on the program's seed (splitmix32-style mixing)."""
    seeds = np.zeros(n, dtype=np.uint32)
    for t in range(1, n):
        x = (program_seed * 0x9E3779B9 + t * 0x632BE5AB) & 0xFFFFFFFF
        x = ((x ^ (x >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
        x = ((x ^ (x >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
        seeds[t] = x ^ (x >> 16) or 1
    return seeds


def check_program(seed: int, folder: Path, settings: Settings = DEFAULT_SETTINGS) -> ProgramResult:
    """Run program ``seed`` through every stage, with its files in ``folder``."""
    result = ProgramResult(seed, "skipped", folder=folder)
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        result.seconds[stage] = round(now - clock, 3)
        clock = now

    try:
        program = transform(run_csmith(seed, settings.csmith), seed, settings.csmith.argv(), settings.inject)
        result.lines = program.lines
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "csmith.cpp").write_text(program.original)
        seeds = thread_seeds(seed, settings.threads)
        host = run_host(build_host(program, folder), [int(s) for s in seeds], cpu_seconds=settings.host_cpu_seconds)
        lap("host")
        if host.failures:
            first = min(host.failures)
            raise StageError(f"host {host.failures[first]}", f"host run of thread {first} (seed "
                             f"{int(seeds[first]):#x}): {host.failures[first]}")
        expected = np.array(host.checksums, dtype=np.uint32)
        result.distinct_checksums = len(set(host.checksums))
        cu = _write_kernel(program, folder)
        if settings.ptx_census:
            result.opcodes = dict(opcodes(ptx_of(cu, folder / "clang.ptx")))
            lap("ptx")
    except StageError as e:
        result.reason, result.message = e.reason, str(e)
        return result
    try:
        device = compile_kernel(cu, opt_level=settings.opt_level)
    except StageError as e:
        result.status, result.reason, result.message = "unsupported", e.reason, str(e)
        return result
    lap("frontend")
    result.registers, result.local_bytes = device.registers, device.local_bytes
    result.reg_instructions = device.reg_instructions
    return _run_targets(result, device, seeds, expected, settings, lap)


def _write_kernel(program: Program, folder: Path) -> Path:
    cu = folder / "kernel.cu"
    cu.write_text(kernel_source(program))
    return cu


def _run_targets(result: ProgramResult, device: DeviceProgram, seeds: np.ndarray, expected: np.ndarray,
                 settings: Settings, lap) -> ProgramResult:
    ran = []
    for target in settings.targets:
        name = target.name
        try:
            got = run_target(target, device, seeds, block=settings.block)
        except StageError as e:
            result.status, result.reason, result.message = "failed", f"{name}: {e.reason}", str(e)
            result.targets_run = tuple(ran)
            return result
        lap(name)
        ran.append(name)
        wrong = np.nonzero(got != expected)[0]
        if len(wrong):
            result.mismatches[name] = [int(t) for t in wrong]
            result.message += (f"{name}: thread {int(wrong[0])} (seed {int(seeds[wrong[0]]):#x}) gave "
                               f"{int(got[wrong[0]]):08x}, host {int(expected[wrong[0]]):08x}; ")
    result.targets_run = tuple(ran)
    if result.mismatches:
        result.status, result.reason = "mismatch", ", ".join(result.mismatches)
    else:
        result.status = "match"
    return result

"""A campaign: many seeds through ``differential.check_program``, in worker processes, tallied.

Each program runs in one of ``jobs`` worker processes under a wall-time limit: a program whose
stages together run longer (a front-end stage that hangs, a model that crawls) has its worker
killed and replaced, and counts as skipped ("wall timeout"). A program's files live in
``root/work/<seed>`` while it runs; a failing program's are moved to ``root/failures/<seed>``
with its ``result.json``; the others' are deleted.
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path

from .differential import DEFAULT_SETTINGS, FAILING, ProgramResult, Settings, check_program

__all__ = ["Tally", "run_campaign", "default_root"]


def default_root() -> Path:
    """``build/csmith`` under the project's build folder (``dualflow.common.build_dir``)."""
    from dualflow.common.build_dir import BUILD_BASE

    return BUILD_BASE / "csmith"


@dataclass
class Tally:
    """The counts of a campaign."""

    statuses: Counter = field(default_factory=Counter)  # status -> programs
    skipped: Counter = field(default_factory=Counter)  # reason -> programs
    unsupported: Counter = field(default_factory=Counter)  # construct -> programs
    failed: Counter = field(default_factory=Counter)  # reason -> programs (mismatch or failure)
    failures: list[ProgramResult] = field(default_factory=list)
    matched: list[int] = field(default_factory=list)  # seeds that matched everywhere
    examples: dict[str, list[int]] = field(default_factory=dict)  # reason -> its first seeds
    opcodes: Counter = field(default_factory=Counter)  # PTX opcode -> programs using it
    registers: list[int] = field(default_factory=list)
    instructions: list[int] = field(default_factory=list)
    diverse: int = 0  # programs whose threads computed at least two different checksums
    seconds: float = 0.0

    #: Seeds kept per skip or refusal reason, to reproduce it.
    EXAMPLES = 5

    def add(self, r: ProgramResult) -> None:
        self.statuses[r.status] += 1
        if r.status == "match":
            self.matched.append(r.seed)
        if r.status != "match":
            self.examples.setdefault(r.reason, [])
            if len(self.examples[r.reason]) < self.EXAMPLES:
                self.examples[r.reason].append(r.seed)
        if r.status == "skipped":
            self.skipped[r.reason] += 1
        elif r.status == "unsupported":
            self.unsupported[r.reason] += 1
        elif r.status in FAILING:
            self.failed[r.reason] += 1
            self.failures.append(r)
        self.opcodes.update(set(r.opcodes))
        if r.registers is not None:
            self.registers.append(r.registers)
            self.instructions.append(r.reg_instructions or 0)
        if r.distinct_checksums > 1:
            self.diverse += 1

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    @property
    def compiled(self) -> int:
        """Programs the front end compiled (whatever happened on the targets)."""
        return self.statuses["match"] + self.statuses["mismatch"] + self.statuses["failed"]

    def report(self) -> str:
        """The campaign's summary, for a terminal."""
        s = self.statuses
        host_ok = self.total - s["skipped"]
        lines = [f"programs generated: {self.total}",
                 f"  host reference (built and run):  {host_ok}",
                 f"  compiled by the front end:        {self.compiled}",
                 f"  run on every target, all match:   {s['match']}",
                 f"  mismatches:                       {s['mismatch']}",
                 f"  GPU-side failures:                {s['failed']}",
                 f"  unsupported by the front end:     {s['unsupported']}",
                 f"  skipped:                          {s['skipped']}",
                 f"  threads disagreeing among themselves (programs): {self.diverse}"]
        for title, counter in (("skipped, by reason", self.skipped),
                               ("unsupported constructs (programs)", self.unsupported),
                               ("mismatches and failures, by target and reason", self.failed)):
            if counter:
                lines.append(f"{title}:")
                lines += [f"  {n:6d}  {k}" + (f"  (seeds {', '.join(map(str, self.examples[k]))})"
                                              if k in self.examples else "")
                          for k, n in counter.most_common()]
        if self.registers:
            regs, ins = sorted(self.registers), sorted(self.instructions)
            lines.append(f"registers per thread: min {regs[0]}, median {regs[len(regs) // 2]}, max {regs[-1]}; "
                         f"REG instructions: median {ins[len(ins) // 2]}, max {ins[-1]}")
        if self.opcodes:
            lines.append(f"PTX opcodes used ({len(self.opcodes)}; programs using each):")
            lines += [f"  {n:6d}  {k}" for k, n in sorted(self.opcodes.items(), key=lambda kv: (-kv[1], kv[0]))]
        lines.append(f"wall time: {self.seconds:.0f} s")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"statuses": dict(self.statuses), "skipped": dict(self.skipped),
                "unsupported": dict(self.unsupported), "failed": dict(self.failed),
                "failures": [_result_dict(r) for r in self.failures], "examples": self.examples,
                "opcodes": dict(self.opcodes),
                "registers": self.registers, "instructions": self.instructions, "diverse": self.diverse,
                "seconds": round(self.seconds, 1)}


def _result_dict(r: ProgramResult) -> dict:
    d = asdict(r)
    d["folder"] = str(r.folder) if r.folder else None
    return d


def _finish(r: ProgramResult, root: Path) -> None:
    """Keep a failing program's folder under ``root/failures`` (one that ran out of wall time
    under ``root/timeouts``); delete the others'."""
    if r.folder is None or not r.folder.exists():
        return
    keep = "failures" if r.status in FAILING else "timeouts" if r.reason == "wall timeout" else None
    if keep:
        kept = root / keep / str(r.seed)
        shutil.rmtree(kept, ignore_errors=True)
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(r.folder), kept)
        r.folder = kept
        (kept / "result.json").write_text(json.dumps(_result_dict(r), indent=1) + "\n")
    else:
        shutil.rmtree(r.folder, ignore_errors=True)


def _serve(conn: Connection, settings: Settings, root: Path) -> None:
    """A worker: check each seed it receives, send back the result; None ends it."""
    while True:
        seed = conn.recv()
        if seed is None:
            return
        conn.send(check_program(seed, root / "work" / str(seed), settings))


class _Worker:
    def __init__(self, ctx, settings: Settings, root: Path):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, settings, root), daemon=True)
        self.proc.start()
        child.close()
        self.seed: int | None = None
        self.started = 0.0

    def submit(self, seed: int) -> None:
        self.seed, self.started = seed, time.monotonic()
        self.conn.send(seed)

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()  # our own child, by its handle
        self.proc.join()
        self.conn.close()


def run_campaign(seeds: Iterable[int], settings: Settings = DEFAULT_SETTINGS, *, jobs: int = 1,
                 root: Path | None = None, keep_going: bool = False, program_timeout: float = 600.0,
                 on_result: Callable[[ProgramResult], None] | None = None) -> Tally:
    """Check every seed (``jobs`` at a time); stop at the first mismatch or failure unless
    ``keep_going``. ``on_result`` sees each result as it comes (a progress log)."""
    root = root or default_root()
    tally = Tally()
    start = time.monotonic()
    pending = list(seeds)[::-1]

    def record(r: ProgramResult) -> None:
        _finish(r, root)
        tally.add(r)
        if on_result is not None:
            on_result(r)

    ctx = multiprocessing.get_context("fork")
    workers = [_Worker(ctx, settings, root) for _ in range(max(1, jobs))]
    stopping = False
    try:
        while True:
            for w in workers:
                if w.seed is None and pending and not stopping:
                    w.submit(pending.pop())
            busy = [w for w in workers if w.seed is not None]
            if not busy:
                break
            ready = wait([w.conn for w in busy], timeout=1.0)
            for i, w in enumerate(workers):
                if w.seed is None:
                    continue
                if w.conn in ready:
                    try:
                        r = w.conn.recv()
                    except EOFError:  # the worker died (out of memory, an uncaught error)
                        r = None
                    if r is None:
                        r = ProgramResult(w.seed, "skipped", "worker died", folder=root / "work" / str(w.seed))
                        w.stop()
                        workers[i] = w = _Worker(ctx, settings, root)
                    w.seed = None
                    record(r)
                    stopping |= r.status in FAILING and not keep_going
                elif time.monotonic() - w.started > program_timeout:
                    r = ProgramResult(w.seed, "skipped", "wall timeout",
                                      f"seed {w.seed} took more than {program_timeout} s",
                                      folder=root / "work" / str(w.seed))
                    w.stop()
                    workers[i] = _Worker(ctx, settings, root)
                    record(r)
    finally:
        for w in workers:
            w.stop()
    tally.seconds = time.monotonic() - start
    return tally


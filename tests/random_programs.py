"""Checking and shrinking for the converter's property tests (tests/isa/convert/test_convert_property.py).

The random structured REG-form programs themselves come from the package
(``dualflow.testbench.randprog.generator``). ``check_dmax`` converts and
compares one program at one Dmax; ``shrink`` reduces a failing program on its tree and its
shared exit tail (drop statements, flatten regions, unshare exits, drop stores, smaller
launches) while the kind of failure stays the same. Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dualflow.common.errors import KernelFault
from dualflow.isa import Kernel, assemble
from dualflow.isa.convert import ConvertError, WorkLimitExceeded, convert_kernel
from dualflow.testbench.randprog.generator import (
    TCOND,
    Exit,
    If,
    Launch,
    Loop,
    Node,
    Program,
    Seq,
    Straight,
    run_program,
)

#: Steps one conversion of a random program may take before it counts as a hang (a count the
#: converter keeps, dualflow/isa/convert/work.py: the same on a loaded machine as on an idle one).
#: The slowest of 60 programs measured took 1.3 million (benchmarks/converter_work.py), about 13 s of CPU.
WORK_LIMIT = 10_000_000


# ------------------------------------------------------------------------------ checking
@dataclass
class Failure:
    """Why a converted kernel is not equivalent to its REG original."""

    kind: str  #: "mismatch", "fault", "hang", "convert-error", "crash"
    detail: str
    dmax: int
    ring: int

    def describe(self, text: str) -> str:
        return (f"converter {self.kind} at Dmax {self.dmax} (ring {self.ring}): {self.detail}\n"
                f"REG program:\n{text}")


def describe_mismatch(ref: np.ndarray, got: np.ndarray, slots: int, pool: list[int] | tuple = ()) -> str:
    bad = np.flatnonzero(ref != got)
    first = int(bad[0])
    thread, slot = divmod(first, slots)
    what = f" (pool r{pool[slot]})" if slot < len(pool) else ""
    threads = sorted({int(b) // slots for b in bad})
    return (f"{bad.size} of {ref.size} output words differ; first: thread {thread}, slot {slot}{what}: "
            f"REG {int(ref[first]):#010x}, DFLOW {int(got[first]):#010x}; threads affected: "
            f"{threads[:12]}{' ...' if len(threads) > 12 else ''}")


def check_conversion(kernel: Kernel, ref: np.ndarray, dmax: int, ring: int, runner: Callable[[Kernel], np.ndarray],
                     slots: int, pool: list[int] | tuple = (), work_limit: int | None = WORK_LIMIT,
                     variants: frozenset = frozenset(), rings: tuple[int, ...] | None = None):
    """Convert ``kernel`` at one Dmax (with the DFLOW ``variants`` given; ``rings``: the hands'
    rings), run it with ``runner`` and compare with the REG result ``ref``. Returns (Failure or
    None, the conversion report or None)."""
    try:
        dk, report = convert_kernel(kernel, dmax=dmax, ring=ring, variants=variants, rings=rings,
                                    work_limit=work_limit)
    except WorkLimitExceeded as exc:
        return Failure("hang", str(exc), dmax, ring), None
    except ConvertError as exc:
        return Failure("convert-error", str(exc), dmax, ring), None
    except Exception as exc:  # any crash of the converter is a finding
        return Failure("crash", f"{type(exc).__name__}: {exc}", dmax, ring), None
    try:
        got = runner(dk)
    except KernelFault as exc:
        return Failure("fault", str(exc), dmax, ring), report
    if not np.array_equal(ref, got):
        return Failure("mismatch", describe_mismatch(ref, got, slots, pool), dmax, ring), report
    return None, report


def check_dmax(prog: Program, kernel: Kernel, ref: np.ndarray, dmax: int, ring: int,
               work_limit: int | None = WORK_LIMIT, variants: frozenset = frozenset(),
               rings: tuple[int, ...] | None = None):
    """``check_conversion`` for a generated program."""
    return check_conversion(kernel, ref, dmax, ring, lambda k: run_program(prog, k), prog.slots, prog.pool, work_limit,
                            variants, rings)


# ------------------------------------------------------------------------------ shrinking
def _signature(f: Failure) -> tuple:
    """What must stay the same while a failing program is shrunk."""
    if f.kind in ("convert-error", "crash"):
        return f.kind, re.sub(r"\b(r|pc )?\d+", "N", f.detail.split("internal:")[-1].split(":")[-1]).strip()[:60]
    if f.kind == "fault":
        return f.kind, "illegal DFLOW read" in f.detail
    return (f.kind,)


def failure_of(prog: Program, dmax: int, ring: int, work_limit: int | None = WORK_LIMIT) -> Failure | None:
    """The failure of ``prog`` at one Dmax, or None (also when the REG program itself is broken)."""
    try:
        kernel = assemble(prog.text).only
        ref = run_program(prog, kernel)
    except Exception:  # an invalid candidate, not a finding
        return None
    return check_dmax(prog, kernel, ref, dmax, ring, work_limit)[0]


def _candidates(prog: Program):
    """Smaller variants of ``prog``: each a fresh deep copy."""

    def nodes(seq: Seq, path=()):
        for k, item in enumerate(seq.items):
            yield seq, k, item
            if isinstance(item, If):
                yield from nodes(item.then)
                if item.other is not None:
                    yield from nodes(item.other)
            elif isinstance(item, Loop):
                yield from nodes(item.body)

    def all_nodes(p: Program):
        yield from nodes(p.body)
        yield from nodes(p.exit_tail)

    def variants_of(seq: Seq, k: int, item: Node):
        yield []
        if isinstance(item, If):
            yield item.then.items
            if item.other is not None:
                yield item.other.items
                yield [dataclasses.replace(item, other=None)]
            if item.setup:
                yield [dataclasses.replace(item, setup=[], cond=TCOND)]
        elif isinstance(item, Loop):
            yield item.body.items
            if item.divergent:
                yield [dataclasses.replace(item, divergent=False, test_first=False, limit_imm=1)]
            if item.limit_imm not in (None, 1):
                yield [dataclasses.replace(item, limit_imm=1)]
        elif isinstance(item, Exit) and item.shared:
            yield [dataclasses.replace(item, shared=False)]
        elif isinstance(item, Straight) and len(item.lines) > 1:
            half = len(item.lines) // 2
            yield [Straight(item.lines[:half])]
            yield [Straight(item.lines[half:])]
            for j in range(len(item.lines)):
                yield [Straight(item.lines[:j] + item.lines[j + 1:])]

    count = sum(1 for _ in all_nodes(prog))
    for index in range(count):
        seq, k, item = list(all_nodes(prog))[index]
        for repl in variants_of(seq, k, item):
            new = copy.deepcopy(prog)
            nseq, nk, _ = list(all_nodes(new))[index]
            nseq.items[nk:nk + 1] = copy.deepcopy(repl)
            yield new
    for field_name in ("final", "init"):
        items = getattr(prog, field_name)
        for j in range(len(items)):
            new = copy.deepcopy(prog)
            del getattr(new, field_name)[j]
            yield new
    if prog.early:
        yield dataclasses.replace(copy.deepcopy(prog), early=False)
    for launch in (Launch(4, 4, 1), Launch(4, 8, 1), Launch(8, 8, 1), Launch(32, 32, 1)):
        if launch.threads < prog.launch.threads:
            yield dataclasses.replace(copy.deepcopy(prog), launch=launch, n=min(prog.n, launch.threads - 1))


def shrink(prog: Program, dmax: int, ring: int, work_limit: int | None = WORK_LIMIT,
           max_tries: int = 5000) -> tuple[Program, Failure]:
    """Greedy reduction of a failing program (drop statements, flatten regions, drop stores,
    smaller launches), keeping the kind of failure; stops after ``max_tries`` candidates."""
    failure = failure_of(prog, dmax, ring, work_limit)
    assert failure is not None, "the program does not fail"
    want = _signature(failure)
    tries = 0
    changed = True
    while changed and tries < max_tries:
        changed = False
        for cand in _candidates(prog):
            tries += 1
            if tries > max_tries:
                return prog, failure
            f = failure_of(cand, dmax, ring, work_limit)
            if f is not None and _signature(f) == want:
                prog, failure, changed = cand, f, True
                break
    return prog, failure

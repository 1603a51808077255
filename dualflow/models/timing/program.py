"""What the timing model needs to know about each instruction of a kernel, decoded once per kernel.

Everything here is derived from the one instruction-set definition (``SPECS``): unit class,
whether the instruction produces a value, its source fields, its memory space and color, and
how it interacts with the front end (``OpSpec.redirects``: the next pc is only known once the
instruction executes) and with issue (``OpSpec.issue_only``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from dualflow.isa import SPECS, Form, Kernel, Opcode
from dualflow.isa.opcodes import LOADS, STORES, ModKind, UnitClass


@dataclass(frozen=True, slots=True)
class StaticInstruction:
    """Timing-relevant facts of one instruction.

    Attributes
    ----------
    pc, op, unit, unit_name: position, opcode, execution-unit class and its name.
    produces: writes a value (DFLOW: the ring slot at RP; REG: ``dst`` unless it is rz).
    sources: REG: register numbers read; DFLOW: distances read (absent operands left out).
    unique_sources: the same without repeats: one register-file read each.
    dst: REG destination register, or -1 (none, or DFLOW form).
    space: "global", "shared", "local" for loads and stores, "param" for ldc, else "".
    is_load, is_store: memory direction.
    color: memory-ordering color (DFLOW memory instructions), else -1.
    redirect: fetch waits for this instruction to complete (``OpSpec.redirects``).
    issue_only: completes at issue, without collector or unit (``OpSpec.issue_only``).
    is_mem: a load or store (ldc included).
    ordered: a global, shared or local access, subject to the memory-ordering rule.
    needs_cu: goes through a collector unit (everything but issue-only instructions and
        operand-less redirects, which go straight to the branch unit).
    source_hands, unique_hands: DFLOW, ``Variant.HANDS``: the hand each of ``sources`` and
        ``unique_sources`` reads (a source is a (hand, distance) pair, and one named twice is
        read once); all 0 otherwise.
    dst_hand: DFLOW, ``Variant.HANDS``: the hand a producer writes; 0 otherwise.
    """

    pc: int
    op: Opcode
    unit: UnitClass
    unit_name: str
    produces: bool
    sources: tuple[int, ...]
    unique_sources: tuple[int, ...]
    dst: int
    space: str
    is_load: bool
    is_store: bool
    color: int
    redirect: bool
    issue_only: bool
    is_mem: bool
    ordered: bool
    needs_cu: bool
    source_hands: tuple[int, ...] = ()
    unique_hands: tuple[int, ...] = ()
    dst_hand: int = 0


def decode_kernel(kernel: Kernel) -> list[StaticInstruction]:
    """One ``StaticInstruction`` per pc of the kernel."""
    dflow = kernel.form is Form.DFLOW
    hands = dflow and kernel.hands
    out = []
    for pc, ins in enumerate(kernel.code):
        spec = SPECS[ins.op]
        fields = ins.source_fields()
        sources = tuple(fields) if dflow else tuple(f - 1 for f in fields)
        pairs = tuple(ins.hand_sources()) if hands else tuple((0, f) for f in sources)
        unique = tuple(dict.fromkeys(pairs))
        writes = spec.produces and (dflow or ins.dst != 0)
        space = LOADS.get(ins.op) or STORES.get(ins.op) or ("param" if ins.op is Opcode.LDC else "")
        issue_only, redirect = spec.issue_only, spec.redirects
        out.append(StaticInstruction(
            pc=pc, op=ins.op, unit=spec.unit, unit_name=spec.unit.value, produces=writes, sources=sources,
            unique_sources=tuple(d for _, d in unique),
            dst=ins.dst - 1 if writes and not dflow else -1, space=space,
            is_load=ins.op in LOADS or ins.op is Opcode.LDC, is_store=ins.op in STORES,
            color=ins.mod if spec.mod is ModKind.COLOR else -1,
            redirect=redirect, issue_only=issue_only, is_mem=bool(space),
            ordered=space in ("global", "shared", "local"),
            needs_cu=not issue_only and (bool(sources) or not redirect),
            source_hands=tuple(h for h, _ in pairs), unique_hands=tuple(h for h, _ in unique),
            dst_hand=ins.dst_hand if hands else 0))
    return out


T = TypeVar("T")


class PerKernel(Generic[T]):
    """``derive(kernel)``, kept for the last ``keep`` kernels: host drivers launch the same kernels
    again and again (gaussian: two kernels, 2 (n - 1) launches). A kernel is mutable, so a kept
    result is used only while the kernel's form, code, rings and variants are still those it was
    derived from."""

    def __init__(self, derive: Callable[[Kernel], T], keep: int = 8):
        self._derive, self._keep = derive, keep
        self._kept: dict[int, tuple[Kernel, Form, tuple, tuple, frozenset, T]] = {}

    def __call__(self, kernel: Kernel) -> T:
        kept = self._kept.get(id(kernel))
        if (kept is not None and kept[0] is kernel and kept[1] is kernel.form and kept[2] == tuple(kernel.code)
                and kept[3] == kernel.rings and kept[4] == kernel.variants):
            return kept[5]
        value = self._derive(kernel)
        if len(self._kept) >= self._keep:
            self._kept.pop(next(iter(self._kept)))
        self._kept[id(kernel)] = (kernel, kernel.form, tuple(kernel.code), kernel.rings, kernel.variants, value)
        return value


#: ``decode_kernel``, kept per kernel.
decoded = PerKernel(decode_kernel)

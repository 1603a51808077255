"""The functional SIMT executor: runs a batch of whole blocks of one launch.

State is held per warp in arrays shaped ``[warps, lanes]`` so that one warp instruction is
evaluated over all its lanes at once, and every warp sitting at the same pc executes it
together: the scheduler repeatedly picks the lowest pc among runnable warps (which keeps warps
of a block, and blocks, in step) and runs that instruction for the whole group. Any order of
warps is a legal SIMT execution; this one is fixed, so results and traces are deterministic.

SIMT control flow (docs/isa.md, "Control flow"): each warp has a divergence stack of entries
(kind, pc, mask, rp). ``ssy L`` pushes a SYNC entry for the reconvergence point L; a divergent
branch continues with the taken lanes and pushes a DIV entry for the fall-through lanes;
``sync`` ends a path: it raises the nearest SYNC entry's rp to the path's rp (DFLOW) and pops.
``exit`` retires the active lanes and pops.

DFLOW operands: the ring of ``ring`` slots per warp holds, per slot and lane, the value and
the position (logical RP) it was written at. A read at distance d from RP is legal only if the
lane's slot holds exactly position RP - d; anything else is reported as an illegal read. A
uniform operand (``Variant.UNIFORM_OPERANDS``) reads no ring slot: it is the launch's parameter
word or the warp's special register.

``Variant.HANDS``: the kernel's rings (hands) are stacked in one array of ``capacity`` slots,
hand h's from ``_hand_base[h]``, and each has its RP (``rps[h]``; ``rp`` is hand s's row). Hands
kernels take their own reader and writer (no ``_same_rp`` shortcut: every read is the general
one), and their stack entries hold one RP per hand (a tuple), joined hand by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dualflow.common.errors import KernelFault
from dualflow.isa import SPECS, Form, Instruction, Kernel, Opcode, format_instruction
from dualflow.isa.opcodes import (
    HAND_NAMES,
    LOADS,
    STORES,
    BranchIf,
    ModKind,
    SpecialReg,
    Syntax,
    VoteMode,
    uniform_operand,
)
from dualflow.machine.functional import FunctionalConfig

from . import alu
from .memory import GlobalMemory
from .trace import HandTraceRecord, TraceRecord

U32 = np.uint32
SYNC_ENTRY, DIV_ENTRY = 0, 1
#: Tag of a ring slot this lane never wrote: below every position, including negative ones
#: (a distance reaching before the warp's first producer).
NEVER_WRITTEN = np.iinfo(np.int64).min
_NO_PC = np.iinfo(np.int64).max  # the pc of a warp that cannot run, above every real one
#: ``_uniform_rp``'s ``first`` of warps at one RP that are not consecutive, and of warps at several.
_ONE_RP, _SEVERAL_RPS = -1, -2
#: Opcodes whose handlers change more than their warps' pc (control flow, exits, barriers).
_CONTROL = frozenset({Opcode.BRA, Opcode.SSY, Opcode.SYNC, Opcode.EXIT, Opcode.BAR})
#: Integer opcodes whose ``alu`` function takes an immediate as a scalar (broadcast over the
#: lanes, the same values as a full array of it, without building one per step).
_SCALAR_IMMEDIATE = frozenset({Opcode.IADD, Opcode.ISUB, Opcode.IMUL, Opcode.IAND, Opcode.IOR, Opcode.IXOR,
                               Opcode.ISHL, Opcode.ISHR, Opcode.ISRA, Opcode.IMIN, Opcode.IMAX, Opcode.UMIN,
                               Opcode.UMAX, Opcode.ISETP, Opcode.USETP})


def warp_rows(g: np.ndarray) -> slice | np.ndarray:
    """The rows of warps ``g`` (ascending, as every step gives them): a slice when they are
    consecutive (one warp, most steps of a small launch, or a run), which indexes a view
    instead of copying through an index array; else ``g`` itself."""
    first, n = int(g[0]), len(g)
    if n == 1 or int(g[-1]) - first == n - 1:
        return slice(first, first + n)
    return g


@dataclass
class StackEntry:
    kind: int  # SYNC_ENTRY or DIV_ENTRY
    pc: int
    mask: np.ndarray  # bool [lanes]
    rp: int | tuple[int, ...]  # DFLOW: the RP; with Variant.HANDS, one per hand


@dataclass(frozen=True)
class Geometry:
    """Launch shape, shared by every batch of the launch."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    warp_size: int

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // self.warp_size)

    @property
    def num_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    def block_coords(self, linear: int) -> tuple[int, int, int]:
        gx, gy, _ = self.grid
        return linear % gx, (linear // gx) % gy, linear // (gx * gy)


class BatchExecutor:
    """Executes the given blocks of a launch to completion."""

    def __init__(self, kernel: Kernel, geometry: Geometry, blocks: range, params: np.ndarray,
                 memory: GlobalMemory, config: FunctionalConfig, warp_counts: np.ndarray,
                 thread_counts: np.ndarray, budget: list[int], trace: list[TraceRecord] | None):
        self.kernel, self.geo, self.blocks = kernel, geometry, blocks
        self.mem, self.config, self.trace = memory, config, trace
        self.limit = config.instruction_budget(geometry.num_blocks * geometry.warps_per_block)
        self.distance_operands = kernel.form is Form.DFLOW  # ring slots read by distance, an RP per warp
        self.hands = self.distance_operands and kernel.hands  # Variant.HANDS: several rings, one RP each
        L = self.L = geometry.warp_size
        wpb = geometry.warps_per_block
        nw = self.nw = len(blocks) * wpb
        self.wblock = np.repeat(np.arange(len(blocks)), wpb)  # batch-local block of each warp
        self.wid = np.tile(np.arange(wpb), len(blocks))  # warp index within its block
        self._thread = self.wid[:, None] * L + np.arange(L)[None, :]  # linear thread id in block
        self.alive = np.empty((nw, L), dtype=bool)
        self.active = np.empty((nw, L), dtype=bool)
        self.pc = np.empty(nw, dtype=np.int64)
        self.done = np.empty(nw, dtype=bool)
        self.waiting = np.empty(nw, dtype=bool)
        self.seq = np.empty(nw, dtype=np.int64)
        if self.hands:
            self._hand_base = np.concatenate(([0], np.cumsum(kernel.rings)[:-1])).tolist()
            self.ring = np.zeros((kernel.capacity, nw, L), dtype=U32)
            self.tag = np.full((kernel.capacity, nw, L), NEVER_WRITTEN, dtype=np.int64)
            self.rps = np.zeros((len(kernel.rings), nw), dtype=np.int64)
            self.rp = self.rps[0]  # hand s
            self._ring_rows, self._tag_rows = self.ring.reshape(-1, L), self.tag.reshape(-1, L)
        elif self.distance_operands:
            self.ring = np.zeros((kernel.ring, nw, L), dtype=U32)
            self.tag = np.full((kernel.ring, nw, L), NEVER_WRITTEN, dtype=np.int64)
            self.rp = np.zeros(nw, dtype=np.int64)
            # [slot * nw + warp, lane] views: one index per warp is cheaper than a (slot, warp) pair
            self._ring_rows, self._tag_rows = self.ring.reshape(-1, L), self.tag.reshape(-1, L)
        else:
            self.regs = np.zeros((max(kernel.regs, 1), nw, L), dtype=U32)
        self.shared = np.zeros((len(blocks), kernel.shared_bytes // 4), dtype=U32)
        self.local = np.zeros((nw, L, kernel.local_bytes // 4), dtype=U32)
        self.sregs: dict[SpecialReg, np.ndarray] = {}  # those the kernel reads (``_special_register``)
        self._begin(params, warp_counts, thread_counts, budget)
        self.handlers = [self._compile(pc, ins) for pc, ins in enumerate(kernel.code)]
        #: per pc: its handler only moves its warps to the next pc (no branch, stack, exit or
        #: barrier), which lets ``next_step`` find the next step from the last one
        self._advances_only = [ins.op not in _CONTROL and SPECS[ins.op].branch_if is None for ins in kernel.code]

    def restart(self, params: np.ndarray, warp_counts: np.ndarray, thread_counts: np.ndarray,
                budget: list[int]) -> None:
        """Run the same blocks again for another launch of the same kernel (same geometry,
        memory and configuration), with these parameters, counts and budget: the state is a
        new executor's, the handlers are kept (compiling them is most of a small batch's set-up)."""
        if self.distance_operands:
            self.ring.fill(0)
            self.tag.fill(NEVER_WRITTEN)
            (self.rps if self.hands else self.rp).fill(0)
        else:
            self.regs.fill(0)
        self.shared.fill(0)
        self.local.fill(0)
        self._begin(params, warp_counts, thread_counts, budget)

    def _begin(self, params: np.ndarray, warp_counts: np.ndarray, thread_counts: np.ndarray,
               budget: list[int]) -> None:
        """The state at the start of a launch but registers, shared and local memory (which
        ``__init__`` makes and ``restart`` clears), in the arrays the handlers hold."""
        self.params = params
        self.warp_counts, self.thread_counts, self.budget = warp_counts, thread_counts, budget
        np.less(self._thread, self.geo.threads_per_block, out=self.alive)
        self.active[:] = self.alive
        self.pc.fill(0)
        np.logical_not(self.alive.any(axis=1), out=self.done)
        self.waiting.fill(False)
        self.stacks: list[list[StackEntry]] = [[] for _ in range(self.nw)]
        self.seq.fill(0)
        self._last: tuple[int, np.ndarray, np.ndarray, int] | None = None  # see next_step
        self._cand, self._others = self.pc, _NO_PC  # see next_step
        self._same_rp: tuple[np.ndarray, int, int] | None = None  # see _uniform_rp
        self.last_access: tuple[np.ndarray, np.ndarray | None] | None = None  # (addresses, store data)
        #: Called as ``watch(space, g, mask, words, data)`` by every global and shared load (data
        #: None) and store just before it touches memory: the flat word indices into
        #: ``memory.words`` (global) or ``shared`` (shared). The timing streams journal and
        #: race-check through it; None (the default) costs one test per memory instruction.
        self.watch: Callable[[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], None] | None = None

    # ------------------------------------------------------------------ set-up
    def _special_register(self, sreg: SpecialReg) -> np.ndarray:
        """Every lane's value of ``sreg`` (``[warps, lanes]``), computed the first time an ``s2r``
        reads it: a kernel reads a few of them, and a small launch spent a tenth of its set-up
        computing all."""
        table = self.sregs.get(sreg)
        if table is not None:
            return table
        thread, shape = self._thread, self._thread.shape
        (bx, by, bz), grid = self.geo.block, self.geo.grid

        def full(v: int) -> np.ndarray:
            return np.full(shape, v, dtype=U32)

        def ctaid(axis: int) -> np.ndarray:
            coords = np.array([self.geo.block_coords(b) for b in self.blocks], dtype=np.int64).reshape(-1, 3)
            return np.broadcast_to(coords[self.wblock][:, axis:axis + 1], shape)

        value = {
            SpecialReg.TID_X: lambda: thread % bx, SpecialReg.TID_Y: lambda: (thread // bx) % by,
            SpecialReg.TID_Z: lambda: thread // (bx * by),
            SpecialReg.NTID_X: lambda: full(bx), SpecialReg.NTID_Y: lambda: full(by),
            SpecialReg.NTID_Z: lambda: full(bz),
            SpecialReg.NCTAID_X: lambda: full(grid[0]), SpecialReg.NCTAID_Y: lambda: full(grid[1]),
            SpecialReg.NCTAID_Z: lambda: full(grid[2]),
            SpecialReg.LANEID: lambda: np.broadcast_to(np.arange(self.L), shape),
            SpecialReg.WARPID: lambda: np.broadcast_to(self.wid[:, None], shape),
            SpecialReg.NWARPID: lambda: full(self.geo.warps_per_block),
            SpecialReg.CTAID_X: lambda: ctaid(0), SpecialReg.CTAID_Y: lambda: ctaid(1),
            SpecialReg.CTAID_Z: lambda: ctaid(2),
        }[sreg]()
        table = self.sregs[sreg] = np.ascontiguousarray(value, dtype=U32)
        return table

    # ------------------------------------------------------------------ faults
    def fault(self, message: str, pc: int, warp: int | None = None, lane: int | None = None,
              address: int | None = None) -> KernelFault:
        ins = format_instruction(self.kernel.code[pc], self.kernel.form, self.kernel.labels, self.kernel.params)
        loc = self.kernel.locations.get(pc)
        where = f"`{ins}`" + (f" ({loc})" if loc else "")
        block = None
        if warp is not None:
            block = self.geo.block_coords(self.blocks[int(self.wblock[warp])])
            warp = int(self.wid[warp])
        return KernelFault(message, kernel=self.kernel.name, pc=pc, block=block, warp=warp, lane=lane,
                           address=address, where=where)

    def ran_past_end(self, warp: int) -> KernelFault:
        """The fault of a warp whose path ends without ``exit``, named by the last instruction."""
        n = len(self.kernel.code)
        return self.fault(f"execution ran past the end of the kernel ({n} instructions): a path ends without exit",
                          n - 1, warp)

    def _first(self, g: np.ndarray, bad: np.ndarray) -> tuple[int, int]:
        row, lane = np.argwhere(bad)[0]
        return int(g[row]), int(lane)

    # ------------------------------------------------------------------ operands
    def _reader(self, pc: int, field_value: int, uniform: bool = False,
                hand: int = 0) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        if uniform:
            return self._uniform_reader(field_value)
        if field_value == 0:
            L = self.L
            return lambda g, mask: np.zeros((len(g), L), dtype=U32)
        if not self.distance_operands:
            reg = self.regs[field_value - 1]
            return lambda g, mask: reg[warp_rows(g)]  # a view at most until the step's write
        if self.hands:
            return self._hand_reader(pc, hand, field_value)
        dist, ring, tag, n, nw, rp = field_value, self._ring_rows, self._tag_rows, self.kernel.ring, self.nw, self.rp
        uniform = self._uniform_rp

        def read(g: np.ndarray, mask: np.ndarray) -> np.ndarray:
            same = self._same_rp
            if same is None or same[0] is not g:
                same = uniform(g)
            first, p = same[1], same[2]
            if first >= 0:  # one warp, or consecutive warps at one RP (in step): their rows of the
                p -= dist  # slot are consecutive, a slice, no index arrays
                r = p % n * nw + first
                if not np.count_nonzero((tag[r:r + len(g)] != p) & mask):
                    return ring[r:r + len(g)].copy()
            elif first == _ONE_RP:  # warps at one RP: their rows of the slot by index, one position
                p -= dist
                row = g + p % n * nw
                if not np.count_nonzero((tag[row] != p) & mask):
                    return ring[row]
            # several RPs, or an illegal read (which this path reports)
            pos = rp[g] - dist
            row = pos % n * nw + g
            tags = tag[row]
            bad = mask & (tags != pos[:, None])
            if np.count_nonzero(bad):
                self._illegal_read(pc, g, bad, tags, pos, dist)
            return ring[row]

        return read

    def _hand_reader(self, pc: int, hand: int, dist: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """``Variant.HANDS``: the read of ``|hd|``, position RP_h - d of hand h, checked as
        ``_reader``'s general path checks it."""
        ring, tag, n, nw, rp = self._ring_rows, self._tag_rows, self.kernel.rings[hand], self.nw, self.rps[hand]
        base = self._hand_base[hand] * nw

        def read(g: np.ndarray, mask: np.ndarray) -> np.ndarray:
            pos = rp[g] - dist
            row = base + pos % n * nw + g
            tags = tag[row]
            bad = mask & (tags != pos[:, None])
            if np.count_nonzero(bad):
                self._illegal_read(pc, g, bad, tags, pos, dist, hand)
            return ring[row]

        return read

    def _uniform_reader(self, field_value: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """A uniform operand (``Variant.UNIFORM_OPERANDS``): the value held once per warp, given
        to every lane. Not a ring read, so nothing to check: a parameter word is this launch's,
        a special register the warp's."""
        named = uniform_operand(field_value)
        if isinstance(named, SpecialReg):
            table = self._special_register(named)
            return lambda g, mask: table[warp_rows(g)]
        L = self.L
        return lambda g, mask: np.full((len(g), L), self.params[named], dtype=U32)  # this launch's

    def _uniform_rp(self, g: np.ndarray) -> tuple[np.ndarray, int, int]:
        """D-FLOW: ``(g, first, rp)`` when warps ``g`` are consecutive (``first`` the first) and at
        one RP, ``(g, _ONE_RP, rp)`` when they are at one RP but not consecutive, else ``(g,
        _SEVERAL_RPS, 0)``; kept in ``_same_rp`` for the other operands of the step's instruction,
        until RP moves (every change of ``rp`` clears it)."""
        if len(g) == 1:  # one warp: most steps of a small launch, every step of the reference engine
            first = int(g[0])
            same = g, first, int(self.rp[first])
        else:
            rows = warp_rows(g)
            rps = self.rp[rows]
            p = int(rps[0])
            if np.count_nonzero(rps != p):
                same = g, _SEVERAL_RPS, 0
            else:
                same = g, rows.start if type(rows) is slice else _ONE_RP, p
        self._same_rp = same
        return same

    def _illegal_read(self, pc, g, bad, tags, pos, dist, hand: int | None = None) -> None:
        warp, lane = self._first(g, bad)
        row = int(np.flatnonzero(g == warp)[0])
        p, t = int(pos[row]), int(tags[row, lane])
        if t == NEVER_WRITTEN:
            why = f"this lane's path never wrote position {p} (nor anything else in that slot)"
        elif t < p:
            why = f"this lane's path never wrote position {p} (the slot last held position {t})"
        elif hand is None:
            why = f"position {p} was overwritten by position {t} (ring of {self.kernel.ring} slots)"
        else:
            why = (f"position {p} was overwritten by position {t} (hand {HAND_NAMES[hand]}'s ring of "
                   f"{self.kernel.rings[hand]} slots)")
        if hand is None:
            raise self.fault(f"illegal DFLOW read of |{dist}| at RP {int(self.rp[warp])}: {why}", pc, warp, lane)
        name = HAND_NAMES[hand]
        raise self.fault(f"illegal DFLOW read of |{name}{dist}| at RP_{name} {int(self.rps[hand, warp])}: {why}",
                         pc, warp, lane)

    def _hand_writer(self, hand: int) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
        """``Variant.HANDS``: a producer's write of hand ``hand`` at its RP, which advances."""
        ring, tag, n, nw, rp = self._ring_rows, self._tag_rows, self.kernel.rings[hand], self.nw, self.rps[hand]
        base = self._hand_base[hand] * nw

        def write(g: np.ndarray, mask: np.ndarray, values: np.ndarray) -> None:
            pos = rp[g]
            row = base + pos % n * nw + g
            rp[g] = pos + 1
            if np.count_nonzero(mask) == mask.size:
                ring[row] = values
                tag[row] = pos[:, None]
            else:
                ring[row] = np.where(mask, values, ring[row])
                tag[row] = np.where(mask, pos[:, None], tag[row])

        return write

    def _entry_rp(self, w: int, hand: int = 0, advance: int = 0) -> int | tuple[int, ...]:
        """The rp of a stack entry pushed for warp ``w`` now: its RP (with ``advance`` added to
        hand ``hand``; one per hand with ``Variant.HANDS``), 0 in REG form."""
        if not self.distance_operands:
            return 0
        if self.hands:
            rps = self.rps[:, w].tolist()
            rps[hand] += advance
            return tuple(rps)
        return int(self.rp[w]) + advance

    def _writer(self, ins: Instruction) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
        if self.hands:
            return self._hand_writer(ins.dst_hand)
        if self.distance_operands:
            ring, tag, n, nw, rp = self._ring_rows, self._tag_rows, self.kernel.ring, self.nw, self.rp

            def write(g: np.ndarray, mask: np.ndarray, values: np.ndarray) -> None:
                same = self._same_rp
                if same is None or same[0] is not g:
                    same = self._uniform_rp(g)
                self._same_rp = None  # RP moves
                first, p = same[1], same[2]
                if first >= 0:  # one warp, or consecutive warps at one RP: their rows of the slot
                    r = p % n * nw + first  # as a view, written in place
                    np.copyto(ring[r:r + len(g)], values, where=mask, casting="unsafe")  # as setitem casts
                    np.copyto(tag[r:r + len(g)], p, where=mask)
                    rp[first:first + len(g)] += 1
                    return
                if first == _ONE_RP:  # one position for every warp
                    row = g + p % n * nw
                    written = p
                    rp[g] = p + 1
                else:
                    pos = rp[g]
                    row = pos % n * nw + g
                    written = pos[:, None]
                    rp[g] = pos + 1
                if np.count_nonzero(mask) == mask.size:  # every lane: no merge with the old values
                    ring[row] = values
                    tag[row] = written
                else:
                    ring[row] = np.where(mask, values, ring[row])
                    tag[row] = np.where(mask, written, tag[row])

            return write
        if ins.dst == 0:
            return lambda g, mask, values: None
        reg = self.regs[ins.dst - 1]

        def write_reg(g: np.ndarray, mask: np.ndarray, values: np.ndarray) -> None:
            rows = warp_rows(g)
            if np.count_nonzero(mask) == mask.size:  # every lane: no merge with the old values
                reg[rows] = values
            elif type(rows) is slice:  # the rows as a view, written in place
                np.copyto(reg[rows], values, where=mask, casting="unsafe")  # as setitem casts
            else:
                reg[rows] = np.where(mask, values, reg[rows])

        return write_reg

    # ------------------------------------------------------------------ compile
    def _compile(self, pc: int, ins: Instruction) -> Callable[[np.ndarray, np.ndarray], None]:
        spec = SPECS[ins.op]
        op = ins.op
        ra, rb, rc = (self._reader(pc, getattr(ins, f), ins.is_uniform(f), ins.hand_of(f) if self.hands else 0)
                      for f in ("a", "b", "c"))
        if ins.bimm and spec.syntax in (Syntax.BI, Syntax.A_BI):
            imm, L = U32(ins.imm), self.L
            if op in _SCALAR_IMMEDIATE:
                rb = lambda g, mask: imm  # noqa: E731
            else:
                rb = lambda g, mask: np.full((len(g), L), imm, dtype=U32)  # noqa: E731
        write = self._writer(ins)
        nxt = pc + 1

        def advance(g: np.ndarray) -> None:
            self.pc[g] = nxt

        if op in alu.BINARY or spec.mod is ModKind.CMP:
            fn = alu.BINARY.get(op) or alu.compare(op, ins.mod)

            def binary(g, mask):
                write(g, mask, fn(ra(g, mask), rb(g, mask)))
                advance(g)
            return binary
        if op in alu.UNARY:
            fn1 = alu.UNARY[op]

            def unary(g, mask):
                write(g, mask, fn1(ra(g, mask)))
                advance(g)
            return unary
        if op in alu.TERNARY:
            fn3 = alu.TERNARY[op]

            def ternary(g, mask):
                write(g, mask, fn3(ra(g, mask), rb(g, mask), rc(g, mask)))
                advance(g)
            return ternary
        if op is Opcode.MOV:
            def mov(g, mask):
                write(g, mask, rb(g, mask))
                advance(g)
            return mov
        if op is Opcode.S2R:
            table = self._special_register(SpecialReg(ins.mod))

            def s2r(g, mask):
                write(g, mask, table[warp_rows(g)])
                advance(g)
            return s2r
        if op is Opcode.LDC:
            index, L = ins.imm // 4, self.L

            def ldc(g, mask):
                write(g, mask, np.full((len(g), L), self.params[index], dtype=U32))  # this launch's
                advance(g)
            return ldc
        if op is Opcode.VOTE:
            return self._vote(ins, ra, write, advance)
        if op in LOADS or op in STORES:
            return self._memory(pc, ins, ra, rb, write, advance)
        return self._control(pc, ins, ra)

    def _vote(self, ins, ra, write, advance):
        mode = VoteMode(ins.mod)
        weights = (U32(1) << np.arange(self.L, dtype=U32))

        def vote(g, mask):
            pred = (ra(g, mask) != 0) & mask
            if mode is VoteMode.ANY:
                r = pred.any(axis=1)
            elif mode is VoteMode.ALL:
                r = (pred | ~mask).all(axis=1)
            else:
                r = (pred * weights).sum(axis=1, dtype=np.uint64)
            write(g, mask, np.repeat(r.astype(U32)[:, None], self.L, axis=1))
            advance(g)
        return vote

    # ------------------------------------------------------------------ memory
    def _memory(self, pc, ins, ra, rb, write, advance):
        op = ins.op
        space = LOADS.get(op) or STORES[op]
        is_load = op in LOADS
        offset = ins.imm
        L = self.L
        watched = space != "local"  # local memory is private to a lane: nothing to watch

        def addresses(g, mask):
            addr = ra(g, mask).astype(np.int64)
            if offset:  # a uint32 register is already below 2^32
                addr = (addr + offset) & 0xFFFFFFFF
            misaligned = mask & (addr & 3).astype(bool)
            # np.count_nonzero, not ndarray.any: its Python wrapper cost a few-warp step 2 us per test
            if np.count_nonzero(misaligned):
                w, lane = self._first(g, misaligned)
                raise self.fault(f"misaligned {space} access (4-byte words need 4-byte alignment)",
                                 pc, w, lane, int(addr[np.flatnonzero(g == w)[0], lane]))
            return addr

        def out_of_bounds(g, mask, addr, bad, what):
            w, lane = self._first(g, mask & bad)
            raise self.fault(f"out-of-bounds {space} access ({what})", pc, w, lane,
                             int(addr[np.flatnonzero(g == w)[0], lane]))

        if space == "global":
            mem = self.mem

            def index(g, mask, addr):
                words = addr >> 2
                valid = mem.valid
                inside = words < len(valid)
                if np.count_nonzero(inside) == inside.size:  # every lane inside the allocated words
                    ok = valid[words]
                else:
                    ok = np.zeros_like(mask)
                    ok[inside] = valid[words[inside]]
                if np.count_nonzero(mask > ok):  # an active lane not inside an allocation
                    out_of_bounds(g, mask, addr, ~ok, "not inside any allocation")
                return words, mem.words
        elif space == "shared":
            size = self.kernel.shared_bytes

            def index(g, mask, addr):
                if np.count_nonzero(mask & (addr >= size)):
                    out_of_bounds(g, mask, addr, addr >= size, f"block has {size} bytes of shared memory")
                words = self.wblock[g][:, None] * (size // 4) + (addr >> 2)
                return words, self.shared.reshape(-1)
        else:
            size = self.kernel.local_bytes

            def index(g, mask, addr):
                if np.count_nonzero(mask & (addr >= size)):
                    out_of_bounds(g, mask, addr, addr >= size, f"thread has {size} bytes of local memory")
                lane_base = (g[:, None] * L + np.arange(L)[None, :]) * (size // 4)
                return lane_base + (addr >> 2), self.local.reshape(-1)

        if is_load:
            def load(g, mask):
                addr = addresses(g, mask)
                words, store = index(g, mask, addr)
                if self.watch is not None and watched:
                    self.watch(space, g, mask, words, None)
                # every lane's word (an inactive lane's may lie outside memory: clipped), of which
                # the writer keeps the active lanes'
                values = store.take(words, mode="clip") if store.size else np.zeros((len(g), L), dtype=U32)
                write(g, mask, values)
                self.last_access = (addr, None)  # the trace and the timing model read it
                advance(g)
            return load

        def store(g, mask):
            addr = addresses(g, mask)
            data = rb(g, mask)
            words, backing = index(g, mask, addr)
            if self.watch is not None and watched:
                self.watch(space, g, mask, words, data)
            # Lanes are flattened warp-major, lane-minor: on a collision the highest lane of
            # the last warp wins, deterministically.
            backing[words[mask]] = data[mask]
            self.last_access = (addr, data)
            advance(g)
        return store

    # ------------------------------------------------------------------ control
    def _control(self, pc, ins, ra):
        op = ins.op
        nxt = pc + 1
        if op in (Opcode.NOP, Opcode.MEMBAR):
            def nop(g, mask):
                self.pc[g] = nxt
            return nop
        if op is Opcode.RPINC:
            count = ins.imm
            rp_of_hand = self.rps[ins.dst_hand] if self.hands else self.rp

            def rpinc(g, mask):
                rp_of_hand[g] += count
                self._same_rp = None
                self.pc[g] = nxt
            return rpinc
        if op is Opcode.BRA:
            target = ins.imm

            def bra(g, mask):
                self.pc[g] = target
            return bra
        branch_if = SPECS[op].branch_if
        if branch_if is not None:
            target = ins.imm
            test = np.not_equal if branch_if is BranchIf.NONZERO else np.equal  # the lanes that branch
            any_of = np.logical_or.reduce

            def branch(g, mask):
                cond = test(ra(g, mask), 0)
                taken = cond & mask
                not_taken = mask > cond  # mask & ~cond
                if len(g) == 1:  # one warp: counts instead of per-row reductions
                    w = int(g[0])
                    if not np.count_nonzero(taken):
                        self.pc[w] = nxt
                        return
                    self.pc[w] = target
                    if np.count_nonzero(not_taken):
                        self.stacks[w].append(StackEntry(DIV_ENTRY, nxt, not_taken[0].copy(), self._entry_rp(w)))
                        self.active[w] = taken[0]
                    return
                any_taken = any_of(taken, axis=1)
                any_not = any_of(not_taken, axis=1)
                self.pc[g] = np.where(any_taken, target, nxt)
                for row in (any_taken & any_not).nonzero()[0].tolist():
                    w = int(g[row])
                    self.stacks[w].append(StackEntry(DIV_ENTRY, nxt, not_taken[row].copy(), self._entry_rp(w)))
                    self.active[w] = taken[row]
            return branch
        if op is Opcode.SSY:
            target, advance = ins.imm, ins.a  # the reserved advance (Variant.RESERVED_SSY; else 0)
            hand = ins.dst_hand if self.hands else 0  # the hand it reserves on (Variant.HANDS)

            def ssy(g, mask):
                for w in g.tolist():
                    self.stacks[w].append(StackEntry(SYNC_ENTRY, target, self.active[w].copy(),
                                                     self._entry_rp(w, hand, advance)))
                self.pc[g] = nxt
            return ssy
        if op is Opcode.SYNC:
            def sync(g, mask):
                for w in g.tolist():
                    stack = self.stacks[w]
                    if not any(e.kind == SYNC_ENTRY for e in stack):
                        raise self.fault("sync with no pending ssy on this warp's stack", pc, w)
                    if self.distance_operands:
                        for e in reversed(stack):
                            if e.kind == SYNC_ENTRY:
                                if self.hands:  # the largest RP of each hand, independently
                                    e.rp = tuple(map(max, e.rp, self.rps[:, w].tolist()))
                                else:
                                    e.rp = max(e.rp, int(self.rp[w]))
                                break
                    self._resume(w, pc)
            return sync
        if op is Opcode.EXIT:
            def exit_(g, mask):
                if len(g) == 1:  # one warp: its row in place
                    alive = self.alive[int(g[0])]
                    np.greater(alive, mask[0], out=alive)  # alive & ~mask
                else:
                    self.alive[g] &= ~mask
                    stacks = self.stacks
                    if not any(stacks[w] for w in g.tolist()) and not np.count_nonzero(self.alive[g]):
                        # no path to resume and no lane left: ``_resume`` makes each warp done, and
                        # the barriers' release depends only on the final done/waiting state
                        self.active[g] = False
                        self.done[g] = True
                        for b in sorted(set(self.wblock[g].tolist())):
                            self._check_barrier(b)
                        return
                for w in g.tolist():
                    self._resume(w, pc)
                    if self.done[w]:
                        self._check_barrier(int(self.wblock[w]))
            return exit_
        if op is Opcode.BAR:
            def bar(g, mask):
                diverged = self.alive[g] & ~mask
                if diverged.any():
                    w, lane = self._first(g, diverged)
                    raise self.fault("barrier deadlock: bar reached by a diverged warp; lanes "
                                     f"{self._lanes(self.active[w])} wait while lanes "
                                     f"{self._lanes(self.alive[w] & ~self.active[w])} can never arrive",
                                     pc, w, lane)
                self.waiting[g] = True
                self.pc[g] = nxt
                for b in np.unique(self.wblock[g]).tolist():
                    self._check_barrier(b)
            return bar
        raise AssertionError(f"no semantics for {op!r}")  # the opcode table and this file disagree

    @staticmethod
    def _lanes(mask: np.ndarray) -> str:
        return "{" + ",".join(str(i) for i in np.flatnonzero(mask)) + "}"

    def _resume(self, w: int, pc: int) -> None:
        """The active path of warp w ended: continue with the next stack entry that has live lanes."""
        stack = self.stacks[w]
        alive = self.alive[w]
        while stack:
            e = stack.pop()
            m = e.mask & alive
            if np.count_nonzero(m):
                self.pc[w], self.active[w] = e.pc, m
                if self.hands:
                    self.rps[:, w] = e.rp
                elif self.distance_operands:
                    self.rp[w] = e.rp
                    self._same_rp = None
                return
            # An entry whose lanes have all exited is dropped. A SYNC entry dropped this way
            # passes nothing outward: no path through it reaches an outer join.
        if np.count_nonzero(alive):
            raise self.fault("divergence stack empty while lanes are still alive", pc, w)
        self.active[w] = False
        self.done[w] = True

    def _check_barrier(self, b: int) -> None:
        """Release block b's barrier once every warp that has not exited waits at it."""
        warps = slice(b * self.geo.warps_per_block, (b + 1) * self.geo.warps_per_block)
        waiting, done = self.waiting[warps], self.done[warps]
        if np.count_nonzero(waiting) and np.count_nonzero(waiting | done) == len(waiting):
            self.waiting[warps] = False

    # ------------------------------------------------------------------ main loop
    def next_step(self) -> tuple[int, np.ndarray, np.ndarray] | None:
        """The next batch step: the lowest pc among runnable warps, the warps there and their
        active lanes; counted per pc and charged to the launch's budget. None once every warp is
        done. Raises the faults of a launch that cannot go on (barrier deadlock, running past the
        end, budget exceeded). ``run`` and the timing streams (``dualflow/models/timing/compiled/streams.py``) both
        step through this one rule."""
        # ufuncs and ndarray.nonzero directly: the ndarray methods' Python wrappers (any, min,
        # sum) doubled the cost of a step of a few warps
        last = self._last
        if last is not None and self.pc[last[1][0]] == last[0] + 1:
            # The last step's instruction only moved its warps, all the warps at the lowest pc,
            # to the next pc: that is the lowest pc now, and the warps there are those and any
            # runnable others there (``_others``: the lowest pc of the runnable others, ``_cand``
            # their pcs, the last step's warps' at _NO_PC); nothing else changed.
            pc, g = last[0] + 1, last[1]
            if pc < self._others:  # the same warps alone, their active lanes unchanged
                mask, threads = last[2], last[3]
            else:  # others wait at pc: they join
                cand = self._cand
                joined = (cand == pc).nonzero()[0]
                cand[joined] = _NO_PC
                self._others = int(np.minimum.reduce(cand))
                g = np.sort(np.concatenate((g, joined)))
                mask = self.active[g]
                threads = np.count_nonzero(mask)
        else:
            cand = self._cand = np.where(self.done | self.waiting, _NO_PC, self.pc)
            pc = int(np.minimum.reduce(cand))
            if pc == _NO_PC:  # no runnable warp
                if self.waiting.any():
                    w = int(np.flatnonzero(self.waiting)[0])
                    raise self.fault("barrier deadlock: warps wait at a barrier that can never complete",
                                     int(self.pc[w]) - 1, w)
                return None
            g = (cand == pc).nonzero()[0]
            cand[g] = _NO_PC
            self._others = int(np.minimum.reduce(cand))
            if pc < len(self.kernel.code) and len(g) == 1:  # one warp: its row by a slice, copied
                w = int(g[0])  # (handlers change ``active``)
                mask = self.active[w:w + 1].copy()
            else:
                mask = self.active[g]
            threads = np.count_nonzero(mask)
        if pc >= len(self.kernel.code):
            raise self.ran_past_end(int(g[0]))
        n = len(g)
        self._last = (pc, g, mask, threads) if self._advances_only[pc] else None
        self.warp_counts[pc] += n
        self.thread_counts[pc] += threads
        budget = self.budget
        budget[0] += n
        if budget[0] > self.limit:
            launch_warps = self.geo.num_blocks * self.geo.warps_per_block
            raise self.fault(self.config.budget_exceeded(launch_warps), pc, int(g[0]))
        return pc, g, mask

    def run(self) -> None:
        handlers = self.handlers
        while (step := self.next_step()) is not None:
            pc, g, mask = step
            if self.trace is None:
                handlers[pc](g, mask)
            else:
                self._traced(pc, g, mask)
        self.release()

    def release(self) -> None:
        """Drop the handlers once the batch has run. They are closures over this executor: a
        reference cycle that only the cyclic garbage collector frees, and finding one per
        batch made its collections cost small launches a tenth of their time."""
        self.handlers = []
        self.watch = None

    def _traced(self, pc: int, g: np.ndarray, mask: np.ndarray) -> None:
        ins = self.kernel.code[pc]
        spec = SPECS[ins.op]
        hand, ring = (ins.dst_hand, self.kernel.rings[ins.dst_hand]) if self.hands else (None, self.kernel.ring)
        rp_before = (self.rps[hand] if self.hands else self.rp)[g].copy() if self.distance_operands else None
        self.last_access = None
        self.handlers[pc](g, mask)
        writes = spec.produces and (self.distance_operands or ins.dst != 0)
        if writes:
            if self.distance_operands:
                slots = rp_before % ring + (self._hand_base[hand] if self.hands else 0)
                values = self.ring[slots, g]
            else:
                values = self.regs[ins.dst - 1][g]
        name = format_instruction(ins, self.kernel.form).split(" ")[0]
        record, extra = (HandTraceRecord, {"hand": hand}) if self.hands else (TraceRecord, {})
        base = self.blocks.start
        wpb = self.geo.warps_per_block
        for row, w in enumerate(g.tolist()):
            m = mask[row]
            bits = int((m.astype(np.uint64) << np.arange(self.L, dtype=np.uint64)).sum())

            def lanes(arr, m=m, row=row):
                return tuple(int(v) for v in np.where(m, arr[row], 0))

            addrs = data = None
            if self.last_access is not None:
                addrs = lanes(self.last_access[0])
                if self.last_access[1] is not None:
                    data = lanes(self.last_access[1])
            self.trace.append(record(
                block=base + w // wpb, warp=int(self.wid[w]), seq=int(self.seq[w]), pc=pc, op=name,
                rp=int(rp_before[row]) if self.distance_operands else None, mask=bits,
                dst=(int(rp_before[row] % ring) if self.distance_operands else ins.dst - 1) if writes else None,
                values=lanes(values) if writes else None, addrs=addrs, data=data, **extra))
            self.seq[w] += 1

"""The directed program suite: small programs, one per instruction class or control-flow shape,
each with its expected results, run on every level of the project (the functional model, the
timing model and the RTL core; tests/kernels/test_directed_programs.py).

Each program is written in REG form; ``kernel(name, form)`` returns it in either form (DFLOW
through the project's converter, ``dualflow.isa.convert.convert_kernel``, or, for what the
converter does not write, a variant of the DFLOW form, from a DFLOW source written by hand
beside the REG one: ``Program.dflow_source``). Its ``setup`` (a
``Buffers``) fills global memory and returns the launch parameters. What it must produce is
stated without any model: ``reference`` computes, with numpy, the words of its output buffer
from its input words; a faulting program names the fault instead (``ExpectedFault``: the kind,
as the message of the ``KernelFault`` starts, and the REG-source pc of the faulting
instruction). ``output_mismatches`` and ``fault_mismatch`` hold a run to these expectations.
The programs use integer instructions only; FP32 and SFU instructions on the core are covered by
the workloads (tests/testbench/test_rtl_workloads.py) and tests/rtl/test_rtl_fp_core.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from dualflow.common.errors import ConfigError, KernelFault
from dualflow.isa import DEFAULT_DMAX, DEFAULT_RING, Form, Kernel, assemble
from dualflow.isa.convert import ConversionReport, convert_kernel
from dualflow.models.device import Device

M32 = 0xFFFFFFFF


@dataclass(frozen=True)
class Buffers:
    """A program's global-memory set-up: an input buffer of ``inputs`` random words (when not
    zero; seeded by their count), then an output buffer of ``outputs`` zero words. The launch
    parameters are their addresses in that order, then the integers ``values``."""

    outputs: int
    inputs: int = 0
    values: tuple[int, ...] = ()

    def input_words(self) -> np.ndarray:
        rng = np.random.default_rng(self.inputs)
        return rng.integers(0, 1 << 32, size=self.inputs, dtype=np.uint64).astype(np.uint32)

    def __call__(self, dev: Device) -> list[int]:
        buffers = [dev.upload(self.input_words())] if self.inputs else []
        buffers.append(dev.alloc(4 * self.outputs))
        return [*buffers, *self.values]

    @property
    def output_param(self) -> int:
        """Index of the output buffer's address among the launch parameters."""
        return 1 if self.inputs else 0


@dataclass(frozen=True)
class ExpectedFault:
    """How a faulting program stops: the start of the ``KernelFault`` message (its kind, the
    prefixes dualflow/testbench/faults.py maps to the core's trap causes) and the pc, in the REG source,
    of the instruction that faults. Which thread meets it first depends on the warp size and the
    machine's warp order, so it is not part of the expectation."""

    kind: str
    pc: int


#: ``reference(input words, warp size) -> output words``: the expected output buffer.
Reference = Callable[[np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class Program:
    """A REG-form source, its block and grid shapes, its memory set-up and what it must produce:
    the output words (``reference``) or a fault (``fault``), exactly one of the two.
    ``latency``: the range of the co-simulated memory's answer latency, in cycles.
    ``dflow_source``: the DFLOW form written by hand (without ``.ring`` and ``.dmax``: they are
    the caller's), for a variant of the form the converter does not write; None: the converter's
    form of ``source``. It computes the same ``reference``; a program that faults has none (its
    expected fault is named by a REG pc)."""

    source: str
    block: int | tuple[int, ...]
    setup: Buffers
    reference: Reference | None = None
    fault: ExpectedFault | None = None
    grid: int | tuple[int, ...] = 1
    latency: tuple[int, int] = (1, 40)
    dflow_source: str | None = None

    def __post_init__(self) -> None:
        if (self.reference is None) == (self.fault is None):
            raise ValueError("a directed program has a reference or an expected fault, exactly one")
        if self.dflow_source is not None and self.fault is not None:
            raise ValueError("a faulting directed program has no hand-written DFLOW form")


ALU = """
.kernel alu
.param in out
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, in
    iadd r2, r2, r1
    ldg r3, [r2]            ; a: random
    ldg r4, [r2+4]          ; b: the neighbour's
    ldc r5, out
    imul r6, r0, 96
    iadd r5, r5, r6         ; 24 result words per thread
    iadd r7, r3, r4
    stg [r5], r7
    isub r7, r3, r4
    stg [r5+4], r7
    imul r7, r3, r4
    stg [r5+8], r7
    imad r7, r3, r4, r0
    stg [r5+12], r7
    iand r7, r3, r4
    ior r8, r3, 0x0f0f
    ixor r9, r7, r8
    inot r9, r9
    stg [r5+16], r9
    iand r10, r4, 63        ; shift amounts 0..63
    ishl r7, r3, r10
    stg [r5+20], r7
    ishr r7, r3, r10
    stg [r5+24], r7
    isra r7, r3, r10
    stg [r5+28], r7
    imin r7, r3, r4
    imax r8, r3, r4
    iadd r7, r7, r8
    stg [r5+32], r7
    umin r7, r3, r4
    umax r8, r3, r4
    ixor r7, r7, r8
    stg [r5+36], r7
    isetp.lt r7, r3, r4
    isetp.ge r8, r3, r4
    usetp.lt r9, r3, r4
    usetp.le r11, r4, r3
    ishl r8, r8, 1
    ishl r9, r9, 2
    ishl r11, r11, 3
    ior r7, r7, r8
    ior r7, r7, r9
    ior r7, r7, r11
    isetp.eq r8, r3, r3
    isetp.ne r9, r3, r3
    isetp.gt r11, r0, 3
    ishl r8, r8, 4
    ishl r9, r9, 5
    ishl r11, r11, 6
    ior r7, r7, r8
    ior r7, r7, r9
    ior r7, r7, r11
    stg [r5+40], r7
    iand r8, r3, 1
    selp r7, r3, r4, r8
    stg [r5+44], r7
    vote.any r7, r8
    vote.all r9, r8
    vote.ballot r11, r8
    iadd r7, r7, r9
    iadd r7, r7, r11
    stg [r5+48], r7
    mov r7, -12345
    stg [r5+52], r7
    s2r r7, %laneid
    s2r r8, %warpid
    s2r r9, %nwarpid
    s2r r11, %ntid.x
    s2r r12, %ctaid.x
    s2r r13, %nctaid.x
    imul r8, r8, 100
    iadd r7, r7, r8
    imul r9, r9, 10000
    iadd r7, r7, r9
    stg [r5+56], r7
    iadd r11, r11, r12
    iadd r11, r11, r13
    stg [r5+60], r11
    nop
    stg [r5+64], rz
    exit
"""

DIVERGE = """
.kernel diverge
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r1, r1, r2
    iand r3, r0, 1
    mov r4, 7
    ssy JOIN
    brz r3, ELSE
    iadd r4, r4, 100         ; odd lanes
    iand r5, r0, 2
    ssy INNER
    brnz r5, INNER_SYNC
    iadd r4, r4, 1000        ; odd lanes with bit 1 clear: nested divergence
INNER_SYNC:
    sync
INNER:
    iadd r4, r4, 10
    sync
ELSE:
    imul r4, r4, 3           ; even lanes
    sync
JOIN:
    iadd r4, r4, r0
    stg [r1], r4
    exit
"""

LOOP = """
.kernel loop
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r1, r1, r2
    iand r3, r0, 7          ; trip count 0..7, different per lane
    mov r4, 0               ; acc
    mov r5, 0               ; k
    ssy JOIN
LOOP:
    isetp.lt r6, r5, r3
    brz r6, LEAVE
    imad r4, r5, r5, r4
    iadd r5, r5, 1
    bra LOOP
LEAVE:
    stg [r1], r4            ; each lane stores on its own way out
    sync
JOIN:
    exit
"""

EARLY_EXIT = """
.kernel early_exit
.param out n
    s2r r0, %tid.x
    ldc r1, n
    isetp.ge r2, r0, r1
    brnz r2, DONE           ; lanes past n leave at once
    ldc r3, out
    ishl r4, r0, 2
    iadd r3, r3, r4
    imul r5, r0, r0
    stg [r3], r5
DONE:
    exit
"""

SHARED_REDUCE = """
.kernel shared_reduce
.param in out
.shared 512
    s2r r0, %tid.x
    s2r r2, %ntid.x
    ldc r6, in
    ishl r7, r0, 2
    iadd r6, r6, r7
    ldg r8, [r6]
    ishr r8, r8, 8
    ishl r9, r0, 2
    sts [r9], r8
    bar
    ishr r10, r2, 1
LOOP:
    isetp.lt r11, r0, r10
    ssy NEXT
    brz r11, STEP_SYNC
    ishl r12, r10, 2
    iadd r12, r9, r12
    lds r13, [r12]
    lds r14, [r9]
    iadd r14, r14, r13
    sts [r9], r14
STEP_SYNC:
    sync
NEXT:
    bar
    ishr r10, r10, 1
    brnz r10, LOOP
    lds r15, [rz]             ; every thread reads the sum
    ldc r16, out
    iadd r16, r16, r7
    stg [r16], r15
    exit
"""

SHARED_CONFLICT = """
.kernel shared_conflict
.param out
.shared 256
    s2r r0, %tid.x
    ishl r1, r0, 3          ; stride 2 words: 2-way bank conflicts
    iand r1, r1, 252
    imul r2, r0, 17
    sts [r1], r2            ; lanes colliding on one word: the highest lane wins
    bar
    ishl r3, r0, 2
    lds r4, [r3]
    ldc r5, out
    iadd r5, r5, r3
    stg [r5], r4
    exit
"""

MEMORY_ORDER = """
.kernel memory_order
.param in out
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, out
    iadd r2, r2, r1
    ldc r3, in
    iadd r3, r3, r1
    ldg r4, [r3]
    stg [r2], r4            ; store, then load the same word back
    ldg r5, [r2]
    iadd r5, r5, 1
    stg [r2], r5            ; and overwrite it
    ldg r6, [r2]
    ldg r7, [r3+4]          ; independent loads in flight together
    ldg r8, [r3+8]
    iadd r6, r6, r7
    iadd r6, r6, r8
    stg [r2+256], r6
    membar
    ldg r9, [r2+256]
    stg [r2+512], r9
    exit
"""

LOCAL = """
.kernel local
.param out
.local 16
    s2r r0, %tid.x
    imul r1, r0, 3
    stl [rz], r1
    iadd r2, r1, 5
    stl [rz+4], r2
    ldl r3, [rz]
    ldl r4, [rz+4]
    iadd r3, r3, r4
    ldc r5, out
    ishl r6, r0, 2
    iadd r5, r5, r6
    stg [r5], r3
    exit
"""

OOO = """
.kernel ooo
.param in out
    s2r r0, %tid.x
    ishl r1, r0, 2
    ldc r2, in
    iadd r2, r2, r1
    ldg r3, [r2]            ; a load that takes long
    iadd r4, r3, 1          ; depends on it
    iadd r5, r0, 2          ; independent: may run ahead in DFLOW
    imul r6, r5, r5
    iadd r7, r6, r0
    ixor r8, r7, 0x55
    ldc r9, out
    iadd r9, r9, r1
    stg [r9], r8
    stg [r9+256], r4
    exit
"""

# A 2-D grid of 2-D blocks: every block runs on the one core in turn, with its own ctaid and a
# fresh shared memory; each thread writes its global index and values that depend on the block
# and on a neighbour's shared-memory word (after a barrier).
GRID = """
.kernel grid
.param out
.shared 64
    s2r r0, %tid.x
    s2r r1, %tid.y
    s2r r2, %ntid.x
    s2r r3, %ntid.y
    s2r r4, %ctaid.x
    s2r r5, %ctaid.y
    s2r r6, %nctaid.x
    s2r r7, %nctaid.y
    imad r8, r1, r2, r0         ; t = tid.y * ntid.x + tid.x
    imad r9, r5, r6, r4         ; b = ctaid.y * nctaid.x + ctaid.x
    imul r10, r2, r3            ; threads per block (a power of two here)
    imad r11, r9, r10, r8       ; g = b * threads + t
    ishl r12, r8, 2
    lds r13, [r12]              ; zero: shared memory is fresh in every block
    iadd r13, r13, r11
    sts [r12], r13
    bar
    iadd r14, r8, 1
    iadd r15, r10, -1
    iand r14, r14, r15          ; the next thread of the block, wrapping
    ishl r14, r14, 2
    lds r16, [r14]
    imul r17, r6, r7            ; blocks in the grid
    imul r17, r17, 1000
    iadd r16, r16, r17
    ldc r18, out
    ishl r19, r11, 3
    iadd r18, r18, r19
    stg [r18], r13
    stg [r18+4], r16
    exit
"""

# The reserved-ssy variant of the DFLOW form (docs/isa.md, "Variants"): the DFLOW form is written
# by hand (the converter pads with rpinc). Region 1 is uniform per block: block 0 runs only the
# long path (3 producers), block 1 only the empty one, which has no rpinc before its sync: the
# ssy reserves the 3. After the join, values produced before the region (g, v, the address) are
# read at fixed distances: right only if both blocks reach the join at the same RP (block 1 would
# read g 3 positions too far back without the advance). Region 2 diverges in every warp: the odd
# lanes' path has 2 producers, the even lanes' none, and the ssy reserves 1: the even lanes' sync
# (first) leaves the entry's reserved RP, which is ahead of theirs; the odd lanes' raises it to
# their RP, past the reservation.
RESERVED_SSY = """
.kernel reserved_ssy
.param out
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0         ; g = ctaid.x * ntid.x + tid.x
    imul r4, r3, 5              ; v = 5g, read after both joins
    ldc r5, out
    ishl r6, r3, 2
    iadd r5, r5, r6             ; &out[g]
    ssy JOIN
    brnz r1, SHORT              ; block 1 (all its warps) runs only the empty path
    iadd r7, r4, 3              ; block 0
    imul r7, r7, r3
    ixor r7, r7, 0x0f
    stg [r5+256], r7
    sync
SHORT:
    sync
JOIN:
    iand r8, r3, 1
    ssy JOIN2
    brz r8, EVEN                ; divergent: the even lanes go first, to the empty path
    ixor r9, r4, 0x55           ; odd lanes
    iadd r9, r9, r3
    stg [r5+512], r9
    sync
EVEN:
    sync
JOIN2:
    iadd r10, r4, 1
    stg [r5], r10
    exit
"""

# The same in DFLOW form with reserved-ssy: distances from the RP of each instruction (Pn: the
# value produced at position n). No rpinc: the ssys reserve the advances.
RESERVED_SSY_DFLOW = """
.kernel reserved_ssy
.form dflow
.param out
.variant reserved-ssy
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 g
    imul |1|, 5                 ; P4 v
    ldc out                     ; P5
    ishl |3|, 2                 ; P6
    iadd |2|, |1|               ; P7 &out[g]
    ssy JOIN, 3                 ; the join at RP 8 + 3
    brnz |7|, SHORT             ; ctaid.x
    iadd |4|, 3                 ; P8
    imul |1|, |6|               ; P9
    ixor |1|, 0x0f              ; P10
    stg [|4|+256], |1|
    sync                        ; RP 11
SHORT:
    sync                        ; RP 8, no rpinc 3
JOIN:
    iand |8|, 1                 ; P11 (RP 11: g 8 back)
    ssy JOIN2, 1                ; the join at RP 12 + 1 at least
    brz |1|, EVEN
    ixor |8|, 0x55              ; P12 (odd lanes)
    iadd |1|, |10|              ; P13
    stg [|7|+512], |1|
    sync                        ; RP 14: the join's
EVEN:
    sync                        ; RP 12
JOIN2:
    iadd |10|, 1                ; P14 (RP 14: v 10 back)
    stg [|8|], |1|
    exit
"""

# Programs that fault: the golden model raises a KernelFault, and the RTL must stop for the same
# reason (dualflow/testbench/faults.py). Some work retires first, so the records before the stop compare.
FAULT_GLOBAL_BOUNDS = """
.kernel fault_global_bounds
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r3, r1, r2
    stg [r3], r0                ; inside the 16-word buffer
    imul r4, r0, 4096
    iadd r4, r3, r4
    stg [r4], r0                ; threads 1.. write past the end of every allocation
    exit
"""

FAULT_MISALIGNED = """
.kernel fault_misaligned
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r3, r1, r2
    stg [r3], r0
    iand r4, r0, 1
    iadd r3, r3, r4
    ldg r5, [r3]                ; odd threads: an address that is not a multiple of 4
    stg [r1], r5
    exit
"""

FAULT_LOCAL_BOUNDS = """
.kernel fault_local_bounds
.param out
.local 8
    s2r r0, %tid.x
    stl [rz+4], r0
    ishl r1, r0, 3
    ldl r2, [r1]                ; threads 1.. read past their 8 bytes of local memory
    ldc r3, out
    stg [r3], r2
    exit
"""

FAULT_DIVERGED_BAR = """
.kernel fault_diverged_bar
.param out
    s2r r0, %tid.x
    ldc r1, out
    ishl r2, r0, 2
    iadd r1, r1, r2
    stg [r1], r0
    isetp.lt r3, r0, 2
    ssy JOIN
    brz r3, SKIP
    bar                         ; lanes 0 and 1 of warp 0, while lanes 2 and 3 wait at the join
SKIP:
    sync
JOIN:
    exit
"""

FAULT_SHARED_BOUNDS = """
.kernel fault_shared_bounds
.param out
.shared 64
    s2r r0, %tid.x
    ishl r1, r0, 6
    sts [r1], r0                ; threads 1.. store past the block's 64 bytes of shared memory
    ldc r2, out
    stg [r2], r0
    exit
"""


# ------------------------------------------------------------------------------------------
# Expected results, from the programs' semantics (docs/isa.md), independent of every model.
# Programs run one block of 16 threads unless stated; ``a`` is the input buffer.
# ------------------------------------------------------------------------------------------

THREADS = 16


def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def _words(rows: dict[int, int], n: int) -> np.ndarray:
    """An output buffer of ``n`` words: ``rows`` (word index -> value), zero elsewhere."""
    out = np.zeros(n, np.uint32)
    for index, value in rows.items():
        out[index] = value & M32
    return out


def _alu(a: np.ndarray, warp_size: int) -> np.ndarray:
    rows: dict[int, int] = {}
    nwarps = -(-THREADS // warp_size)
    odd = [int(a[t]) & 1 for t in range(THREADS)]
    for t in range(THREADS):
        x, y = int(a[t]), int(a[t + 1])
        sx, sy = _s32(x), _s32(y)
        shift = y & 63
        warp, lane = divmod(t, warp_size)
        peers = odd[warp * warp_size:(warp + 1) * warp_size]
        ballot = sum(bit << i for i, bit in enumerate(peers))
        flags = ((sx < sy) | (sx >= sy) << 1 | (x < y) << 2 | (y <= x) << 3 | (x == x) << 4 | (x != x) << 5
                 | (t > 3) << 6)
        results = [
            x + y, x - y, x * y, x * y + t,
            ~((x & y) ^ (x | 0x0F0F)),
            0 if shift >= 32 else x << shift,
            0 if shift >= 32 else x >> shift,
            sx >> min(shift, 31),
            min(sx, sy) + max(sx, sy),
            min(x, y) ^ max(x, y),
            flags,
            x if odd[t] else y,
            any(peers) + all(peers) + ballot,
            -12345,
            lane + warp * 100 + nwarps * 10000,
            THREADS + 0 + 1,  # ntid.x + ctaid.x + nctaid.x
            0,
        ]
        rows.update({24 * t + i: value for i, value in enumerate(results)})
    return _words(rows, 24 * THREADS)


def _diverge(a: np.ndarray, warp_size: int) -> np.ndarray:
    def value(t: int) -> int:
        if t & 1 == 0:
            return 7 * 3 + t
        return 7 + 100 + (0 if t & 2 else 1000) + 10 + t
    return _words({t: value(t) for t in range(THREADS)}, THREADS)


def _loop(a: np.ndarray, warp_size: int) -> np.ndarray:
    return _words({t: sum(k * k for k in range(t & 7)) for t in range(THREADS)}, THREADS)


EARLY_EXIT_N = 11  #: threads of ``early_exit`` that store


def _early_exit(a: np.ndarray, warp_size: int) -> np.ndarray:
    return _words({t: t * t for t in range(EARLY_EXIT_N)}, THREADS)


def _shared_reduce(a: np.ndarray, warp_size: int) -> np.ndarray:
    total = sum(int(a[t]) >> 8 for t in range(THREADS))
    return _words({t: total for t in range(THREADS)}, THREADS)


def _shared_conflict(a: np.ndarray, warp_size: int) -> np.ndarray:
    shared = {(8 * t & 252) // 4: 17 * t for t in range(THREADS)}  # word -> value (no two threads share one)
    return _words({t: shared.get(t, 0) for t in range(THREADS)}, THREADS)


def _memory_order(a: np.ndarray, warp_size: int) -> np.ndarray:
    rows = {}
    for t in range(THREADS):
        again = int(a[t]) + 1
        total = again + int(a[t + 1]) + int(a[t + 2])
        rows.update({t: again, 64 + t: total, 128 + t: total})
    return _words(rows, 3 * 64 + 16)


def _local(a: np.ndarray, warp_size: int) -> np.ndarray:
    return _words({t: 3 * t + (3 * t + 5) for t in range(THREADS)}, THREADS)


OOO_THREADS = 8


def _ooo(a: np.ndarray, warp_size: int) -> np.ndarray:
    rows = {}
    for t in range(OOO_THREADS):
        rows.update({t: ((t + 2) * (t + 2) + t) ^ 0x55, 64 + t: int(a[t]) + 1})
    return _words(rows, 128)


RESERVED_SSY_THREADS, RESERVED_SSY_BLOCKS = 16, 2


def _reserved_ssy(a: np.ndarray, warp_size: int) -> np.ndarray:
    rows = {}
    for g in range(RESERVED_SSY_THREADS * RESERVED_SSY_BLOCKS):
        v = 5 * g
        rows[g] = v + 1
        if g < RESERVED_SSY_THREADS:  # block 0's long path
            rows[64 + g] = ((v + 3) * g) ^ 0x0F
        if g & 1:
            rows[128 + g] = (v ^ 0x55) + g
    return _words(rows, 3 * 64)


GRID_BLOCK, GRID_GRID = (4, 2), (3, 2)


def _grid(a: np.ndarray, warp_size: int) -> np.ndarray:
    threads = GRID_BLOCK[0] * GRID_BLOCK[1]
    blocks = GRID_GRID[0] * GRID_GRID[1]
    rows = {}
    for b in range(blocks):  # b = ctaid.y * nctaid.x + ctaid.x
        for t in range(threads):  # t = tid.y * ntid.x + tid.x
            g = b * threads + t
            neighbour = b * threads + (t + 1) % threads
            rows.update({2 * g: g, 2 * g + 1: neighbour + blocks * 1000})
    return _words(rows, 2 * blocks * threads)


PROGRAMS: dict[str, Program] = {
    "alu": Program(ALU, 16, Buffers(24 * 16, inputs=64), _alu),
    "diverge": Program(DIVERGE, 16, Buffers(16), _diverge),
    "loop": Program(LOOP, 16, Buffers(16), _loop),
    "early_exit": Program(EARLY_EXIT, 16, Buffers(16, values=(EARLY_EXIT_N,)), _early_exit),
    "shared_reduce": Program(SHARED_REDUCE, 16, Buffers(16, inputs=16), _shared_reduce),
    "shared_conflict": Program(SHARED_CONFLICT, 16, Buffers(16), _shared_conflict),
    "memory_order": Program(MEMORY_ORDER, 16, Buffers(3 * 64 + 16, inputs=64), _memory_order),
    "local": Program(LOCAL, 16, Buffers(16), _local),
    # a load that surely outlives the independent work behind it
    "ooo": Program(OOO, OOO_THREADS, Buffers(128, inputs=64), _ooo, latency=(40, 60)),
    "grid": Program(GRID, GRID_BLOCK, Buffers(2 * 3 * 2 * 8), _grid, grid=GRID_GRID),
    "reserved_ssy": Program(RESERVED_SSY, RESERVED_SSY_THREADS, Buffers(3 * 64), _reserved_ssy,
                            grid=RESERVED_SSY_BLOCKS, dflow_source=RESERVED_SSY_DFLOW),
}

#: Programs that fault (on the RTL core: it must stop for the same reason as the golden model).
FAULT_PROGRAMS: dict[str, Program] = {
    "global_bounds": Program(FAULT_GLOBAL_BOUNDS, 16, Buffers(16),
                             fault=ExpectedFault("out-of-bounds global access", pc=7)),  # the second stg
    "misaligned": Program(FAULT_MISALIGNED, 16, Buffers(16), fault=ExpectedFault("misaligned global", pc=7)),  # ldg
    "local_bounds": Program(FAULT_LOCAL_BOUNDS, 16, Buffers(16),
                            fault=ExpectedFault("out-of-bounds local access", pc=3)),  # ldl
    "diverged_bar": Program(FAULT_DIVERGED_BAR, 16, Buffers(16),
                            fault=ExpectedFault("barrier deadlock: bar reached by a diverged warp", pc=8)),  # bar
    "shared_bounds": Program(FAULT_SHARED_BOUNDS, 16, Buffers(16),
                             fault=ExpectedFault("out-of-bounds shared access", pc=2)),  # sts
}


def program(name: str) -> Program:
    """The directed program ``name``, faulting or not."""
    found = PROGRAMS.get(name) or FAULT_PROGRAMS.get(name)
    if found is None:
        raise ConfigError(f"no directed program named {name!r} (have: {', '.join([*PROGRAMS, *FAULT_PROGRAMS])})")
    return found


@cache
def _converted(name: str, ring: int, dmax: int) -> tuple[Kernel, ConversionReport]:
    return convert_kernel(kernel(name, Form.REG), dmax=dmax, ring=ring)


@cache
def kernel(name: str, form: Form, ring: int = DEFAULT_RING, dmax: int = DEFAULT_DMAX) -> Kernel:
    """Program ``name`` as a kernel in ``form`` (DFLOW: converted from the REG source, or the
    program's hand-written DFLOW source, for a ring of ``ring`` entries and distances up to ``dmax``)."""
    if form is Form.DFLOW:
        written = program(name).dflow_source
        if written is not None:
            return replace(assemble(written, f"<{name}.dflow>").only, ring=ring, dmax=dmax)
        return _converted(name, ring, dmax)[0]
    return assemble(program(name).source, f"<{name}>").only


def source_pc(name: str, form: Form, pc: int, ring: int = DEFAULT_RING, dmax: int = DEFAULT_DMAX) -> int | None:
    """The REG-source pc that instruction ``pc`` of ``kernel(name, form, ring, dmax)`` comes from
    (None: an instruction the converter added)."""
    if form is Form.REG:
        return pc
    if program(name).dflow_source is not None:
        raise ConfigError(f"directed program {name!r} is written by hand in DFLOW form: "
                          "its pcs are not the REG source's")
    return _converted(name, ring, dmax)[1].source_pc[pc]


def expected_output(name: str, warp_size: int) -> np.ndarray:
    """The words program ``name`` must leave in its output buffer on warps of ``warp_size`` lanes."""
    prog = program(name)
    if prog.reference is None:
        raise ConfigError(f"directed program {name!r} faults; it has no expected output")
    return prog.reference(prog.setup.input_words(), warp_size)


def output_mismatches(name: str, read: Callable[[int, int], np.ndarray], params: Sequence[int], warp_size: int,
                      limit: int = 8) -> list[str]:
    """The output words of a run of program ``name`` that differ from its reference, at most
    ``limit`` of them (``read(address, words)``: the run's global memory; ``params``: the launch
    parameters its set-up returned)."""
    want = expected_output(name, warp_size)
    base = params[program(name).setup.output_param]
    got = np.asarray(read(base, len(want)), dtype=np.uint32)
    return [f"{name}: out[{i}] at {base + 4 * i:#x} is {int(got[i]):#x}, expected {int(want[i]):#x}"
            for i in np.flatnonzero(got != want)[:limit]]


def fault_mismatch(name: str, fault: KernelFault | None, form: Form, ring: int = DEFAULT_RING,
                   dmax: int = DEFAULT_DMAX) -> str | None:
    """How a run of faulting program ``name`` in ``form`` departs from its expected fault
    (``fault``: what the run raised, None if it finished), or None when it faulted as expected."""
    want = program(name).fault
    if want is None:
        raise ConfigError(f"directed program {name!r} does not fault; check its output instead")
    head = f"{name}: expected {want.kind!r} at REG pc {want.pc}"
    if fault is None:
        return f"{head}; the run finished without a fault"
    at = source_pc(name, form, fault.pc, ring, dmax)
    if not fault.message.startswith(want.kind) or at != want.pc:
        return f"{head}; got {fault} (REG pc {at})"
    return None

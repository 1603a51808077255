"""Directed programs for the core co-simulation, one per instruction class or control-flow shape.

Each is written in REG form; ``kernel(name, form)`` returns it in either form (DFLOW through the
project's converter, ``dualflow.isa.convert.convert_kernel``). ``setup`` fills global memory and
returns the launch parameters. Only integer instructions: the core has no FP units yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from dualflow.isa import DEFAULT_DMAX, DEFAULT_RING, Form, Kernel, assemble
from dualflow.isa.convert import convert_kernel
from dualflow.models.device import Device
from dualflow.rtl.params import CoreParams
from dualflow.testbench.cosim import CosimCase


@dataclass(frozen=True)
class Program:
    """A REG-form source, its block and grid shapes and its memory set-up (``kernel_name``: which
    kernel of the source, when it has several)."""

    source: str
    block: int | tuple[int, ...]
    setup: Callable[[Device], list[int]] | None = None
    kernel_name: str | None = None
    grid: int | tuple[int, ...] = 1
    latency: tuple[int, int] = (1, 40)  #: the memory model's answer latency range


def _inputs(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)


def _in_out(n_in: int, n_out: int) -> Callable[[Device], list[int]]:
    def setup(dev: Device) -> list[int]:
        a = dev.upload(_inputs(n_in, n_in))
        out = dev.alloc(4 * n_out)
        return [a, out]
    return setup


def _out(n_out: int) -> Callable[[Device], list[int]]:
    return lambda dev: [dev.alloc(4 * n_out)]


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

# Programs that fault: the golden model raises a KernelFault, and the RTL must stop for the same
# reason (testbench/faults.py). Some work retires first, so the records before the stop compare.
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

PROGRAMS: dict[str, Program] = {
    "alu": Program(ALU, 16, _in_out(64, 24 * 16)),
    "diverge": Program(DIVERGE, 16, _out(16)),
    "loop": Program(LOOP, 16, _out(16)),
    "early_exit": Program(EARLY_EXIT, 16, lambda dev: [dev.alloc(4 * 16), 11]),
    "shared_reduce": Program(SHARED_REDUCE, 16, _in_out(16, 16)),
    "shared_conflict": Program(SHARED_CONFLICT, 16, _out(16)),
    "memory_order": Program(MEMORY_ORDER, 16, _in_out(64, 3 * 64 + 16)),
    "local": Program(LOCAL, 16, _out(16)),
    # a load that surely outlives the independent work behind it
    "ooo": Program(OOO, 8, _in_out(64, 128), latency=(40, 60)),
    "grid": Program(GRID, (4, 2), _out(2 * 3 * 2 * 8), grid=(3, 2)),
}

#: Programs whose golden run faults (the core must stop for the same reason).
FAULT_PROGRAMS: dict[str, Program] = {
    "global_bounds": Program(FAULT_GLOBAL_BOUNDS, 16, _out(16)),
    "misaligned": Program(FAULT_MISALIGNED, 16, _out(16)),
    "local_bounds": Program(FAULT_LOCAL_BOUNDS, 16, _out(16)),
    "diverged_bar": Program(FAULT_DIVERGED_BAR, 16, _out(16)),
    "shared_bounds": Program(FAULT_SHARED_BOUNDS, 16, _out(16)),
}


def _program(name: str) -> Program:
    return PROGRAMS[name] if name in PROGRAMS else FAULT_PROGRAMS[name]


@cache
def kernel(name: str, form: Form, ring: int = DEFAULT_RING, dmax: int = DEFAULT_DMAX) -> Kernel:
    """Program ``name`` as a kernel in ``form`` (DFLOW: converted from the REG source for a ring
    of ``ring`` entries and distances up to ``dmax``)."""
    prog = _program(name)
    module = assemble(prog.source, f"<{name}>")
    k = module[prog.kernel_name] if prog.kernel_name else module.only
    if form is Form.DFLOW:
        k, _report = convert_kernel(k, dmax=dmax, ring=ring)
    return k


def directed_case(name: str, params: CoreParams, *, seed: int = 1) -> CosimCase:
    """Program ``name`` as a co-simulation case for a core built with ``params``."""
    prog = _program(name)
    form = params.mode.form
    return CosimCase(name, kernel(name, form, ring=params.ring), prog.block, prog.setup, seed=seed,
                     min_latency=prog.latency[0], max_latency=prog.latency[1], grid=prog.grid)

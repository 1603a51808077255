"""Shared helpers for the functional-model tests: assembling inline programs, launching them and
the element-wise kernel templates used to check instruction semantics in both operand forms.

Not a test module (no ``test_`` prefix); the test files import it as ``programs``.
"""

from __future__ import annotations

import numpy as np

from dualflow.isa import Form, Kernel, assemble
from dualflow.models import Device, FunctionalConfig

M32 = 0xFFFFFFFF
EDGES = (0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 31, 32, 33)
SHIFTS = (0, 1, 31, 32, 33, 0xFFFFFFFF)
FORMS = [Form.REG, Form.DFLOW]


def asm(text: str) -> Kernel:
    """The single kernel of an inline assembly text."""
    return assemble(text).only


def s32(x: int) -> int:
    """A 32-bit pattern read as a signed integer."""
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def u32(x: int) -> int:
    return x & M32


def bits(value: float) -> int:
    """float32 bit pattern of a Python float."""
    return int(np.array([value], dtype=np.float32).view(np.uint32)[0])


# ------------------------------------------------------------------------------------------
# Element-wise kernels: out[i] = OP(a[i], b[i], c[i]) for one thread per element.
# ------------------------------------------------------------------------------------------

_REG_TEMPLATE = """
.kernel ew
.form reg
.param a b c out
    s2r r0, %tid.x
    s2r r1, %ctaid.x
    s2r r2, %ntid.x
    imad r3, r1, r2, r0
    ishl r3, r3, 2
    ldc r4, a
    iadd r4, r4, r3
    ldg r5, [r4]
    ldc r4, b
    iadd r4, r4, r3
    ldg r6, [r4]
    ldc r4, c
    iadd r4, r4, r3
    ldg r7, [r4]
    {op}
    ldc r4, out
    iadd r4, r4, r3
    stg [r4], r8
    exit
"""

_DFLOW_TEMPLATE = """
.kernel ew
.form dflow
.param a b c out
    s2r %tid.x                  ; P0
    s2r %ctaid.x                ; P1
    s2r %ntid.x                 ; P2
    imad |2|, |1|, |3|          ; P3 i
    ishl |1|, 2                 ; P4 i*4
    ldc a                       ; P5
    iadd |1|, |2|               ; P6
    ldg [|1|]                   ; P7 A
    ldc b                       ; P8
    iadd |1|, |5|               ; P9
    ldg [|1|]                   ; P10 B
    ldc c                       ; P11
    iadd |1|, |8|               ; P12
    ldg [|1|]                   ; P13 C
    {op}                        ; P14 result
    ldc out                     ; P15
    iadd |1|, |12|              ; P16 &out[i]
    stg [|1|], |3|
    exit
"""

#: Operand spellings in the two templates: destination prefix and the sources A, B, C.
_OPERANDS = {
    Form.REG: {"d": "r8, ", "a": "r5", "b": "r6", "c": "r7"},
    Form.DFLOW: {"d": "", "a": "|7|", "b": "|4|", "c": "|1|"},
}


def elementwise_kernel(form: Form, op: str) -> Kernel:
    """``op`` uses ``{d}`` for the REG destination and ``{a} {b} {c}`` for the sources, e.g.
    ``"iadd {d}{a}, {b}"`` or ``"ishl {d}{a}, 33"``."""
    text = op.format(**_OPERANDS[form])
    template = _REG_TEMPLATE if form is Form.REG else _DFLOW_TEMPLATE
    return asm(template.format(op=text))


def run_elementwise(form: Form, op: str, a, b=None, c=None, *, block: int = 64,
                    config: FunctionalConfig | None = None) -> np.ndarray:
    """Launch the element-wise kernel over len(a) elements; returns out as uint32."""
    a = np.asarray(a, dtype=np.uint32)
    n = len(a)
    b = np.zeros(n, np.uint32) if b is None else np.asarray(b, dtype=np.uint32)
    c = np.zeros(n, np.uint32) if c is None else np.asarray(c, dtype=np.uint32)
    assert len(b) == len(c) == n and n % block == 0
    dev = Device(config or FunctionalConfig())
    da, db, dc = dev.upload(a), dev.upload(b), dev.upload(c)
    dout = dev.alloc(4 * n)
    dev.copy_in(dout, np.full(n, 0xA5A5A5A5, np.uint32))  # sentinel: every element must be written
    dev.launch(elementwise_kernel(form, op), grid=n // block, block=block, params=[da, db, dc, dout])
    return dev.copy_out(dout, n)


def pairs_with_random(rng: np.random.Generator, edges=EDGES,
                      total: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of edge values, then random uint32 pairs, ``total`` elements in all."""
    ea = [x for x in edges for _ in edges]
    eb = [y for _ in edges for y in edges]
    extra = total - len(ea)
    assert extra >= 0
    ra = rng.integers(0, 1 << 32, extra, dtype=np.uint64).astype(np.uint32)
    rb = rng.integers(0, 1 << 32, extra, dtype=np.uint64).astype(np.uint32)
    return (np.concatenate([np.array(ea, np.uint32), ra]), np.concatenate([np.array(eb, np.uint32), rb]))


# ------------------------------------------------------------------------------------------
# Launch helpers
# ------------------------------------------------------------------------------------------

def launch_out(kernel: Kernel, grid, block, nwords: int, *, extra_params=(), config=None, trace=False,
               fill: int = 0xA5A5A5A5):
    """Allocate an output of ``nwords`` words filled with ``fill``, launch with params
    ``[out, *extra_params]``; returns (device, launch result, out as uint32)."""
    dev = Device(config or FunctionalConfig())
    out = dev.alloc(4 * nwords)
    dev.copy_in(out, np.full(nwords, fill, np.uint32))
    res = dev.launch(kernel, grid=grid, block=block, params=[out, *extra_params], trace=trace)
    return dev, res, dev.copy_out(out, nwords)


# ------------------------------------------------------------------ the hands variant
def hands_source(name: str, rings: str, dmax: int, body: str, variants: str = "hands") -> str:
    """A DFLOW kernel of ``.variant hands`` (and ``variants``) with one parameter, ``out``."""
    return f".kernel {name}\n.form dflow\n.param out\n.ring {rings}\n.dmax {dmax}\n.variant {variants}\n{body}"


def hands_loop(trips: int) -> str:
    """Body of ``.ring 8 2 2 2``: tid at u0, the invariant 3 at v0; the loop runs ``trips`` times
    on hand s (written 5 times an iteration: a ring of 8 wraps) and reads the invariant on v every
    iteration; each thread stores tid + 3 * (0 + 1 + ... + trips - 1)."""
    return f"""    s2r %tid.x -> u            ; u0: tid
    mov 3 -> v                 ; v0: the loop invariant
    s2r %tid.x                 ; s: acc = tid
    mov 0                      ; s: i
LOOP:                          ; acc at |2|, i at |1|
    imad |1|, |v1|, |2|        ; t = i * 3 + acc
    iadd |2|, 1                ; i + 1
    isetp.lt |1|, {trips}
    mov |3|                    ; acc' = t
    mov |3|                    ; i'
    brnz |3|, LOOP
    ishl |u1|, 2
    ldc out
    iadd |1|, |2|
    stg [|1|], |5|             ; acc
    exit
"""


def hands_divergent(condition: str) -> str:
    """Body in which the two paths of a branch on ``condition`` (of tid at |1|) write different
    numbers of values on hands s and t; the join takes each hand's largest RP, and every thread
    stores X + Y = 107."""
    return f"""    s2r %tid.x                 ; s0: tid
    mov 7                      ; s1: X
    mov 100 -> t               ; t0: Y
    ssy JOIN
    {condition:<26} ; s2
    brnz |1|, A
    mov 1                      ; path B: s + 1, t + 3
    mov 2 -> t
    mov 3 -> t
    mov 4 -> t
    sync
A:  mov 5                      ; path A: s + 2, t + 1
    mov 6
    mov 8 -> t
    sync
JOIN:                          ; RP_s = 3 + 2, RP_t = 1 + 3: each hand's largest
    iadd |s4|, |t4|            ; X + Y
    ishl |6|, 2
    ldc out
    iadd |1|, |2|
    stg [|1|], |4|
    exit
"""


def hands_unwritten_read(split: int) -> str:
    """Body in which threads below ``split`` take path A, which writes hand t once, and the others
    path B, which writes nothing on t; after the join every lane reads |t1|, which path B's lanes
    never wrote: an illegal read on hand t while every read on hand s is fine."""
    return f"""    s2r %tid.x                 ; s0
    mov 5 -> t                 ; t0
    ssy JOIN
    isetp.lt |1|, {split:<11} ; s1
    brnz |1|, A
    mov 9                      ; path B: s + 1, nothing on t
    sync
A:  mov 9                      ; path A: s + 1, t + 1
    mov 6 -> t
    sync
JOIN:
    iadd |3|, |2|              ; fine on hand s (every lane wrote s0 and s1)
    iadd |t1|, |1|             ; t1: path B's lanes never wrote it
    exit
"""

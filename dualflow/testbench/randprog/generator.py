"""Random *structured* REG-form kernels: the property tests of the REG-to-DFLOW converter
(tests/isa/convert/test_convert_property.py) and RTL co-simulation (``randprog.core_programs``).

A program is built as a tree (straight-line statements, if/else and if-without-else regions
with ``ssy``/``sync``, loops with a lane-dependent trip count inside an ``ssy`` region -- with
the test at the bottom, or at the top with a ``bra`` back edge -- uniform-trip-count loops with a
plain back edge, early exits at the top and inside regions, shared-memory phases behind ``bar``
in converged code) and then printed as REG assembly with unique labels. Every value of the
register pool is stored to ``out`` at the end, so every value is observed. Each early exit has
an ``exit`` of its own, or (``GenConfig.shared_exit_percent``) goes to one exit tail shared by
every nesting level and by the early exit of threads past n, as a compiler's single exit block
is; the tail stores a few values and may hold an if or an exit of its own.

Randomness comes from a ``Source``: ``RandomSource`` wraps ``random.Random`` (deterministic
programs, quick to make many), ``DrawSource`` wraps a hypothesis ``draw``. ``GenConfig`` sets the
size, whether FP32/SFU values appear (``fp``), the never-written register (``unwritten``) and the
launch shapes; ``run_program`` runs a program on the functional model. (Checking a conversion and
shrinking a failing program live with the converter's tests, tests/random_programs.py.)

Register map (REG form):

    r0 tid.x   r1 ctaid.x   r2 ntid.x   r3 i = ctaid.x*ntid.x + tid.x   r4 n
    r5 &out[i*S] (this thread's output slots)   r6 the ``in`` pointer
    r7 address temporary   r8 condition temporary   r9 loop-test temporary
    r10 + 2d, r11 + 2d: counter and trip limit of the loop at nesting depth d (d < 3)
    r16 ...: the pool of values (each register keeps one kind, int or float, for its life)
    r200 (``GenConfig.unwritten``): read now and then, never written (reads 0)

Kernel parameters: ``in`` (IN_WORDS words: ints at [0, 64), FP32 values at [64, 128)), ``out``
(S words per thread: one per pool value, then EXTRA_SLOTS for stores inside the program), ``n``.
Loads from ``in`` use lane-dependent in-bounds indices ``(...) & 63``; each thread stores only
to its own ``out`` words, its own shared word and its own local memory, so there are no races.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import numpy as np

from dualflow.isa import Kernel, assemble
from dualflow.models import Device, FunctionalConfig

# ------------------------------------------------------------------------------ layout
TID, CTAID, NTID, GID, NREG, OUTB, INB = 0, 1, 2, 3, 4, 5, 6
TADDR, TCOND, TLOOP = 7, 8, 9
LOOP_BASE = 10
POOL_BASE = 16
UNWRITTEN = 200  #: read now and then, never written: reads 0 in REG form
MAX_LOOP_DEPTH = 3

IN_HALF = 64  #: words of ints, then as many FP32 words
IN_WORDS = 2 * IN_HALF
EXTRA_SLOTS = 4  #: out slots per thread for stores made inside the program
SHARED_PHASE_BYTES = 256  #: one word per thread of a block of at most 64 threads, per phase
MAX_SHARED_PHASES = 3
LOCAL_WORDS = 8
OUT_FILL = 0xA5A5A5A5
SHARED_EXIT = "SHAREDEXIT"  #: the shared exit tail's label (the printer's own labels end in a number)

INT_BINOPS = ("iadd", "isub", "imul", "iand", "ior", "ixor", "ishl", "ishr", "isra",
              "imin", "imax", "umin", "umax")
SHIFTS = ("ishl", "ishr", "isra")
CMPS = ("eq", "ne", "lt", "le", "gt", "ge")
FCMPS = CMPS + ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
FP_BINOPS = ("fadd", "fsub", "fmul", "fmin", "fmax", "fdiv")
FP_IMMS = ("0.5", "2", "-1.25", "3", "1e-3", "-0.0", "0f3f800000", "100")
SREGS = ("%tid.x", "%ntid.x", "%ctaid.x", "%nctaid.x", "%laneid", "%warpid", "%nwarpid", "%tid.y")
PARAMS = ("n", "in", "out")


# ------------------------------------------------------------------------------ randomness
class Source:
    """Where the generator's choices come from."""

    def int(self, lo: int, hi: int) -> int:  # inclusive
        raise NotImplementedError

    def choice(self, seq):
        seq = list(seq)
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        return self.int(0, 99) < percent


class RandomSource(Source):
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


class DrawSource(Source):
    """Choices drawn from hypothesis (``data.draw`` or the ``draw`` of a composite strategy)."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def int(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))


# ------------------------------------------------------------------------------ configuration
@dataclass(frozen=True)
class GenConfig:
    min_pool: int = 4
    max_pool: int = 24
    max_instructions: int = 190  #: soft budget for the whole program
    max_depth: int = 3  #: nesting of if/else and loops
    max_statements: int = 14  #: per straight-line sequence
    fp: bool = True  #: FP32 and SFU values and instructions (off: integer programs only)
    #: a register read now and then, never written (reads 0); None: no register is read before
    #: it is written
    unwritten: int | None = UNWRITTEN
    launches: tuple[Launch, ...] | None = None  #: launch shapes to choose from (None: ``LAUNCHES``)
    #: chance (percent) that a statement of converged code is a shared-memory phase with barriers,
    #: on top of the 2 % every generator has (0: no extra draw, the converter tests' programs)
    shared_phase_percent: int = 0
    #: share (percent) of the parts of a sequence that are early exits
    exit_percent: int = 8
    #: chance (percent) that an early exit goes to the program's shared exit tail instead of an
    #: ``exit`` of its own (0: no extra draw); the tail is then reached with different sets of
    #: open ssy regions, as a compiler's single exit block is
    shared_exit_percent: int = 0


@dataclass(frozen=True)
class Launch:
    warp_size: int
    block: int
    grid: int

    @property
    def threads(self) -> int:
        return self.block * self.grid


LAUNCHES = (Launch(32, 48, 2), Launch(8, 20, 2), Launch(8, 24, 2), Launch(4, 12, 3))


# ------------------------------------------------------------------------------ the tree
@dataclass
class Node:
    pass


@dataclass
class Straight(Node):
    lines: list[str]


@dataclass
class Seq(Node):
    items: list[Node] = field(default_factory=list)


@dataclass
class If(Node):
    setup: list[str]  # computes the condition
    cond: int  # register tested
    branch: str  # brz/brnz: the lanes taking it skip the then-arm (to the else-arm or the join)
    then: Seq
    other: Seq | None  # None: if without else
    shape: int  # printing variant
    lane_dependent: bool = True  # the condition may differ between the lanes of a warp


@dataclass
class Loop(Node):
    depth: int
    setup: list[str]  # counter and limit
    body: Seq
    divergent: bool  # lane-dependent trip count: ssy before, sync after
    test_first: bool  # while-shape: test at the top, ``bra`` back edge (divergent only)
    limit_imm: int | None  # uniform loops may compare against an immediate


@dataclass
class Exit(Node):
    setup: list[str]
    cond: int
    branch: str  # brnz/brz: the lanes taking the branch exit
    shared: bool = False  # to the program's shared exit tail, not an ``exit`` of its own


@dataclass
class Program:
    """A generated kernel: its parts (kept so that a failing program can be shrunk) and launch."""

    pool: list[int]
    kinds: dict[int, str]
    early: bool  #: threads past n exit at once (n is then smaller than the thread count)
    init: list[str]  #: gives every pool register a first value
    body: Seq
    final: list[int]  #: pool registers stored to out at the end (all of them, unless shrunk)
    launch: Launch
    n: int
    data_seed: int
    unwritten: int | None = UNWRITTEN  #: ``GenConfig.unwritten``
    #: what the shared exits run before their ``exit`` (printed only if some exit is shared)
    exit_tail: Seq = field(default_factory=Seq)

    @property
    def early_to_tail(self) -> bool:
        """Threads past n leave through the shared exit tail (there is one), not at DONE."""
        return self.early and bool(self.exit_tail.items)

    @property
    def slots(self) -> int:
        """out words per thread."""
        return len(self.pool) + EXTRA_SLOTS

    @property
    def text(self) -> str:
        return render(self)

    @property
    def instructions(self) -> int:
        return count_instructions(self.text)


#: Constructs seen in the opcodes a program uses (``features``).
_OP_FEATURES = {
    "integer arithmetic": {"iadd", "imul", "imad", "ishl", "isra", "imin", "umax"},
    "FP arithmetic": {"fadd", "fsub", "fmul", "ffma", "fmin", "fmax", "fsetp", "i2f", "f2i"},
    "SFU": {"fdiv", "fsqrt"},
    "global memory": {"ldg", "stg"},
    "shared memory": {"lds", "sts"},
    "local memory": {"ldl", "stl"},
    "fence": {"membar"},
    "barrier": {"bar"},
    "vote": {"vote"},
}


def features(prog: Program) -> set[str]:
    """Which constructs a program uses (to check that the generator covers them)."""
    found: set[str] = set()

    def walk(seq: Seq, inside: tuple[str, ...]) -> None:
        for item in seq.items:
            if isinstance(item, Straight):
                ops = {line.split()[0] for line in item.lines}
                if "bar" in ops:
                    found.add("bar in loop" if "loop" in inside else "bar")
                if prog.unwritten is not None and any(re.search(rf"\br{prog.unwritten}\b", line)
                                                      for line in item.lines):
                    found.add("unwritten register")
            elif isinstance(item, If):
                found.add("if/else" if item.other is not None else "if without else")
                found.add("lane-dependent if" if item.lane_dependent else "uniform if")
                if "loop" in inside:
                    found.add("if in loop")
                walk(item.then, inside + ("if",))
                if item.other is not None:
                    walk(item.other, inside + ("if",))
            elif isinstance(item, Loop):
                found.add("while loop" if item.test_first else "divergent loop" if item.divergent else "uniform loop")
                if "loop" in inside:
                    found.add("loop in loop")
                if "if" in inside:
                    found.add("loop in if")
                walk(item.body, inside + ("loop",))
            elif isinstance(item, Exit):
                found.add("exit in region" if inside else "exit")
                if item.shared:
                    found.add("shared exit in region" if inside else "shared exit")

    walk(prog.body, ())
    ops = {line.split()[0].split(".")[0] for line in prog.text.splitlines()[1:] if line.startswith("    ")}
    for name, group in _OP_FEATURES.items():
        if ops & group:
            found.add(name)
    if prog.early:
        found.add("early exit")
    if len(prog.pool) > 12:
        found.add("more than 12 live values")
    return found


def count_instructions(text: str) -> int:
    """REG instructions in an assembly text (labels and directives excluded)."""
    count = 0
    for raw in text.splitlines():
        line = raw.split(";")[0].strip()
        if ":" in line:
            line = line.split(":", 1)[1].strip()
        if line and not line.startswith("."):
            count += 1
    return count


# ------------------------------------------------------------------------------ generator
class Generator:
    def __init__(self, src: Source, cfg: GenConfig):
        self.src, self.cfg = src, cfg
        npool = src.int(cfg.min_pool, cfg.max_pool)
        self.pool = [POOL_BASE + k for k in range(npool)]
        self.kinds = {r: ("f" if src.chance(35) and cfg.fp else "i") for r in self.pool}
        if all(k == "f" for k in self.kinds.values()):
            self.kinds[self.pool[0]] = "i"
        self.budget = cfg.max_instructions
        self.shared_phases = 0
        self.top_loops = 0  #: open loops with a block-uniform trip count in converged code
        #: Without a never-written register (``cfg.unwritten`` None) no register is read before it
        #: is written: the pool registers given a value so far, while ``initial`` runs.
        self.defined: set[int] | None = None if cfg.unwritten is not None else set()

    # ---- operands
    def ints(self) -> list[int]:
        return [r for r in self.pool if self.kinds[r] == "i"]

    def floats(self) -> list[int]:
        return [r for r in self.pool if self.kinds[r] == "f"]

    def int_src(self) -> int:
        """An int-valued register: mostly pool values, sometimes the thread's ids or n, rarely a
        register the program never writes (it reads 0)."""
        k = self.src.int(0, 99)
        if k < 2 and self.cfg.unwritten is not None:
            return self.cfg.unwritten
        ints = self.ints() if self.defined is None else [r for r in self.ints() if r in self.defined]
        if k < 17 or not ints:
            return self.src.choice((TID, CTAID, NTID, GID, NREG))
        return self.src.choice(ints)

    def float_src(self) -> int | None:
        fl = self.floats()
        return self.src.choice(fl) if fl else None

    def small_imm(self) -> str:
        k = self.src.int(0, 9)
        if k < 6:
            return str(self.src.int(-8, 40))
        if k < 8:
            return str(self.src.choice((1, 2, 3, 7, 31, 32, 255, -1)))
        return hex(self.src.choice((0x7FFFFFFF, 0x80000000, 0xFFFF0000, 0x12345678, 0xFFFFFFFF)))

    def int_b(self) -> str:
        return self.small_imm() if self.src.chance(40) else f"r{self.int_src()}"

    def float_b(self) -> str:
        f = self.float_src()
        if f is None or self.src.chance(30):
            return self.src.choice(FP_IMMS)
        return f"r{f}"

    def dest(self, kind: str) -> int:
        return self.src.choice(self.ints() if kind == "i" else self.floats())

    # ---- address helpers
    def in_address(self, region: int) -> tuple[list[str], str]:
        """Lines that put a lane-dependent in-bounds address of ``in`` in TADDR; the operand text."""
        base = region * 4 * IN_HALF
        k = self.src.int(0, 3)
        lines = []
        if k == 0:  # uniform address
            return [], f"[r{INB}+{base + 4 * self.src.int(0, IN_HALF - 1)}]"
        if k == 1:
            lines.append(f"imul r{TADDR}, r{GID}, {self.src.int(1, 13)}")
            lines.append(f"iadd r{TADDR}, r{TADDR}, {self.src.int(0, 63)}")
        elif k == 2:
            lines.append(f"iadd r{TADDR}, r{self.int_src()}, {self.src.int(0, 9)}")
        else:
            lines.append(f"ixor r{TADDR}, r{self.src.choice((TID, GID))}, r{self.int_src()}")
        lines.append(f"iand r{TADDR}, r{TADDR}, {IN_HALF - 1}")
        lines.append(f"ishl r{TADDR}, r{TADDR}, 2")
        if self.src.chance(30):  # a fresh parameter load instead of the long-lived pointer
            lines.append(f"ldc r{TCOND}, in")
            lines.append(f"iadd r{TADDR}, r{TADDR}, r{TCOND}")
        else:
            lines.append(f"iadd r{TADDR}, r{TADDR}, r{INB}")
        return lines, f"[r{TADDR}+{base}]" if base else f"[r{TADDR}]"

    def local_address(self) -> tuple[list[str], str]:
        if self.src.chance(60):
            return [], f"[rz+{4 * self.src.int(0, LOCAL_WORDS - 1)}]"
        lines = [f"iand r{TADDR}, r{self.src.choice((GID, TID, *self.ints()))}, {LOCAL_WORDS // 2 - 1}",
                 f"ishl r{TADDR}, r{TADDR}, 2"]
        return lines, f"[r{TADDR}+{4 * self.src.int(0, LOCAL_WORDS // 2)}]"

    # ---- straight-line statements
    def statement(self, top: bool) -> list[str]:
        src = self.src
        has_f = bool(self.floats())
        phases_left = top and self.shared_phases < MAX_SHARED_PHASES
        if self.cfg.shared_phase_percent and phases_left and src.chance(self.cfg.shared_phase_percent):
            return self.shared_phase()
        kind = src.int(0, 99)
        if kind < 30:  # integer op
            d = self.dest("i")
            op = src.choice(INT_BINOPS)
            if op in SHIFTS and src.chance(70):
                return [f"{op} r{d}, r{self.int_src()}, {src.int(0, 33)}"]
            return [f"{op} r{d}, r{self.int_src()}, {self.int_b()}"]
        if kind < 34:
            d = self.dest("i")
            if src.chance(50):
                return [f"imad r{d}, r{self.int_src()}, r{self.int_src()}, r{self.int_src()}"]
            return [f"inot r{d}, r{self.int_src()}"]
        if kind < 42:  # compares producing a predicate
            d = self.dest("i")
            if has_f and src.chance(35):
                return [f"fsetp.{src.choice(FCMPS)} r{d}, r{self.float_src()}, {self.float_b()}"]
            op = src.choice(("isetp", "usetp"))
            return [f"{op}.{src.choice(CMPS)} r{d}, r{self.int_src()}, {self.int_b()}"]
        if kind < 47:  # selp
            d = self.dest(src.choice("if") if has_f else "i")
            pick = self.float_src if self.kinds[d] == "f" else self.int_src
            return [f"selp r{d}, r{pick()}, r{pick()}, r{self.int_src()}"]
        if kind < 60 and has_f:  # FP arithmetic
            d = self.dest("f")
            k = src.int(0, 9)
            if k < 6:
                return [f"{src.choice(FP_BINOPS)} r{d}, r{self.float_src()}, {self.float_b()}"]
            if k < 8:
                return [f"ffma r{d}, r{self.float_src()}, r{self.float_src()}, r{self.float_src()}"]
            return [f"fsqrt r{d}, r{self.float_src()}"]
        if kind < 66:  # conversions
            if has_f and src.chance(50):
                return [f"{src.choice(('i2f', 'u2f'))} r{self.dest('f')}, r{self.int_src()}"]
            if has_f:
                return [f"{src.choice(('f2i', 'f2u'))} r{self.dest('i')}, r{self.float_src()}"]
            return [f"mov r{self.dest('i')}, r{self.int_src()}"]
        if kind < 76:  # global loads
            region = 1 if has_f and src.chance(40) else 0
            d = self.dest("f" if region else "i")
            lines, addr = self.in_address(region)
            return lines + [f"ldg r{d}, {addr}"]
        if kind < 80:  # stores of a value to this thread's extra output slots
            slot = len(self.pool) + src.int(0, EXTRA_SLOTS - 1)
            return [f"stg [r{OUTB}+{4 * slot}], r{src.choice(self.pool)}"]
        if kind < 85:  # local memory
            lines, addr = self.local_address()
            if src.chance(50):
                return lines + [f"stl {addr}, r{src.choice(self.pool)}"]
            return lines + [f"ldl r{self.dest('i')}, {addr}"]
        if kind < 89:
            return [f"s2r r{self.dest('i')}, {src.choice(SREGS)}"]
        if kind < 92:
            return [f"ldc r{self.dest('i')}, {src.choice(PARAMS)}"]
        if kind < 95:
            if src.chance(50):
                return [f"mov r{self.dest('i')}, {self.small_imm()}"]
            d = self.dest(src.choice("if") if has_f else "i")
            pick = self.float_src if self.kinds[d] == "f" else self.int_src
            return [f"mov r{d}, r{pick()}"]
        if kind < 97:
            return [f"vote.{src.choice(('any', 'all', 'ballot'))} r{self.dest('i')}, r{self.int_src()}"]
        if kind < 98:
            return [src.choice(("nop", "membar"))]
        if top and self.shared_phases < MAX_SHARED_PHASES:
            return self.shared_phase()
        return [f"iadd r{self.dest('i')}, r{GID}, {src.int(0, 5)}"]

    def shared_phase(self) -> list[str]:
        """Each thread writes its own word, barrier, reads a neighbour's word (converged code)."""
        base = self.shared_phases * SHARED_PHASE_BYTES
        self.shared_phases += 1
        src = self.src
        # In a loop, a leading barrier keeps this iteration's store after the last one's reads.
        lines = ["bar"] if self.top_loops else []
        lines += [f"ishl r{TADDR}, r{TID}, 2", f"sts [r{TADDR}+{base}], r{src.choice(self.pool)}", "bar"]
        k = src.int(0, 2)
        if k == 0:
            lines.append(f"ixor r{TADDR}, r{TID}, {src.int(1, 3)}")
            lines.append(f"ishl r{TADDR}, r{TADDR}, 2")
            addr = f"[r{TADDR}+{base}]"
        elif k == 1:
            addr = f"[rz+{base + 4 * src.int(0, 3)}]"  # a word every block has
        else:
            addr = f"[r{TADDR}+{base}]"  # own word, after the barrier
        d = src.choice(self.pool)
        return lines + [f"lds r{d}, {addr}"]

    def straight(self, top: bool) -> Straight:
        lines: list[str] = []
        for _ in range(self.src.int(1, self.cfg.max_statements)):
            if self.budget <= 0:
                break
            stmt = self.statement(top)
            self.budget -= len(stmt)
            lines.extend(stmt)
        return Straight(lines)

    # ---- conditions
    def condition(self, lane_dependent: bool) -> tuple[list[str], int]:
        """Lines computing a branch condition, and the register to test."""
        src = self.src
        t = TCOND
        if lane_dependent:
            k = src.int(0, 5)
            if k == 0:
                return [f"iand r{t}, r{src.choice((GID, TID))}, {src.choice((1, 2, 3, 4, 5, 6, 7))}"], t
            if k == 1:
                return [f"s2r r{t}, %laneid", f"isetp.{src.choice(CMPS)} r{t}, r{t}, {src.int(0, 8)}"], t
            if k == 2:
                return [], src.choice(self.ints())  # a pool value itself: data-dependent
            if k == 3 and self.floats():
                return [f"fsetp.{src.choice(FCMPS)} r{t}, r{self.float_src()}, {self.float_b()}"], t
            if k == 4:
                return [f"isetp.{src.choice(CMPS)} r{t}, r{self.int_src()}, r{self.int_src()}"], t
            return [f"iand r{t}, r{src.choice(self.ints())}, {src.choice((1, 3, 8, 0x100))}"], t
        k = src.int(0, 4)
        if k == 0:
            return [f"s2r r{t}, %warpid", f"iand r{t}, r{t}, 1"], t
        if k == 1:
            return [f"s2r r{t}, %ctaid.x"], t
        if k == 2:
            return [f"ldc r{t}, n", f"isetp.gt r{t}, r{t}, {src.int(0, 120)}"], t
        if k == 3:
            return [f"vote.any r{t}, r{src.choice(self.ints())}"], t  # uniform within the warp
        return [f"mov r{t}, {src.int(0, 1)}"], t

    # ---- structure
    def seq(self, depth: int, loop_depth: int, top: bool) -> Seq:
        out = Seq()
        parts = self.src.int(1, 4 if depth == 0 else 3)
        for _ in range(parts):
            if self.budget <= 0:
                break
            k = self.src.int(0, 99)
            if depth >= self.cfg.max_depth or k < 40:
                out.items.append(self.straight(top))
            elif k < 70:
                out.items.append(self.if_node(depth, loop_depth))
            elif k < 100 - self.cfg.exit_percent and loop_depth < MAX_LOOP_DEPTH:
                out.items.append(self.loop_node(depth, loop_depth, top))
            else:
                out.items.append(self.exit_node())
        return out

    def if_node(self, depth: int, loop_depth: int) -> If:
        lane = self.src.chance(75)
        setup, cond = self.condition(lane)
        self.budget -= len(setup) + 5
        then = self.seq(depth + 1, loop_depth, False)
        other = self.seq(depth + 1, loop_depth, False) if self.src.chance(60) else None
        return If(setup, cond, self.src.choice(("brz", "brnz")), then, other, self.src.int(0, 1), lane)

    def loop_node(self, depth: int, loop_depth: int, top: bool = False) -> Loop:
        """A loop; ``top``: in converged code, where a loop with an immediate trip count (the same
        for every warp of the block) may hold barriers."""
        src = self.src
        counter, limit = LOOP_BASE + 2 * loop_depth, LOOP_BASE + 2 * loop_depth + 1
        divergent = src.chance(60)
        setup = [f"mov r{counter}, 0"]
        limit_imm = None
        if divergent:
            k = src.int(0, 2)
            x = (GID, TID, src.choice(self.ints()))[k]
            setup += [f"iand r{limit}, r{x}, {src.choice((1, 3))}", f"iadd r{limit}, r{limit}, 1"]
        elif src.chance(50):
            limit_imm = src.int(1, 3)
        else:
            setup += [f"s2r r{limit}, %warpid", f"iand r{limit}, r{limit}, 1", f"iadd r{limit}, r{limit}, 1"]
        self.budget -= len(setup) + 6
        converged = top and limit_imm is not None
        self.top_loops += converged
        body = self.seq(depth + 1, loop_depth + 1, converged)
        self.top_loops -= converged
        test_first = divergent and src.chance(35)
        return Loop(loop_depth, setup, body, divergent, test_first, limit_imm)

    def exit_node(self, shareable: bool = True) -> Exit:
        setup, cond = self.condition(True)
        self.budget -= len(setup) + 2
        branch = self.src.choice(("brz", "brnz"))
        percent = self.cfg.shared_exit_percent if shareable else 0
        return Exit(setup, cond, branch, bool(percent) and self.src.chance(percent))

    def exit_tail(self) -> Seq:
        """The shared exit's code: stores of a few values to this thread's extra slots (all that
        the exiting lanes leave in ``out``), then now and then an if, or an exit of its own."""
        src = self.src
        stores = [f"stg [r{OUTB}+{4 * (len(self.pool) + src.int(0, EXTRA_SLOTS - 1))}], r{src.choice(self.pool)}"
                  for _ in range(src.int(1, 3))]
        tail = Seq([Straight(stores)])
        k = src.int(0, 2)
        if k == 1:
            setup, cond = self.condition(True)
            then = Seq([self.straight(False)])
            other = Seq([self.straight(False)]) if src.chance(50) else None
            tail.items.append(If(setup, cond, src.choice(("brz", "brnz")), then, other, src.int(0, 1)))
        elif k == 2:
            tail.items += [self.exit_node(shareable=False), self.straight(False)]
        return tail

    def initial(self) -> list[str]:
        """Give every pool register a value of its kind."""
        lines = []
        for r in self.pool:
            k = self.src.int(0, 5)
            if self.kinds[r] == "f":
                if k < 3:
                    more, addr = self.in_address(1)
                    lines += more + [f"ldg r{r}, {addr}"]
                elif k < 5:
                    lines.append(f"i2f r{r}, r{self.src.choice((GID, TID, CTAID, NREG))}")
                else:
                    lines.append(f"i2f r{r}, r{GID}")
                    lines.append(f"fmul r{r}, r{r}, {self.src.choice(FP_IMMS)}")
            elif k < 2:
                more, addr = self.in_address(0)
                lines += more + [f"ldg r{r}, {addr}"]
            elif k < 4:
                lines.append(f"iadd r{r}, r{self.src.choice((GID, TID))}, {self.small_imm()}")
            elif k < 5:
                lines.append(f"s2r r{r}, {self.src.choice(SREGS)}")
            else:
                lines.append(f"mov r{r}, {self.small_imm()}")
            if self.defined is not None:
                self.defined.add(r)
        self.defined = None
        return lines


# ------------------------------------------------------------------------------ printer
class Printer:
    def __init__(self):
        self.lines: list[str] = []
        self.exit_labels: list[str] = []
        self.shared_exit_used = False  #: some branch goes to SHARED_EXIT: the tail is printed
        self.counter = 0

    def label(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def ins(self, text: str) -> None:
        self.lines.append("    " + text)

    def put_label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def node(self, n: Node) -> None:
        if isinstance(n, Straight):
            for line in n.lines:
                self.ins(line)
        elif isinstance(n, Seq):
            for item in n.items:
                self.node(item)
        elif isinstance(n, If):
            self.if_node(n)
        elif isinstance(n, Loop):
            self.loop_node(n)
        elif isinstance(n, Exit):
            for line in n.setup:
                self.ins(line)
            if n.shared:
                self.shared_exit_used = True
                name = SHARED_EXIT
            else:
                name = self.label("EXIT")
                self.exit_labels.append(name)
            self.ins(f"{n.branch} r{n.cond}, {name}")
        else:  # pragma: no cover
            raise TypeError(n)

    def if_node(self, n: If) -> None:
        join = self.label("JOIN")
        for line in n.setup:
            self.ins(line)
        self.ins(f"ssy {join}")
        if n.other is None:
            if n.shape == 0:  # reduce.reg.s: the skipping branch goes straight to the shared sync
                skip = self.label("SKIPSYNC")
                self.ins(f"{n.branch} r{n.cond}, {skip}")
                self.node(n.then)
                self.put_label(skip)
                self.ins("sync")
            else:
                skip = self.label("SKIP")
                self.ins(f"{n.branch} r{n.cond}, {skip}")
                self.node(n.then)
                self.ins("sync")
                self.put_label(skip)
                self.ins("sync")
        else:
            other = self.label("ELSE")
            self.ins(f"{n.branch} r{n.cond}, {other}")
            self.node(n.then)
            self.ins("sync")
            self.put_label(other)
            self.node(n.other)
            self.ins("sync")
        self.put_label(join)

    def loop_node(self, n: Loop) -> None:
        counter, limit = LOOP_BASE + 2 * n.depth, LOOP_BASE + 2 * n.depth + 1
        for line in n.setup:
            self.ins(line)
        top, join = self.label("LOOP"), self.label("LJOIN")
        bound = str(n.limit_imm) if n.limit_imm is not None else f"r{limit}"
        if n.divergent:
            self.ins(f"ssy {join}")
        self.put_label(top)
        if n.test_first:
            leave = self.label("LEAVE")
            self.ins(f"isetp.ge r{TLOOP}, r{counter}, {bound}")
            self.ins(f"brnz r{TLOOP}, {leave}")
            self.node(n.body)
            self.ins(f"iadd r{counter}, r{counter}, 1")
            self.ins(f"bra {top}")
            self.put_label(leave)
            self.ins("sync")
        else:
            self.node(n.body)
            self.ins(f"iadd r{counter}, r{counter}, 1")
            if n.limit_imm is None and n.divergent and n.depth % 2:
                self.ins(f"isetp.ge r{TLOOP}, r{counter}, {bound}")
                self.ins(f"brz r{TLOOP}, {top}")
            else:
                self.ins(f"isetp.lt r{TLOOP}, r{counter}, {bound}")
                self.ins(f"brnz r{TLOOP}, {top}")
            if n.divergent:
                self.ins("sync")
        if n.divergent:
            self.put_label(join)


def generate(src: Source, cfg: GenConfig | None = None) -> Program:
    cfg = cfg or GenConfig()
    gen = Generator(src, cfg)
    launch = src.choice(cfg.launches or LAUNCHES)
    early = src.chance(60)
    n = launch.threads - src.int(1, launch.threads // 3) if early else launch.threads
    init = gen.initial()
    gen.budget -= len(prologue_lines(early, len(gen.pool))) + len(init) + len(gen.pool) + 1
    body = gen.seq(0, 0, True)
    tail = gen.exit_tail() if cfg.shared_exit_percent else Seq()
    return Program(gen.pool, gen.kinds, early, init, body, list(gen.pool), launch, n, src.int(0, 2**31 - 1),
                   cfg.unwritten, tail)


def prologue_lines(early: bool, npool: int, to_tail: bool = False) -> list[str]:
    """i, the optional early exit of threads past n, the pointers; the early exit goes to the
    shared exit tail instead of DONE if ``to_tail``, after the pointers (the tail stores through
    the ``out`` pointer)."""
    lines = [
        f"s2r r{TID}, %tid.x",
        f"s2r r{CTAID}, %ctaid.x",
        f"s2r r{NTID}, %ntid.x",
        f"imad r{GID}, r{CTAID}, r{NTID}, r{TID}",
        f"ldc r{NREG}, n",
    ]
    pointers = [
        f"ldc r{INB}, in",
        f"ldc r{OUTB}, out",
        f"imul r{TADDR}, r{GID}, {4 * (npool + EXTRA_SLOTS)}",
        f"iadd r{OUTB}, r{OUTB}, r{TADDR}",
    ]
    leave = [f"isetp.ge r{TCOND}, r{GID}, r{NREG}", f"brnz r{TCOND}, {SHARED_EXIT if to_tail else 'DONE'}"]
    if not early:
        return lines + pointers
    return lines + (pointers + leave if to_tail else leave + pointers)


def render(prog: Program) -> str:
    """The program as REG assembly, with unique labels."""
    pr = Printer()
    pr.shared_exit_used = prog.early_to_tail
    for line in prologue_lines(prog.early, len(prog.pool), prog.early_to_tail) + prog.init:
        pr.ins(line)
    pr.node(prog.body)
    for r in prog.final:
        pr.ins(f"stg [r{OUTB}+{4 * prog.pool.index(r)}], r{r}")
    pr.put_label("DONE")
    pr.ins("exit")
    if pr.shared_exit_used:
        pr.put_label(SHARED_EXIT)
        pr.node(prog.exit_tail)
        pr.ins("exit")
    for name in pr.exit_labels:
        pr.put_label(name)
        pr.ins("exit")
    ops = {line.split()[0] for line in pr.lines if line.startswith("    ")}
    head = [".kernel rnd", ".form reg", ".param in out n"]
    if ops & {"sts", "lds"}:
        head.append(f".shared {MAX_SHARED_PHASES * SHARED_PHASE_BYTES}")
    if ops & {"stl", "ldl"}:
        head.append(f".local {4 * LOCAL_WORDS}")
    return "\n".join(head + pr.lines) + "\n"


# ------------------------------------------------------------------------------ running
def make_inputs(seed: int) -> np.ndarray:
    """``in``: 64 ints (small and full-range), then 64 FP32 values (with zeros and specials)."""
    rng = np.random.default_rng(seed)
    ints = np.where(rng.random(IN_HALF) < 0.5, rng.integers(-20, 100, IN_HALF),
                    rng.integers(-2**31, 2**31, IN_HALF)).astype(np.int64).astype(np.uint32)
    floats = (rng.standard_normal(IN_HALF) * rng.choice([1.0, 10.0, 1e4], IN_HALF)).astype(np.float32)
    floats[rng.integers(0, IN_HALF, 4)] = np.array([0.0, -0.0, 1.5, -3.0], np.float32)
    return np.concatenate([ints, floats.view(np.uint32)])


#: Warp instructions a launch may run: far above what a generated program needs, so a DFLOW kernel
#: that loops for ever is reported as a runaway instead of hanging the test.
RUN_BUDGET = 3_000_000


def upload(dev: Device, inputs: np.ndarray, launch: Launch, n: int, slots: int) -> list[int]:
    """Allocate and fill ``in`` and ``out`` on ``dev``; the kernel's parameters (in, out, n)."""
    din = dev.upload(inputs)
    dout = dev.upload(np.full(launch.threads * slots, OUT_FILL, np.uint32))
    return [din, dout, n]


def run(kernel: Kernel, launch: Launch, n: int, slots: int, inputs: np.ndarray) -> np.ndarray:
    """Launch ``kernel`` on a fresh device; returns ``out`` as uint32 words."""
    dev = Device(FunctionalConfig(warp_size=launch.warp_size, max_warp_instructions=RUN_BUDGET))
    params = upload(dev, inputs, launch, n, slots)
    dev.launch(kernel, grid=launch.grid, block=launch.block, params=params)
    return dev.copy_out(params[1], launch.threads * slots, np.uint32)


def run_program(prog: Program, kernel: Kernel | None = None) -> np.ndarray:
    kernel = kernel if kernel is not None else assemble(prog.text).only
    return run(kernel, prog.launch, prog.n, prog.slots, make_inputs(prog.data_seed))



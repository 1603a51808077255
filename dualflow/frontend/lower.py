"""PTX instructions to ours, over virtual registers (instruction selection).

Each PTX instruction becomes one or a few of ours; what has no instruction of its own is built
from others and documented in docs/frontend.md: the high half of a product (four 16-bit partial
products), integer division and remainder (an FP32 reciprocal estimate refined twice, then
corrected exactly), sub-word loads (a word load, a shift and a mask), sub-word stores to local
memory (read, merge, write). A predicated instruction with no side effect becomes the
instruction and a ``selp``; one with a side effect (a load or store) is branched around, and
``reconverge`` then treats that branch like any other. Memory spaces come from the address
(``spaces``), so generic loads and stores work when the pointer's space is known.
"""

from __future__ import annotations

import struct

from dualflow.isa.opcodes import Cmp, Opcode, SpecialReg, VoteMode

from .errors import FrontendError
from .ir import RZ, Function, Item, LabelMark, Op
from .ptx import Entry, Imm, Instr, Label, Mem, PtxModule, Reg, Sym, Variable, Vec, type_bytes
from .spaces import Layout, Space, pointer_spaces

_SREGS = {f"%{s.name.lower().replace('_', '.')}": s for s in SpecialReg}
_INT_CMP = {"eq": Cmp.EQ, "ne": Cmp.NE, "lt": Cmp.LT, "le": Cmp.LE, "gt": Cmp.GT, "ge": Cmp.GE}
_UNSIGNED_CMP = {"lo": Cmp.LT, "ls": Cmp.LE, "hi": Cmp.GT, "hs": Cmp.GE}
_FP_CMP = {c.name.lower(): c for c in Cmp}
_ROUNDING = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"}
_IGNORED_MODS = {"ftz", "uni", "approx", "full", "nc", "ca", "cg", "cs", "lu", "cv", "volatile", "relaxed",
                 "sync", "aligned", "cta", "gl", "sys", "gpu", "weak"}
_F32_ONE = 0x3F800000


def _width(ptx_type: str) -> int:
    return 8 * (type_bytes(ptx_type) or 4)


#: 64-bit types: held as two 32-bit halves where the front end moves, loads or stores them whole
_WIDE = ("b64", "u64", "s64")


def _halves(name: str) -> tuple[str, str]:
    """The 32-bit virtual registers holding a 64-bit register's low and high words."""
    return f"{name}.lo", f"{name}.hi"


def _narrow_immediate(value: int, ptx_type: str) -> int:
    """An immediate of a sub-word type as its 32-bit extension: PTX writes ``-30810`` for the
    unsigned 16-bit 0x87A6, which compares as 34726, not as 0xFFFF87A6."""
    w = _width(ptx_type)
    if w >= 32:
        return value
    value &= (1 << w) - 1
    if ptx_type.startswith("s") and value & (1 << (w - 1)):
        value |= 0xFFFFFFFF ^ ((1 << w) - 1)
    return value


class Lowering:
    """Lowers one kernel (``Entry``) of a PTX module."""

    def __init__(self, module: PtxModule, entry: Entry, private_globals: bool) -> None:
        self.module, self.entry = module, entry
        self.path = module.path
        self.layout = Layout.of(module, entry, private_globals, self.error)
        self.spaces = pointer_spaces(entry, self.layout, self.error)
        self.items: list[Item] = []
        self.temps = 0
        self.labels = 0
        self.line = 0

    # -- helpers --------------------------------------------------------------------------------
    def error(self, line: int, message: str) -> FrontendError:
        return FrontendError(f"{self.path}:{line}: {message}")

    def fail(self, instr: Instr, why: str) -> FrontendError:
        return self.error(instr.line, f"{instr.text}: {why}")

    def tmp(self) -> str:
        self.temps += 1
        return f"%%t{self.temps}"

    def label(self, stem: str = "L") -> str:
        self.labels += 1
        return f"__{stem}{self.labels}"

    def emit(self, opcode: Opcode, dst: str | None = None, *srcs: str | int, mod: int = 0, offset: int = 0,
             target: str | None = None) -> str | None:
        """Append one instruction; immediates where the syntax has no immediate slot are moved
        into a register first."""
        slots = Opcode_slots(opcode)
        fixed = []
        for i, s in enumerate(srcs):
            if isinstance(s, int) and not (i < len(slots) and slots[i]):
                if s == 0:
                    s = RZ
                else:
                    t = self.tmp()
                    self.items.append(Op(Opcode.MOV, t, [s & 0xFFFFFFFF], line=self.line))
                    s = t
            elif isinstance(s, int):
                s &= 0xFFFFFFFF
            fixed.append(s)
        self.items.append(Op(opcode, dst, fixed, mod, offset, target, self.line))
        return dst

    def value(self, op, instr: Instr) -> str | int:
        """A source operand: a virtual register name or an immediate's bits."""
        if isinstance(op, Reg):
            if op.name in _SREGS:
                return self.emit(Opcode.S2R, self.tmp(), mod=int(_SREGS[op.name]))
            return op.name
        if isinstance(op, Imm):
            return op.bits
        if isinstance(op, Sym):
            return self.layout.address(op.name, instr.line)
        raise self.fail(instr, f"unexpected operand {op}")

    def reg_value(self, op, instr: Instr) -> str:
        v = self.value(op, instr)
        if isinstance(v, int):
            return RZ if v == 0 else self.emit(Opcode.MOV, self.tmp(), v)
        return v

    @staticmethod
    def dest(instr: Instr) -> str:
        d = instr.operands[0]
        if not isinstance(d, Reg):
            raise FrontendError(f"line {instr.line}: destination {d} is not a register")
        return d.name

    # -- the kernel -----------------------------------------------------------------------------
    def run(self) -> Function:
        for var, offset in self.layout.initialized_locals():
            self._initialize(var, offset)
        count = 0
        for item in self.entry.body:
            if isinstance(item, Label):
                self.items.append(LabelMark(item.name))
                continue
            count += 1
            self.line = item.line
            self.instruction(item)
        self.items.append(Op(Opcode.EXIT, line=self.line))  # clang ends with ret; a fall-off is an exit too
        params = [p.name for p in self.entry.params]
        return Function(self.entry.name, params, self.layout.shared_bytes, self.layout.local_bytes,
                        self.items, count, spill_base=self.layout.local_bytes)

    def _initialize(self, var: Variable, offset: int) -> None:
        data = var.init + bytes(-len(var.init) % 4)
        for i in range(0, len(data), 4):
            word = int.from_bytes(data[i:i + 4], "little")
            self.emit(Opcode.STL, None, RZ, word, offset=offset + i)

    def instruction(self, instr: Instr) -> None:
        if instr.opcode == "bra":
            target = instr.operands[0]
            if instr.guard is None:
                self.emit(Opcode.BRA, target=target.name)
            else:
                op = Opcode.BRZ if instr.guard_negated else Opcode.BRNZ
                self.emit(op, None, instr.guard.name, target=target.name)
            return
        if instr.guard is not None:
            self._guarded(instr)
            return
        handler = getattr(self, f"op_{instr.opcode}", None)
        if handler is None:
            raise self.fail(instr, "PTX instruction not supported by the front end")
        handler(instr)

    def _guarded(self, instr: Instr) -> None:
        """``@p instr``: a side-effect-free instruction computes into a temporary and ``selp``
        keeps the old value where the guard is false; others are branched around."""
        plain = Instr(instr.opcode, instr.mods, instr.operands, instr.line)
        if instr.opcode not in ("ld", "st", "ldu", "ret", "exit", "bar", "barrier", "membar", "fence", "vote") \
                and instr.operands and isinstance(instr.operands[0], Reg) and instr.dual is None:
            d = self.dest(instr)
            t = self.tmp()
            renamed = Instr(plain.opcode, plain.mods, (Reg(t),) + plain.operands[1:], plain.line)
            self.instruction(renamed)
            a, b = (d, t) if instr.guard_negated else (t, d)
            self.emit(Opcode.SELP, d, a, b, instr.guard.name)
            return
        skip = self.label("skip")
        self.emit(Opcode.BRNZ if instr.guard_negated else Opcode.BRZ, None, instr.guard.name, target=skip)
        self.instruction(plain)
        self.items.append(LabelMark(skip))

    # -- moves, conversions ---------------------------------------------------------------------
    def op_mov(self, instr: Instr) -> None:
        if instr.mods and instr.mods[-1] in _WIDE:
            self._mov64(instr)
            return
        d, src = self.dest(instr), instr.operands[1]
        if isinstance(src, Vec):
            raise self.fail(instr, "packing registers into a wider one is not supported (no 64-bit values)")
        if isinstance(src, Reg) and src.name in _SREGS:
            self.emit(Opcode.S2R, d, mod=int(_SREGS[src.name]))
            return
        if isinstance(src, Imm) and self._type(instr) == "pred":
            # a predicate is 0 or 1 here (not.pred is ixor 1); PTX writes true as -1 (Csmith seed 191)
            self.emit(Opcode.MOV, d, int(src.bits != 0))
            return
        self.emit(Opcode.MOV, d, self.value(src, instr))

    def _mov64(self, instr: Instr) -> None:
        """A 64-bit move as two 32-bit halves: a constant, a copy, or packing and unpacking a
        pair of 32-bit registers (clang merges two adjacent 32-bit stores into one 64-bit one)."""
        dst, src = instr.operands[0], instr.operands[1]
        if isinstance(dst, Vec):  # unpack {lo, hi} <- 64-bit register
            if not isinstance(src, Reg) or len(dst.items) != 2:
                raise self.fail(instr, "cannot split this 64-bit value")
            for half, item in zip(_halves(src.name), dst.items):
                self.emit(Opcode.MOV, item.name, half)
            return
        lo, hi = _halves(self.dest(instr))
        if isinstance(src, Vec) and len(src.items) == 2:
            values = [self.value(item, instr) for item in src.items]
        elif isinstance(src, Reg):
            values = list(_halves(src.name))
        elif isinstance(src, Imm) and not src.is_float:
            bits = src.literal & 0xFFFFFFFFFFFFFFFF
            values = [bits & 0xFFFFFFFF, bits >> 32]
        else:
            raise self.fail(instr, "unsupported 64-bit operand")
        self.emit(Opcode.MOV, lo, values[0])
        self.emit(Opcode.MOV, hi, values[1])

    def op_cvta(self, instr: Instr) -> None:
        self.emit(Opcode.MOV, self.dest(instr), self.value(instr.operands[1], instr))

    def op_cvt(self, instr: Instr) -> None:
        mods = [m for m in instr.mods if m not in _IGNORED_MODS and m != "sat"]
        rounding = [m for m in mods if m in _ROUNDING]
        types = [m for m in mods if m not in _ROUNDING]
        if "sat" in instr.mods and types != ["f32", "f32"]:
            raise self.fail(instr, "saturating integer conversion is not supported")
        if len(types) != 2:
            raise self.fail(instr, "cannot read the conversion's types")
        dt, st = types
        if st in _WIDE and dt in ("u32", "s32", "b32"):  # truncation: the low word
            self.emit(Opcode.MOV, self.dest(instr), _halves(instr.operands[1].name)[0])
            return
        if dt in _WIDE and st in ("u32", "s32", "b32"):  # extension into two words
            lo, hi = _halves(self.dest(instr))
            a = self.reg_value(instr.operands[1], instr)
            self.emit(Opcode.MOV, lo, a)
            if st.startswith("s"):
                self.emit(Opcode.ISRA, hi, a, 31)
            else:
                self.emit(Opcode.MOV, hi, 0)
            return
        for t in (dt, st):
            if t in ("f64", "u64", "s64", "b64", "f16", "bf16"):
                raise self.fail(instr, f"{t} values are not supported (the machine is 32-bit, FP32 only)")
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        if dt == "f32" and st == "f32":
            if "sat" in instr.mods:
                raise self.fail(instr, "cvt.sat.f32 is not supported")
            self._round_f32(d, a, rounding[0] if rounding else "rn", instr)
        elif dt == "f32":
            a = self._extend(a, st)
            self.emit(Opcode.I2F if st.startswith("s") else Opcode.U2F, d, a)
        elif st == "f32":
            if rounding and rounding[0] not in ("rzi", "rz"):
                r = self.tmp()
                self._round_f32(r, a, rounding[0], instr)
                a = r
            signed = dt.startswith("s")
            self.emit(Opcode.F2I if signed else Opcode.F2U, d, a)
            w = _width(dt)
            if w < 32:  # saturate to the narrower type, as PTX does
                lo, hi = ((-(1 << (w - 1))), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
                self.emit(Opcode.IMAX if signed else Opcode.UMAX, d, d, lo & 0xFFFFFFFF)
                self.emit(Opcode.IMIN if signed else Opcode.UMIN, d, d, hi)
        else:
            # integer to integer: extend from the narrower of the two, as the source's signedness says
            w = min(_width(dt), _width(st))
            signed = st.startswith("s") if _width(st) <= _width(dt) else dt.startswith("s")
            if w >= 32:
                self.emit(Opcode.MOV, d, a)
            elif signed:
                self.emit(Opcode.ISHL, d, a, 32 - w)
                self.emit(Opcode.ISRA, d, d, 32 - w)
            else:
                self.emit(Opcode.IAND, d, a, (1 << w) - 1)

    def _round_f32(self, d: str, a: str, mode: str, instr: Instr) -> None:
        """FP32 to an integral FP32 value: truncate through an integer where |a| < 2^23 (larger
        values are integral already), then step for floor, ceil and nearest-even."""
        if mode == "rn":
            self.emit(Opcode.MOV, d, a)
            return
        big = self.emit(Opcode.FSETP, self.tmp(), self.emit(Opcode.IAND, self.tmp(), a, 0x7FFFFFFF), 0x4B000000,
                        mod=int(Cmp.GEU))
        t = self.emit(Opcode.I2F, self.tmp(), self.emit(Opcode.F2I, self.tmp(), a))
        if mode in ("rmi", "rpi"):
            cmp = Cmp.GT if mode == "rmi" else Cmp.LT
            step = 0xBF800000 if mode == "rmi" else _F32_ONE
            off = self.emit(Opcode.FSETP, self.tmp(), t, a, mod=int(cmp))
            stepped = self.emit(Opcode.FADD, self.tmp(), t, step)
            t = self.emit(Opcode.SELP, self.tmp(), stepped, t, off)
        elif mode == "rni":
            # nearest, ties to even: t = trunc(a); frac = a - t; step away from zero when |frac| > 0.5,
            # or == 0.5 and t odd
            frac = self.emit(Opcode.IAND, self.tmp(), self.emit(Opcode.FSUB, self.tmp(), a, t), 0x7FFFFFFF)
            above = self.emit(Opcode.FSETP, self.tmp(), frac, 0x3F000000, mod=int(Cmp.GT))
            half = self.emit(Opcode.FSETP, self.tmp(), frac, 0x3F000000, mod=int(Cmp.EQ))
            odd = self.emit(Opcode.IAND, self.tmp(), self.emit(Opcode.F2I, self.tmp(), t), 1)
            up = self.emit(Opcode.IOR, self.tmp(), above, self.emit(Opcode.IAND, self.tmp(), half, odd))
            sign = self.emit(Opcode.IAND, self.tmp(), a, 0x80000000)
            one = self.emit(Opcode.IOR, self.tmp(), sign, _F32_ONE)
            stepped = self.emit(Opcode.FADD, self.tmp(), t, one)
            t = self.emit(Opcode.SELP, self.tmp(), stepped, t, up)
        elif mode not in ("rzi", "rz"):
            raise self.fail(instr, f"rounding mode .{mode} is not supported")
        # keep the sign of a zero result (trunc(-0.3) is -0) and pass large values and NaN through
        signed = self.emit(Opcode.IOR, self.tmp(), t, self.emit(Opcode.IAND, self.tmp(), a, 0x80000000))
        self.emit(Opcode.SELP, d, a, signed, big)

    def _extend(self, v: str, ptx_type: str) -> str:
        """A sub-word value (held in the low bits of a register) extended to 32 bits."""
        w = _width(ptx_type)
        if w >= 32:
            return v
        if ptx_type.startswith("s"):
            return self.emit(Opcode.ISRA, self.tmp(), self.emit(Opcode.ISHL, self.tmp(), v, 32 - w), 32 - w)
        return self.emit(Opcode.IAND, self.tmp(), v, (1 << w) - 1)

    # -- arithmetic -----------------------------------------------------------------------------
    def _type(self, instr: Instr) -> str:
        t = instr.mods[-1] if instr.mods else "b32"
        if t in ("f64", "u64", "s64", "b64"):
            raise self.fail(instr, "64-bit values are not supported (the machine is 32-bit; compile with -m32 "
                                   "and avoid long long and double)")
        if t in ("f16", "f16x2", "bf16"):
            raise self.fail(instr, "half-precision values are not supported")
        return t

    def _check_rounding(self, instr: Instr) -> None:
        for m in instr.mods:
            if m in ("rz", "rm", "rp"):
                raise self.fail(instr, f"rounding mode .{m} is not supported (the machine rounds to nearest even)")
            if m in ("sat", "cc") or m == "wide":
                raise self.fail(instr, f".{m} is not supported")

    def _binary(self, instr: Instr, int_op: Opcode, fp_op: Opcode | None) -> None:
        self._check_rounding(instr)
        t = self._type(instr)
        d = self.dest(instr)
        a, b = self.reg_value(instr.operands[1], instr), self.value(instr.operands[2], instr)
        if t == "f32":
            if fp_op is None:
                raise self.fail(instr, "not defined on f32")
            self.emit(fp_op, d, a, b)
        else:
            self.emit(int_op, d, a, b)

    def op_add(self, instr):
        self._binary(instr, Opcode.IADD, Opcode.FADD)

    def op_sub(self, instr):
        self._binary(instr, Opcode.ISUB, Opcode.FSUB)

    def op_and(self, instr):
        self._binary(instr, Opcode.IAND, None)

    def op_or(self, instr):
        self._binary(instr, Opcode.IOR, None)

    def op_xor(self, instr):
        self._binary(instr, Opcode.IXOR, None)

    def op_shl(self, instr):
        self._binary(instr, Opcode.ISHL, None)

    def op_shr(self, instr):
        t = self._type(instr)
        d = self.dest(instr)
        a = self.reg_value(instr.operands[1], instr)
        a = self._extend(a, "s16" if t == "s16" else ("u16" if t in ("u16", "b16") else t))
        b = self.value(instr.operands[2], instr)
        self.emit(Opcode.ISRA if t.startswith("s") else Opcode.ISHR, d, a, b)

    def op_not(self, instr):
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        if self._type(instr) == "pred":
            self.emit(Opcode.IXOR, d, a, 1)
        else:
            self.emit(Opcode.INOT, d, a)

    def op_neg(self, instr):
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        if self._type(instr) == "f32":
            self.emit(Opcode.IXOR, d, a, 0x80000000)
        else:
            self.emit(Opcode.ISUB, d, RZ, a)

    def op_abs(self, instr):
        t = self._type(instr)
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        if t == "f32":
            self.emit(Opcode.IAND, d, a, 0x7FFFFFFF)
        else:
            a = self._extend(a, t)
            self.emit(Opcode.IMAX, d, a, self.emit(Opcode.ISUB, self.tmp(), RZ, a))

    def _minmax(self, instr, smaller: bool):
        t = self._type(instr)
        d = self.dest(instr)
        a, b = self.reg_value(instr.operands[1], instr), self.value(instr.operands[2], instr)
        if t == "f32":
            self.emit(Opcode.FMIN if smaller else Opcode.FMAX, d, a, b)
            return
        a = self._extend(a, t)
        b = self._extend(b, t) if isinstance(b, str) else _narrow_immediate(b, t)
        if t.startswith("s"):
            self.emit(Opcode.IMIN if smaller else Opcode.IMAX, d, a, b)
        else:
            self.emit(Opcode.UMIN if smaller else Opcode.UMAX, d, a, b)

    def op_min(self, instr):
        self._minmax(instr, True)

    def op_max(self, instr):
        self._minmax(instr, False)

    def op_mul(self, instr):
        t = self._type(instr)
        d = self.dest(instr)
        if _width(t) < 32 and ("wide" in instr.mods or "hi" in instr.mods):
            # 16 x 16 bits: the 32-bit product of the extended operands is exact
            a = self._extend(self.reg_value(instr.operands[1], instr), t)
            b = self._extend(self.reg_value(instr.operands[2], instr), t)
            if "wide" in instr.mods:
                self.emit(Opcode.IMUL, d, a, b)
            else:
                self.emit(Opcode.ISRA if t.startswith("s") else Opcode.ISHR, d,
                          self.emit(Opcode.IMUL, self.tmp(), a, b), _width(t))
            return
        if "wide" in instr.mods:
            raise self.fail(instr, "a widening multiply makes a 64-bit value (not supported)")
        a, b = self.reg_value(instr.operands[1], instr), self.value(instr.operands[2], instr)
        if t == "f32":
            self._check_rounding(instr)
            self.emit(Opcode.FMUL, d, a, b)
        elif "hi" in instr.mods:
            self._mulhi(d, a, self.reg_value(instr.operands[2], instr), t.startswith("s"))
        else:
            self.emit(Opcode.IMUL, d, a, b)

    def op_mad(self, instr):
        t = self._type(instr)
        d = self.dest(instr)
        if _width(t) < 32 and ("wide" in instr.mods or "hi" in instr.mods):
            a, b = (self._extend(self.reg_value(x, instr), t) for x in instr.operands[1:3])
            c = self.reg_value(instr.operands[3], instr)
            if "wide" in instr.mods:
                self.emit(Opcode.IMAD, d, a, b, c)
            else:
                p = self.emit(Opcode.IMUL, self.tmp(), a, b)
                h = self.emit(Opcode.ISRA if t.startswith("s") else Opcode.ISHR, self.tmp(), p, _width(t))
                self.emit(Opcode.IADD, d, h, c)
            return
        if "wide" in instr.mods:
            raise self.fail(instr, "a widening multiply-add makes a 64-bit value (not supported)")
        a, b, c = (self.reg_value(x, instr) for x in instr.operands[1:4])
        if t == "f32":
            self._check_rounding(instr)
            self.emit(Opcode.FFMA, d, a, b, c)
        elif "hi" in instr.mods:
            h = self._mulhi(self.tmp(), a, b, t.startswith("s"))
            self.emit(Opcode.IADD, d, h, c)
        else:
            self.emit(Opcode.IMAD, d, a, b, c)

    def op_fma(self, instr):
        self._check_rounding(instr)
        self._type(instr)
        d = self.dest(instr)
        a, b, c = (self.reg_value(x, instr) for x in instr.operands[1:4])
        self.emit(Opcode.FFMA, d, a, b, c)

    def _mulhi(self, d: str, a: str, b: str, signed: bool) -> str:
        """High 32 bits of the 64-bit product, from four 16 x 16-bit partial products; the signed
        form subtracts b where a < 0 and a where b < 0 from the unsigned one."""
        e, t = self.emit, self.tmp
        al, ah = e(Opcode.IAND, t(), a, 0xFFFF), e(Opcode.ISHR, t(), a, 16)
        bl, bh = e(Opcode.IAND, t(), b, 0xFFFF), e(Opcode.ISHR, t(), b, 16)
        lo, hi = e(Opcode.IMUL, t(), al, bl), e(Opcode.IMUL, t(), ah, bh)
        m1, m2 = e(Opcode.IMUL, t(), ah, bl), e(Opcode.IMUL, t(), al, bh)
        mid = e(Opcode.IADD, t(), e(Opcode.ISHR, t(), lo, 16), e(Opcode.IAND, t(), m1, 0xFFFF))
        mid = e(Opcode.IADD, t(), mid, e(Opcode.IAND, t(), m2, 0xFFFF))
        r = e(Opcode.IADD, t(), hi, e(Opcode.ISHR, t(), m1, 16))
        r = e(Opcode.IADD, t(), r, e(Opcode.ISHR, t(), m2, 16))
        if not signed:
            return e(Opcode.IADD, d, r, e(Opcode.ISHR, t(), mid, 16))
        r = e(Opcode.IADD, t(), r, e(Opcode.ISHR, t(), mid, 16))
        r = e(Opcode.ISUB, t(), r, e(Opcode.IAND, t(), b, e(Opcode.ISRA, t(), a, 31)))
        return e(Opcode.ISUB, d, r, e(Opcode.IAND, t(), a, e(Opcode.ISRA, t(), b, 31)))

    def _udivmod(self, n: str, dv: str) -> tuple[str, str]:
        """Unsigned quotient and remainder, exact for every n and d != 0. An FP32 reciprocal made
        8 ulps smaller than 1/d keeps every estimate below n/d (the four roundings on the way add
        at most 4 half-ulps), so q never overshoots and n - q*d never wraps: a first estimate
        is within 2^13 of the quotient, a second one from the remainder within 1, and two exact
        steps finish."""
        e, t = self.emit, self.tmp
        rcp = e(Opcode.FDIV, t(), e(Opcode.MOV, t(), _F32_ONE), e(Opcode.U2F, t(), dv))
        rcp = e(Opcode.ISUB, t(), rcp, 8)
        q = e(Opcode.F2U, t(), e(Opcode.FMUL, t(), e(Opcode.U2F, t(), n), rcp))
        r = e(Opcode.ISUB, t(), n, e(Opcode.IMUL, t(), q, dv))
        q = e(Opcode.IADD, t(), q, e(Opcode.F2U, t(), e(Opcode.FMUL, t(), e(Opcode.U2F, t(), r), rcp)))
        r = e(Opcode.ISUB, t(), n, e(Opcode.IMUL, t(), q, dv))
        for _ in range(2):
            ge = e(Opcode.USETP, t(), r, dv, mod=int(Cmp.GE))
            q = e(Opcode.IADD, t(), q, ge)
            r = e(Opcode.ISUB, t(), r, e(Opcode.SELP, t(), dv, RZ, ge))
        return q, r

    def _divrem(self, instr, want_rem: bool):
        t = self._type(instr)
        d = self.dest(instr)
        if t == "f32":
            if want_rem:
                raise self.fail(instr, "rem on f32 is not a PTX instruction")
            a, b = self.reg_value(instr.operands[1], instr), self.value(instr.operands[2], instr)
            self.emit(Opcode.FDIV, d, a, b)
            return
        a = self._extend(self.reg_value(instr.operands[1], instr), t)
        b = self._extend(self.reg_value(instr.operands[2], instr), t)
        if not t.startswith("s"):
            q, r = self._udivmod(a, b)
            self.emit(Opcode.MOV, d, r if want_rem else q)
            return
        e, tm = self.emit, self.tmp
        sa, sb = e(Opcode.ISRA, tm(), a, 31), e(Opcode.ISRA, tm(), b, 31)
        ua = e(Opcode.ISUB, tm(), e(Opcode.IXOR, tm(), a, sa), sa)  # |a|
        ub = e(Opcode.ISUB, tm(), e(Opcode.IXOR, tm(), b, sb), sb)
        q, r = self._udivmod(ua, ub)
        if want_rem:  # the remainder takes the dividend's sign
            e(Opcode.ISUB, d, e(Opcode.IXOR, tm(), r, sa), sa)
        else:
            s = e(Opcode.IXOR, tm(), sa, sb)
            e(Opcode.ISUB, d, e(Opcode.IXOR, tm(), q, s), s)

    def op_div(self, instr):
        self._divrem(instr, False)

    def op_rem(self, instr):
        self._divrem(instr, True)

    def op_rcp(self, instr):
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        self.emit(Opcode.FDIV, d, self.emit(Opcode.MOV, self.tmp(), _F32_ONE), a)

    def op_sqrt(self, instr):
        self.emit(Opcode.FSQRT, self.dest(instr), self.reg_value(instr.operands[1], instr))

    def op_rsqrt(self, instr):
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        self.emit(Opcode.FDIV, d, self.emit(Opcode.MOV, self.tmp(), _F32_ONE), self.emit(Opcode.FSQRT, self.tmp(), a))

    def op_bfe(self, instr):
        """Bit-field extract with constant position and length (what clang writes for (x >> k) & mask)."""
        t = self._type(instr)
        d, a = self.dest(instr), self.reg_value(instr.operands[1], instr)
        pos, length = instr.operands[2], instr.operands[3]
        if not (isinstance(pos, Imm) and isinstance(length, Imm)):
            raise self.fail(instr, "a bit-field extract with a register position or length is not supported")
        p, n = min(pos.bits & 0xFF, 32), min(length.bits & 0xFF, 32)
        if n == 0:
            self.emit(Opcode.MOV, d, 0)
        elif t.startswith("s"):
            if p + n >= 32:
                self.emit(Opcode.ISRA, d, a, min(p, 31))
            else:
                self.emit(Opcode.ISRA, d, self.emit(Opcode.ISHL, self.tmp(), a, 32 - p - n), 32 - n)
        else:
            shifted = self.emit(Opcode.ISHR, self.tmp(), a, p) if p else a
            self.emit(Opcode.IAND, d, shifted, (1 << n) - 1 if n < 32 else 0xFFFFFFFF)

    def op_selp(self, instr):
        self._type(instr)
        d = self.dest(instr)
        a, b, c = (self.reg_value(x, instr) for x in instr.operands[1:4])
        self.emit(Opcode.SELP, d, a, b, c)

    def op_setp(self, instr):
        mods = [m for m in instr.mods if m not in _IGNORED_MODS]
        t = self._type(instr)
        cmp_name = mods[0]
        combine = mods[1] if len(mods) == 3 and mods[1] in ("and", "or", "xor") else None
        a = self.reg_value(instr.operands[1], instr)
        b = self.value(instr.operands[2], instr)
        if t == "f32":
            if cmp_name not in _FP_CMP:
                raise self.fail(instr, f"unknown comparison .{cmp_name}")
            op, cmp = Opcode.FSETP, _FP_CMP[cmp_name]
        else:
            a = self._extend(a, t)
            b = self._extend(b, t) if isinstance(b, str) else _narrow_immediate(b, t)
            if cmp_name in _UNSIGNED_CMP:
                op, cmp = Opcode.USETP, _UNSIGNED_CMP[cmp_name]
            elif cmp_name in _INT_CMP:
                op = Opcode.ISETP if t.startswith("s") or cmp_name in ("eq", "ne") else Opcode.USETP
                cmp = _INT_CMP[cmp_name]
            else:
                raise self.fail(instr, f"comparison .{cmp_name} on integers is not supported")
        d = self.dest(instr)
        if combine is None and instr.dual is None:
            self.emit(op, d, a, b, mod=int(cmp))
            return
        r = self.emit(op, self.tmp(), a, b, mod=int(cmp))
        comb = {"and": Opcode.IAND, "or": Opcode.IOR, "xor": Opcode.IXOR}.get(combine)
        c = self.reg_value(instr.operands[3], instr) if combine else None
        if instr.dual is not None:
            inv = self.emit(Opcode.IXOR, self.tmp(), r, 1)
            if comb:
                self.emit(comb, instr.dual.name, inv, c)
            else:
                self.emit(Opcode.MOV, instr.dual.name, inv)
        if comb:
            self.emit(comb, d, r, c)
        else:
            self.emit(Opcode.MOV, d, r)

    # -- memory ---------------------------------------------------------------------------------
    def _address(self, mem: Mem, instr: Instr) -> tuple[str, int]:
        """A memory operand as (base register, 16-bit offset)."""
        if isinstance(mem.base, Sym):
            base, off = RZ, self.layout.address(mem.base.name, instr.line) + mem.offset
        elif mem.base is None:
            base, off = RZ, mem.offset
        else:
            base, off = mem.base.name, mem.offset
        if not -(1 << 15) <= off < (1 << 15):
            base = self.emit(Opcode.IADD, self.tmp(), base, off & 0xFFFFFFFF) if base != RZ \
                else self.emit(Opcode.MOV, self.tmp(), off & 0xFFFFFFFF)
            off = 0
        return base, off

    def _space(self, instr: Instr) -> Space:
        mem = next(o for o in instr.operands if isinstance(o, Mem))
        return self.spaces.access(instr, mem)

    def op_ld(self, instr):
        mem = instr.operands[1]
        if instr.mods[-1] in _WIDE and isinstance(instr.operands[0], Reg):
            instr = Instr(instr.opcode, instr.mods[:-1] + ("b32",), (Vec(tuple(Reg(h) for h in _halves(
                instr.operands[0].name))), mem), instr.line)  # two words
        t = self._type(instr)
        space = self._space(instr)
        if space is Space.PARAM:
            if _width(t) != 32 or "v2" in instr.mods or "v4" in instr.mods:
                raise self.fail(instr, "kernel parameters must be 32-bit scalars")
            if not isinstance(mem.base, Sym):
                raise self.fail(instr, "parameter loads through a pointer are not supported")
            off = self.layout.param_offset(mem.base.name, instr.line) + mem.offset
            self.emit(Opcode.LDC, self.dest(instr), offset=off)
            return
        load = {Space.GLOBAL: Opcode.LDG, Space.SHARED: Opcode.LDS, Space.LOCAL: Opcode.LDL}[space]
        dests = list(instr.operands[0].items) if isinstance(instr.operands[0], Vec) else [instr.operands[0]]
        base, off = self._address(mem, instr)
        w = _width(t)
        for i, d in enumerate(dests):
            if w == 32:
                self.emit(load, d.name, base, offset=off + 4 * i)
            else:
                self._load_subword(load, d.name, base, off + i * w // 8, t)

    def _load_subword(self, load: Opcode, d: str, base: str, off: int, t: str) -> None:
        e, tm = self.emit, self.tmp
        addr = e(Opcode.IADD, tm(), base, off & 0xFFFFFFFF) if off else base
        if addr == RZ:
            addr = e(Opcode.MOV, tm(), 0)
        word = e(load, tm(), e(Opcode.IAND, tm(), addr, 0xFFFFFFFC))
        shift = e(Opcode.ISHL, tm(), e(Opcode.IAND, tm(), addr, 3), 3)
        value = e(Opcode.ISHR, tm(), word, shift)
        w = _width(t)
        if t.startswith("s"):
            e(Opcode.ISRA, d, e(Opcode.ISHL, tm(), value, 32 - w), 32 - w)
        else:
            e(Opcode.IAND, d, value, (1 << w) - 1)

    op_ldu = op_ld

    def op_st(self, instr):
        mem = instr.operands[0]
        if instr.mods[-1] in _WIDE and isinstance(instr.operands[1], Reg):
            instr = Instr(instr.opcode, instr.mods[:-1] + ("b32",), (mem, Vec(tuple(Reg(h) for h in _halves(
                instr.operands[1].name)))), instr.line)  # two words
        t = self._type(instr)
        space = self._space(instr)
        if space is Space.PARAM:
            raise self.fail(instr, "stores to the parameter space are not supported")
        store = {Space.GLOBAL: Opcode.STG, Space.SHARED: Opcode.STS, Space.LOCAL: Opcode.STL}[space]
        values = list(instr.operands[1].items) if isinstance(instr.operands[1], Vec) else [instr.operands[1]]
        base, off = self._address(mem, instr)
        w = _width(t)
        if w != 32 and space is not Space.LOCAL:
            raise self.fail(instr, f"{w}-bit store to {space.value} memory: the machine stores 32-bit words only "
                                   "(use 32-bit element types for arrays in global and shared memory)")
        for i, v in enumerate(values):
            val = self.reg_value(v, instr)
            if w == 32:
                self.emit(store, None, base, val, offset=off + 4 * i)
            else:
                self._store_local_subword(base, off + i * w // 8, val, w)

    def _store_local_subword(self, base: str, off: int, val: str, w: int) -> None:
        """Read the word, merge the sub-word in, write it back: per-thread memory, so no other
        thread can race with the read-modify-write."""
        e, tm = self.emit, self.tmp
        addr = e(Opcode.IADD, tm(), base, off & 0xFFFFFFFF) if off else base
        if addr == RZ:
            addr = e(Opcode.MOV, tm(), 0)
        aligned = e(Opcode.IAND, tm(), addr, 0xFFFFFFFC)
        shift = e(Opcode.ISHL, tm(), e(Opcode.IAND, tm(), addr, 3), 3)
        mask = e(Opcode.ISHL, tm(), e(Opcode.MOV, tm(), (1 << w) - 1), shift)
        word = e(Opcode.IAND, tm(), e(Opcode.LDL, tm(), aligned), e(Opcode.INOT, tm(), mask))
        part = e(Opcode.IAND, tm(), e(Opcode.ISHL, tm(), val, shift), mask)
        e(Opcode.STL, None, aligned, e(Opcode.IOR, tm(), word, part))

    # -- control --------------------------------------------------------------------------------
    def op_ret(self, instr):
        self.emit(Opcode.EXIT)

    op_exit = op_ret

    def op_bar(self, instr):
        if instr.operands and not (isinstance(instr.operands[0], Imm) and instr.operands[0].bits == 0) \
                or len(instr.operands) > 1:
            raise self.fail(instr, "only barrier 0 over the whole block is supported")
        if "arrive" in instr.mods or "red" in instr.mods:
            raise self.fail(instr, "barrier arrive/reduction is not supported")
        self.emit(Opcode.BAR)

    op_barrier = op_bar

    def op_membar(self, instr):
        self.emit(Opcode.MEMBAR)

    op_fence = op_membar

    def op_vote(self, instr):
        mods = [m for m in instr.mods if m not in _IGNORED_MODS]
        mode = {"any": VoteMode.ANY, "all": VoteMode.ALL, "ballot": VoteMode.BALLOT}.get(mods[0] if mods else "")
        if mode is None:
            raise self.fail(instr, "only vote.any, vote.all and vote.ballot are supported")
        src = instr.operands[-1] if len(instr.operands) < 3 else instr.operands[1]
        if isinstance(src, Reg) and src.name.startswith("!"):
            raise self.fail(instr, "negated vote source")
        self.emit(Opcode.VOTE, self.dest(instr), self.reg_value(src, instr), mod=int(mode))

    def op_call(self, instr):
        raise self.fail(instr, "function call: the machine has no call instruction; device functions must "
                               "inline (recursion and function pointers are not supported)")


def Opcode_slots(opcode: Opcode) -> list[bool]:
    """For each source of ``opcode`` (``SPECS[opcode].sources`` order), whether it may be an immediate."""
    from dualflow.isa.opcodes import SPECS

    slots = []
    for item in SPECS[opcode].syntax.value:
        if item in ("a", "b", "c", "mem"):
            slots.append(False)
        elif item == "bi":
            slots.append(True)
    return slots


def lower_entry(module: PtxModule, entry: Entry, private_globals: bool = False) -> Function:
    """One kernel of a PTX module in the intermediate form."""
    return Lowering(module, entry, private_globals).run()


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]

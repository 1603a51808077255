"""Assembler: text in either operand form to ``Module`` (kernels of decoded instructions).

Syntax (see docs/isa.md)::

    .kernel NAME                 ; starts a kernel; directives below apply to it
    .form reg|dflow              ; operand form (default reg)
    .param NAME [NAME ...]       ; 32-bit parameters, in order
    .shared BYTES / .local BYTES ; shared memory per block / local memory per thread
    .regs N                      ; REG: registers per thread (default: highest used + 1)
    .ring N / .dmax N            ; DFLOW: ring entries per warp / largest distance
                                 ; (.variant hands: .ring N0 N1 .. one size per hand)
    .variant NAME [NAME ...]     ; DFLOW: variants of the form the kernel uses (docs/isa.md)
    LABEL:
        iadd r3, r1, r2          ; REG form: destination first
        iadd |2|, |1|            ; DFLOW form: sources by distance, destination implicit
        imad |1|, c[n], %ctaid.x ; DFLOW, .variant uniform-operands: a parameter word, a
                                 ; uniform special register
        isetp.lt r4, r3, 100     ; .mod suffix: comparison, vote mode or memory color
        ldg.c2 r5, [r3+16]       ; memory: [base+offset], signed 16-bit offset
        iadd |1|, |v2| -> t      ; DFLOW, .variant hands: source on hand v, writes hand t
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from dualflow.common.errors import AsmError, DualflowError

from .encoding import HAND_FIELDS, IMM16_MAX, IMM16_MIN, MAX_REGS, OPERAND_MAX, UNIFORM_FLAG, Instruction
from .kernel import (
    DEFAULT_DMAX,
    DEFAULT_RING,
    IDENTIFIER,
    MAX_MEMORY_BYTES,
    MAX_RING,
    Kernel,
    Module,
    SourceLocation,
)
from .opcodes import (
    BY_MNEMONIC,
    HAND_NAMES,
    MAX_HANDS,
    SPECS,
    UNIFORM_PARAM_WORDS,
    UNIFORM_SREGS,
    Cmp,
    Form,
    ModKind,
    Opcode,
    SpecialReg,
    UnitClass,
    Variant,
    mod_names,
    uniform_field,
)

_COMMENT = re.compile(r"(;|//|#).*$")
_LABEL = re.compile(r"^\s*([A-Za-z_.$][\w.$]*)\s*:")
_REG = re.compile(r"^r(\d{1,10})$")  # longer numbers are bad operands, not huge integers to convert
#: ``|d|``, or ``|hd|`` naming hand h (Variant.HANDS): group 1 the hand letter (empty: s), 2 the distance
_DIST = re.compile(r"^\|\s*([stuv]?)\s*(\d{1,10})\s*\|$")
#: The written hand after the operands, ``-> t`` (Variant.HANDS): group 1 the operands, 2 the hand
_WRITTEN_HAND = re.compile(r"^(.*?)\s*->\s*(\S*)\s*$")
#: A uniform parameter-word operand: ``c[word]`` or ``c[name]`` (Variant.UNIFORM_OPERANDS).
_PARAM_WORD = re.compile(r"^c\[\s*([^\]]*?)\s*\]$")
#: ``[base+offset]``; the base may be a uniform ``c[...]``, whose brackets the offset cannot hold.
_MEM = re.compile(r"^\[\s*(c\[[^\]]*\]|[^\]+\-]*?)\s*(?:([+-])\s*([^\]]+?))?\s*\]$")
_SREGS = {s.asm_name: s for s in SpecialReg}
#: Directives, each with the form it belongs to (None: both); all but ``.param`` at most once per kernel.
_DIRECTIVES = {".kernel": None, ".form": None, ".param": None, ".shared": None, ".local": None,
               ".regs": Form.REG, ".ring": Form.DFLOW, ".dmax": Form.DFLOW, ".variant": Form.DFLOW}
#: Longest piece of source text an error message quotes.
QUOTE_LIMIT = 40


def _uniform_text(text: str) -> bool:
    """Whether an operand is written as a uniform operand (``c[...]`` or a ``%`` special register)."""
    text = text.replace(" ", "")
    return bool(_PARAM_WORD.match(text)) or text.startswith("%")


def _source_text(text: str) -> bool:
    """Whether an operand is written as a source (a register, ``rz``, a distance or a uniform
    operand) rather than an immediate or offset."""
    return bool(_REG.match(text) or _DIST.match(text.replace(" ", ""))) or text == "rz" or _uniform_text(text)


def shorten(text: str) -> str:
    """Source text for an error message, cut short: a message never echoes a huge token."""
    return text if len(text) <= QUOTE_LIMIT else f"{text[:QUOTE_LIMIT]}... ({len(text)} characters)"


def quote(text: str) -> str:
    """``repr`` of source text for an error message, cut short like ``shorten``."""
    return repr(text) if len(text) <= QUOTE_LIMIT else f"{text[:QUOTE_LIMIT]!r}... ({len(text)} characters)"


@dataclass
class _Token:
    text: str
    col: int  # 1-based column of the first character


@dataclass
class _Line:
    lineno: int
    mnemonic: _Token
    operands: list[_Token]
    hand: _Token | None = None  # the written hand, ``-> t`` (Variant.HANDS)


@dataclass
class _KernelDraft:
    name: str
    lineno: int
    col: int
    form: Form = Form.REG
    params: list[str] = field(default_factory=list)
    shared: int = 0
    local: int = 0
    regs: int | None = None
    rings: list[int] = field(default_factory=lambda: [DEFAULT_RING])
    dmax: int = DEFAULT_DMAX
    variants: frozenset[Variant] = frozenset()
    lines: list[_Line] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    label_at: dict[str, tuple[int, int]] = field(default_factory=dict)  # label -> (line, column)
    directive_at: dict[str, tuple[int, int]] = field(default_factory=dict)  # directive -> (line, column)


def _is_float_literal(text: str) -> bool:
    """Of the immediates ``parse_immediate`` accepts: a decimal float literal (``1.5``, ``1e3``,
    ``inf``), neither an integer nor ``0f`` bits."""
    low = text.strip().lower()
    if low.lstrip("+-").startswith("0f"):
        return False
    try:
        int(low, 0)
    except ValueError:
        return True
    return False


def parse_immediate(text: str) -> int:
    """Integer (decimal, 0x hex, negative), ``0fXXXXXXXX`` float bits, or a decimal float
    literal (nearest double, then nearest float32). Returns the 32-bit pattern as an int."""
    t = text.strip()
    low = t.lower()
    if low.startswith(("0f", "-0f")) and len(low.lstrip("-")) == 10:
        try:
            bits = int(low.lstrip("-")[2:], 16)
        except ValueError:
            raise ValueError(f"bad float bits {quote(t)}: expected 0f and 8 hex digits") from None
        return bits ^ 0x80000000 if low.startswith("-") else bits
    try:
        value = int(t, 0)
    except ValueError:
        pass
    else:
        if not -(1 << 31) <= value < (1 << 32):
            raise ValueError(f"immediate {shorten(t)} does not fit in 32 bits")
        return value & 0xFFFFFFFF
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?|[-+]?(\d+)[eE][-+]?\d+|[-+]?inf", low) and (
        "." in low or "e" in low or "inf" in low
    ):
        value = float(t)
        if math.isinf(value) and "inf" not in low:
            raise ValueError(f"float literal {shorten(t)} overflows float32")
        try:
            return struct.unpack("<I", struct.pack("<f", value))[0]
        except OverflowError:
            raise ValueError(f"float literal {shorten(t)} overflows float32") from None
    raise ValueError(f"bad immediate {quote(t)}")


class Assembler:
    """Two passes over one source text: collect kernels, labels and lines; then encode."""

    def __init__(self, text: str, path: str = "<string>"):
        self.text, self.path = text.removeprefix("\ufeff"), path  # a UTF-8 byte-order mark is not text

    def error(self, line: int, col: int, message: str) -> AsmError:
        return AsmError(self.path, line, col, message)

    # ------------------------------------------------------------------ pass 1
    def _split_operands(self, body: str, col0: int) -> list[_Token]:
        tokens, depth, start = [], 0, 0
        for i, ch in enumerate(body + ","):
            if ch in "[":
                depth += 1
            elif ch == "]":
                depth -= 1
            elif ch == "," and depth == 0:
                raw = body[start:i]
                stripped = raw.strip()
                lead = len(raw) - len(raw.lstrip())
                tokens.append(_Token(stripped, col0 + start + lead))
                start = i + 1
        if len(tokens) == 1 and not tokens[0].text:
            return []
        return tokens

    def _directive(self, draft: _KernelDraft | None, lineno: int, col: int, words: list[str]) -> _KernelDraft | None:
        name, args = words[0], words[1:]
        if name not in _DIRECTIVES:
            hint = " (directives are lower case)" if name.lower() in _DIRECTIVES else ""
            raise self.error(lineno, col, f"unknown directive {shorten(name)}{hint}")
        if name == ".kernel":
            if len(args) != 1 or not IDENTIFIER.fullmatch(args[0]):
                raise self.error(lineno, col, ".kernel needs one name")
            return _KernelDraft(args[0], lineno, col)
        if draft is None:
            raise self.error(lineno, col, f"{name} before any .kernel")
        if draft.lines:
            raise self.error(lineno, col, f"{name} after the first instruction of kernel {quote(draft.name)}")
        if name in draft.directive_at and name != ".param":
            raise self.error(lineno, col, f"repeated {name} in kernel {quote(draft.name)} (first at line "
                             f"{draft.directive_at[name][0]})")
        draft.directive_at.setdefault(name, (lineno, col))

        def number(limit: int, arg: str | None = None) -> int:
            if arg is None:
                if len(args) != 1:
                    raise self.error(lineno, col, f"{name} needs one number")
                arg = args[0]
            try:
                value = int(arg, 0)
            except ValueError:
                raise self.error(lineno, col, f"{name}: bad number {quote(arg)}") from None
            if value < 0:
                raise self.error(lineno, col, f"{name}: must not be negative")
            if value > limit:
                raise self.error(lineno, col, f"{name} {shorten(arg)}: at most {limit}")
            return value

        if name == ".form":
            try:
                draft.form = Form(args[0].lower()) if len(args) == 1 else None
            except ValueError:
                draft.form = None
            if draft.form is None:
                raise self.error(lineno, col, ".form must be 'reg' or 'dflow'")
        elif name == ".param":
            for arg in args:
                if not IDENTIFIER.fullmatch(arg) or arg in draft.params:
                    raise self.error(lineno, col, f".param: bad or duplicate name {quote(arg)}")
                draft.params.append(arg)
            if not args:
                raise self.error(lineno, col, ".param needs at least one name")
        elif name in (".shared", ".local"):
            value = number(MAX_MEMORY_BYTES)
            if value % 4:
                raise self.error(lineno, col, f"{name} {value}: must be a multiple of 4 bytes")
            setattr(draft, name[1:], value)
        elif name == ".regs":
            draft.regs = number(MAX_REGS)
        elif name == ".ring":  # one size per hand (Variant.HANDS: checked once .variant is known)
            draft.rings = [number(MAX_RING, arg) for arg in args] if len(args) > 1 else [number(MAX_RING)]
        elif name == ".dmax":
            draft.dmax = number(MAX_MEMORY_BYTES)
            if not 1 <= draft.dmax <= OPERAND_MAX:
                raise self.error(lineno, col, f".dmax {draft.dmax}: must be in 1..{OPERAND_MAX}")
        elif name == ".variant":
            known = {v.value: v for v in Variant}
            bad = [a for a in args if a not in known]
            if not args or bad or len(set(args)) != len(args):
                raise self.error(lineno, col, f".variant needs distinct names among {', '.join(known)}"
                                 + (f", not {quote(bad[0])}" if bad else ""))
            draft.variants = frozenset(known[a] for a in args)
        return draft

    def _check_directives(self, draft: _KernelDraft) -> None:
        """Directives of the other form, and a ring that cannot hold a value at distance .dmax,
        reported at the directive's line."""
        for name, form in _DIRECTIVES.items():
            if form is not None and form is not draft.form and name in draft.directive_at:
                other = ".ring, .dmax and .variant" if form is Form.DFLOW else ".regs"
                raise self.error(*draft.directive_at[name],
                                 f"{name} is for {form.value.upper()}-form kernels; kernel {quote(draft.name)} "
                                 f"is {draft.form.value.upper()} form ({other} do not apply)")
        if draft.form is Form.DFLOW and len(draft.rings) > 1:
            hands = Variant.HANDS in draft.variants
            if not hands or len(draft.rings) > MAX_HANDS:
                raise self.error(*draft.directive_at[".ring"],
                                 f".ring takes one size per hand, 1 to {MAX_HANDS} hands with .variant "
                                 f"{Variant.HANDS.value}" + ("" if hands else "; without it, one number"))
        if draft.form is Form.DFLOW and max(draft.rings) <= draft.dmax:
            at = max((draft.directive_at[d] for d in (".ring", ".dmax") if d in draft.directive_at),
                     default=(draft.lineno, draft.col))
            if len(draft.rings) == 1:
                raise self.error(*at, f".ring {draft.rings[0]} must exceed .dmax {draft.dmax}, or a value at the "
                                 "largest distance would already be overwritten")
            raise self.error(*at, f"the largest .ring ({max(draft.rings)}) must exceed .dmax {draft.dmax}, or a "
                             "value at the largest distance would already be overwritten")

    def _pass1(self) -> list[_KernelDraft]:
        drafts: list[_KernelDraft] = []
        draft: _KernelDraft | None = None
        for lineno, raw in enumerate(self.text.splitlines(), 1):
            line = _COMMENT.sub("", raw).rstrip()
            pos = 0
            while m := _LABEL.match(line[pos:]):
                label = m.group(1)
                col = pos + m.start(1) + 1
                if draft is None:
                    raise self.error(lineno, col, f"label {quote(label)} before any .kernel")
                if label in draft.labels:
                    raise self.error(lineno, col, f"duplicate label {quote(label)}")
                draft.labels[label] = len(draft.lines)
                draft.label_at[label] = (lineno, col)
                pos += m.end()
            rest = line[pos:]
            if not rest.strip():
                continue
            col = pos + len(rest) - len(rest.lstrip()) + 1
            body = rest.strip()
            if body.startswith("."):
                new = self._directive(draft, lineno, col, body.split())
                if new is not draft:
                    drafts.append(new)
                    draft = new
                continue
            if draft is None:
                raise self.error(lineno, col, "instruction before any .kernel")
            mnemonic, ops = (body.split(None, 1) + [""])[:2]
            ops_col = col + body.index(ops) if ops else col + len(body)
            hand = None
            if m := _WRITTEN_HAND.match(ops):
                hand = _Token(m.group(2), ops_col + m.start(2))
                ops = m.group(1)
            draft.lines.append(_Line(lineno, _Token(mnemonic, col), self._split_operands(ops, ops_col), hand))
        if not drafts:
            raise self.error(1, 1, "no .kernel in file")
        for d in drafts:
            self._check_directives(d)
        return drafts

    # ------------------------------------------------------------------ pass 2
    def _mnemonic(self, tok: _Token, form: Form, lineno: int) -> tuple[Opcode, int]:
        base, *suffixes = tok.text.lower().split(".")
        op = BY_MNEMONIC.get(base)
        if op is None:
            raise self.error(lineno, tok.col, f"unknown opcode {quote(tok.text)}")
        spec = SPECS[op]
        if form not in spec.forms:
            raise self.error(lineno, tok.col, f"{base} is not legal in {form.value.upper()} form")
        names = {v: k for k, v in mod_names(spec.mod).items()}
        if spec.mod in (ModKind.NONE, ModKind.SREG):
            if suffixes:
                raise self.error(lineno, tok.col, f"{base} takes no .suffix")
            return op, 0
        if len(suffixes) > 1 or (suffixes and suffixes[0] not in names):
            raise self.error(lineno, tok.col, f"bad suffix for {base}: expected one of {', '.join(names)}")
        if not suffixes:
            if spec.mod is ModKind.COLOR:
                return op, 0
            raise self.error(lineno, tok.col, f"{base} needs a suffix: one of {', '.join(names)}")
        mod = names[suffixes[0]]
        if spec.mod is ModKind.CMP and Cmp(mod) not in spec.conditions:
            raise self.error(lineno, tok.col, f"{base}: unordered comparison .{suffixes[0]} is for floats only")
        return op, mod

    def _require_variant(self, draft: _KernelDraft, variant: Variant, lineno: int, col: int, what: str) -> None:
        """Refuse ``what`` (a field of ``variant``) in a kernel that does not declare the variant."""
        if variant not in draft.variants:
            raise self.error(lineno, col, f"{what} needs .variant {variant.value}")

    def _operand(self, fields: dict, name: str, tok: _Token, draft: _KernelDraft, lineno: int,
                 used: list[int]) -> None:
        """Source field ``name`` from ``tok``, with its uniform flag when it names a uniform operand."""
        if _uniform_text(tok.text):
            fields[name] = self._uniform(tok, draft, lineno)
            fields["uniform"] = fields.get("uniform", 0) | UNIFORM_FLAG[name]
        else:
            fields[name], hand = self._source(tok, draft, lineno, used)
            if hand:
                fields["dst"] = fields.get("dst", 0) | hand << (HAND_FIELDS[name][0] - HAND_FIELDS["write"][0])

    def _uniform(self, tok: _Token, draft: _KernelDraft, lineno: int) -> int:
        """The field of a uniform operand: ``c[word]`` or ``c[name]`` (a kernel parameter word),
        or a special register that is the same in every lane of a warp."""
        text = tok.text.replace(" ", "")
        if draft.form is not Form.DFLOW:
            raise self.error(lineno, tok.col, f"uniform operand {shorten(text)} in a REG-form kernel (uniform "
                             f"operands are of the DFLOW form: .variant {Variant.UNIFORM_OPERANDS.value})")
        self._require_variant(draft, Variant.UNIFORM_OPERANDS, lineno, tok.col, "a uniform operand")
        m = _PARAM_WORD.match(text)
        if m:
            name = m.group(1)
            if name in draft.params:
                word = draft.params.index(name)
            elif re.fullmatch(r"\d{1,10}", name):
                word = int(name)
            else:
                raise self.error(lineno, tok.col, f"unknown parameter {quote(name)} in a uniform operand "
                                 f"(declared: {', '.join(draft.params) or 'none'})")
            if word >= len(draft.params):
                raise self.error(lineno, tok.col, f"c[{word}]: parameter word {word} is not one of the "
                                 f"{len(draft.params)} declared parameters")
            field = uniform_field(word)
            if field is None:
                raise self.error(lineno, tok.col, f"c[{word}]: uniform operands name parameter words "
                                 f"0..{UNIFORM_PARAM_WORDS - 1} (read this one with ldc)")
            return field
        sreg = _SREGS.get(text.lower())
        if sreg is None:
            raise self.error(lineno, tok.col, f"unknown special register {quote(tok.text)} (have {', '.join(_SREGS)})")
        field = uniform_field(sreg)
        if field is None:
            raise self.error(lineno, tok.col, f"{sreg.asm_name} differs between the lanes of a warp: not a uniform "
                             f"operand (read it with s2r; uniform: {', '.join(s.asm_name for s in UNIFORM_SREGS)})")
        return field

    def _hand(self, letter: str, draft: _KernelDraft, lineno: int, col: int, what: str) -> int:
        """Hand ``letter`` (``s t u v``) of a kernel that declares ``Variant.HANDS`` and that hand."""
        if draft.form is not Form.DFLOW:
            raise self.error(lineno, col, f"{what} in a REG-form kernel (hands are of the DFLOW form: "
                             f".variant {Variant.HANDS.value})")
        self._require_variant(draft, Variant.HANDS, lineno, col, what)
        if letter not in HAND_NAMES:
            raise self.error(lineno, col, f"bad hand {quote(letter)}: one of {' '.join(HAND_NAMES)}")
        hand = HAND_NAMES.index(letter)
        if hand >= len(draft.rings):
            raise self.error(lineno, col, f"hand {letter} is not declared (.ring declares {len(draft.rings)} "
                             f"hand{'s' if len(draft.rings) > 1 else ''}: {' '.join(HAND_NAMES[:len(draft.rings)])})")
        return hand

    def _source(self, tok: _Token, draft: _KernelDraft, lineno: int, used: list[int]) -> tuple[int, int]:
        """The field of a register or distance operand, and the hand it reads (DFLOW; else 0)."""
        text = tok.text.replace(" ", "")
        if text == "rz":
            return 0, 0
        if draft.form is Form.REG:
            m = _REG.match(text)
            if not m:
                if _DIST.match(text):
                    raise self.error(lineno, tok.col,
                                     f"distance operand {text} in a REG-form kernel (add `.form dflow`)")
                raise self.error(lineno, tok.col, f"bad register {quote(tok.text)}")
            reg = int(m.group(1))
            if reg >= MAX_REGS:
                raise self.error(lineno, tok.col, f"register r{reg} out of range r0..r{MAX_REGS - 1}")
            used.append(reg)
            return reg + 1, 0
        m = _DIST.match(text)
        if not m:
            if _REG.match(text):
                raise self.error(lineno, tok.col,
                                 f"register operand {text} in a DFLOW-form kernel: name sources by |distance|")
            raise self.error(lineno, tok.col, f"bad distance operand {quote(tok.text)}")
        dist = int(m.group(2))
        hand = self._hand(m.group(1), draft, lineno, tok.col, f"hand operand {text}") if m.group(1) else 0
        if not 1 <= dist <= draft.dmax:
            raise self.error(lineno, tok.col, f"distance {dist} outside 1..{draft.dmax} (.dmax)")
        if Variant.HANDS in draft.variants and dist >= draft.rings[hand]:
            raise self.error(lineno, tok.col, f"distance {dist} on hand {HAND_NAMES[hand]} must be below its ring "
                             f"of {draft.rings[hand]} entries")
        return dist, hand

    def _immediate(self, tok: _Token, lineno: int) -> int:
        try:
            return parse_immediate(tok.text)
        except ValueError as exc:
            raise self.error(lineno, tok.col, str(exc)) from None

    def _encode(self, draft: _KernelDraft, line: _Line, used: list[int]) -> Instruction:
        op, mod = self._mnemonic(line.mnemonic, draft.form, line.lineno)
        spec = SPECS[op]
        items = list(spec.syntax.value)
        ops = list(line.operands)
        fields: dict = {"op": op, "mod": mod}
        if spec.produces and draft.form is Form.REG:
            items.insert(0, "dst")
        if items[-1:] == ["advance"] and len(ops) == len(items) - 1:
            items.pop()  # the reserved advance is optional: none is 0
        if len(ops) != len(items):
            expected = ", ".join(items) or "no operands"
            col = ops[len(items)].col if len(ops) > len(items) else line.mnemonic.col
            raise self.error(line.lineno, col,
                             f"{spec.mnemonic} takes {len(items)} operand(s) ({expected}), got {len(ops)}")
        for item, tok in zip(items, ops):
            if item == "dst":
                m = _REG.match(tok.text)
                if tok.text == "rz":
                    fields["dst"] = 0
                elif not m or int(m.group(1)) >= MAX_REGS:
                    raise self.error(line.lineno, tok.col, f"bad destination register {quote(tok.text)}")
                else:
                    used.append(int(m.group(1)))
                    fields["dst"] = int(m.group(1)) + 1
            elif item in ("a", "b", "c"):
                self._operand(fields, item, tok, draft, line.lineno, used)
            elif item == "bi":
                if _source_text(tok.text):
                    self._operand(fields, "b", tok, draft, line.lineno, used)
                else:
                    text = tok.text
                    if spec.unit in (UnitClass.FP, UnitClass.SFU):
                        if re.fullmatch(r"[-+]?\d+", text.strip()):
                            text += ".0"  # `fmul r1, r2, 2` means 2.0; hex and 0f literals stay raw bits
                    fields["bimm"], fields["imm"] = True, self._immediate(_Token(text, tok.col), line.lineno)
                    if spec.unit is UnitClass.INT and op is not Opcode.MOV and _is_float_literal(text):
                        raise self.error(line.lineno, tok.col, f"float literal {shorten(text)} on the integer "
                                         f"instruction {spec.mnemonic}: write an integer (or float bits as 0f)")
            elif item == "mem":
                m = _MEM.match(tok.text)
                if not m:
                    raise self.error(line.lineno, tok.col,
                                     f"bad memory operand {quote(tok.text)}: expected [base+offset]")
                base, sign, off = m.group(1), m.group(2), m.group(3)
                if base and not _source_text(base):
                    if sign is None:  # [offset] alone
                        base, sign, off = "", "+", base
                    else:
                        raise self.error(line.lineno, tok.col, f"bad base {quote(base)} in memory operand")
                fields["a"] = 0
                if base:
                    self._operand(fields, "a", _Token(base, tok.col + 1), draft, line.lineno, used)
                offset = 0
                if off is not None:
                    try:
                        offset = int(off.strip(), 0)
                    except ValueError:
                        raise self.error(line.lineno, tok.col, f"bad offset {quote(off.strip())}") from None
                    offset = -offset if sign == "-" else offset
                if not IMM16_MIN <= offset <= IMM16_MAX:
                    raise self.error(line.lineno, tok.col, f"offset {offset} outside the signed 16-bit range")
                fields["imm"] = offset
            elif item == "target":
                if tok.text not in draft.labels:
                    raise self.error(line.lineno, tok.col, f"undefined label {quote(tok.text)}")
                fields["bimm"], fields["imm"] = True, draft.labels[tok.text]
            elif item == "sreg":
                if tok.text.lower() not in _SREGS:
                    raise self.error(line.lineno, tok.col, f"unknown special register {quote(tok.text)} "
                                     f"(have {', '.join(_SREGS)})")
                fields["mod"] = int(_SREGS[tok.text.lower()])
            elif item == "param":
                fields["bimm"] = True
                text = tok.text
                if text in draft.params:
                    fields["imm"] = 4 * draft.params.index(text)
                else:
                    m = _MEM.match(text)
                    try:
                        offset = int(m.group(1), 0) if m and not m.group(2) else None
                    except ValueError:
                        offset = None
                    if offset is None:
                        raise self.error(line.lineno, tok.col, f"unknown parameter {quote(text)} "
                                         f"(declared: {', '.join(draft.params) or 'none'})")
                    if offset % 4 or not 0 <= offset < 4 * len(draft.params):
                        raise self.error(line.lineno, tok.col, f"parameter offset {offset} is not one of the "
                                         f"{len(draft.params)} declared 4-byte parameters")
                    fields["imm"] = offset
            elif item == "count":
                value = self._immediate(tok, line.lineno)
                if not 1 <= value <= OPERAND_MAX:
                    raise self.error(line.lineno, tok.col, f"count {value} outside 1..{OPERAND_MAX}")
                fields["bimm"], fields["imm"] = True, value
            elif item == "advance":
                value = self._immediate(tok, line.lineno)
                if not 0 <= value <= OPERAND_MAX:
                    raise self.error(line.lineno, tok.col, f"reserved advance {value} outside 0..{OPERAND_MAX}")
                if value:
                    self._require_variant(draft, Variant.RESERVED_SSY, line.lineno, tok.col, "a reserved advance")
                fields["a"] = value
        if line.hand is not None:
            what = f"a written hand (-> {line.hand.text})"
            hand = self._hand(line.hand.text, draft, line.lineno, line.hand.col, what)
            if not (spec.produces or op is Opcode.RPINC or (op is Opcode.SSY and fields.get("a"))):
                raise self.error(line.lineno, line.hand.col, f"{spec.mnemonic} writes and advances no hand: "
                                 "-> names the hand of a producer, rpinc or ssy with a reserved advance")
            fields["dst"] = fields.get("dst", 0) | hand
        return Instruction(**fields)

    def assemble(self) -> Module:
        kernels: dict[str, Kernel] = {}
        for draft in self._pass1():
            if draft.name in kernels:
                raise self.error(draft.lineno, draft.col, f"duplicate kernel {quote(draft.name)}")
            if not draft.lines:
                raise self.error(draft.lineno, draft.col, f"kernel {quote(draft.name)} has no instructions")
            for label, pc in draft.labels.items():
                if pc >= len(draft.lines):
                    raise self.error(*draft.label_at[label], f"label {quote(label)} at the end of kernel "
                                     f"{quote(draft.name)} marks no instruction")
            used: list[int] = []
            code = [self._encode(draft, line, used) for line in draft.lines]
            regs = draft.regs
            highest = max(used, default=-1) + 1
            if regs is None:
                regs = highest
            elif highest > regs:
                raise self.error(*draft.directive_at[".regs"],
                                 f"kernel {quote(draft.name)} uses r{highest - 1} but declares .regs {regs}")
            try:
                kernels[draft.name] = Kernel(
                    name=draft.name, form=draft.form, code=code, params=draft.params,
                    shared_bytes=draft.shared, local_bytes=draft.local, regs=regs, rings=tuple(draft.rings),
                    dmax=draft.dmax, variants=draft.variants, labels={pc: lab for lab, pc in draft.labels.items()},
                    locations={pc: SourceLocation(self.path, ln.lineno) for pc, ln in enumerate(draft.lines)})
            except DualflowError as exc:
                raise self.error(draft.lineno, draft.col, str(exc)) from None
        return Module(kernels, self.path)


def assemble(text: str, path: str = "<string>") -> Module:
    """Assemble source text; raises ``AsmError`` naming file, line and column."""
    return Assembler(text, path).assemble()


def assemble_file(path: str | Path) -> Module:
    """Assemble a source file; a file that cannot be read or is not UTF-8 is a ``DualflowError``
    (naming the file, and the line, column and byte offset of the first bad byte)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DualflowError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[line_start:exc.start].decode("utf-8", errors="replace")) + 1
        raise AsmError(str(path), line, col, f"not UTF-8 text (byte offset {exc.start})") from None
    return assemble(text, str(path))

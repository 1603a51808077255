"""Kernels and modules: code plus the metadata a launch needs, and their binary container."""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field

from dualflow.common.errors import DualflowError

from .encoding import MAX_REGS, OPERAND_MAX, EncodingError, Instruction
from .opcodes import HAND_NAMES, MAX_HANDS, Form, Variant, uniform_operand

#: Default DFLOW ring entries per warp: 65536 registers / 2048 threads on the paper's SM.
DEFAULT_RING = 32
#: Default maximum distance: the oldest value a 32-entry ring can still hold.
DEFAULT_DMAX = DEFAULT_RING - 1

#: Largest DFLOW ring, in entries per warp: the whole register file of the paper's SM
#: (65,536 registers / 32 lanes) held by one warp.
MAX_RING = 2048
#: Largest ``.shared`` (per block) and ``.local`` (per thread): a memory space's 32-bit byte addresses.
MAX_MEMORY_BYTES = 1 << 32

#: Names of kernels, parameters and labels (the assembler's identifiers).
IDENTIFIER = re.compile(r"[A-Za-z_.$][\w.$]*")

_MAGIC = b"DFLW"
_VERSION = 1


class KernelError(DualflowError):
    """Kernel metadata that cannot describe a runnable kernel."""


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Kernel:
    """One kernel: instructions and launch metadata.

    Attributes
    ----------
    name: kernel name (``.kernel``).
    form: operand form (``.form``).
    code: decoded instructions; the pc is the index into this list.
    params: parameter names in order; parameter i is the 32-bit word at byte offset 4*i.
    shared_bytes: shared memory per block (``.shared``).
    local_bytes: local memory per thread (``.local``).
    regs: REG form: registers per thread (``.regs``).
    ring: DFLOW form: ring entries per warp (``.ring``); with ``Variant.HANDS``, hand 0's (s).
    rings: DFLOW form: the entries of each ring per warp, one per hand (``.ring N0 N1 ...``;
        more than one only with ``Variant.HANDS``); ``(ring,)`` in the original form. Give
        either ``ring`` or ``rings``; the other follows. With one ring and both given (as
        ``dataclasses.replace(kernel, ring=64)`` gives them), ``ring`` is the size.
    dmax: DFLOW form: largest legal operand distance (``.dmax``), below the largest ring (and
        each operand's distance below its hand's ring).
    variants: DFLOW form: the ``Variant``s of the form the kernel uses (``.variant``).
    labels: pc -> label name, for disassembly.
    locations: pc -> source location, for error messages (empty for binaries).
    """

    name: str
    form: Form
    code: list[Instruction]
    params: list[str] = field(default_factory=list)
    shared_bytes: int = 0
    local_bytes: int = 0
    regs: int = 0
    ring: int = None  # type: ignore[assignment]  # rings[0]; DEFAULT_RING when neither is given
    dmax: int = DEFAULT_DMAX
    variants: frozenset[Variant] = frozenset()
    labels: dict[int, str] = field(default_factory=dict)
    locations: dict[int, SourceLocation] = field(default_factory=dict)
    rings: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.rings == () or (self.ring is not None and isinstance(self.rings, tuple) and len(self.rings) == 1):
            self.rings = (DEFAULT_RING if self.ring is None else self.ring,)  # one ring: ``ring`` is its size
        if self.ring is None and isinstance(self.rings, tuple) and self.rings:
            self.ring = self.rings[0]
        self.validate()

    @property
    def hands(self) -> bool:
        """Whether the kernel declares ``Variant.HANDS`` (several rings, one RP each)."""
        return Variant.HANDS in self.variants

    @property
    def capacity(self) -> int:
        """DFLOW form: register-file entries (per lane) one warp holds: the sum of its rings
        (``ring`` in the original form)."""
        return sum(self.rings)

    def validate(self) -> None:
        """Check that the kernel can run and that its disassembly reassembles to it."""
        if not isinstance(self.name, str) or not IDENTIFIER.fullmatch(self.name):
            raise KernelError(f"kernel name {_shown(self.name)} is not an identifier")
        where = f"kernel {self.name!r}"
        if not isinstance(self.form, Form):
            raise KernelError(f"{where}: form {_shown(self.form)} is not a Form")
        if not isinstance(self.code, list) or not all(isinstance(ins, Instruction) for ins in self.code):
            raise KernelError(f"{where}: code must be a list of instructions")
        if not self.code:
            raise KernelError(f"{where}: no instructions")
        if not isinstance(self.params, list) or not all(isinstance(p, str) and IDENTIFIER.fullmatch(p)
                                                        for p in self.params):
            raise KernelError(f"{where}: parameters must be a list of identifiers, not {_shown(self.params)}")
        if len(set(self.params)) != len(self.params):
            raise KernelError(f"{where}: duplicate parameter names in {self.params}")
        for label, value in (("shared", self.shared_bytes), ("local", self.local_bytes), ("regs", self.regs),
                             ("ring", self.ring), ("dmax", self.dmax)):
            if type(value) is not int:
                raise KernelError(f"{where}: .{label} {_shown(value)} is not an integer")
        for label, value in (("shared", self.shared_bytes), ("local", self.local_bytes)):
            if not 0 <= value <= MAX_MEMORY_BYTES or value % 4:
                raise KernelError(f"{where}: .{label} {value} must be a multiple of 4 bytes in "
                                  f"0..{MAX_MEMORY_BYTES}")
        self._validate_labels(where)
        if self.form is Form.REG and not 0 <= self.regs <= MAX_REGS:
            raise KernelError(f"{where}: .regs {self.regs} outside 0..{MAX_REGS}")
        if self.form is Form.REG:
            for pc, ins in enumerate(self.code):
                try:
                    ins.check_form(Form.REG)
                except EncodingError as exc:
                    raise KernelError(f"{where}, pc {pc}: {exc}") from None
        if not (isinstance(self.rings, tuple) and self.rings and all(type(r) is int for r in self.rings)):
            raise KernelError(f"{where}: rings {_shown(self.rings)} is not a tuple of integers")
        if self.ring != self.rings[0]:
            raise KernelError(f"{where}: ring {self.ring} is not hand 0's ring of rings {self.rings}")
        hands = isinstance(self.variants, frozenset) and Variant.HANDS in self.variants
        if self.form is Form.DFLOW:
            if len(self.rings) > (MAX_HANDS if hands else 1):
                raise KernelError(f"{where}: .ring {' '.join(map(str, self.rings))}: one size per hand, 1 to "
                                  f"{MAX_HANDS} hands with .variant {Variant.HANDS.value}"
                                  + ("" if hands else " (without it, one ring)"))
            for ring in self.rings:
                if not 1 <= ring <= MAX_RING:
                    raise KernelError(f"{where}: .ring {ring} outside 1..{MAX_RING} entries per warp")
            if not 1 <= self.dmax <= OPERAND_MAX:
                raise KernelError(f"{where}: .dmax {self.dmax} outside 1..{OPERAND_MAX}")
            if max(self.rings) <= self.dmax:
                raise KernelError(
                    f"{where}: .ring {self.ring} must exceed .dmax {self.dmax}, or a value at the "
                    "largest distance would already be overwritten" if len(self.rings) == 1 else
                    f"{where}: the largest .ring ({max(self.rings)}) must exceed .dmax {self.dmax}, or a value at "
                    "the largest distance would already be overwritten")
            for pc, ins in enumerate(self.code):
                if ins.dst:
                    if not hands:
                        raise KernelError(f"{where}, pc {pc}: {ins.variant_uses(self.form)[Variant.HANDS]} needs "
                                          f".variant {Variant.HANDS.value}")
                    try:
                        ins.check_form(self.form, len(self.rings))
                    except EncodingError as exc:
                        raise KernelError(f"{where}, pc {pc}: {exc}") from None
                for name in ins.spec.sources:
                    if not ins.is_uniform(name) and getattr(ins, name) > self.dmax:
                        raise KernelError(f"{where}, pc {pc}: distance {getattr(ins, name)} exceeds "
                                          f".dmax {self.dmax}")
                if hands:
                    for hand, dist in ins.hand_sources():
                        if dist >= self.rings[hand]:
                            raise KernelError(f"{where}, pc {pc}: distance {dist} on hand {HAND_NAMES[hand]} must "
                                              f"be below its ring of {self.rings[hand]} entries")
        self._validate_variants(where)
        if self.form is Form.REG:
            for pc, ins in enumerate(self.code):
                for name in ("dst",) + ins.spec.sources:
                    if getattr(ins, name) > self.regs:
                        raise KernelError(f"{where}, pc {pc}: register r{getattr(ins, name) - 1} is "
                                          f"outside .regs {self.regs}")
        for pc, ins in enumerate(self.code):
            items = ins.spec.syntax.value
            if "target" in items and not 0 <= ins.imm < len(self.code):
                raise KernelError(f"{where}, pc {pc}: branch target {ins.imm} outside the kernel's "
                                  f"{len(self.code)} instructions")
            if "param" in items and (ins.imm % 4 or ins.imm >= 4 * len(self.params)):
                raise KernelError(f"{where}, pc {pc}: parameter offset {ins.imm} is not one of the "
                                  f"{len(self.params)} declared 4-byte parameters")
            if "count" in items and not 1 <= ins.imm <= OPERAND_MAX:
                raise KernelError(f"{where}, pc {pc}: count {ins.imm} outside 1..{OPERAND_MAX}")
            for name in ins.spec.sources if ins.uniform else ():
                word = uniform_operand(getattr(ins, name)) if ins.is_uniform(name) else None
                if type(word) is int and word >= len(self.params):
                    raise KernelError(f"{where}, pc {pc}: uniform operand c[{word}] is not one of the "
                                      f"{len(self.params)} declared parameter words")

    def _validate_variants(self, where: str) -> None:
        """Variants are of the DFLOW form, and an instruction uses a variant's fields only if the
        kernel declares it."""
        if not isinstance(self.variants, frozenset) or not all(isinstance(v, Variant) for v in self.variants):
            raise KernelError(f"{where}: variants must be a frozenset of Variant, not {_shown(self.variants)}")
        if self.variants and self.form is not Form.DFLOW:
            raise KernelError(f"{where}: .variant is of the DFLOW form")
        for pc, ins in enumerate(self.code):
            for variant, what in ins.variant_uses(self.form).items():
                if variant not in self.variants:
                    raise KernelError(f"{where}, pc {pc}: {what} needs .variant {variant.value}"
                                      + (" (a DFLOW-form variant)" if self.form is not Form.DFLOW else ""))

    def _validate_labels(self, where: str) -> None:
        if not isinstance(self.labels, dict):
            raise KernelError(f"{where}: labels must map pcs to names, not {_shown(self.labels)}")
        for pc, name in self.labels.items():
            if type(pc) is not int or not 0 <= pc < len(self.code):
                raise KernelError(f"{where}: label at pc {_shown(pc)} outside the kernel's "
                                  f"{len(self.code)} instructions")
            if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
                raise KernelError(f"{where}: label name {_shown(name)} at pc {pc} is not an identifier")
        if len(set(self.labels.values())) != len(self.labels):
            raise KernelError(f"{where}: one label name marks two pcs")

    def param_offset(self, name: str) -> int:
        return 4 * self.params.index(name)

    def words(self) -> list[int]:
        return [ins.encode() for ins in self.code]

    def metadata(self) -> dict:
        meta = {
            "name": self.name, "form": self.form.value, "params": list(self.params),
            "shared_bytes": self.shared_bytes, "local_bytes": self.local_bytes,
            "labels": {str(pc): name for pc, name in sorted(self.labels.items())},
        }
        if self.form is Form.REG:
            meta["regs"] = self.regs
        else:
            if self.hands:  # one size per hand; the original form's header keeps its one "ring"
                meta["rings"], meta["dmax"] = list(self.rings), self.dmax
            else:
                meta["ring"], meta["dmax"] = self.ring, self.dmax
            if self.variants:  # absent when none: binaries of the original form stay as they were
                meta["variants"] = sorted(v.value for v in self.variants)
        return meta

    @classmethod
    def from_words(cls, meta: dict, words: list[int]) -> Kernel:
        """The kernel of one header entry (``metadata()`` plus ``count``) and its words."""
        if not isinstance(meta, dict):
            raise KernelError(f"kernel entry {_shown(meta)} is not an object")
        name = meta.get("name")
        where = f"kernel {name!r}" if isinstance(name, str) and IDENTIFIER.fullmatch(name) else "kernel"
        if meta.get("form") not in {f.value for f in Form}:
            raise KernelError(f"{where}: form {_shown(meta.get('form'))} is not one of "
                              f"{', '.join(f.value for f in Form)}")
        form = Form(meta["form"])
        named = meta.get("variants")
        hands = form is Form.DFLOW and isinstance(named, list) and Variant.HANDS.value in named
        extra = ("regs",) if form is Form.REG else ("rings", "dmax") if hands else ("ring", "dmax")
        keys = {"name", "form", "params", "shared_bytes", "local_bytes", "labels", "count", *extra}
        if form is Form.DFLOW and "variants" in meta:
            keys.add("variants")
        if set(meta) != keys:
            wrong = sorted(set(meta) ^ keys)
            raise KernelError(f"{where}: header keys {', '.join(map(repr, wrong))} missing or unexpected "
                              f"for {form.value.upper()} form")
        labels = meta["labels"]
        if not isinstance(labels, dict) or not all(re.fullmatch(r"0|[1-9][0-9]{0,17}", pc) for pc in labels):
            raise KernelError(f"{where}: labels must map decimal pcs to names, not {_shown(labels)}")
        if not isinstance(meta["params"], list):
            raise KernelError(f"{where}: params must be a list of names, not {_shown(meta['params'])}")
        names = meta.get("variants", [])
        known = {v.value for v in Variant}
        if not isinstance(names, list) or not names and "variants" in meta or not all(n in known for n in names):
            raise KernelError(f"{where}: variants must be a non-empty list of {', '.join(sorted(known))}, "
                              f"not {_shown(names)}")
        sizes = {}
        if hands:
            if not isinstance(meta["rings"], list) or not meta["rings"]:
                raise KernelError(f"{where}: rings must be a non-empty list of sizes, one per hand, not "
                                  f"{_shown(meta['rings'])}")
            sizes["rings"] = tuple(meta["rings"])
        code = []
        for pc, word in enumerate(words):
            try:
                code.append(Instruction.decode(word, form))
            except DualflowError as exc:
                raise KernelError(f"{where}, pc {pc}: {exc}") from None
        return cls(name=name, form=form, code=code, params=list(meta["params"]),
                   shared_bytes=meta["shared_bytes"], local_bytes=meta["local_bytes"],
                   labels={int(pc): label for pc, label in labels.items()},
                   variants=frozenset(Variant(n) for n in names),
                   **{key: sizes.get(key, meta[key]) for key in extra})


def _shown(value: object, limit: int = 40) -> str:
    """``repr`` of a value from a file, cut short: an error message never echoes a whole file."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


@dataclass
class Module:
    """The kernels of one assembly file, by name, in file order."""

    kernels: dict[str, Kernel]
    path: str = "<module>"

    def __getitem__(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"{self.path}: no kernel named {name!r} (have: {', '.join(self.kernels)})") from None

    def __iter__(self):
        return iter(self.kernels.values())

    @property
    def only(self) -> Kernel:
        """The single kernel of a one-kernel module."""
        if len(self.kernels) != 1:
            raise KernelError(f"{self.path}: expected exactly one kernel, found {len(self.kernels)}")
        return next(iter(self.kernels.values()))

    def to_bytes(self) -> bytes:
        """Binary container: magic, version, JSON metadata, then each kernel's 64-bit words (LE)."""
        meta = [dict(k.metadata(), count=len(k.code)) for k in self]
        header = json.dumps(meta, separators=(",", ":")).encode()
        out = [_MAGIC, struct.pack("<II", _VERSION, len(header)), header]
        for k in self:
            out.append(struct.pack(f"<{len(k.code)}Q", *k.words()))
        return b"".join(out)

    @classmethod
    def from_bytes(cls, data: bytes, path: str = "<binary>") -> Module:
        """Load a binary container; every error is a ``KernelError`` naming ``path``."""
        try:
            return cls._from_bytes(bytes(data), path)
        except DualflowError as exc:
            raise KernelError(f"{path}: {exc}") from None

    @classmethod
    def _from_bytes(cls, data: bytes, path: str) -> Module:
        if len(data) < 12 or data[:4] != _MAGIC:
            raise KernelError("not a dualflow binary (bad magic)")
        version, size = struct.unpack_from("<II", data, 4)
        if version != _VERSION:
            raise KernelError(f"binary version {version}, expected {_VERSION}")
        pos = 12 + size
        if pos > len(data):
            raise KernelError(f"header of {size} bytes runs past the end of the file ({len(data)} bytes)")
        try:
            header = json.loads(data[12:pos].decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise KernelError(f"corrupt header (not JSON text: {_shown(str(exc), 80)})") from None
        if not isinstance(header, list) or not header:
            raise KernelError("corrupt header: expected a non-empty list of kernels")
        kernels: dict[str, Kernel] = {}
        for meta in header:
            n = meta.get("count") if isinstance(meta, dict) else None
            if type(n) is not int or n < 1:
                raise KernelError(f"corrupt header: kernel entry without a positive instruction count "
                                  f"({_shown(meta)})")
            if pos + 8 * n > len(data):
                raise KernelError(f"truncated: kernel {_shown(meta.get('name'))} needs {n} words, "
                                  f"{max(0, len(data) - pos) // 8} remain")
            kernel = Kernel.from_words(meta, list(struct.unpack_from(f"<{n}Q", data, pos)))
            pos += 8 * n
            if kernel.name in kernels:
                raise KernelError(f"duplicate kernel {kernel.name!r}")
            kernels[kernel.name] = kernel
        if pos != len(data):
            raise KernelError(f"{len(data) - pos} trailing bytes")
        return cls(kernels, path)

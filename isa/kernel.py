"""Kernels and modules: code plus the metadata a launch needs, and their binary container."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

from dualflow.errors import DualflowError

from .encoding import MAX_REGS, OPERAND_MAX, EncodingError, Instruction
from .opcodes import Form

#: Default DFLOW ring entries per warp: 65536 registers / 2048 threads on the paper's SM.
DEFAULT_RING = 32
#: Default maximum distance: the oldest value a 32-entry ring can still hold.
DEFAULT_DMAX = DEFAULT_RING - 1

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
    ring: DFLOW form: ring entries per warp (``.ring``).
    dmax: DFLOW form: largest legal operand distance (``.dmax``), below ``ring``.
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
    ring: int = DEFAULT_RING
    dmax: int = DEFAULT_DMAX
    labels: dict[int, str] = field(default_factory=dict)
    locations: dict[int, SourceLocation] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        where = f"kernel {self.name!r}"
        if not self.code:
            raise KernelError(f"{where}: no instructions")
        for label, value in (("shared", self.shared_bytes), ("local", self.local_bytes)):
            if value < 0 or value % 4:
                raise KernelError(f"{where}: .{label} {value} must be a non-negative multiple of 4 bytes")
        if self.form is Form.REG and not 0 <= self.regs <= MAX_REGS:
            raise KernelError(f"{where}: .regs {self.regs} outside 0..{MAX_REGS}")
        if self.form is Form.DFLOW:
            if not 1 <= self.dmax <= OPERAND_MAX:
                raise KernelError(f"{where}: .dmax {self.dmax} outside 1..{OPERAND_MAX}")
            if self.ring <= self.dmax:
                raise KernelError(
                    f"{where}: .ring {self.ring} must exceed .dmax {self.dmax}, or a value at the "
                    "largest distance would already be overwritten")
            for pc, ins in enumerate(self.code):
                if ins.dst:
                    raise KernelError(f"{where}, pc {pc}: a DFLOW instruction names no destination "
                                      f"(dst field {ins.dst})")
                for name in ins.spec.sources:
                    if getattr(ins, name) > self.dmax:
                        raise KernelError(f"{where}, pc {pc}: distance {getattr(ins, name)} exceeds "
                                          f".dmax {self.dmax}")
        elif self.form is Form.REG:
            for pc, ins in enumerate(self.code):
                for name in ("dst",) + ins.spec.sources:
                    if getattr(ins, name) > self.regs:
                        raise KernelError(f"{where}, pc {pc}: register r{getattr(ins, name) - 1} is "
                                          f"outside .regs {self.regs}")

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
            meta["ring"], meta["dmax"] = self.ring, self.dmax
        return meta

    @classmethod
    def from_words(cls, meta: dict, words: list[int]) -> Kernel:
        form = Form(meta["form"])
        extra = {"regs": meta["regs"]} if form is Form.REG else {"ring": meta["ring"], "dmax": meta["dmax"]}
        return cls(name=meta["name"], form=form, code=[Instruction.decode(w) for w in words],
                   params=list(meta["params"]), shared_bytes=meta["shared_bytes"],
                   local_bytes=meta["local_bytes"],
                   labels={int(pc): name for pc, name in meta.get("labels", {}).items()}, **extra)


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
        try:
            return cls._from_bytes(data, path)
        except EncodingError as exc:
            raise KernelError(f"{path}: {exc}") from None
        except (struct.error, ValueError, KeyError, TypeError) as exc:
            raise KernelError(f"{path}: corrupt dualflow binary ({type(exc).__name__}: {exc})") from None

    @classmethod
    def _from_bytes(cls, data: bytes, path: str) -> Module:
        if data[:4] != _MAGIC:
            raise KernelError(f"{path}: not a dualflow binary (bad magic)")
        version, size = struct.unpack_from("<II", data, 4)
        if version != _VERSION:
            raise KernelError(f"{path}: binary version {version}, expected {_VERSION}")
        pos = 12 + size
        kernels = {}
        for meta in json.loads(data[12:pos]):
            n = meta["count"]
            words = list(struct.unpack_from(f"<{n}Q", data, pos))
            pos += 8 * n
            kernels[meta["name"]] = Kernel.from_words(meta, words)
        if pos != len(data):
            raise KernelError(f"{path}: {len(data) - pos} trailing bytes")
        return cls(kernels, path)

"""One kernel launch from an assembly file, as ``dualflow sim FILE.s`` and ``dualflow cosim FILE.s``
take it: which kernel, its grid and block, and its parameters.

Options (the same for both commands)::

    --kernel NAME          the kernel, when the file has several
    --grid G, --block B    N, or XxY, or XxYxZ
    --value NAME=INT       an integer parameter (repeatable)
    --input NAME=FILE.npy  a buffer parameter filled from a NumPy file of 32-bit values (repeatable)
    --buffer-words N       every other parameter: a buffer of N random 32-bit words (seeded)

``dualflow sim`` also takes ``--output NAME=FILE.npy``: the final contents of a buffer parameter, with
the element type of its ``--input`` array (uint32 words for a random buffer).
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dualflow.common.errors import ConfigError
from dualflow.isa import Form, Kernel
from dualflow.isa.convert.options import DEFAULT_CONVERSION, ConversionOptions
from dualflow.kernels.mode_form import kernel_form
from dualflow.machine.mode import Mode
from dualflow.models.device import Device

from .options import variants_of

#: The parameter buffers' element types a .npy file may hold: memory words are 32 bits.
WORD_DTYPES = ("int32", "uint32", "float32")
#: Words of the random buffer given to a parameter without ``--value`` or ``--input``.
BUFFER_WORDS = 1024


def add_launch_options(parser: argparse.ArgumentParser, *, block_default: str,
                       title: str) -> argparse._ArgumentGroup:
    """The options of one launch from an assembly file, as a group headed ``title``
    (``block_default`` says what the block is when ``--block`` is not given); returns the group."""
    p = parser.add_argument_group(title)
    p.add_argument("--kernel", metavar="NAME", help="kernel to run when the file has several")
    p.add_argument("--grid", default=None, metavar="G", help="blocks in the grid: N, XxY or XxYxZ (default 1)")
    p.add_argument("--block", default=None, metavar="B",
                   help=f"threads in a block: N, XxY or XxYxZ (default {block_default})")
    p.add_argument("--value", action="append", default=[], metavar="NAME=INT",
                   help="an integer kernel parameter (repeatable)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help=f"a buffer kernel parameter, filled from a NumPy file of {', '.join(WORD_DTYPES)} "
                        "values (repeatable)")
    p.add_argument("--buffer-words", type=int, default=None, metavar="N",
                   help=f"every parameter without --value or --input gets a buffer of this many random "
                        f"words (default {BUFFER_WORDS})")
    return p


def given_launch_options(args: argparse.Namespace, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """The launch options (``add_launch_options``, and ``--output`` where a command has it) given on
    the command line, except ``allowed``: for a message when they come without an assembly file."""
    names = ("kernel", "grid", "block", "value", "input", "buffer_words", "output")
    flags = ["--" + n.replace("_", "-") for n in names if getattr(args, n, None) not in (None, [])]
    return [f for f in flags if f not in allowed]


def format_shape(dims: tuple[int, ...]) -> str:
    """A grid or block shape as the options write it: ``8``, ``16x16``."""
    return "x".join(map(str, dims))


def _pairs(items: Sequence[str], option: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key or not text:
            raise ConfigError(f"{option} {item!r}: expected NAME={what}")
        if key in out:
            raise ConfigError(f"{option} {key}=...: given twice")
        out[key] = text
    return out


def parse_values(items: Sequence[str]) -> dict[str, int]:
    """``NAME=INT`` strings (``--value``; decimal, or 0x.. hexadecimal) as a dict."""
    out: dict[str, int] = {}
    for key, text in _pairs(items, "--value", "INT").items():
        try:
            out[key] = int(text, 0)
        except ValueError:
            raise ConfigError(f"--value {key}={text}: expected NAME=INT") from None
    return out


def parse_shape(text: str, option: str) -> tuple[int, ...]:
    """``N``, ``XxY`` or ``XxYxZ`` (``--grid``, ``--block``) as a tuple of positive integers."""
    fields = text.lower().split("x")
    try:
        dims = tuple(int(f) for f in fields)
    except ValueError:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise ConfigError(f"{option} {text!r}: expected N, XxY or XxYxZ with positive integers")
    return dims


def load_array(path: str, option: str) -> np.ndarray:
    """A NumPy file of 32-bit values, flattened; ``option`` (e.g. ``--input a=x.npy``) heads the message
    when it is not one."""
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise ConfigError(f"{option}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{option}: not a NumPy .npy file ({exc})") from None
    if not isinstance(data, np.ndarray):
        raise ConfigError(f"{option}: holds several arrays (.npz); give one .npy file")
    if data.dtype.name not in WORD_DTYPES:
        raise ConfigError(f"{option}: holds {data.dtype.name} values; memory words are 32-bit, "
                          f"so give {', '.join(WORD_DTYPES)} (e.g. a.astype(np.float32))")
    return data.reshape(-1)


def load_kernel(path: str, name: str | None, *, mode: Mode, machine: str,
                conversion: ConversionOptions = DEFAULT_CONVERSION) -> Kernel:
    """Kernel ``name`` of an assembly file (the only one if ``name`` is None), in the form ``mode``
    runs (``kernel_form``): a REG-form kernel is converted for a DFLOW-form machine (with the
    ``conversion`` options); a DFLOW-form kernel cannot run on a REG-form machine
    (``machine`` names it in the message: ``core``, ``GPU``)."""
    from dualflow.frontend.program import load_program
    from dualflow.isa.convert import convert_kernel

    module = load_program(path)
    kernels = list(module)
    if name is not None:
        try:
            kernel = module[name]
        except KeyError as exc:
            raise ConfigError(str(exc.args[0])) from None
    elif len(kernels) == 1:
        kernel = kernels[0]
    else:
        raise ConfigError(f"{path}: several kernels ({', '.join(k.name for k in kernels)}); choose one with --kernel")
    want = kernel_form(mode)
    if want is Form.DFLOW and kernel.form is Form.REG:
        kernel, _report = convert_kernel(kernel, **conversion.keywords())
    elif kernel.form is not want:
        raise ConfigError(f"{path}: kernel {kernel.name!r} is {kernel.form.value.upper()} form; a {mode} {machine} "
                          f"runs {want.value.upper()}-form kernels")
    return kernel


@dataclass
class Buffer:
    """A buffer parameter on the device: where it is, how many elements, of which type."""

    address: int
    count: int
    dtype: np.dtype


@dataclass
class ProgramLaunch:
    """One launch of a kernel from a file, with its parameters as the options gave them."""

    kernel: Kernel
    grid: tuple[int, ...]
    block: tuple[int, ...]
    values: dict[str, int]
    inputs: dict[str, np.ndarray]
    buffer_words: int
    seed: int
    buffers: dict[str, Buffer] = field(default_factory=dict)  #: filled by ``params``

    def params(self, dev: Device) -> list[int]:
        """Allocate and fill the buffers on ``dev``; the launch parameters in the kernel's order.
        The random buffers are drawn in parameter order from ``seed``."""
        rng = np.random.default_rng(self.seed)
        out = []
        self.buffers = {}
        for name in self.kernel.params:
            if name in self.values:
                out.append(self.values[name])
                continue
            data = self.inputs.get(name)
            if data is None:
                data = rng.integers(0, 1 << 32, size=self.buffer_words, dtype=np.uint64).astype(np.uint32)
            address = dev.upload(data)
            self.buffers[name] = Buffer(address, len(data), data.dtype)
            out.append(address)
        return out

    def read(self, dev: Device, name: str) -> np.ndarray:
        """The contents of buffer parameter ``name`` on ``dev`` now."""
        buf = self.buffers[name]
        return dev.copy_out(buf.address, buf.count, buf.dtype)


def program_launch(path: str, args: argparse.Namespace, *, mode: Mode, machine: str,
                   default_block: tuple[int, ...], ring: int | None = None, dmax: int | None = None) -> ProgramLaunch:
    """The launch of a kernel of assembly file ``path`` that the options of ``add_launch_options``
    describe, every parameter name checked against the kernel."""
    variants = variants_of(args) if hasattr(args, "variants") else frozenset()  # commands with --variant
    conversion = ConversionOptions(variants, ring=ring, dmax=dmax)  # the core's ring and Dmax; the GPU's: defaults
    kernel = load_kernel(path, args.kernel, mode=mode, machine=machine, conversion=conversion)
    values = parse_values(args.value)
    inputs = {name: load_array(path, f"--input {name}={path}")
              for name, path in _pairs(args.input, "--input", "FILE.npy").items()}
    for option, names in (("--value", values), ("--input", inputs)):
        for name in names:
            if name not in kernel.params:
                raise ConfigError(f"{option} {name}=...: {name} is not one of the kernel's parameters "
                                  f"({', '.join(kernel.params) or 'none'})")
    for name in values.keys() & inputs.keys():
        raise ConfigError(f"parameter {name}: given both --value and --input")
    for name, data in inputs.items():
        if data.size == 0:
            raise ConfigError(f"--input {name}=...: the array is empty")
    buffer_words = BUFFER_WORDS if args.buffer_words is None else args.buffer_words
    if buffer_words < 1:
        raise ConfigError(f"--buffer-words must be positive, not {buffer_words}")
    block = parse_shape(args.block, "--block") if args.block is not None else default_block
    grid = parse_shape(args.grid, "--grid") if args.grid is not None else (1,)
    return ProgramLaunch(kernel, grid, block, values, inputs, buffer_words, args.seed)


def output_paths(items: Sequence[str], launch: ProgramLaunch) -> dict[str, Path]:
    """``--output NAME=FILE.npy`` pairs, each naming a buffer parameter of the launch."""
    out = {}
    for name, path in _pairs(items, "--output", "FILE.npy").items():
        if name not in launch.kernel.params:
            raise ConfigError(f"--output {name}=...: {name} is not one of the kernel's parameters "
                              f"({', '.join(launch.kernel.params) or 'none'})")
        if name in launch.values:
            raise ConfigError(f"--output {name}=...: {name} is an integer (--value), not a buffer")
        out[name] = Path(path)
    return out


def npy_bytes(data: np.ndarray) -> bytes:
    """``data`` as the bytes of a .npy file (for ``atomic_write``)."""
    buf = io.BytesIO()
    np.save(buf, data, allow_pickle=False)
    return buf.getvalue()

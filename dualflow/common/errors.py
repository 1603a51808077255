"""The project's error types. Each carries a message a user can act on; the CLI prints it
without a traceback and exits non-zero."""

from __future__ import annotations


class DualflowError(Exception):
    """Base class of every error caused by bad input rather than by a bug."""


class AsmError(DualflowError):
    """Malformed assembly, located by file, line and column."""

    def __init__(self, file: str, line: int, col: int, message: str):
        self.file, self.line, self.col, self.message = file, line, col, message
        super().__init__(f"{file}:{line}:{col}: error: {message}")


class ConfigError(DualflowError):
    """An impossible configuration or launch shape."""


class TimingDeadlock(DualflowError):
    """The timing model reached a state in which no warp can ever proceed (named by SM, cycle, warp
    and pc). Either engine raises it; a study records the run as deadlocked and goes on."""


class KernelFault(DualflowError):
    """A run-time error inside a kernel, located by kernel, pc, block, warp and lane."""

    def __init__(self, message: str, *, kernel: str, pc: int, block: tuple[int, int, int] | None = None,
                 warp: int | None = None, lane: int | None = None, address: int | None = None,
                 where: str = ""):
        self.kernel, self.pc, self.block, self.warp, self.lane, self.address = kernel, pc, block, warp, lane, address
        parts = [f"kernel {kernel!r}", f"pc {pc}"]
        if where:
            parts.append(where)
        if block is not None:
            parts.append("block ({},{},{})".format(*block))
        if warp is not None:
            parts.append(f"warp {warp}")
        if lane is not None:
            parts.append(f"lane {lane}")
        if address is not None:
            parts.append(f"address {address:#x}")
        self.message = message
        super().__init__(f"{', '.join(parts)}: {message}")

"""The ``dualflow`` command: one module per command group, registered on one parser."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings

from dualflow.common.errors import DualflowError


def build_parser() -> argparse.ArgumentParser:
    from . import compile, energy, isa, power, rtl, timing, workloads

    parser = argparse.ArgumentParser(prog="dualflow", description="Toolkit for out-of-order SIMT GPUs "
                                     "with a distance-operand (Dualflow) instruction set.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (isa, compile, workloads, timing, energy, rtl, power):
        group.add_commands(sub)
    return parser


def _keep_lost_interrupts() -> list[bool]:
    """Ctrl-C that lands in a finalizer (numba and llvmlite free many objects while they load)
    is reported by Python as "Exception ignored" and otherwise lost. Keep it instead: the flag
    is set, and ``main`` ends the command as stopped once it returns."""
    lost = [False]
    default = sys.unraisablehook

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            lost[0] = True
        else:
            default(unraisable)

    sys.unraisablehook = hook
    return lost


def main(argv: list[str] | None = None) -> int:
    """Run one command. The command modules are imported here, inside the ``try``, so that Ctrl-C
    while they load (the first second) ends as quietly as Ctrl-C later: one line, status 130."""
    lost = _keep_lost_interrupts()
    try:
        args = build_parser().parse_args(argv)
        status = args.func(args)
        if lost[0]:
            raise KeyboardInterrupt
        return status
    except DualflowError as exc:
        print(f"dualflow: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        # objects left half-built (Amaranth's unelaborated components) would warn as they go
        warnings.simplefilter("ignore")
        signum = getattr(exc, "signum", signal.SIGINT)  # SIGTERM/SIGHUP where a command turns them into this
        print(f"dualflow: stopped by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0



def run() -> None:
    """The ``dualflow`` executable: ``main``, then exit with its status. A stopped command exits
    at once: CPython turns a Ctrl-C that arrived while a C extension ran Python code (numba's
    import does) into death by SIGINT at exit even when ``main`` caught it, and the status must
    be 128 + the signal, as the message says."""
    status = main()
    if status >= 128:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)

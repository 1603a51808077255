"""The ``dualflow`` command: one module per command group, registered on one parser."""

from __future__ import annotations

import argparse
import signal
import sys
import warnings

from dualflow.errors import DualflowError


def build_parser() -> argparse.ArgumentParser:
    from . import isa, rtl, timing, workloads

    parser = argparse.ArgumentParser(prog="dualflow", description="Toolkit for out-of-order SIMT GPUs "
                                     "with a distance-operand (Dualflow) instruction set.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (isa, workloads, timing, rtl):
        group.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. The command modules are imported here, inside the ``try``, so that Ctrl-C
    while they load (the first second) ends as quietly as Ctrl-C later: one line, status 130."""
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
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


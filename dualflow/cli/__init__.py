"""The ``dualflow`` command: one module per command group, registered on one parser."""

from __future__ import annotations

import argparse
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
    except KeyboardInterrupt:
        # objects left half-built (Amaranth's unelaborated components) would warn as they go
        warnings.simplefilter("ignore")
        print("dualflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


"""The ``dualflow`` command: one module per command group, registered on one parser."""

from __future__ import annotations

import argparse
import sys

from dualflow.errors import DualflowError

from . import isa, rtl, timing, workloads


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dualflow", description="Toolkit for out-of-order SIMT GPUs "
                                     "with a distance-operand (Dualflow) instruction set.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (isa, workloads, timing, rtl):
        group.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except DualflowError as exc:
        print(f"dualflow: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


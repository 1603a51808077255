"""Command-line actions of the performance model: ``dualflow sim`` and ``dualflow reproduce``."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the timing-model subcommands on the top-level subparsers."""

"""Command-line actions of the RTL part: ``dualflow rtl generate``, ``dualflow cosim``, ``dualflow synth``.

``add_commands`` registers them on the ``dualflow`` parser; each is added here as its part lands.
"""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the RTL subcommands on the top-level subparsers."""

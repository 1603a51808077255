"""Where the tests find the checkout: its root (README, docs, pyproject.toml, benchmarks)."""

from pathlib import Path

#: The repository's root folder (the one holding ``dualflow/``, ``tests/`` and ``docs/``).
REPO = Path(__file__).resolve().parents[1]

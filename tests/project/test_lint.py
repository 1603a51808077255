"""The tree is ruff clean (rules in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO

ROOT = REPO


def test_ruff_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed: it is a dev dependency (pip install -e '.[dev]')")
    result = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

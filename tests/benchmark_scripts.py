"""Loading a script of ``benchmarks/`` (not a package) as a module, for the tests of its functions.

Not a test module (no ``test_`` prefix); the test files import it as ``benchmark_scripts``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    """``benchmarks/NAME.py`` as the module ``NAME`` (registered, so that its worker processes
    can pickle its functions)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

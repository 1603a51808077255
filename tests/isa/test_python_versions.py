"""The instruction-set table under every Python the project supports (``requires-python``).

Debian 12 ships Python 3.11.2, whose enum turned a member written ``= ()`` into an ``object()``
sentinel: every assembly failed. ``Syntax`` sets each member's value itself; the second test runs
the assembler under a system Python 3.11 when the machine has one.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dualflow
import dualflow.isa
from dualflow.isa.opcodes import Syntax

PROGRAM = ".kernel k\n.param n\n    ldc r0, n\n    iadd r1, r0, 1\n    nop\n    exit\n"


def test_every_syntax_value_is_its_tuple_of_items():
    assert Syntax.NONE.value == ()
    for member in Syntax:
        assert type(member.value) is tuple and all(isinstance(item, str) for item in member.value), member
    assert Syntax(()) is Syntax.NONE and Syntax(("a", "bi")) is Syntax.A_BI


def _other_python_311() -> str | None:
    """A Python 3.11 other than the one running the tests (the system's, e.g. Debian 12's 3.11.2)."""
    for candidate in ("/usr/bin/python3.11", shutil.which("python3.11")):
        if candidate and Path(candidate).exists() and Path(candidate).resolve() != Path(sys.executable).resolve():
            return candidate
    return None


def test_assembler_runs_under_the_system_python_311(tmp_path):
    python = _other_python_311()
    if python is None:
        pytest.skip("no other Python 3.11 on this machine")
    # The ISA package needs only the standard library: a tree of links stands in for an install.
    package = tmp_path / "dualflow"
    package.mkdir()
    root = Path(dualflow.__file__).parent
    (package / "__init__.py").symlink_to(root / "__init__.py")
    (package / "common").symlink_to(root / "common")
    (package / "isa").symlink_to(Path(dualflow.isa.__file__).parent)
    script = ("import sys; from dualflow.isa import assemble, disassemble\n"
              f"m = assemble({PROGRAM!r})\n"
              "assert assemble(disassemble(m)).only.words() == m.only.words()\n"
              "print(sys.version_info[:3], m.only.words())\n")
    done = subprocess.run([python, "-B", "-c", script], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    from dualflow.isa import assemble
    assert done.stdout.split(")", 1)[1].strip() == str(assemble(PROGRAM).only.words())

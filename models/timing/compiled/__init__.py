"""The compiled timing engine: the SM pipeline, the GPU loop and the memory system in numba,
driven by per-warp instruction streams recorded by a functional pre-run (``..streams``).

Numba caches compiled code on disk; the cache lives under the user's cache folder, never in the
source tree or the installed package (``NUMBA_CACHE_DIR``, set here before numba is imported
unless the environment already sets it).
"""

import os
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dualflow" / "numba"))

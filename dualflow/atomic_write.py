"""Write a file so that readers see either nothing or the whole of it: temporary file, then rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from dualflow.errors import DualflowError


def atomic_write(path: str | Path, chunks: bytes | str | Iterable[bytes | str]) -> None:
    """Write ``chunks`` (bytes, text, or an iterable of either) to ``path`` atomically.

    If producing a chunk raises, the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise DualflowError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in [chunks] if isinstance(chunks, (bytes, str)) else chunks:
                out.write(chunk.encode() if isinstance(chunk, str) else chunk)
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise DualflowError(f"{path}: cannot write: {exc.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise

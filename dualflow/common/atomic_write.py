"""Outputs that a reader sees either as they were or whole: every file and folder the project writes.

Files (``atomic_write``), by what the path names:

- a regular file, or nothing yet: the content goes to a temporary file beside it (``.NAME.XXXX.tmp``)
  that is then renamed over it. The file keeps the permission bits of the one it replaces; a new
  file gets those the umask allows (``0666 & ~umask``), as ``open()`` would give.
- a symbolic link: followed. The file it finally names is replaced as above (the temporary file sits
  beside that file, the link stays a link); a link to a device or FIFO is written through.
- ``-``, or a path naming the file that standard output or standard error already is (``/dev/stdout``,
  ``/proc/self/fd/1``): written to that stream, after what the command printed before.
- a character device (``/dev/null``, a terminal) or a FIFO: written through, opened and written in
  place, never replaced and never created.
- anything else (a folder, a block device, a socket), an empty path, a path whose parent is a file:
  refused with one clear message; nothing is written.

Folders (``atomic_folder``): the new content is written into a temporary folder beside the old one
(``.NAME.XXXX.tmp``); when it is whole, the old folder is renamed aside, the new one renamed in and
the old one removed (a link to a folder is followed: the folder it names is replaced, the link
stays). Files of the old run that the new run does not write are gone with it. An
existing folder is replaced only when it is empty or holds the command's marker file (an earlier
output of the same command), and never when it holds the working folder.

If producing the content raises, or SIGINT, SIGTERM or SIGHUP arrives while it is written, the
temporary file or folder is removed and the output is untouched. SIGINT then raises
``KeyboardInterrupt`` as usual; SIGTERM and SIGHUP exit with status 128 + the signal number (unless
the program installed its own handlers for them, which then stay in charge). The renames that swap
the new content in are not interrupted: a signal arriving then takes effect right after them.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dualflow.common.errors import DualflowError

Chunks = bytes | str | Iterable[bytes | str]

# --------------------------------------------------------------------------------------------
# signals: INT, TERM and HUP clean up like an exception, and never in the middle of a swap
# --------------------------------------------------------------------------------------------

_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
_critical = 0  # depth of `_uninterrupted` sections (main thread only)
_pending: int | None = None  # a signal that arrived inside one


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def _handler(signum: int, frame) -> None:
    global _pending
    if _critical:
        _pending = _pending or signum
        return
    _raise_for(signum)


@contextmanager
def _signals_clean_up() -> Iterator[None]:
    """While the body runs, INT/TERM/HUP raise (``KeyboardInterrupt`` / ``SystemExit(128 + n)``) so
    that cleanup code runs. Only in the main thread and only over the default dispositions: an ignored
    signal stays ignored, a program's own handler stays in charge, an outer section's stays installed."""
    installed = {}
    if threading.current_thread() is threading.main_thread():
        for sig in _SIGNALS:
            current = signal.getsignal(sig)
            if current is signal.SIG_DFL or current is signal.default_int_handler:
                installed[sig] = current
                signal.signal(sig, _handler)
    try:
        yield
    finally:
        for sig, old in installed.items():
            signal.signal(sig, old)


@contextmanager
def _uninterrupted() -> Iterator[None]:
    """A section that a signal handled by ``_signals_clean_up`` does not interrupt: the signal takes
    effect at its end. (Signal handlers run in the main thread: elsewhere this is a plain section.)"""
    global _critical, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _critical += 1
    try:
        yield
    finally:
        _critical -= 1
        if not _critical and _pending is not None:
            signum, _pending = _pending, None
            _raise_for(signum)


# --------------------------------------------------------------------------------------------
# what an output path names
# --------------------------------------------------------------------------------------------

def _text(path: str | Path, what: str) -> str:
    text = os.fspath(path)
    if text == "":
        raise DualflowError(f"{what}: the path is empty")
    return text


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None  # a parent is a file: reported by _check_parent
    except OSError as exc:
        raise DualflowError(f"{path}: cannot write: {exc.strerror}") from None


def _standard_stream(st: os.stat_result):
    """Standard output or error, if ``st`` is the file one of them already is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            own = os.fstat(stream.fileno())
        except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor
            continue
        if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
            return stream
    return None


def _check_parent(path: str, real: Path) -> None:
    """The nearest existing ancestor of ``real`` must be a folder (the rest is created)."""
    for parent in real.parents:
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise DualflowError(f"{path}: cannot write: {exc.strerror}") from None
        if not stat.S_ISDIR(st.st_mode):
            raise DualflowError(f"{path}: cannot write: parent {parent} is not a folder")
        return


def _file_target(path: str | Path, what: str = "output") -> tuple[str, object]:
    """How ``path`` is written: ("stream", text stream), ("through", path) or ("replace", real path)."""
    text = _text(path, what)
    if text == "-":
        return "stream", sys.stdout
    st = _stat(text)
    if st is not None:
        stream = _standard_stream(st)
        if stream is not None:
            return "stream", stream
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return "through", text
        if stat.S_ISDIR(st.st_mode):
            raise DualflowError(f"{text}: cannot write: is a folder")
        if not stat.S_ISREG(st.st_mode):
            raise DualflowError(f"{text}: cannot write: not a regular file, a character device or a FIFO")
    real = Path(os.path.realpath(text))  # follows links, a dangling one too
    _check_parent(text, real)
    return "replace", real


def check_output(path: str | Path, what: str = "output", inputs: Iterable[str | Path] = ()) -> None:
    """Refuse, before any work, an output path ``atomic_write`` would refuse, and one that is the
    same file as one of ``inputs``. ``what`` names the option in the message (``-o``, ``--json``)."""
    kind, _ = _file_target(path, what)
    if kind == "stream":
        return
    for source in inputs:
        try:
            same = os.path.samefile(path, source)
        except OSError:
            continue
        if same:
            raise DualflowError(f"{what}: {os.fspath(path)} is the input {os.fspath(source)}; not overwriting it")


# --------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------

def _pieces(chunks: Chunks) -> Iterator[bytes]:
    for chunk in [chunks] if isinstance(chunks, (bytes, str)) else chunks:
        yield chunk.encode() if isinstance(chunk, str) else chunk


def _fresh(real: Path, make) -> Path:
    """A new ``.NAME.XXXX.tmp`` beside ``real``, made by ``make(path)`` (which fails if it exists)."""
    for _ in range(100):
        candidate = real.parent / f".{real.name}.{secrets.token_hex(4)}.tmp"
        try:
            make(candidate)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no free temporary name beside {real}")


def atomic_write(path: str | Path, chunks: Chunks) -> None:
    """Write ``chunks`` (bytes, text, or an iterable of either) to ``path`` (see the module's rules).

    If producing a chunk raises, or a signal arrives, the temporary file is removed and ``path`` is
    untouched.
    """
    kind, target = _file_target(path)
    name = os.fspath(path)
    try:
        if kind == "stream":
            target.flush()
            out = getattr(target, "buffer", None)
            if out is None:
                raise DualflowError(f"{name}: cannot write: this standard output takes no bytes")
            for piece in _pieces(chunks):
                out.write(piece)
            out.flush()
        elif kind == "through":
            with open(os.open(target, os.O_WRONLY | os.O_NOCTTY), "wb") as out:
                for piece in _pieces(chunks):
                    out.write(piece)
        else:
            with _signals_clean_up():
                _replace(target, chunks)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise DualflowError(f"{name}: cannot write: {exc.strerror or exc}") from None


def _replace(real: Path, chunks: Chunks) -> None:
    old = _stat(str(real))
    real.parent.mkdir(parents=True, exist_ok=True)
    holder: list[int] = []
    tmp = None
    try:
        with _uninterrupted():  # the name is known before a signal can act
            # mode 0666: the umask applies, as for a new file made by open()
            tmp = _fresh(real, lambda p: holder.append(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)))
            out = open(holder[0], "wb")
        with out:
            if old is not None:
                os.fchmod(out.fileno(), stat.S_IMODE(old.st_mode))
            for piece in _pieces(chunks):
                out.write(piece)
        with _uninterrupted():
            os.replace(tmp, real)
    except BaseException:
        with _uninterrupted():
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------------------------
# folders
# --------------------------------------------------------------------------------------------

def _folder_target(path: str | Path, marker: str, what: str) -> tuple[Path, os.stat_result | None]:
    text = _text(path, what)
    if text == "-":
        raise DualflowError(f"{what}: a folder is needed, not standard output")
    real = Path(os.path.realpath(text))
    st = _stat(str(real))
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise DualflowError(f"{text}: cannot write: not a folder")
        cwd = Path(os.getcwd())
        if real == cwd or real in cwd.parents:
            raise DualflowError(f"{text}: cannot write: holds the working folder; give a folder of its own")
        if any(real.iterdir()) and not (real / marker).is_file():
            raise DualflowError(f"{text}: holds files that are not an earlier output of this command "
                                f"(no {marker}); not replacing it: give a new or empty folder")
    _check_parent(text, real)
    return real, st


def check_folder(path: str | Path, marker: str, what: str = "output") -> None:
    """Refuse, before any work, a folder that ``atomic_folder(path, marker)`` would refuse."""
    _folder_target(path, marker, what)


@contextmanager
def atomic_folder(path: str | Path, marker: str, what: str = "output") -> Iterator[Path]:
    """Yield a temporary folder to write an output folder's whole content into; on a normal exit it
    replaces ``path`` as a unit, on an exception or a signal it is removed and ``path`` is untouched.

    ``marker``: a file every run of the command writes at the top of the folder; an existing folder
    is replaced only if it is empty or holds one (see the module's rules).
    """
    real, old = _folder_target(path, marker, what)
    with _signals_clean_up():
        tmp = None
        try:
            try:
                real.parent.mkdir(parents=True, exist_ok=True)
                with _uninterrupted():  # the name is known before a signal can act
                    tmp = _fresh(real, lambda p: os.mkdir(p, 0o777))  # the umask applies
                if old is not None:
                    os.chmod(tmp, stat.S_IMODE(old.st_mode))
            except OSError as exc:
                raise DualflowError(f"{os.fspath(path)}: cannot write: {exc.strerror or exc}") from None
            yield tmp
            with _uninterrupted():
                try:
                    _swap(tmp, real, old is not None)
                except OSError as exc:
                    raise DualflowError(f"{os.fspath(path)}: cannot write: {exc.strerror or exc}") from None
        except BaseException:
            with _uninterrupted():
                if tmp is not None:
                    shutil.rmtree(tmp, ignore_errors=True)
            raise


def _swap(new: Path, real: Path, exists: bool) -> None:
    """Put folder ``new`` in the place of ``real`` (removing the old one, if ``exists``)."""
    if not exists:
        os.rename(new, real)
        return
    aside = _fresh(real, lambda p: os.mkdir(p, 0o700))
    try:
        os.rename(real, aside)  # over the empty folder just made: a name nobody else holds
    except BaseException:
        os.rmdir(aside)
        raise
    try:
        os.rename(new, real)
    except BaseException:
        os.rename(aside, real)
        raise
    shutil.rmtree(aside, ignore_errors=True)

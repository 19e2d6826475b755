"""Low-level file writing for sessions: an advisory lock, appends, atomic rewrites.

Appends take an exclusive lock on the session file (``fcntl.flock``, or ``msvcrt.locking`` on
Windows: see ``locking``) for the duration of one write, so two processes appending to the
same file never interleave bytes: the second waits (up to its lock timeout) and then sees the
first one's lines. pi 1.6.0 takes no lock; it does not need to honour ours, so the lock
protects pi-context writers from each other only.

Every line goes out in one ``write`` on an ``O_APPEND`` descriptor; if the file does not end
with ``\\n`` (a torn last line left by a crash) the session writes ``" \\n"`` first, so the
next entry always starts on a fresh line. Appends are not flushed to the disk one by one;
:meth:`SessionFile.sync` does that (the agent calls it at the end of each turn).

The atomic rewrite of a legacy file writes a temporary file beside it under a random name,
created exclusively and never through a symlink, and removes the temporary files an earlier
rewrite left behind when it was killed (see :func:`atomic_write`).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from pi_context._regular_files import open_regular_fd
from pi_context.errors import SessionError, SessionLockedError
from pi_context.session._file.locking import try_lock, unlock
from pi_context.session._file.opening import NotRegularFileError, refusal

__all__ = ["SessionFile", "atomic_write", "remove_stale_temp_files", "temp_name_pattern"]

_POLL_SECONDS = 0.01
_TEMP_SUFFIX: Final = ".pictx-tmp"


def appended_bytes(lines: Iterable[bytes], *, after_newline: bool) -> bytes:
    """What an append writes: each line (holding no newline) and a newline, after ``" \\n"``
    when the file does not end with a newline (``after_newline`` false: a torn last line),
    so the first new line starts on a line of its own."""
    body = b"".join(line + b"\n" for line in lines)
    return body if after_newline else b" \n" + body


class SessionFile:
    """An open session file that can be locked and appended to."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        flags = os.O_RDWR | os.O_APPEND
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        self.fd = -1
        try:
            self.fd, _ = open_regular_fd(path, flags, refusal(path), create_mode=0o644)
        except FileExistsError as exc:
            raise SessionError(
                "session file already exists; not overwriting it", path=path
            ) from exc
        except NotRegularFileError:
            self.close()
            raise
        except OSError as exc:
            self.close()
            raise SessionError(f"cannot open session file: {exc.strerror}", path=path) from exc

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    @contextlib.contextmanager
    def locked(self, timeout: float | None) -> Iterator[int]:
        """Hold the exclusive append lock; yields the current file size.

        ``timeout=None`` waits indefinitely, ``0`` fails at once with
        :class:`~pi_context.errors.SessionLockedError`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not try_lock(self.fd):
            if deadline is not None and time.monotonic() >= deadline:
                raise SessionLockedError(
                    "another process is appending to this session", path=self.path
                )
            time.sleep(_POLL_SECONDS)
        try:
            stat = os.fstat(self.fd)
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                raise SessionError("session file was removed", path=self.path) from None
            if (current.st_ino, current.st_dev) != (stat.st_ino, stat.st_dev):
                raise SessionError("session file was replaced by another process", path=self.path)
            yield stat.st_size
        finally:
            unlock(self.fd)

    def read_from(self, offset: int, size: int) -> bytes:
        """Bytes ``[offset, size)`` of the file."""
        chunks: list[bytes] = []
        while offset < size:
            chunk = os.pread(self.fd, size - offset, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)

    def ends_with_newline(self, size: int) -> bool:
        return size == 0 or os.pread(self.fd, 1, size - 1) == b"\n"

    def append(self, data: bytes) -> int:
        """Write all of ``data`` at the end of the file; returns the bytes written."""
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                written += os.write(self.fd, view[written:])
        except OSError as exc:
            raise SessionError(
                f"cannot append to session file: {exc.strerror}", path=self.path
            ) from exc
        return written

    def sync(self) -> None:
        """Flush what was appended to the disk (``fsync``)."""
        try:
            os.fsync(self.fd)
        except OSError as exc:
            raise SessionError(
                f"cannot flush session file to disk: {exc.strerror}", path=self.path
            ) from exc


def temp_name_pattern(path: Path) -> re.Pattern[str]:
    """The names :func:`atomic_write` gives its temporary files for ``path``."""
    return re.compile(re.escape(f".{path.name}.") + r"[0-9a-f]{32}" + re.escape(_TEMP_SUFFIX))


def remove_stale_temp_files(path: Path) -> list[Path]:
    """Remove temporary files an interrupted :func:`atomic_write` of ``path`` left behind.

    Call it holding the session's append lock: a rewrite only runs under that lock, so any
    temporary file found then belongs to a writer that died. Only regular files (or symlinks,
    which are unlinked, never followed) with our exact name pattern are touched. Returns what
    was removed.
    """
    pattern = temp_name_pattern(path)
    removed: list[Path] = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        if not pattern.fullmatch(name):
            continue
        candidate = path.parent / name
        with contextlib.suppress(OSError):
            candidate.unlink()
            removed.append(candidate)
    return removed


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: write a temporary file, fsync, rename, fsync the folder.

    The temporary file gets an unpredictable name (128 random bits), is created exclusively
    (``O_EXCL``) and never through a symlink (``O_NOFOLLOW``), so nothing planted beside the
    session can redirect the write; it is removed if anything fails.
    """
    tmp = path.with_name(f".{path.name}.{os.urandom(16).hex()}{_TEMP_SUFFIX}")
    flags = (
        os.O_WRONLY
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_BINARY", 0)
    )
    created = False
    try:
        fd = os.open(tmp, flags, 0o644)
        created = True
        try:
            view = memoryview(data)
            written = 0
            while written < len(data):
                written += os.write(fd, view[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        if created:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise SessionError(f"cannot rewrite session file: {exc.strerror}", path=path) from exc
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):
        return  # Windows cannot open a directory to fsync it
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

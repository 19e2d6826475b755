"""Low-level file writing for sessions: an advisory lock, appends, atomic rewrites.

Appends take an exclusive ``fcntl.flock`` on the session file for the duration of one write,
so two processes appending to the same file never interleave bytes: the second waits (up to
its lock timeout) and then sees the first one's lines. pi 1.6.0 takes no lock; it does not
need to honour ours, so the lock protects pi-context writers from each other only.

Every line goes out in one ``write`` on an ``O_APPEND`` descriptor; if the file does not end
with ``\\n`` (a torn last line left by a crash) the session writes ``" \\n"`` first, so the
next entry always starts on a fresh line.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pi_context.errors import SessionError, SessionLockedError

__all__ = ["SessionFile", "atomic_write"]

_POLL_SECONDS = 0.01


class SessionFile:
    """An open session file that can be locked and appended to."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        flags = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        try:
            self.fd = os.open(path, flags, 0o644)
        except FileExistsError as exc:
            raise SessionError(
                "session file already exists; not overwriting it", path=path
            ) from exc
        except OSError as exc:
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
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise SessionLockedError(
                        "another process is appending to this session", path=self.path
                    ) from None
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
            fcntl.flock(self.fd, fcntl.LOCK_UN)

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


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: write a temporary file, fsync, rename, fsync the folder."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
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
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SessionError(f"cannot rewrite session file: {exc.strerror}", path=path) from exc
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

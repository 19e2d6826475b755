"""Opening a session file for reading: regular files only, never blocking, bounded.

A path given as a session can name anything: a FIFO (opening it waits for a writer forever),
``/dev/zero`` (reading it never ends), a directory, a socket. Every reader of session files
goes through :func:`open_regular`, which

* opens without blocking (``O_NONBLOCK``: opening a FIFO returns at once) and without
  following the open into a controlling terminal (``O_NOCTTY``),
* refuses anything ``fstat`` does not call a regular file, with one line naming the file and
  what it is (checked on the opened descriptor, so a swap between check and open is caught),
* and hands back the size the file had when it was opened: readers read that many bytes and
  no more, so a file that grows while it is read cannot keep a reader busy. Lines appended
  later by another process are taken in by the next write (see ``_storage``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

from pi_context.errors import SessionError

__all__ = [
    "NotRegularFileError",
    "check_regular",
    "describe_file_kind",
    "open_regular",
    "read_regular",
]

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class NotRegularFileError(SessionError):
    """The path names a FIFO, a device, a socket or a directory, not a session file."""


def describe_file_kind(mode: int) -> str:
    """What a non-regular file is, in words (``a FIFO (named pipe)``, ``a directory``...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse(path: str | os.PathLike[str], mode: int) -> NotRegularFileError:
    return NotRegularFileError(
        f"{describe_file_kind(mode)}, not a regular file: refusing to read it as a session",
        path=os.fspath(path),
    )


def check_regular(path: str | os.PathLike[str], fd: int) -> int:
    """The size of the file open at ``fd``; raises :class:`NotRegularFileError` for anything
    but a regular file."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(path, info.st_mode)
    return info.st_size


@contextlib.contextmanager
def open_regular(path: str | os.PathLike[str]) -> Iterator[tuple[BinaryIO, int]]:
    """Open ``path`` for reading; yields the file and its size at open (read no further).

    Raises :class:`NotRegularFileError` for a FIFO, device, socket or directory, ``OSError``
    when the file cannot be opened.
    """
    # Look before opening (a socket cannot be opened at all; without O_NONBLOCK, on Windows,
    # this is what keeps a pipe from blocking), then check the opened descriptor again.
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(path, info.st_mode)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        size = check_regular(path, fd)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb", buffering=0) as file:
        yield file, size


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of a regular file as it was when opened (at most ``limit`` of them)."""
    with open_regular(path) as (file, size):
        wanted = size if limit is None else min(size, limit)
        chunks: list[bytes] = []
        while wanted > 0:
            chunk = file.read(min(wanted, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)

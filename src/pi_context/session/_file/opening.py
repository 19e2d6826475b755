"""Opening a session file for reading: regular files only, never blocking, bounded.

A path given as a session can name anything: a FIFO (opening it waits for a writer forever),
``/dev/zero`` (reading it never ends), a directory, a socket. Every reader of session files
goes through :func:`open_regular`, which opens by the rule of :mod:`pi_context._regular_files`
(never blocking; anything ``fstat`` does not call a regular file is refused with one line
naming the file and what it is) and hands back the size the file had when it was opened:
readers read that many bytes and no more, so a file that grows while it is read cannot keep a
reader busy. Lines appended later by another process are taken in by the next write (see
``_file.storage``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import BinaryIO

from pi_context._regular_files import file_kind, open_regular_fd
from pi_context.errors import SessionError

__all__ = [
    "NotRegularFileError",
    "open_regular",
    "read_regular",
    "refusal",
]


class NotRegularFileError(SessionError):
    """The path names a FIFO, a device, a socket or a directory, not a session file."""


def refusal(path: str | os.PathLike[str]) -> Callable[[int], NotRegularFileError]:
    """How a session reader or writer refuses ``path`` when it is not a regular file."""

    def refuse(mode: int) -> NotRegularFileError:
        return NotRegularFileError(
            f"{file_kind(mode)}, not a regular file: refusing to read it as a session",
            path=os.fspath(path),
        )

    return refuse


@contextlib.contextmanager
def open_regular(path: str | os.PathLike[str]) -> Iterator[tuple[BinaryIO, int]]:
    """Open ``path`` for reading; yields the file and its size at open (read no further).

    Raises :class:`NotRegularFileError` for a FIFO, device, socket or directory, ``OSError``
    when the file cannot be opened.
    """
    fd, info = open_regular_fd(path, os.O_RDONLY, refusal(path))
    with os.fdopen(fd, "rb", buffering=0) as file:
        yield file, info.st_size


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

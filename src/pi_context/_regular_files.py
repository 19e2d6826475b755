"""Opening a path only when it names a regular file, without ever blocking on what it names.

A path can name anything: a FIFO (opening it for reading waits for a writer forever, opening
it for writing waits for a reader), ``/dev/zero`` (reading it never ends), a directory, a
socket. Session files and the files the tools touch are opened here, by one rule:

* look before opening (a socket cannot be opened at all, and where ``O_NONBLOCK`` does not
  exist this is what keeps a pipe from blocking);
* open without blocking (``O_NONBLOCK``) and without taking a terminal as the controlling one
  (``O_NOCTTY``);
* ``fstat`` the opened descriptor and refuse anything but a regular file (a file swapped in
  between the look and the open is caught);
* hand back a blocking descriptor (``O_NONBLOCK`` means nothing for a regular file's reads
  and writes, but a caller may pass the descriptor on).

What a refusal says belongs to the caller (a session error, a tool error), so the caller
passes the exception to raise; :func:`file_kind` names the kind of file the same way for all.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Final

__all__ = ["NONBLOCKING_OPEN", "Refusal", "file_kind", "open_regular_fd"]

NONBLOCKING_OPEN: Final = (
    getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
"""The flags every open here adds to the caller's."""

Refusal = Callable[[int], BaseException]
"""Given the ``st_mode`` of something that is not a regular file, the exception to raise."""


def file_kind(mode: int) -> str:
    """What a file with this ``st_mode`` is, in words (``"a named pipe (FIFO)"``)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular_fd(
    path: str | os.PathLike[str], flags: int, refuse: Refusal, *, create_mode: int = 0o666
) -> tuple[int, os.stat_result]:
    """Open ``path`` with ``flags`` (plus :data:`NONBLOCKING_OPEN`); the descriptor and its
    ``fstat``.

    Raises ``refuse(mode)`` when the path (before or after the open) is not a regular file;
    ``OSError`` from the open itself passes on (a missing path is left to the open, which
    creates it when ``flags`` say so).
    """
    try:
        before = os.stat(path)
    except FileNotFoundError:
        before = None
    if before is not None and not stat.S_ISREG(before.st_mode):
        raise refuse(before.st_mode)
    fd = os.open(path, flags | NONBLOCKING_OPEN, create_mode)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse(info.st_mode)
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info

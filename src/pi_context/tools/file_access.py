"""Opening the files a model names without hanging, and without leaving the project by a link.

The model picks paths, and a hostile project picks what sits at them. A named pipe blocks
``open()`` and ``read()`` until another process writes; ``/dev/zero`` never ends; a symbolic
link committed to a repository can point a write at the user's dotfiles. The tools use these
helpers so that each of those becomes a one-line tool error the model can read:

- :func:`open_regular` opens by the rule of :mod:`pi_context._regular_files` (never blocking;
  anything that is not a regular file refused, checked again on the opened descriptor) and
  words the refusal as a tool error.
- :func:`link_escape` tells whether a path written inside the working directory leads, through
  a symbolic link, to a place outside it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pi_context._regular_files import file_kind, open_regular_fd
from pi_context.errors import ToolError

__all__ = [
    "link_escape",
    "link_escape_message",
    "not_regular_message",
    "open_regular",
    "refuse_nul",
    "write_regular",
]


def not_regular_message(action: str, path: Path | str, mode: int) -> str:
    """``Cannot read /p/x: it is a named pipe (FIFO), not a regular file.``"""
    return f"Cannot {action} {path}: it is {file_kind(mode)}, not a regular file."


def open_regular(
    path: Path, flags: int, *, action: str, shown: str | None = None, create_mode: int = 0o666
) -> int:
    """Open ``path`` with ``flags`` as a descriptor, refusing anything but a regular file.

    The open itself never blocks: a FIFO without a writer opens (for reading) or fails with
    ``ENXIO`` (for writing) instead of waiting. The returned descriptor is blocking again.
    A directory raises :class:`IsADirectoryError` (callers word it as pi does), other
    :class:`OSError` from the open passes on, and a non-regular file or a path holding a NUL
    raises :class:`ToolError` naming the path as ``shown`` (default: ``path``).
    """
    name = str(path) if shown is None else shown
    refuse_nul(path, action, name)

    def refuse(mode: int) -> Exception:
        if stat.S_ISDIR(mode):  # the callers word directories the way pi does
            return IsADirectoryError(21, "Illegal operation on a directory", str(path))
        return ToolError(not_regular_message(action, name, mode))

    fd, _ = open_regular_fd(path, flags, refuse, create_mode=create_mode)
    return fd


def refuse_nul(path: Path, action: str, shown: str) -> None:
    """A path with a NUL byte cannot name a file: say so (Python would say "embedded null byte")."""
    if "\x00" in str(path):
        raise ToolError(f"Cannot {action} {shown!r}: the path contains a NUL character.")


def write_regular(path: Path, data: bytes, *, action: str, shown: str | None = None) -> None:
    """Create or overwrite the regular file ``path`` with ``data`` (never a FIFO or device)."""
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT, action=action, shown=shown)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def link_escape(path: Path, cwd: Path) -> Path | None:
    """Where ``path`` really leads, if it is written inside ``cwd`` but resolves outside it.

    ``None`` when the path is written outside ``cwd`` (the model named that place itself) or
    stays inside once every symbolic link is followed. A dangling link counts by its target.
    """
    base = Path(os.path.normpath(cwd))
    written = Path(os.path.normpath(path))
    if not written.is_relative_to(base):
        return None
    real_base = Path(os.path.realpath(base))
    target = Path(os.path.realpath(written))
    return None if target.is_relative_to(real_base) else target


def link_escape_message(action: str, shown: str, target: Path) -> str:
    """The one-line refusal for a path that :func:`link_escape` found leading outside."""
    return (
        f"Refusing to {action} {shown}: a symbolic link leads it to {target}, outside the "
        "working directory. Use that path itself if you mean to change it."
    )

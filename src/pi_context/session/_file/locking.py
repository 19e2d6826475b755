"""The append lock, on whatever the platform offers; nothing POSIX-only is imported up front.

* POSIX: ``fcntl.flock`` (whole file, exclusive, non-blocking attempts).
* Windows: ``msvcrt.locking`` on one byte far past the end of the file. Windows locks are
  mandatory, so locking real bytes would stop readers (pi, or our own loader) from reading
  them; a byte past any real end locks nothing anyone reads, and every pi-context writer
  agrees on it.
* Neither (a platform with no file locking): no inter-process lock. Appends are still single
  ``O_APPEND`` writes, so lines never interleave within one write; only the "wait for the other
  writer, then read its lines first" ordering is lost.

:func:`lock_backend` says which is in use; ``try_lock`` returns False when another holder has
the lock.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Final, Literal

__all__ = ["LockBackend", "lock_backend", "try_lock", "unlock"]

LockBackend = Literal["fcntl", "msvcrt", "none"]

_WINDOWS_LOCK_OFFSET: Final = 2**40
"""Where the Windows lock byte sits: 1 TiB in, past the end of any real session file."""


def _load(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_fcntl = _load("fcntl")
_msvcrt = None if _fcntl is not None else _load("msvcrt")


def lock_backend() -> LockBackend:
    """Which locking mechanism this platform gives the session store."""
    if _fcntl is not None:
        return "fcntl"
    if _msvcrt is not None:
        return "msvcrt"
    return "none"


def try_lock(fd: int) -> bool:
    """Take the exclusive append lock on ``fd`` without waiting; False when it is held."""
    if _fcntl is not None:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    if _msvcrt is not None:
        position = os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            _msvcrt.locking(fd, _msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        finally:
            os.lseek(fd, position, os.SEEK_SET)
        return True
    return True


def unlock(fd: int) -> None:
    """Release the lock :func:`try_lock` took."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    elif _msvcrt is not None:
        position = os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            _msvcrt.locking(fd, _msvcrt.LK_UNLCK, 1)
        finally:
            os.lseek(fd, position, os.SEEK_SET)

"""The file behind a session: lazy creation, locked appends, legacy rewrite, foreign lines.

:class:`SessionStorage` knows where the file is and how much of it this process has seen (size,
line count, a torn last line it skipped). It writes bytes the session hands it and reports
lines other processes appended; it knows nothing about the tree or the projection.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pi_context.errors import SessionError
from pi_context.session._file.writer import (
    SessionFile,
    appended_bytes,
    atomic_write,
    remove_stale_temp_files,
)
from pi_context.session._load.scan import CURRENT_VERSION, ScanResult, scan_lines

__all__ = ["ForeignLines", "SessionStorage"]

ForeignLines = Callable[[ScanResult, int | None], None]
"""Receives lines another process appended, and the number of a torn line reported earlier
that they replace (re-read with them), if any."""


class SessionStorage:
    """The session file's state as this process knows it, and the writes to it.

    Every write takes the file's append lock, waiting up to ``lock_timeout`` seconds
    (``None``: indefinitely; see :meth:`SessionFile.locked`).

    ``persisted`` is False until the header is in the file (pi's lazy creation); ``version``
    is the header version on disk (below 3: the file is rewritten as v3 on the first write).
    ``empty_file`` marks a 0-byte file that was opened: it is filled, never replaced.
    """

    def __init__(
        self,
        path: Path,
        *,
        persisted: bool = False,
        version: int = CURRENT_VERSION,
        size: int = 0,
        known_lines: int = 0,
        torn_from: int | None = None,
        empty_file: bool = False,
    ) -> None:
        self.path = path
        self.persisted = persisted
        self.version = version
        self._size = size
        self._known_lines = known_lines
        self._torn_from = torn_from
        self._empty_file = empty_file
        self._file: SessionFile | None = None

    @property
    def legacy(self) -> bool:
        """True while the file on disk is v1/v2 (the next write rewrites it as v3)."""
        return self.persisted and self.version < CURRENT_VERSION

    @property
    def lines(self) -> int | None:
        """The number of the file's last complete line (the line an append just wrote), or
        ``None`` before the file exists."""
        return self._known_lines if self.persisted else None

    def _handle(self) -> SessionFile:
        if self._file is None:
            self._file = SessionFile(self.path)
        return self._file

    def _written(self, data: bytes) -> None:
        self.persisted = True
        self.version = CURRENT_VERSION
        self._size = len(data)
        self._known_lines = data.count(b"\n")
        self._torn_from = None

    def create(self, data: bytes, lock_timeout: float | None) -> None:
        """Write the whole new file (header and entries); never replaces an existing file."""
        if self._empty_file:
            handle = SessionFile(self.path)
            with handle.locked(lock_timeout) as size:
                if size != 0:
                    handle.close()
                    raise SessionError(
                        "session file is no longer empty (written by another process)",
                        path=self.path,
                    )
                handle.append(data)
        else:
            handle = SessionFile(self.path, create=True)
            with handle.locked(lock_timeout):
                handle.append(data)
        self._file = handle
        self._empty_file = False
        self._written(data)

    def rewrite(self, data: bytes, lock_timeout: float | None) -> None:
        """Replace a legacy file by ``data`` atomically, unless it changed since it was read."""
        handle = self._handle()
        with handle.locked(lock_timeout) as size:
            if size != self._size:
                raise SessionError(
                    "legacy session file changed since it was read; reopen it", path=self.path
                )
            # Under the lock no other rewrite runs: temporary files here are a dead one's.
            remove_stale_temp_files(self.path)
            atomic_write(self.path, data)
        handle.close()
        self._file = None
        self._written(data)

    def append(self, line: bytes, on_foreign: ForeignLines, lock_timeout: float | None) -> None:
        """Append one entry line (without its newline) under the lock.

        Lines another process appended first go to ``on_foreign``. An unterminated (possibly
        torn) last line is finished first; the space keeps a valid line valid and stops the
        loader's fast path from trusting a torn one.
        """
        handle = self._handle()
        with handle.locked(lock_timeout) as size:
            if size < self._size:
                raise SessionError("session file shrank since it was read", path=self.path)
            if size > self._size:
                self._merge_foreign(handle, size, on_foreign)
            data = appended_bytes([line], after_newline=handle.ends_with_newline(size))
            written = handle.append(data)
        self._size = size + written
        self._known_lines += data.count(b"\n")
        self._torn_from = None

    def _merge_foreign(self, handle: SessionFile, size: int, on_foreign: ForeignLines) -> None:
        """Read what another process appended since we last read or wrote the file.

        A torn last line we skipped on load is read again with them: its writer (or the next
        one) has finished it with a newline, and the loader decides anew whether it is valid.
        """
        start = self._size if self._torn_from is None else self._torn_from
        first_line = self._known_lines + 1
        tail = handle.read_from(start, size)
        scan = scan_lines(tail, path=str(self.path), header_seen=True, first_line=first_line)
        on_foreign(scan, first_line if self._torn_from is not None else None)
        self._size = size
        self._known_lines += scan.newlines
        self._torn_from = start + tail.rfind(b"\n") + 1 if scan.torn_tail else None

    def sync(self) -> None:
        """Flush this process's writes to the disk; nothing to do before the file exists."""
        if self._file is not None:
            self._file.sync()

    def close(self) -> None:
        """Release the file descriptor (reopened by the next write)."""
        if self._file is not None:
            self._file.close()
            self._file = None

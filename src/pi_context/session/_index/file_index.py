"""A lean, read-only index of a session file for the inspection commands (``pictx session
info|tree|context``).

:class:`~pi_context.session.Session` keeps every entry's line in memory (see
:mod:`~pi_context.session._load.columns`), which for a file of many small entries is most of the
file again. The inspection commands only read, so this index streams the file once, checks
every line exactly as the loader does (the same decoding, validation and depth limit) and keeps
per entry only a few numbers in arrays: where its line is in the file, its line number, its
parent's position, its type code and message role code, plus an id → position map. Lines are
read back with ``os.pread`` when an entry is printed or projected (not ``mmap``: touched pages
of a mapping count as the process's memory). The commands ask for a large file's second half to be indexed
by a forked helper process meanwhile (see :mod:`~pi_context.session._index.build`).

The index covers the ordinary file: a current (v3) session in which every line reads cleanly
and every parent comes before its child. Anything else (a skipped or torn line, a field of the
wrong type, a line nested too deep, a legacy version, a duplicate id, a parent that is missing
or comes later, a file that is not a regular file) makes :meth:`ColumnIndex.open` return
``None``, and the caller loads a full :class:`Session`, which reports and recovers from all of
those: the lean path never has a problem to report, so both paths print the same.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from pi_context.errors import SessionError
from pi_context.messages import AgentMessage
from pi_context.session._file.opening import open_regular
from pi_context.session._index.build import (
    Columns,
    Helper,
    NeedsFullLoader,
    batches,
    decode_object,
    first_line,
    split_point,
)
from pi_context.session._load.scan import CURRENT_VERSION
from pi_context.session.entries import Entry
from pi_context.session.entry_store import IndexedView, child_positions, path_positions
from pi_context.session.projection import stream_positions
from pi_context.session.tree import apply_label, session_name_of

__all__ = ["ColumnIndex", "IndexedPath", "stream_indexed_context"]


class ColumnIndex(Columns):
    """Per-entry columns of one session file; see the module docstring.

    Holds no line text and no :class:`Entry`: :meth:`entry` reads one back on demand. It is
    an :class:`~pi_context.session.entry_store.EntryTree`: the projection rules and the
    inspection commands read it as they read a loaded session.
    """

    def __init__(self, path: Path, fd: int, header: dict[str, Any], version: int) -> None:
        super().__init__(str(path))
        self.file = path
        self._fd = fd
        self.header = header
        self.version = version
        """The header's version (3 or later: older files are left to the full loader)."""
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        self._ids: list[str] | None = None

    # -- building -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, parallel: bool = False) -> ColumnIndex | None:
        """The index of the session file at ``path``, or ``None`` when the file needs the full
        loader (see the module docstring). Close it with :meth:`close` (or ``with``).

        ``parallel``: index the second half of a file of 16 MiB or more in a forked helper
        process, when this process may fork (on Linux, with one thread) and has a second CPU;
        without a helper to be had, this process reads the whole file."""
        try:
            with open_regular(path) as (file, size):
                fd = os.dup(file.fileno())
        except (OSError, SessionError):  # the full loader says what is wrong
            return None
        try:
            index = cls._build(path, fd, size, parallel=parallel)
        except (NeedsFullLoader, OSError):  # OSError: a read failed; the full loader says how
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return index

    @classmethod
    def _build(cls, path: Path, fd: int, size: int, *, parallel: bool) -> ColumnIndex:
        end = split_point(fd, size) if parallel else size
        helper = None
        try:
            if end < size:
                helper = Helper.start(fd, end, size, str(path))
                if helper is None:
                    end = size  # no helper to be had: this process reads it all
            lines = batches(fd, 0, end)
            first, number, start, rest = first_line(lines)
            header = None if first is None else decode_object(first)
            if (
                header is None
                or header.get("type") != "session"
                or not isinstance(header.get("id"), str)
            ):
                raise NeedsFullLoader
            version = header.get("version")
            if (
                not isinstance(version, int)
                or isinstance(version, bool)
                or version < CURRENT_VERSION
            ):
                raise NeedsFullLoader
            index = cls(path, fd, header, version)
            number = index.index_lines(chain([(start, rest)], lines), number)
            if helper is not None:
                index.join(helper.result(), number)
        finally:
            if helper is not None:
                helper.close()
        for entry in index.kept:
            if entry.type == "label":
                apply_label(index.labels, entry)
            else:
                index.name = session_name_of(entry)
        index.kept.clear()
        return index

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ColumnIndex:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.parents)

    def entry(self, position: int) -> Entry:
        """The entry at ``position`` (file order), read from the file (a new object each call).

        Raises :class:`~pi_context.errors.SessionError` naming the line when the line is no
        longer what was indexed (the file was rewritten meanwhile; appends do not matter)."""
        length = self.lengths[position]
        number = self.line_numbers[position]
        try:
            line = os.pread(self._fd, length, self.offsets[position])
            if len(line) != length:
                raise NeedsFullLoader
            data = decode_object(line)
        except (OSError, NeedsFullLoader) as exc:
            raise SessionError(
                "the file changed while it was read", path=self.file, line=number
            ) from exc
        return Entry.from_data(data, line=number, raw=line, log=self._log)

    def type_at(self, position: int) -> str:
        return self.type_names[self.type_codes[position]]

    type_of = type_at

    def role_at(self, position: int) -> str | None:
        return self.role_names[self.role_codes[position]]

    def id_at(self, position: int) -> str:
        ids = self._ids
        if ids is None:
            ids = self._ids = list(self.positions)  # the map holds the ids in file order
        return ids[position]

    def parent_position(self, position: int) -> int:
        return self.parents[position]

    def position_of_id(self, entry_id: str) -> int | None:
        return self.positions.get(entry_id)

    @property
    def leaf(self) -> int:
        """Position of the current leaf (the last entry), -1 when there is none."""
        return len(self.parents) - 1

    def path(self, leaf: int) -> array[int]:
        """Positions of the root→``leaf`` path (empty for -1)."""
        return path_positions(self, leaf)

    def leaf_count(self) -> int:
        """How many entries have no child."""
        has_child = bytearray(len(self.parents))
        for parent in self.parents:
            if parent >= 0:
                has_child[parent] = 1
        return len(has_child) - sum(has_child)

    def children(self) -> tuple[array[int], array[int]]:
        """Children of every entry in file order (see
        :func:`~pi_context.session.entry_store.child_positions`)."""
        return child_positions(self)

    def roots(self) -> list[int]:
        return [p for p, parent in enumerate(self.parents) if parent < 0]


class IndexedPath(IndexedView[Entry]):
    """A root→leaf path of a :class:`ColumnIndex` as a read-only sequence of entries, each
    read from the file when it is looked at (and not kept)."""

    __slots__ = ("_index", "positions")
    _what = "path"

    def __init__(self, index: ColumnIndex, positions: array[int]) -> None:
        self._index = index
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    def _at(self, position: int) -> Entry:
        return self._index.entry(self.positions[position])


def stream_indexed_context(
    index: ColumnIndex, path: Sequence[int]
) -> Iterator[tuple[Entry, AgentMessage]]:
    """:func:`~pi_context.session.projection.stream_positions` of the path ``path`` (positions)
    of ``index``: each context entry is read from the file, projected and let go."""
    return stream_positions(index, path)

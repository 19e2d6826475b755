"""A lean, read-only index of a session file for the inspection commands (``pictx session
info|tree|context``).

:class:`~pi_context.session.Session` keeps every entry's line in memory (see
:mod:`~pi_context.session.columns`), which for a file of many small entries is most of the
file again. The inspection commands only read, so this index streams the file once, checks every line exactly as the loader does (the
same decoding, validation and depth limit) and keeps per entry only a few numbers in arrays:
where its line is in the file, its line number, its parent's position and its type code, plus
an id → position map. Lines are read back with ``os.pread`` when an entry is printed or
projected (not ``mmap``: touched pages of a mapping count as the process's memory).

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
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Final, overload

from pi_context import _json
from pi_context.errors import SessionError
from pi_context.messages import AgentMessage
from pi_context.session.codec import CURRENT_VERSION
from pi_context.session.entries import UNREADABLE, Entry
from pi_context.session.problems import ProblemLog
from pi_context.session.projection import context_edits_by_target, context_item, is_system_message
from pi_context.session.reading import open_regular
from pi_context.session.shapes import Head, head_of_line
from pi_context.session.tree import apply_label, session_name_of

__all__ = ["ColumnIndex", "IndexedPath", "stream_indexed_context"]

_CHUNK_SIZE: Final = 1 << 20

_READ_IN_FULL: Final = frozenset({"label", "session_info"})
"""Entry types whose fields the index keeps (labels, the session name): decoded in full."""


class _Unusual(Exception):
    """The file needs the full loader (see the module docstring)."""


def _is_blank(line: bytes) -> bool:
    if not line.strip():
        return True
    if line.isascii():
        return False
    return not _json.js_trim(line.decode("utf-8", errors="replace"))


def _batches(fd: int, size: int) -> Iterator[tuple[int, list[bytes]]]:
    """The ``\\n``-separated lines of the first ``size`` bytes (the newline dropped; the last
    line may lack one), a chunk's worth at a time, each batch with the file offset of its
    first line (a line cut by chunk boundaries is joined once, when its end arrives)."""
    offset = 0
    start = 0  # file offset of the next line's first byte
    partial: list[bytes] = []
    while offset < size:
        chunk = os.pread(fd, min(_CHUNK_SIZE, size - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        lines = chunk.split(b"\n")
        del chunk
        tail = lines.pop()
        if lines:
            if partial:
                partial.append(lines[0])
                lines[0] = b"".join(partial)
                partial = []
            yield start, lines
            start += sum(map(len, lines)) + len(lines)
        if tail:
            partial.append(tail)
    if partial:
        yield start, [b"".join(partial)]


def _first_line(
    batches: Iterator[tuple[int, list[bytes]]],
) -> tuple[bytes | None, int, int, list[bytes]]:
    """The first line of ``batches`` that is not blank (``None``: there is none), its line
    number, and the file offset and the lines of the rest of its batch."""
    number = 0
    for start, lines in batches:
        for spot, line in enumerate(lines):
            number += 1
            if not _is_blank(line):
                rest = start + sum(map(len, lines[: spot + 1])) + spot + 1
                return line, number, rest, lines[spot + 1 :]
    return None, number, 0, []


def _decode(line: bytes) -> dict[str, Any]:
    try:
        value = _json.loads(line)
    except (ValueError, RecursionError) as exc:  # JSONDepthError is a ValueError
        raise _Unusual from exc
    if not isinstance(value, dict):
        raise _Unusual
    return value


class ColumnIndex:
    """Per-entry columns of one session file; see the module docstring.

    Holds no line text and no :class:`Entry`: :meth:`entry` reads one back on demand.
    """

    def __init__(self, path: Path, fd: int, header: dict[str, Any], version: int) -> None:
        self.file = path
        self._fd = fd
        self.header = header
        self.version = version
        """The header's version (3 or later: older files are left to the full loader)."""
        self.offsets = array("q")
        """Byte offset of each entry's line."""
        self.lengths = array("i")
        """Length of each entry's line (without its newline)."""
        self.line_numbers = array("i")
        """1-based line number of each entry."""
        self.parents = array("i")
        """Position of each entry's parent (-1: a root)."""
        self.type_codes = bytearray()
        """Each entry's type, as a position in :attr:`type_names`."""
        self.type_names: list[str] = []
        self.positions: dict[str, int] = {}
        """Entry id → position in file order."""
        self.kinds: Counter[tuple[str, str | None]] = Counter()
        """``(type, role)`` → how many entries (the role of message entries only)."""
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        self._log = ProblemLog(str(path))

    # -- building -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path) -> ColumnIndex | None:
        """The index of the session file at ``path``, or ``None`` when the file needs the full
        loader (see the module docstring). Close it with :meth:`close` (or ``with``)."""
        try:
            with open_regular(path) as (file, size):
                fd = os.dup(file.fileno())
        except (OSError, SessionError):  # the full loader says what is wrong
            return None
        try:
            index = cls._build(path, fd, size)
        except _Unusual:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return index

    @classmethod
    def _build(cls, path: Path, fd: int, size: int) -> ColumnIndex:
        batches = _batches(fd, size)
        first, number, start, rest = _first_line(batches)
        header = None if first is None else _decode(first)
        if (
            header is None
            or header.get("type") != "session"
            or not isinstance(header.get("id"), str)
        ):
            raise _Unusual
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < CURRENT_VERSION:
            raise _Unusual
        index = cls(path, fd, header, version)
        index._index_lines(chain([(start, rest)], batches), number)
        return index

    def _index_lines(self, batches: Iterable[tuple[int, list[bytes]]], number: int) -> None:
        """Index the entry lines of ``batches``, the first of which follows line ``number``."""
        log = ProblemLog(str(self.file))
        positions = self.positions
        claim, find = positions.setdefault, positions.get
        codes: dict[str, int] = {}
        roles: Counter[str | None] = Counter()
        add_offset, add_length, add_number = (
            self.offsets.append,
            self.lengths.append,
            self.line_numbers.append,
        )
        add_parent, add_code = self.parents.append, self.type_codes.append
        count = 0  # entries so far: the next one's position
        for offset, lines in batches:
            for line in lines:
                number += 1
                size = len(line)
                at = offset
                offset += size + 1
                if line[:1] != b"{" and _is_blank(line):
                    continue
                # The compiled check answers for nearly every line; a line it refuses and the
                # few entries whose fields are kept here (labels, the session name) are decoded
                # and checked in full, as the loader does.
                head = head_of_line(line)
                if head is None or head[0] in _READ_IN_FULL:
                    kind, entry_id, parent_id, role = self._read_in_full(line, number, log)
                else:
                    kind, entry_id, parent_id, role = head
                if claim(entry_id, count) != count:
                    raise _Unusual  # a duplicate id
                if parent_id is None:
                    parent = -1
                else:
                    parent = find(parent_id, -2)
                    if parent == -2:
                        raise _Unusual  # a missing parent, or one that comes later
                    if parent == count:
                        parent = -1  # its own parent: a root, as the loader reads it
                code = codes.get(kind)
                if code is None:
                    if len(codes) > 255:
                        raise _Unusual
                    code = codes[kind] = len(self.type_names)
                    self.type_names.append(kind)
                add_parent(parent)
                add_code(code)
                add_offset(at)
                add_length(size)
                add_number(number)
                if kind == "message":
                    roles[role] += 1
                count += 1
        kinds = self.kinds
        for code, many in Counter(self.type_codes).items():
            if self.type_names[code] != "message":
                kinds[self.type_names[code], None] = many
        for role, many in roles.items():
            kinds["message", role] = many

    def _read_in_full(self, line: bytes, number: int, log: ProblemLog) -> Head:
        """The head of a line decoded and checked in full, noting its label or session name."""
        entry = Entry.from_data(_decode(line), line=number, raw=line, log=log)
        if log.problems or entry.type == UNREADABLE:
            raise _Unusual
        if entry.type == "label":
            apply_label(self.labels, entry)
        elif entry.type == "session_info":
            self.name = session_name_of(entry)
        return entry.type, entry.id, entry.parent_id, entry.role

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
                raise _Unusual
            data = _decode(line)
        except (OSError, _Unusual) as exc:
            raise SessionError(
                "the file changed while it was read", path=self.file, line=number
            ) from exc
        return Entry.from_data(data, line=number, raw=line, log=self._log)

    def type_of(self, position: int) -> str:
        return self.type_names[self.type_codes[position]]

    @property
    def leaf(self) -> int:
        """Position of the current leaf (the last entry), -1 when there is none."""
        return len(self.parents) - 1

    def path(self, leaf: int) -> array[int]:
        """Positions of the root→``leaf`` path (empty for -1)."""
        out = array("i")
        parents = self.parents
        while leaf >= 0:
            out.append(leaf)
            leaf = parents[leaf]
        out.reverse()
        return out

    def leaf_count(self) -> int:
        """How many entries have no child."""
        has_child = bytearray(len(self.parents))
        for parent in self.parents:
            if parent >= 0:
                has_child[parent] = 1
        return len(has_child) - sum(has_child)

    def children(self) -> tuple[array[int], array[int]]:
        """Children of every entry in file order, as ``(starts, kids)``: the children of
        position ``p`` are ``kids[starts[p]:starts[p + 1]]`` (no list per entry)."""
        count = len(self.parents)
        starts = array("i", bytes(4 * (count + 1)))
        for parent in self.parents:
            if parent >= 0:
                starts[parent + 1] += 1
        for position in range(count):
            starts[position + 1] += starts[position]
        fill = array("i", starts[:count])
        kids = array("i", bytes(4 * starts[count]))
        for position, parent in enumerate(self.parents):
            if parent >= 0:
                kids[fill[parent]] = position
                fill[parent] += 1
        return starts, kids

    def roots(self) -> list[int]:
        return [p for p, parent in enumerate(self.parents) if parent < 0]

    def context_positions(self, path: Sequence[int]) -> Sequence[int]:
        """The path positions that feed the context (pi's ``buildContextEntries``, as
        :func:`~pi_context.session.projection.build_context_entries`, on positions; an array,
        not a list of a million ints)."""
        codes = self.type_codes
        compaction = self.type_names.index("compaction") if "compaction" in self.type_names else -1
        last = -1
        if compaction >= 0:
            for spot in range(len(path) - 1, -1, -1):
                if codes[path[spot]] == compaction:
                    last = spot
                    break
        if last < 0:
            return path
        first_kept = self.entry(path[last]).get("firstKeptEntryId")
        start: int | None = None
        if isinstance(first_kept, str):
            target = self.positions.get(first_kept)
            start = next((i for i in range(last) if path[i] == target), None)
        out = array("i", [path[last]])
        if start is not None:
            out.extend(p for p in path[start:last] if not is_system_message(self.entry(p)))
        out.extend(path[last + 1 :])
        return out

    def context_edits(self, positions: Sequence[int]) -> dict[str, Entry]:
        """Target id → the winning ``context_edit`` among ``positions``."""
        if "context_edit" not in self.type_names:
            return {}
        code = self.type_names.index("context_edit")
        return context_edits_by_target(
            self.entry(p) for p in positions if self.type_codes[p] == code
        )


class IndexedPath(Sequence[Entry]):
    """A root→leaf path of a :class:`ColumnIndex` as a read-only sequence of entries, each
    read from the file when it is looked at (and not kept)."""

    __slots__ = ("_index", "positions")

    def __init__(self, index: ColumnIndex, positions: array[int]) -> None:
        self._index = index
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, item: int) -> Entry: ...

    @overload
    def __getitem__(self, item: slice) -> list[Entry]: ...

    def __getitem__(self, item: int | slice) -> Entry | list[Entry]:
        if isinstance(item, slice):
            return [self._index.entry(p) for p in self.positions[item]]
        return self._index.entry(self.positions[item])


def stream_indexed_context(
    index: ColumnIndex, path: Sequence[int]
) -> Iterator[tuple[Entry, AgentMessage]]:
    """:func:`~pi_context.session.projection.stream_context` of the path ``path`` (positions)
    of ``index``: each context entry is read from the file, projected and let go."""
    context = index.context_positions(path)
    edits = index.context_edits(context)
    for spot, position in enumerate(context):
        entry = index.entry(position)
        for message in context_item(entry, spot, edits).messages:
            yield entry, message

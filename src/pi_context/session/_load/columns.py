"""A session's entries as columns: one buffer of line bytes and a few numbers per entry.

One :class:`~pi_context.session.entries.Entry` object per line costs more than a small line
itself (the object, its id, its line, its number), so a file of a million small entries held
as objects takes more than twice its size before anything is decoded (benchmarks/README.md,
"Many small entries"). The loader
therefore keeps the entries it scanned as columns: their ids and parent ids (a parent is
usually the previous entry's id, the same string), type and role codes, line numbers, and
their lines without the head the first three spell again, back to back in one buffer.

An :class:`Entry` is made when an entry is asked for. The object made for a position stays
the one handed out for as long as anyone holds it (a weak map), and the most recently made
ones are kept a while longer; otherwise it is dropped with whatever it decoded, and made
again from its line when asked for next. Entries this process adds itself (appended, migrated
from a legacy file, appended by another process meanwhile, lines the scan had to decode) are
*pinned*: kept as the objects they are, as before; there are few of them, and an appended
entry's decoded data is what the agent just built.

The tree and the projection read the columns (:meth:`EntryColumns.type_at`, ``ids``,
``parent_ids``) to walk paths and pick context entries without making objects at all.
"""

from __future__ import annotations

import weakref
from array import array
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Final

from pi_context.session.entries import Entry
from pi_context.session.entry_store import IndexedView
from pi_context.session.problems import ProblemLog

__all__ = ["RECENT_ENTRIES", "EntryColumns"]

RECENT_ENTRIES: Final = 4096
"""How many of the most recently made entry objects are kept although nobody holds them (a
session smaller than this keeps every entry it has made, as if it held them all)."""

_MAX_CODES: Final = 255
"""Distinct type and role names the code columns can tell apart (a byte each); an entry with a
name beyond them (only a hostile file has that many) is pinned instead."""


class _ColumnEntry(Entry):
    """An entry made from the columns: it reads its line from them when it needs it (to
    decode, or for :attr:`Entry.raw`) instead of holding a copy beside the buffer."""

    __slots__ = ()

    def _line(self) -> bytes:
        home = self._home
        assert isinstance(home, EntryColumns)
        return home.line(self._pos)


class EntryColumns(IndexedView[Entry]):
    """The entries of one session in file order; see the module docstring.

    Indexing makes (or finds) the entry object of a position; the columns themselves answer
    what a walk over many entries needs without making any (they are the loaded session's
    :class:`~pi_context.session.entry_store.EntryStore`).
    """

    _what = "entry"

    __slots__ = (
        "_alive",
        "_buffer",
        "_codes",
        "_lines",
        "_log",
        "_names",
        "_pinned",
        "_recent",
        "_roles",
        "_starts",
        "_tails",
        "_types",
        "ids",
        "owned_by_tree",
        "parent_ids",
    )

    def __init__(self, log: ProblemLog | None = None) -> None:
        self.ids: list[str] = []
        """Each entry's id."""
        self.parent_ids: list[str | None] = []
        """Each entry's parent id as written (``None``: none)."""
        self._types = bytearray()
        self._roles = bytearray()
        self._names: list[str | None] = [None]
        self._codes: dict[str | None, int] = {None: 0}
        self._lines = array("i")
        self._starts = array("q", [0])
        self._buffer = bytearray()
        self._tails = bytearray()
        self._pinned: list[Entry | None] | None = None
        self._log = log
        self._recent: deque[Entry] = deque(maxlen=RECENT_ENTRIES)
        self._alive: weakref.WeakValueDictionary[int, Entry] = weakref.WeakValueDictionary()
        self.owned_by_tree = False
        """Whether a tree holds these columns as its own entries (another tree given them
        copies them instead)."""

    # -- building -------------------------------------------------------------------------

    def _code(self, name: str | None) -> int | None:
        code = self._codes.get(name)
        if code is None and len(self._names) <= _MAX_CODES:
            code = self._codes[name] = len(self._names)
            self._names.append(name)
        return code

    def add_scanned(
        self,
        type: str,
        id: str,
        parent_id: str | None,
        role: str | None,
        raw: bytes,
        line: int,
        cut: tuple[int, int, int] | None = None,
    ) -> None:
        """Add an entry the loader scanned without decoding: its ``type``, ``id``, parent,
        message ``role`` and line ``raw``, number ``line``.

        With ``cut`` ``(a, b, c)``, only ``raw[a:b]`` (the timestamp and its closing quote)
        and ``raw[c:]`` (what follows the role) are kept: the line starts
        ``{"type":"T","id":"I","parentId":P,"timestamp":"`` and has ``,"message":{"role":"R"``
        after the timestamp when ``role`` is given, which the (ASCII) fields spell again byte
        for byte (see :meth:`line`)."""
        type_code = self._code(type)
        role_code = self._code(role)
        if type_code is None or role_code is None:
            self.add(Entry.scanned(type, id, parent_id, role, raw, line, self._log))
            return
        self.ids.append(id)
        self.parent_ids.append(parent_id)
        self._types.append(type_code)
        self._roles.append(role_code)
        self._lines.append(line)
        buffer = self._buffer
        if cut is None:
            buffer += raw
        else:
            start, end, rest = cut
            buffer += raw[start:end]
            buffer += raw[rest:]
        self._starts.append(len(buffer))
        self._tails.append(cut is not None)
        if self._pinned is not None:
            self._pinned.append(None)

    def add(self, entry: Entry) -> int:
        """Add an entry object as it is (pinned); returns its position."""
        position = len(self.ids)
        self.ids.append(entry.id)
        self.parent_ids.append(entry.parent_id)
        self._types.append(0)
        self._roles.append(0)
        self._lines.append(0)
        self._starts.append(len(self._buffer))
        self._tails.append(False)
        if self._pinned is None:
            self._pinned = [None] * position
        self._pinned.append(entry)
        if entry._home is None:
            entry._home = self
            entry._pos = position
        return position

    def mark_unreadable(self, position: int, entry: Entry) -> None:
        """``entry`` (made from ``position``) turned out unreadable: pin it, so that its new
        type and whole line are what this position reads from now on."""
        pinned = self._pinned
        if pinned is None:
            pinned = self._pinned = [None] * len(self.ids)
        if pinned[position] is None:
            pinned[position] = entry

    # -- reading --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Entry]:
        entry = self.entry
        return (entry(position) for position in range(len(self.ids)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a is b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def entry(self, position: int) -> Entry:
        """The entry object of ``position`` (``0 <= position < len``), made if needed."""
        pinned = self._pinned
        if pinned is not None:
            found = pinned[position]
            if found is not None:
                return found
        made = self._alive.get(position)
        if made is None:
            made = _ColumnEntry.scanned(
                self._names[self._types[position]] or "",
                self.ids[position],
                self.parent_ids[position],
                self._names[self._roles[position]],
                b"",  # not held: read from the columns when needed
                self._lines[position],
                self._log,
            )
            made._home = self
            made._pos = position
            self._alive[position] = made
            self._recent.append(made)
        return made

    _at = entry

    def id_at(self, position: int) -> str:
        """The id of the entry at ``position``."""
        return self.ids[position]

    def line(self, position: int) -> bytes:
        """The JSON line of the entry at ``position`` as read (without making the entry)."""
        pinned = self._pinned
        if pinned is not None:
            found = pinned[position]
            if found is not None:
                return found.raw
        with memoryview(self._buffer) as view:  # released at once: the buffer still grows
            raw = view[self._starts[position] : self._starts[position + 1]].tobytes()
        if not self._tails[position]:
            return raw
        parent = self.parent_ids[position]
        role = self._names[self._roles[position]]
        timestamp = raw.index(b'"') + 1  # a timestamp holds no quote
        return b'{"type":"%b","id":"%b","parentId":%b,"timestamp":"%b%b%b' % (
            (self._names[self._types[position]] or "").encode("ascii"),
            self.ids[position].encode("ascii"),
            b"null" if parent is None else b'"%b"' % parent.encode("ascii"),
            raw[:timestamp],
            b"" if role is None else b',"message":{"role":"%b"' % role.encode("ascii"),
            raw[timestamp:],
        )

    def pinned(self, position: int) -> Entry | None:
        """The object of ``position`` when it is pinned (held as an object), else ``None``."""
        pinned = self._pinned
        return pinned[position] if pinned is not None else None

    def type_at(self, position: int) -> str:
        """The type of the entry at ``position``, as far as known without decoding it."""
        pinned = self._pinned
        if pinned is not None:
            found = pinned[position]
            if found is not None:
                return found.type
        return self._names[self._types[position]] or ""

    def role_at(self, position: int) -> str | None:
        """The message role of the entry at ``position`` when the loader read it (else
        ``None``: decode the entry to know)."""
        pinned = self._pinned
        if pinned is not None:
            found = pinned[position]
            if found is not None:
                return found.role
        return self._names[self._roles[position]]

    def positions_of_type(self, type: str) -> Iterator[int]:
        """Positions of the entries of ``type`` in file order (without making the others)."""
        code = self._codes.get(type)
        pinned = self._pinned
        types = self._types
        for position in range(len(self.ids)):
            found = pinned[position] if pinned is not None else None
            if found is not None:
                if found.type == type:
                    yield position
            elif types[position] == code:
                yield position

    def line_bytes(self) -> int:
        """Bytes of line text held in the buffer (the pinned entries' lines not counted)."""
        return len(self._buffer)

    def __repr__(self) -> str:
        return f"<EntryColumns {len(self.ids)} entries>"

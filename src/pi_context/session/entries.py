"""Session entries: one JSON line each, decoded lazily.

An :class:`Entry` knows its ``type``, ``id``, ``parent_id`` and, for message entries, the
message ``role`` without decoding the rest of its line; the full mapping is decoded on first
use of :attr:`Entry.data` and cached. Its line bytes are kept (by the entry, or by the
loaded session's columns an entry made from them reads its line from), so an entry read from
a file is written back byte for byte, whatever fields it holds.

Entries built in this process (see :func:`make_entry`) start from a mapping whose keys are in
the order pi writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, Protocol, cast

from pi_context import _json
from pi_context.messages import AgentMessage
from pi_context.session._load.checks import (
    CONTEXT_MAX_DEPTH,
    checked_entry,
    head_if_well_typed_and_shallow,
    nests_deeper_than,
    shallow_line,
)
from pi_context.session.problems import ProblemLog

__all__ = [
    "CONTEXT_MAX_DEPTH",
    "ENTRY_TYPES",
    "MODEL_VISIBLE_ROLES",
    "UNREADABLE",
    "Entry",
    "iso_now",
    "make_entry",
    "shallow_line",
]

ENTRY_TYPES: Final = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "context_edit",
        "usage",
    }
)
"""Entry types pi 1.6.0 writes. Others are kept and round-tripped, never interpreted."""

MODEL_VISIBLE_ROLES: Final = frozenset({"user", "assistant", "toolResult"})

UNREADABLE: Final = "unreadable"
"""The type an entry takes when its line turns out not to be readable JSON once decoded (a
torn line the fast scan let through), or nests deeper than :data:`CONTEXT_MAX_DEPTH`. pi drops
an unreadable line; here it stays in the tree under this type, which nothing interprets, so it
contributes nothing, and its original bytes stay in the file."""

_LEFT_OUT: Final = (
    f"nested deeper than {CONTEXT_MAX_DEPTH} levels: left out of the context (the line is kept)"
)

# Keys that pi writes before ``id`` for these types (JS insertion order).
_LEADING_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "custom": ("customType", "data"),
    "custom_message": ("customType", "content", "display", "details"),
}


class EntryHome(Protocol):
    """Where an entry read from a column store reports that its line turned out unreadable
    (its type changes for good, also for the next object made from that line)."""

    def mark_unreadable(self, position: int, entry: Entry) -> None: ...


def iso_now() -> str:
    """An entry timestamp: ISO-8601 UTC with milliseconds, as ``new Date().toISOString()``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _too_deep(raw: bytes | None, value: Any) -> bool:
    """Whether an entry nests deeper than :data:`CONTEXT_MAX_DEPTH` (its line, when known,
    answers most cases, see :func:`shallow_line`)."""
    if raw is not None and shallow_line(raw):
        return False
    return nests_deeper_than(value, CONTEXT_MAX_DEPTH)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else str(value)


class Entry:
    """One session entry (any line after the header).

    An entry read from a file is decoded on first use; its :attr:`data` is then the checked
    view of the line (see :mod:`~pi_context.session._load.checks`): fields of the wrong type are
    left out, and what was wrong goes to the file's :class:`ProblemLog` with the line number.
    A line that is not readable JSON after all makes the entry :data:`UNREADABLE`.
    """

    __slots__ = (
        "__weakref__",
        "_data",
        "_home",
        "_log",
        "_pos",
        "_raw",
        "id",
        "line",
        "parent_id",
        "role",
        "type",
    )

    def __init__(
        self,
        type: str,
        id: str,
        parent_id: str | None,
        *,
        role: str | None = None,
        raw: bytes | None = None,
        data: dict[str, Any] | None = None,
        line: int | None = None,
        log: ProblemLog | None = None,
    ) -> None:
        if raw is None and data is None:
            raise ValueError("an entry needs its raw line or its data")
        self.type = type
        self.id = id
        self.parent_id = parent_id
        self.role = role
        self.line = line
        self._log = log
        self._raw = raw
        self._data = data
        self._home: EntryHome | None = None
        """The column store this entry was read from or first added to (see
        :class:`~pi_context.session._load.columns.EntryColumns`), and its position there."""
        self._pos = -1

    @classmethod
    def from_data(
        cls,
        data: dict[str, Any],
        *,
        line: int | None = None,
        raw: bytes | None = None,
        log: ProblemLog | None = None,
    ) -> Entry:
        """An entry from a decoded mapping (its ``type``/``id``/``parentId`` are read off it).

        ``raw``, when given, is the line the mapping was decoded from (kept for a byte-exact
        round trip). With a ``log`` the mapping came from a file: it is checked (see
        :mod:`~pi_context.session._load.checks`) and its faults are logged.
        """
        if log is not None:
            vetted = _vetted(data, raw, line, log)
            if vetted is None:
                parent = data.get("parentId")
                entry = cls(
                    _text(data.get("type")),
                    _text(data.get("id")),
                    parent if isinstance(parent, str) else None,
                    raw=raw if raw is not None else _json.dumps(data),
                    line=line,
                    log=log,
                )
                entry._unreadable(_LEFT_OUT)
                return entry
            data = vetted
        message = data.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        parent = data.get("parentId")
        return cls(
            _text(data.get("type")),
            _text(data.get("id")),
            parent if isinstance(parent, str) else None,
            role=role if isinstance(role, str) else None,
            raw=raw,
            data=data,
            line=line,
            log=log,
        )

    @classmethod
    def scanned(
        cls,
        type: str,
        id: str,
        parent_id: str | None,
        role: str | None,
        raw: bytes,
        line: int,
        log: ProblemLog | None,
    ) -> Entry:
        """An entry from a line the loader scanned but did not decode (the fast path): its
        ``type``, ``id``, ``parent_id`` and message ``role`` as the scan read them, its whole
        line ``raw`` and line number ``line``."""
        entry = cls.__new__(cls)
        entry.type = type
        entry.id = id
        entry.parent_id = parent_id
        entry.role = role
        entry.line = line
        entry._log = log
        entry._raw = raw
        entry._data = None
        entry._home = None
        entry._pos = -1
        return entry

    @property
    def data(self) -> Mapping[str, Any]:
        """The full (checked) JSON mapping of the entry, decoded on first use and kept (the
        session's own: read it, do not change it; :meth:`copy` gives an entry to change)."""
        if self._data is None:
            self._data = self._decode()
        return self._data

    def peek(self) -> Mapping[str, Any]:
        """:attr:`data` without keeping it: for a pass over every entry of a large file (the
        decoded mapping of an entry costs many times its line)."""
        if self._data is not None:
            return self._data
        return self._decode()

    def forget(self) -> None:
        """Drop the decoded mapping of an entry read from a file (decoded again when next
        used); a pass over a large file calls this to keep only the lines in memory."""
        if self._raw is not None and self.type != UNREADABLE:
            self._data = None

    @property
    def readable(self) -> bool:
        """Decode the entry (if not done yet) and say whether its line was readable JSON.

        Code that acts on an entry's type before reading its fields (a compaction, a model
        change, a session name) asks this first: the type the fast scan read may turn into
        :data:`UNREADABLE` on decoding."""
        _ = self.data
        return self.type != UNREADABLE

    def _line(self) -> bytes:
        """The entry's JSON line as read."""
        assert self._raw is not None
        return self._raw

    def _decode(self) -> dict[str, Any]:
        line = self._line()
        try:
            value = _json.loads(line)
        except _json.JSONDepthError:
            return self._unreadable(_LEFT_OUT)
        except ValueError:
            return self._unreadable("not valid JSON (torn write?): skipped, as pi does")
        if not isinstance(value, dict):
            return self._unreadable("not a JSON object: skipped")
        vetted = _vetted(value, line, self.line, self._log)
        return self._unreadable(_LEFT_OUT) if vetted is None else vetted

    def leave_out_if_too_deep(self, log: ProblemLog, line: int | None) -> bool:
        """For an entry made in this process (a stored model reply): when it nests deeper than
        :data:`CONTEXT_MAX_DEPTH`, make it :data:`UNREADABLE` (left out of the context, as it
        would be once read back from the file) and report it to ``log`` as ``line``. Its JSON
        line is kept (written, forked, exported) unchanged. Returns whether it was left out."""
        text = self._line() if self._raw is not None else None
        if self._data is None or self.type == UNREADABLE or not _too_deep(text, self._data):
            return False
        _ = self.raw  # spelled from the data before the data is replaced
        self._log = log
        self.line = line
        self._unreadable(_LEFT_OUT)
        return True

    def _unreadable(self, why: str) -> dict[str, Any]:
        if type(self) is not Entry and self._raw is not None:
            # an entry that reads its line from its columns keeps it from now on, as it is
            # pinned there with its new type (see EntryColumns.mark_unreadable)
            self._raw = self._line()
            self.__class__ = Entry
        was = self.type
        self.type = UNREADABLE
        self.role = None
        data: dict[str, Any] = {"type": UNREADABLE, "id": self.id, "parentId": self.parent_id}
        self._data = data  # small, and the type change must stick
        if self._log is not None:
            self._log.add(self.line, f"{was} entry {self.id}: {why}", f"line {self.line}: {why}")
        if self._home is not None:
            self._home.mark_unreadable(self._pos, self)
        return data

    @property
    def raw(self) -> bytes:
        """The entry's JSON line without the trailing newline."""
        if self._raw is None:
            assert self._data is not None
            self._raw = _json.dumps(self._data)
        return self._line()

    @property
    def is_decoded(self) -> bool:
        return self._data is not None

    @property
    def timestamp(self) -> str | None:
        value = self.data.get("timestamp")
        return value if isinstance(value, str) else None

    @property
    def message(self) -> AgentMessage | None:
        """The message of a ``message`` entry, else ``None``."""
        if self.type != "message":
            return None
        value = self.data.get("message")
        return cast(AgentMessage, value) if isinstance(value, dict) else None

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def copy(self) -> Entry:
        """An independent copy, decoded from the entry's JSON line on first use: changing the
        copy's :attr:`data` leaves this entry as it is."""
        return Entry(
            self.type,
            self.id,
            self.parent_id,
            role=self.role,
            raw=self.raw,
            line=self.line,
            log=self._log,
        )

    def __repr__(self) -> str:
        role = f" {self.role}" if self.role else ""
        return f"<Entry {self.type}{role} {self.id} parent={self.parent_id}>"


def _vetted(
    data: dict[str, Any], raw: bytes | None, line: int | None, log: ProblemLog | None
) -> dict[str, Any] | None:
    """``data``, decoded from the line ``raw`` (when known), as the rest of the code reads it:
    ``None`` when it nests deeper than :data:`CONTEXT_MAX_DEPTH`; checked, its faults logged,
    when there is a ``log`` (an entry read from a file). A line the compiled check accepts
    (nearly all) is shallow and well-typed as it stands; the rest are measured and walked."""
    if log is not None and raw is not None and head_if_well_typed_and_shallow(raw) is not None:
        return data
    if _too_deep(raw, data):
        return None
    if log is None:
        return data
    fixed, faults = checked_entry(data)
    if faults:
        what = "; ".join(faults)
        log.add(line, f"{what} (the line is kept)", what)
    return fixed


def make_entry(
    type: str,
    id: str,
    parent_id: str | None,
    fields: Mapping[str, Any],
    *,
    timestamp: str | None = None,
) -> Entry:
    """Build a new entry with pi's key order; ``None`` values in ``fields`` are omitted.

    Keys go ``type, id, parentId, timestamp`` then ``fields`` in the given order, except for
    ``custom`` and ``custom_message`` entries, whose own fields come before ``id`` as pi writes
    them. Use an explicit ``...`` (Ellipsis) value to write a JSON ``null``.
    """
    data: dict[str, Any] = {"type": type}
    leading = _LEADING_KEYS.get(type, ())
    for key in leading:
        if key in fields and fields[key] is not None:
            data[key] = None if fields[key] is ... else fields[key]
    data["id"] = id
    data["parentId"] = parent_id
    data["timestamp"] = timestamp if timestamp is not None else iso_now()
    for key, value in fields.items():
        if key in leading or value is None:
            continue
        data[key] = None if value is ... else value
    return Entry.from_data(data)

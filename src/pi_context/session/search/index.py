"""A full-text index of a session's entries: a cache, never a source of truth.

The session file is the only record. The index (SQLite FTS5 from the standard library's
``sqlite3``, BM25 ranking, Porter stemming over Unicode words) is derived from it and can be
deleted at any time; it lives in the user's cache directory (:func:`default_cache_dir`), one
database per session file, and is rebuilt whenever it cannot be shown to describe the file.

**Keyed by the bytes it read.** The index records how far into the file it has read (the end of
the last complete line), a digest of the header line (the session's id and start time) and a
fingerprint of the file up to that offset (its inode, the bytes just before the offset and
samples spread over the rest). Before every query the file is checked: when it still starts
with the same header, is at least that long and shows the same fingerprint, only the lines
appended since are read and indexed (appends are what a session does); otherwise (the file was
rewritten, truncated, replaced by another session, or the cache is damaged or from another
version) the index is rebuilt from the file. Each hit's line is read back from the file to show
it, and a line that is not the entry the index expects there also rebuilds the index. A torn
last line is not indexed until it is finished.

Sessions without a current v3 file (in memory, not written yet, or a legacy file migrated in
memory, whose entry ids exist only in this process) are indexed from their entries into an
in-memory database instead, caught up by entry count.

The index also keeps each entry's place in the tree (id, parent, type, the entry a compaction,
branch summary or context edit points at), so a search needs neither the decoded session nor
the file beyond the lines of the hits it shows.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pi_context import _json
from pi_context.errors import SessionError
from pi_context.session._file.opening import open_regular
from pi_context.session.entries import Entry
from pi_context.session.search.text import entry_text

__all__ = [
    "IndexedEntries",
    "SearchIndex",
    "StaleIndexError",
    "default_cache_dir",
    "index_path_for",
]

SCHEMA_VERSION: Final = "pi-context search 2"
"""Changes whenever what is indexed or how changes: an index of another version is rebuilt."""

_TAIL_BYTES: Final = 64
_SAMPLES: Final = 64
_SAMPLE_BYTES: Final = 256
_CHUNK: Final = 8 << 20
_BATCH: Final = 2_000
_MAX_HEADER: Final = 16 << 20
_BUSY_TIMEOUT: Final = 10.0

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS entries("
    " row INTEGER PRIMARY KEY, id TEXT, parent TEXT, type TEXT, role TEXT, timestamp TEXT,"
    " ref TEXT, offset INTEGER, length INTEGER, digest TEXT)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS body USING fts5("
    " text, content='', tokenize='porter unicode61 remove_diacritics 2')",
)


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pi-context/search`` (``~/.cache/pi-context/search`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pi-context" / "search"


def index_path_for(session_file: str | os.PathLike[str], cache_dir: Path) -> Path:
    """The index database of ``session_file`` in ``cache_dir``: named by a digest of the
    file's absolute path, so two sessions never share one."""
    absolute = os.path.abspath(os.fspath(session_file))
    digest = hashlib.sha256(absolute.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir / f"{digest}.sqlite3"


def _ref_of(data: Mapping[str, Any]) -> str | None:
    """The entry a structural entry points at (what it replaces or summarizes)."""
    kind = data.get("type")
    key = {"compaction": "firstKeptEntryId", "branch_summary": "fromId"}.get(str(kind))
    if key is None and kind == "context_edit":
        key = "targetId"
    value = data.get(key) if key is not None else None
    return value if isinstance(value, str) else None


_Row = tuple[tuple[Any, ...], str | None, int, int, str | None]
"""An entry's columns, its text, and where its line is (offset, length, digest)."""


def _entry_row(data: Any) -> tuple[tuple[Any, ...], str | None] | None:
    """``(entry columns, text)`` of a decoded line, or ``None`` when it is no entry."""
    if not isinstance(data, Mapping):
        return None
    entry_id = data.get("id")
    kind = data.get("type")
    if not isinstance(entry_id, str) or not isinstance(kind, str) or kind == "session":
        return None
    parent = data.get("parentId")
    stamp = data.get("timestamp")
    found = entry_text(data)
    role = found[0] if found is not None else None
    columns = (
        _storable(entry_id),
        _storable(parent) if isinstance(parent, str) else None,
        _storable(kind),
        _storable(role) if role is not None else None,
        _storable(stamp) if isinstance(stamp, str) else None,
        _storable(ref) if (ref := _ref_of(data)) is not None else None,
    )
    return columns, (_storable(found[1]) if found is not None else None)


def _storable(text: str) -> str:
    """``text`` as SQLite can store it: a lone surrogate (JSON can spell one, UTF-8 cannot)
    becomes ``?``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


class StaleIndexError(SessionError):
    """A line read back from the file is not the one indexed: the file changed in a way the
    fingerprint did not show. The index must be rebuilt (:meth:`SearchIndex.rebuild`)."""


@dataclass(slots=True)
class IndexedEntries:
    """Every indexed entry's place in the tree, in file order (the row number is the index
    into each list); shared with the search so it needs no second copy."""

    ids: list[str] = field(default_factory=list)
    parents: list[str | None] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    roles: list[str | None] = field(default_factory=list)
    timestamps: list[str | None] = field(default_factory=list)
    refs: list[str | None] = field(default_factory=list)
    by_id: dict[str, int] = field(default_factory=dict)
    """Entry id → row (the later row when a file repeats an id, as the session does)."""

    def add(self, columns: Sequence[Any]) -> None:
        entry_id, parent, kind, role, stamp, ref = columns[:6]
        self.by_id[entry_id] = len(self.ids)
        self.ids.append(entry_id)
        self.parents.append(parent)
        self.types.append(kind)
        self.roles.append(role)
        self.timestamps.append(stamp)
        self.refs.append(ref)

    def __len__(self) -> int:
        return len(self.ids)


class SearchIndex:
    """The index of one session: a session file's (cached on disk) or a list of entries'.

    Use :meth:`for_file` or :meth:`for_entries`, call :meth:`refresh` (file) or
    :meth:`catch_up` (entries) before each query, then :meth:`rank`.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        *,
        file: Path | None,
        database: Path | None,
        entries: list[Entry] | None = None,
    ) -> None:
        self._db = connection
        self.file = file
        """The session file indexed (``None`` for an index of entries)."""
        self.database = database
        """Where the index is stored (``None``: in memory only)."""
        self._entries = entries
        self.structure = IndexedEntries()
        self._offsets: list[int] = []
        self._lengths: list[int] = []
        self._digests: list[str | None] = []
        self.rebuilds = 0
        self.memo: dict[str, object] = {}
        """What a search derived from :attr:`structure` and keeps for the next one (it checks
        the structure's length itself: the index only grows between rebuilds)."""
        """How many times this object found the index stale (or missing) and rebuilt it."""

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def for_file(cls, file: str | os.PathLike[str], cache_dir: Path | None = None) -> SearchIndex:
        """The index of a v3 session file, kept in ``cache_dir`` (:func:`default_cache_dir`
        when ``None``). An index that cannot be stored there (a read-only or unusable cache
        directory) is kept in memory for this object's life instead."""
        path = Path(file)
        database = index_path_for(path, cache_dir or default_cache_dir())
        connection = _connect_cache(database)
        if connection is None:
            return cls(_connect(":memory:"), file=path, database=None)
        return cls(connection, file=path, database=database)

    @classmethod
    def for_entries(cls) -> SearchIndex:
        """An in-memory index fed from a session's entries (:meth:`catch_up`)."""
        return cls(_connect(":memory:"), file=None, database=None, entries=[])

    def close(self) -> None:
        self._db.close()

    # -- keeping up with the source ---------------------------------------------------------

    def refresh(self) -> None:
        """Bring the index of a file up to the file's current end (see the module docstring);
        raises :class:`~pi_context.errors.SessionError` when the file cannot be read."""
        if self.file is None:
            raise ValueError("refresh() is for an index of a file; use catch_up()")
        try:
            with open_regular(self.file) as (handle, size):
                self._refresh(handle.fileno(), size)
        except FileNotFoundError as exc:
            raise SessionError("no such session file", path=self.file) from exc
        except OSError as exc:
            raise SessionError(f"cannot read session file: {exc.strerror}", path=self.file) from exc
        except sqlite3.Error as exc:
            raise SessionError(f"search index unusable: {exc}", path=self.database) from exc

    def catch_up(self, entries: Sequence[Entry]) -> None:
        """Index the entries not indexed yet (an entries index grows with its session)."""
        if self._entries is None:
            raise ValueError("catch_up() is for an index of entries; use refresh()")
        start = len(self._entries)
        if start == 0 and len(self.structure) == 0:
            self.rebuilds += 1
        rows: list[_Row] = []
        for position in range(start, len(entries)):
            entry = entries[position]
            self._entries.append(entry)
            found = _entry_row(entry.peek()) if entry.readable else None
            if found is None:
                found = ((entry.id, entry.parent_id, entry.type, None, None, None), None)
            rows.append((found[0], found[1], position, -1, None))
        if rows:
            self._db.execute("BEGIN")
            try:
                self._insert(rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _refresh(self, fd: int, size: int) -> None:
        header = _read_header(fd, size)
        if header is None:  # empty, or no complete first line yet: nothing to index
            with self._db:
                self._clear()
            return
        header_digest = hashlib.sha256(header).hexdigest()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            start = self._resume_offset(meta, fd, size, header_digest)
            if start is None:
                self._clear()
                start = len(header) + 1
                self._set_meta(header_digest, start, fd)
                self.rebuilds += 1
            else:
                (rows,) = db.execute("SELECT count(*) FROM entries").fetchone()
                if rows != len(self.structure):  # new here, or another process indexed more
                    self._load_structure()
            end = self._index_lines(fd, start, size)
            if end != start:
                self._set_meta(header_digest, end, fd)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def _resume_offset(
        self, meta: dict[str, str], fd: int, size: int, header_digest: str
    ) -> int | None:
        """Where indexing resumes, or ``None`` when the index does not describe this file."""
        if meta.get("schema") != SCHEMA_VERSION or meta.get("header") != header_digest:
            return None
        if meta.get("file") != os.path.abspath(self.file or ""):
            return None
        try:
            offset = int(meta.get("offset", ""))
        except ValueError:
            return None
        if offset > size or offset <= 0:
            return None
        if _fingerprint(fd, offset) != meta.get("fingerprint"):
            return None
        return offset

    def _set_meta(self, header_digest: str, offset: int, fd: int) -> None:
        values = {
            "schema": SCHEMA_VERSION,
            "file": os.path.abspath(self.file or ""),
            "header": header_digest,
            "offset": str(offset),
            "fingerprint": _fingerprint(fd, offset),
        }
        self._db.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items()
        )

    def _clear(self) -> None:
        db = self._db
        db.execute("DELETE FROM meta")
        db.execute("DELETE FROM entries")
        db.execute("INSERT INTO body(body) VALUES ('delete-all')")
        self.structure = IndexedEntries()
        self._offsets = []
        self._lengths = []
        self._digests = []
        self.memo.clear()

    def _load_structure(self) -> None:
        query = (
            "SELECT id, parent, type, role, timestamp, ref, offset, length, digest"
            " FROM entries ORDER BY row"
        )
        rows = self._db.execute(query).fetchall()
        self.memo.clear()
        if not rows:
            self.structure, self._offsets, self._lengths, self._digests = (
                IndexedEntries(),
                [],
                [],
                [],
            )
            return
        columns = [list(c) for c in zip(*rows, strict=True)]
        ids, parents, types, roles, stamps, refs, offsets, lengths, digests = columns
        by_id = dict(zip(ids, range(len(ids)), strict=True))
        self.structure = IndexedEntries(ids, parents, types, roles, stamps, refs, by_id)
        self._offsets = offsets
        self._lengths = lengths
        self._digests = digests

    def _index_lines(self, fd: int, start: int, size: int) -> int:
        """Index the complete lines in ``[start, size)``; returns the end of the last one."""
        position = start
        pending = b""
        pending_at = start
        rows: list[_Row] = []
        while position < size:
            chunk = os.pread(fd, min(_CHUNK, size - position), position)
            if not chunk:
                break
            position += len(chunk)
            data = pending + chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                continue
            line_at = pending_at
            for line in data[:cut].split(b"\n"):
                found = _decode_line(line)
                if found is not None:
                    rows.append((found[0], found[1], line_at, len(line), _line_digest(line)))
                line_at += len(line) + 1
                if len(rows) >= _BATCH:
                    self._insert(rows)
                    rows = []
            pending = data[cut + 1 :]
            pending_at = line_at
        self._insert(rows)
        return pending_at

    def _insert(self, rows: list[_Row]) -> None:
        if not rows:
            return
        first = len(self.structure)
        self._db.executemany(
            "INSERT INTO entries(row, id, parent, type, role, timestamp, ref, offset, length,"
            " digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(first + i, *columns, *place) for i, (columns, _, *place) in enumerate(rows)],
        )
        self._db.executemany(
            "INSERT INTO body(rowid, text) VALUES (?, ?)",
            [(first + i, row[1]) for i, row in enumerate(rows) if row[1] is not None],
        )
        for columns, _, at, length, digest in rows:
            self.structure.add(columns)
            self._offsets.append(at)
            self._lengths.append(length)
            self._digests.append(digest)

    def rebuild(self) -> None:
        """Forget what the index holds and index the source again."""
        if self.file is None:
            return  # an index of entries is built from the entries themselves
        with self._db:
            self._db.execute("DELETE FROM meta")
        self.refresh()

    # -- reading -------------------------------------------------------------------------------

    def rank(self, match: str) -> Iterator[tuple[int, float]]:
        """``(row, score)`` of every entry matching an FTS5 ``match`` expression, best first
        (the score is BM25's, higher is better)."""
        try:
            cursor = self._db.execute(
                "SELECT rowid, bm25(body) FROM body WHERE body MATCH ? ORDER BY bm25(body)",
                (match,),
            )
            for row, score in cursor:
                yield int(row), -float(score)
        except sqlite3.Error as exc:
            raise SessionError(f"search failed: {exc}", path=self.file) from exc

    def entry_data(self, row: int) -> Mapping[str, Any] | None:
        """The decoded entry at ``row``, read again from its source (the file's line)."""
        if self._entries is not None:
            entry = self._entries[row]
            return entry.data if entry.readable else None
        if self.file is None:
            return None
        try:
            with open_regular(self.file) as (handle, size):
                at, length = self._offsets[row], self._lengths[row]
                line = os.pread(handle.fileno(), length, at) if at + length <= size else b""
        except OSError:
            line = b""
        if _line_digest(line) != self._digests[row]:
            raise StaleIndexError(f"line at byte {at} is not the entry indexed there")
        try:
            data = _json.loads(line)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def lines_of(self, rows: Sequence[int]) -> Iterator[tuple[int, Mapping[str, Any] | None]]:
        """:meth:`entry_data` of several rows."""
        for row in rows:
            yield row, self.entry_data(row)


def _line_digest(line: bytes) -> str:
    return hashlib.blake2b(line, digest_size=8).hexdigest()


def _fingerprint(fd: int, offset: int) -> str:
    """A digest of the file's identity and of samples of its first ``offset`` bytes: the
    bytes just before ``offset`` and :data:`_SAMPLES` blocks spread evenly before them. A file
    replaced by a rename (a new inode) or rewritten in place shows a different one (a rewrite
    that only changes bytes between the samples is caught when a hit's line is read back)."""
    info = os.fstat(fd)
    digest = hashlib.blake2b(f"{info.st_dev}:{info.st_ino}:{offset}".encode(), digest_size=16)
    step = max(offset // _SAMPLES, 1)
    for start in range(0, offset, step):
        digest.update(os.pread(fd, min(_SAMPLE_BYTES, offset - start), start))
    tail_start = max(0, offset - _TAIL_BYTES)
    digest.update(os.pread(fd, offset - tail_start, tail_start))
    return digest.hexdigest()


def _decode_line(line: bytes) -> tuple[tuple[Any, ...], str | None] | None:
    if not line.strip():
        return None
    try:
        data = _json.loads(line)
    except ValueError:
        return None
    return _entry_row(data)


def _read_header(fd: int, size: int) -> bytes | None:
    """The first line (without its newline) when it is complete; ``None`` otherwise."""
    if size == 0:
        return None
    head = b""
    position = 0
    while position < min(size, _MAX_HEADER):
        chunk = os.pread(fd, min(1 << 16, size - position), position)
        if not chunk:
            return None
        cut = chunk.find(b"\n")
        if cut >= 0:
            return head + chunk[:cut]
        head += chunk
        position += len(chunk)
    return None


def _connect(target: str) -> sqlite3.Connection:
    connection = sqlite3.connect(target, timeout=_BUSY_TIMEOUT, isolation_level=None)
    for statement in _SCHEMA:
        connection.execute(statement)
    return connection


_Opener = Callable[[str], sqlite3.Connection]


def _connect_cache(database: Path, opener: _Opener = _connect) -> sqlite3.Connection | None:
    """The cache database, created if missing; a damaged one is removed and made anew.
    ``None`` when the cache directory cannot hold it."""
    try:
        database.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    for _attempt in range(2):
        try:
            connection = opener(str(database))
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("SELECT count(*) FROM meta").fetchone()
            return connection
        except sqlite3.DatabaseError:
            with contextlib.suppress(OSError):
                database.unlink()
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(OSError):
                    Path(str(database) + suffix).unlink()
        except OSError:
            return None
    return None

"""What every session store shares: refs, results, the stored file's lines, and the entry rules.

A stored session is a pi JSONL file, whatever holds it: the header line (with any lines before
it), then one line per entry, in append order. Every store keeps those lines byte for byte, so
an imported file exports as it was, and a store loads a session by reading those bytes with the
session package's own reader (:meth:`StoredSession.session`): the projection rules live there
once. An append adds lines exactly as a session file's append does (an unterminated last line
is finished with ``" \\n"`` first).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from pi_context import _json
from pi_context.errors import (
    InvalidEntryError,
    SessionFormatError,
    StoreError,
)
from pi_context.session._file.writer import appended_bytes
from pi_context.session._load.scan import (
    CURRENT_VERSION,
    ScanResult,
    SplitBytes,
    scan_lines,
)
from pi_context.session._pending import PendingEntries
from pi_context.session.entries import Entry
from pi_context.session.problems import LoadProblem, bounded
from pi_context.session.search.text import SNIPPET_CHARS, entry_text
from pi_context.session.store import Session

if TYPE_CHECKING:
    from types import TracebackType

    from pi_context.session.search.query import SearchHit

__all__ = [
    "ANY_LEAF",
    "MAX_ENTRY_BYTES",
    "AppendResult",
    "Lease",
    "PreparedEntry",
    "SessionPage",
    "SessionRef",
    "SessionStore",
    "SessionSummary",
    "StoredSession",
    "TenantHit",
    "append_lines",
    "best_hits",
    "check_batch",
    "entry_meta",
    "parse_file",
    "prepare_entries",
]

_T = TypeVar("_T")

MAX_ENTRY_BYTES: Final = 64 << 20
"""The longest entry line (bytes, without its newline) any store accepts."""

INDEXED_CHARS: Final = 100_000
"""Characters of an entry's text a full-text index reads (a PostgreSQL tsvector holds at most
1 MB; a longer text is indexed by its head, and the append never fails for its length)."""


class _AnyLeaf:
    def __repr__(self) -> str:
        return "ANY_LEAF"


ANY_LEAF: Final = _AnyLeaf()
"""``if_leaf``'s default: append whatever the session's leaf is."""

_TENANT: Final = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,127})?")


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A stored session: its tenant (part of every key; ``""`` by default) and its id (the
    header's ``id``)."""

    tenant: str
    id: str

    def __str__(self) -> str:
        return f"{self.tenant}/{self.id}" if self.tenant else self.id


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append stored: the session's new leaf and each entry's sequence number (its
    place in the session's append order, from 1, without gaps)."""

    leaf_id: str | None
    seqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of :meth:`SessionStore.list_sessions` (no entry bodies are read for it)."""

    ref: SessionRef
    entries: int
    """Lines after the header (entries, and any damaged lines an imported file had)."""
    leaf_id: str | None
    updated: float | None
    """Unix seconds of the last write, where the store knows it."""


@dataclass(frozen=True, slots=True)
class SessionPage:
    """A page of sessions, ordered by id; ``cursor`` asks for the next page (``None``: last)."""

    sessions: list[SessionSummary]
    cursor: str | None


class StoredSession:
    """A loaded session: its file bytes, the header, and every entry (decoded, append order).

    ``problems`` are the reader's, by file line, as for a session file.

    The bytes are parsed once: :meth:`session` hands the parsed entries to the session it
    builds (whose tree appends to them), and reading :attr:`scan`, :attr:`header` or
    :attr:`entries` after that parses the bytes again rather than share them.
    """

    __slots__ = ("_data", "_leaf", "_scan", "ref")

    def __init__(
        self, ref: SessionRef, data: bytes | SplitBytes, scan: ScanResult | None = None
    ) -> None:
        self.ref = ref
        self._data = data
        """The file's bytes, or its lines until :attr:`data` joins them."""
        self._scan = scan
        self._leaf: str | _Unread | None = _UNREAD

    @property
    def data(self) -> bytes:
        """The stored file's bytes."""
        data = self._data
        if isinstance(data, SplitBytes):
            data = self._data = data.join()
        return data

    @property
    def size(self) -> int:
        """``len(data)``, without joining lines into bytes to know it."""
        return len(self._data)

    @property
    def scan(self) -> ScanResult:
        """The reader's view of :attr:`data`."""
        scan = self._scan
        if scan is None:
            scan = self._scan = parse_file(self._data, str(self.ref))
        return scan

    @property
    def header(self) -> dict[str, Any]:
        header = self.scan.header
        assert header is not None
        return header

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [dict(e.data) for e in self.scan.entries]

    @property
    def problems(self) -> list[LoadProblem]:
        """What the session package reports for the file: skipped lines, tree repairs."""
        return self.session().problems

    @property
    def leaf_id(self) -> str | None:
        leaf = self._leaf
        if isinstance(leaf, _Unread):
            leaf = self._leaf = _leaf_of(self.scan)
        return leaf

    def session(
        self,
        *,
        storage: PendingEntries | None = None,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> Session:
        """The session as :meth:`Session.open` reads its file, held in memory. Its appends are
        not stored (append through the store), unless ``storage`` queues them for a
        :class:`~pi_context.store.StoreBinding` to commit; ``ids`` and ``clock`` are
        :class:`Session`'s.

        The first call takes the entries :attr:`scan` parsed (no second parse); a later call
        parses the bytes anew, so two sessions never share what their trees append to."""
        scan = self.scan
        if isinstance(self._leaf, _Unread):
            self._leaf = _leaf_of(scan)  # read while the parsed entries are still this object's
        self._scan = None
        return Session.from_scan(scan, storage=storage, ids=ids, clock=clock)

    def __repr__(self) -> str:
        return f"StoredSession(ref={self.ref!r}, data=<{self.size} bytes>)"


class _Unread:
    pass


_UNREAD: Final = _Unread()


def _leaf_of(scan: ScanResult) -> str | None:
    entries = scan.entries
    return entries[-1].id if len(entries) else None


OFF_LOOP_BYTES: Final = 64 << 10
"""Stored bytes from which a session is parsed (and its tree built) on a worker thread, the
event loop running on meanwhile; a smaller session is parsed in less time than the hop."""


async def off_loop(size: int, fn: Callable[[], _T]) -> _T:
    """``fn()``: on a worker thread when it works on ``size`` bytes of at least
    :data:`OFF_LOOP_BYTES`, else at once on the caller's loop."""
    if size >= OFF_LOOP_BYTES:
        return await asyncio.to_thread(fn)
    return fn()


@dataclass(frozen=True, slots=True)
class TenantHit:
    """One hit of :meth:`SessionStore.search_tenant`: the session it is in, and the hit as
    :meth:`SessionStore.search` gives it for that session (its current branch, what replaced
    the entry in the model's context)."""

    ref: SessionRef
    hit: SearchHit


def best_hits(hits: Sequence[TenantHit], limit: int) -> list[TenantHit]:
    """The ``limit`` best of hits from several sessions: by score, then by session id and
    each session's own order."""
    order = {id(h): n for n, h in enumerate(hits)}
    ranked = sorted(hits, key=lambda h: (-h.hit.score, h.ref.id, order[id(h)]))
    return ranked[: max(0, limit)]


async def search_sessions(
    store: SessionStore,
    tenant: str,
    query: str,
    *,
    limit: int,
    all_branches: bool,
    snippet_chars: int,
) -> list[TenantHit]:
    """A tenant-wide search made of one :meth:`SessionStore.search` per session of the
    tenant (the memory and file stores: each session ranks its own hits, BM25)."""
    check_tenant(tenant)
    if limit <= 0:
        return []
    hits: list[TenantHit] = []
    cursor: str | None = None
    while True:
        page = await store.list_sessions(tenant=tenant, limit=500, cursor=cursor)
        for summary in page.sessions:
            found = await store.search(
                summary.ref,
                query,
                limit=limit,
                all_branches=all_branches,
                snippet_chars=snippet_chars,
            )
            hits += [TenantHit(summary.ref, hit) for hit in found]
        if page.cursor is None:
            return best_hits(hits, limit)
        cursor = page.cursor


def parse_file(data: bytes | SplitBytes, where: str) -> ScanResult:
    """The reader's view of a stored file's bytes (or its lines: :class:`SplitBytes`); a file
    without a session header (or whose header has no id) is an error naming ``where``."""
    scan = scan_lines(data, path=where)
    if scan.header is None:
        raise SessionFormatError("not a valid pi session (no session header line)", path=where)
    if not isinstance(scan.header.get("id"), str) or not scan.header["id"]:
        raise SessionFormatError("the session header has no id", path=where)
    return scan


def check_tenant(tenant: str) -> None:
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise StoreError(
            f"invalid tenant {bounded(repr(tenant), 80)}: letters, digits, '.', '_', '-' "
            "(at most 128, not starting with a punctuation mark)"
        )


@dataclass(frozen=True, slots=True)
class PreparedEntry:
    """An entry ready to store: its line and the fields a store indexes."""

    id: str
    parent_id: str | None
    type: str
    line: bytes
    role: str | None
    timestamp: str | None
    ref: str | None
    text: str | None
    """The searchable text, at most :data:`INDEXED_CHARS` characters."""


def _ref_of(data: Mapping[str, Any]) -> str | None:
    """The entry a structural entry points at (what it replaces or summarizes)."""
    key = {
        "compaction": "firstKeptEntryId",
        "branch_summary": "fromId",
        "context_edit": "targetId",
    }.get(str(data.get("type")))
    value = data.get(key) if key is not None else None
    return value if isinstance(value, str) else None


def entry_meta(line: bytes) -> PreparedEntry | None:
    """The indexed fields of a stored line, or ``None`` when the line is no entry (blank,
    not JSON, not an object with a string ``type`` and ``id``), as the search index reads it."""
    try:
        data = _json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    entry_id, kind = data.get("id"), data.get("type")
    if not isinstance(entry_id, str) or not isinstance(kind, str) or kind == "session":
        return None
    return _prepared(data, line)


def _prepared(data: Mapping[str, Any], line: bytes) -> PreparedEntry:
    parent = data.get("parentId")
    stamp = data.get("timestamp")
    found = entry_text(data)
    return PreparedEntry(
        id=data["id"],
        parent_id=parent if isinstance(parent, str) else None,
        type=data["type"],
        line=line,
        role=found[0] if found is not None else None,
        timestamp=stamp if isinstance(stamp, str) else None,
        ref=_ref_of(data),
        text=found[1][:INDEXED_CHARS] if found is not None else None,
    )


def _entry_name(number: int, entry_id: object) -> str:
    """How an error names the ``number``-th entry of a batch (built only for an error)."""
    shown = f" (id {bounded(repr(entry_id), 80)})" if isinstance(entry_id, str) else ""
    return f"entry {number} of the batch{shown}"


def prepare_entries(entries: Sequence[Mapping[str, Any] | Entry]) -> list[PreparedEntry]:
    """Each entry's line and indexed fields, after the rules every store applies: an object
    with a string ``type`` (not ``session``) and ``id``, a string or null ``parentId``, ids
    unique in the batch, a line of at most :data:`MAX_ENTRY_BYTES`. The first broken rule is an
    :class:`InvalidEntryError` naming the entry; nothing is stored."""
    prepared: list[PreparedEntry] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        if isinstance(entry, Entry):
            data: Mapping[str, Any] = entry.data
            line = entry.raw
        elif isinstance(entry, Mapping):
            data = entry
            line = b""
        else:
            raise InvalidEntryError(f"entry {number} of the batch is not a JSON object")
        entry_id, kind = data.get("id"), data.get("type")
        if not isinstance(kind, str) or not kind or kind == "session":
            raise InvalidEntryError(
                f"{_entry_name(number, entry_id)}: no entry type (a string 'type', not 'session')"
            )
        if not isinstance(entry_id, str) or not entry_id:
            raise InvalidEntryError(
                f"{_entry_name(number, entry_id)}: no entry id (a non-empty string 'id')"
            )
        parent = data.get("parentId")
        if parent is not None and not isinstance(parent, str):
            raise InvalidEntryError(
                f"{_entry_name(number, entry_id)}: 'parentId' is neither a string nor null"
            )
        if entry_id in seen:
            raise InvalidEntryError(
                f"{_entry_name(number, entry_id)}: the id occurs twice in the batch"
            )
        seen.add(entry_id)
        if not line:
            try:
                line = _json.dumps(data if type(data) is dict else dict(data))
            except (TypeError, ValueError) as exc:
                raise InvalidEntryError(
                    f"{_entry_name(number, entry_id)}: not JSON-serializable: {exc}"
                ) from exc
        if len(line) > MAX_ENTRY_BYTES:
            raise InvalidEntryError(
                f"{_entry_name(number, entry_id)}: its line is {len(line)} bytes, "
                f"over the {MAX_ENTRY_BYTES} a store accepts"
            )
        if b"\n" in line:
            raise InvalidEntryError(
                f"{_entry_name(number, entry_id)}: its line holds a raw newline"
            )
        prepared.append(_prepared(data, line))
    if not prepared:
        raise InvalidEntryError("an append needs at least one entry")
    return prepared


def check_batch(
    batch: Sequence[PreparedEntry],
    stored_line: Mapping[str, bytes] | None,
    known: Any,
) -> list[int] | None:
    """The common rules against what a session holds: ``stored_line(id)`` gives a stored
    entry's line; ``known`` is a container of stored ids. Returns the indices (in the batch)
    of entries already stored with the same bytes when *every* entry is (a retry), ``None``
    when none is; raises :class:`InvalidEntryError` otherwise (a reused id, a missing parent)."""
    assert stored_line is not None
    already = [i for i, e in enumerate(batch) if e.id in known]
    for i in already:
        entry = batch[i]
        if stored_line[entry.id] != entry.line:
            raise InvalidEntryError(
                f"entry {i + 1} of the batch (id {bounded(repr(entry.id), 80)}): "
                "the id is already stored with other content"
            )
    if already:
        if len(already) != len(batch):
            first = batch[already[0]]
            raise InvalidEntryError(
                f"entry {already[0] + 1} of the batch (id {bounded(repr(first.id), 80)}): "
                "already stored, but the batch's other entries are not (a retry must repeat "
                "the same batch)"
            )
        return already
    in_batch: set[str] = set()
    for i, entry in enumerate(batch):
        if (
            entry.parent_id is not None
            and entry.parent_id not in in_batch
            and entry.parent_id not in known
        ):
            raise InvalidEntryError(
                f"entry {i + 1} of the batch (id {bounded(repr(entry.id), 80)}): its parentId "
                f"{bounded(repr(entry.parent_id), 80)} names no entry of the session"
            )
        in_batch.add(entry.id)
    return None


def append_lines(data: bytes, lines: Sequence[bytes]) -> bytes:
    """The file bytes after appending ``lines`` as a session file's append writes them."""
    return data + appended_bytes(lines, after_newline=not data or data.endswith(b"\n"))


def stored_view(ref: SessionRef, data: bytes | SplitBytes) -> StoredSession:
    return StoredSession(ref, data, parse_file(data, str(ref)))


async def load_view(ref: SessionRef, data: bytes | SplitBytes) -> StoredSession:
    """:func:`stored_view`, parsed off the event loop when the session is large
    (:func:`off_loop`)."""
    return await off_loop(len(data), lambda: stored_view(ref, data))


class Lease:
    """One holder's claim on a session for an agent turn (``async with store.lease(...)``):
    a second holder gets :class:`~pi_context.errors.SessionBusyError` at once; a lease whose
    owner died expires after ``ttl`` seconds; leaving the block releases it."""

    def __init__(self, store: SessionStore, ref: SessionRef, owner: str, ttl: float) -> None:
        if ttl <= 0:
            raise StoreError("a lease's ttl must be positive seconds")
        self.store = store
        self.ref = ref
        self.owner = owner
        self.ttl = ttl
        self.token = os.urandom(16).hex()
        self.held = False

    async def __aenter__(self) -> Lease:
        await self.store._acquire(self)
        self.held = True
        return self

    async def renew(self) -> None:
        """Extend the lease by ``ttl`` from now (still held: else ``SessionBusyError``)."""
        await self.store._acquire(self)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.held:
            self.held = False
            await self.store._release(self)


class SessionStore(Protocol):
    """The operations every store offers (see :mod:`pi_context.store`)."""

    url: str

    async def migrate(self) -> None: ...

    async def create(
        self, *, tenant: str = "", cwd: str, session_id: str | None = None
    ) -> SessionRef: ...

    async def import_jsonl(
        self, path: str | os.PathLike[str], *, tenant: str = ""
    ) -> SessionRef: ...

    async def import_bytes(
        self, data: bytes, *, tenant: str = "", where: str = ""
    ) -> SessionRef: ...

    async def export_jsonl(self, ref: SessionRef, out_path: str | os.PathLike[str]) -> None: ...

    async def export_bytes(self, ref: SessionRef) -> bytes: ...

    async def append(
        self,
        ref: SessionRef,
        entries: Sequence[Mapping[str, Any] | Entry],
        *,
        if_leaf: str | _AnyLeaf | None = ANY_LEAF,
    ) -> AppendResult: ...

    async def load(self, ref: SessionRef) -> StoredSession: ...

    async def search(
        self,
        ref: SessionRef,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[SearchHit]: ...

    async def search_tenant(
        self,
        tenant: str,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[TenantHit]: ...

    def lease(self, ref: SessionRef, *, owner: str, ttl: float = 30.0) -> Lease: ...

    async def _acquire(self, lease: Lease) -> None: ...

    async def _release(self, lease: Lease) -> None: ...

    async def list_sessions(
        self, *, tenant: str = "", limit: int = 50, cursor: str | None = None
    ) -> SessionPage: ...

    async def delete(self, ref: SessionRef) -> None: ...

    async def prune(self, *, idle_seconds: float, tenant: str | None = None) -> int: ...

    async def aclose(self) -> None: ...


def read_import(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the session file: {exc.strerror}") from exc


@dataclass(slots=True)
class FileLines:
    """A stored file cut where a store keeps it: the header line (with any lines before it),
    the lines after it, and whether the last line ends with a newline."""

    prefix: bytes
    lines: list[bytes]
    tail_newline: bool
    scan: ScanResult

    @classmethod
    def of(cls, data: bytes, where: str) -> FileLines:
        scan = parse_file(data, where)
        pieces = data.split(b"\n")
        tail_newline = data.endswith(b"\n")
        if tail_newline:
            pieces.pop()
        cut = scan.header_line or 1
        return cls(b"\n".join(pieces[:cut]), pieces[cut:], tail_newline, scan)

    def entry_lines(self) -> dict[str, tuple[int, bytes]]:
        """Stored entry id → (seq, line); a repeated id maps to its last line."""
        found: dict[str, tuple[int, bytes]] = {}
        for seq, line in enumerate(self.lines, 1):
            meta = entry_meta(line)
            if meta is not None:
                found[meta.id] = (seq, line)
        return found


def legacy_refusal(ref: SessionRef, version: int) -> StoreError:
    return StoreError(
        f"{ref}: a v{version} session file is stored as it was imported; appending to it "
        "would rewrite it as v3: open it with pictx and save it first"
    )


def plan_append(
    ref: SessionRef,
    data: bytes,
    batch: Sequence[PreparedEntry],
    if_leaf: str | _AnyLeaf | None,
) -> AppendResult | None:
    """The checks of an append to the stored bytes ``data``: the stored result of a retry,
    or ``None`` when the batch is to be written; raises for a broken rule or a moved leaf."""
    cut = FileLines.of(data, str(ref))
    stored = cut.entry_lines()
    leaf = cut.scan.entries[-1].id if len(cut.scan.entries) else None
    return decide_append(
        ref,
        cut.scan.version,
        {k: v[1] for k, v in stored.items()},
        {k: v[0] for k, v in stored.items()},
        leaf,
        batch,
        if_leaf,
    )


def decide_append(
    ref: SessionRef,
    version: int,
    stored_line: Mapping[str, bytes],
    seq_of: Mapping[str, int],
    leaf: str | None,
    batch: Sequence[PreparedEntry],
    if_leaf: str | _AnyLeaf | None,
) -> AppendResult | None:
    """:func:`plan_append`'s checks over what they read of a stored file: the header's
    ``version``, each stored entry id's line (``stored_line``) and seq (``seq_of``; a repeated
    id: its last line) and the leaf (the last entry as the session reader reads the file)."""
    from pi_context.errors import LeafMovedError

    if version < CURRENT_VERSION:
        raise legacy_refusal(ref, version)
    retry = check_batch(batch, stored_line, seq_of)
    if retry is not None:
        return AppendResult(batch[-1].id, tuple(seq_of[e.id] for e in batch))
    if not isinstance(if_leaf, _AnyLeaf) and leaf != if_leaf:
        raise LeafMovedError(
            f"{ref}: the leaf is {bounded(repr(leaf), 80)}, not {bounded(repr(if_leaf), 80)}; "
            "nothing was appended"
        )
    return None


def seqs_after(data: bytes, where: str, count: int) -> tuple[int, ...]:
    """The seqs of the last ``count`` lines of a stored file."""
    total = len(FileLines.of(data, where).lines)
    return tuple(range(total - count + 1, total + 1))

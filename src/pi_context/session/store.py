"""A session: a pi v3 JSONL file (or memory), its entry tree, current leaf and projection.

Reading never changes the file (pi 1.6.0 repairs a missing final newline, fills empty files
and rewrites legacy files as soon as it reads them). Writing is append-only and follows pi's
lazy creation: a new session's file appears, header and entries at once, when the session
first holds a user or assistant message; later entries are appended one line each, under an
advisory lock. A legacy (v1/v2) file is migrated in memory when read and rewritten as v3
(atomically: temporary file, fsync, rename) only when something is first appended to it.

A session kept in a session store (:mod:`pi_context.store`) has no file: its appends queue in
memory (:class:`~pi_context.session._pending.PendingEntries`) until the store's binding commits
them.

The path to the current leaf and its projection are kept up to date as entries are appended,
so appending and asking for the context again costs time proportional to the new entry, not
to the session.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from pi_context import _json
from pi_context.errors import SessionError, SessionFormatError, TreeError
from pi_context.messages import AgentMessage
from pi_context.session._file.opening import open_regular
from pi_context.session._file.storage import SessionStorage
from pi_context.session._live import LiveProjection, PathView
from pi_context.session._load.columns import EntryColumns
from pi_context.session._load.scan import (
    CURRENT_VERSION,
    ScanResult,
    migrate_entries,
    scan_file,
)
from pi_context.session._pending import PendingEntries
from pi_context.session.entries import MODEL_VISIBLE_ROLES, Entry, make_entry
from pi_context.session.problems import LoadProblem, ProblemLog
from pi_context.session.projection import Projection, js_date_ms
from pi_context.session.search.text import SNIPPET_CHARS
from pi_context.session.tree import TreeIndex, normalize_name

if TYPE_CHECKING:
    # Imported where a search runs: the index is SQLite, which opening a session never needs.
    from pi_context.session.search.index import SearchIndex
    from pi_context.session.search.query import SearchHit

__all__ = ["Session", "new_entry_id", "new_session_id"]

_DEFAULT_LOCK_TIMEOUT: Final = 10.0
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def new_session_id() -> str:
    """A UUIDv7 string (time-ordered), pi's default session id.

    Its random bits come from ``os.urandom``, which is what ``secrets`` draws from too, without
    ``secrets``' import of ``hmac`` and OpenSSL, which session commands need nowhere else
    (benchmarks/README.md, "Startup: what `pictx` imports before it answers")."""
    ms = time.time_ns() // 1_000_000
    value = (ms & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value &= ~(0xF << 76)
    value |= 0x7 << 76
    value &= ~(0x3 << 62)
    value |= 0x2 << 62
    return str(uuid.UUID(int=value))


def new_entry_id() -> str:
    """8 lowercase hex digits (the first 8 of a random UUID, as pi)."""
    return uuid.uuid4().hex[:8]


def _iso_from_ms(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


_CYCLE_IDS_SHOWN: Final = 6


def _cycle_text(cycle: Sequence[str]) -> str:
    """A parent cycle in a few words, however long it is."""
    if len(cycle) <= _CYCLE_IDS_SHOWN:
        return " -> ".join([*cycle, cycle[0]])
    shown = " -> ".join(cycle[: _CYCLE_IDS_SHOWN - 1])
    return f"{shown} -> … ({len(cycle)} entries) -> {cycle[-1]} -> {cycle[0]}"


def _tree_problems(tree: TreeIndex, where: str | None) -> list[LoadProblem]:
    """The recoveries :class:`TreeIndex` made (cycles, duplicate ids, dangling parents)."""
    problems: list[LoadProblem] = []
    for cycle in tree.cycles:
        first = tree.require(cycle[0])
        fault = f"parent cycle {_cycle_text(cycle)}"
        reason = f"{fault}: entry treated as a root"
        problems.append(LoadProblem(where, first.line or 0, reason, fault))
    for shadowed in tree.shadowed:
        fault = f"duplicate id {shadowed.id}"
        reason = f"{fault}: a later entry with this id takes its place"
        problems.append(LoadProblem(where, shadowed.line or 0, reason, fault))
    for orphan in tree.dangling():
        fault = f"parent {orphan.parent_id} of entry {orphan.id} does not exist"
        reason = f"{fault}: entry treated as a root"
        problems.append(LoadProblem(where, orphan.line or 0, reason, fault))
    return problems


class Session:
    """A session tree with a current leaf; see the module docstring for the file rules.

    Construct with :meth:`open`, :meth:`create` or :meth:`in_memory`. ``ids`` (a callable
    returning a fresh 8-hex id) and ``clock`` (returning Unix milliseconds) are injectable for
    tests; ``pi_context.testing`` has ``SequentialIds`` and ``FixedClock``.
    """

    def __init__(
        self,
        header: dict[str, Any],
        entries: Sequence[Entry] = (),
        *,
        storage: SessionStorage | PendingEntries | None = None,
        problems: Sequence[LoadProblem] = (),
        logs: Sequence[ProblemLog] = (),
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
        lock_timeout: float | None = _DEFAULT_LOCK_TIMEOUT,
        fsync: bool = True,
    ) -> None:
        self.header = header
        self.lock_timeout = lock_timeout
        """Seconds a write waits for another process's lock (``None``: indefinitely)."""
        self.fsync = fsync
        """Whether :meth:`sync` flushes to the disk (the ``sessionFsync`` setting)."""
        self._storage = storage
        self.file_path = storage.path if storage is not None else None
        self._load_problems: list[LoadProblem] = list(problems)
        self._appended_log = ProblemLog(self._where)
        """Problems of entries appended in this process (a model reply nested too deep)."""
        self._logs: list[ProblemLog] = [*logs, self._appended_log]
        self._ids = ids or new_entry_id
        self._clock = clock or _wall_ms
        self._tree = (
            TreeIndex.of_columns(entries)
            if isinstance(entries, EntryColumns)
            else TreeIndex(entries)
        )
        self._load_problems.extend(_tree_problems(self._tree, self._where))
        self._leaf: Entry | None = self._tree.entries[-1] if self._tree.entries else None
        self._live = LiveProjection(self._tree)
        self._live.reset(self._leaf)
        self._closed = False
        self._search_index: SearchIndex | None = None

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float | None = _DEFAULT_LOCK_TIMEOUT,
        cwd: str | None = None,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
        fsync: bool = True,
    ) -> Session:
        """Read a session file. The file is not modified (not even repaired or migrated).

        An empty (0-byte) file opens as an empty session whose header is written with its first
        message, as pi does (``cwd`` defaults to the process's). Anything else without a valid
        header raises :class:`~pi_context.errors.SessionFormatError`; skipped lines are listed
        in :attr:`problems`. A FIFO, device, socket or directory is refused before anything is
        read (:class:`~pi_context.errors.SessionError`), and the file is read up to the size it
        had when opened, no further.
        """
        file_path = Path(path)
        where = str(file_path)
        # Read in chunks while scanning: the whole file never sits in memory beside its lines.
        try:
            with open_regular(file_path) as (file, size):
                scan = scan_file(file, path=where, limit=size)
        except FileNotFoundError as exc:
            raise SessionError("no such session file", path=file_path) from exc
        except OSError as exc:
            raise SessionError(f"cannot read session file: {exc.strerror}", path=file_path) from exc
        if scan.size == 0:
            header = cls._new_header(cwd or os.getcwd(), None, None, None, clock or _wall_ms)
            storage = SessionStorage(file_path, empty_file=True)
            return cls(
                header,
                storage=storage,
                ids=ids,
                clock=clock,
                lock_timeout=lock_timeout,
                fsync=fsync,
            )
        if scan.header is None:
            raise SessionFormatError(
                "not a valid pi session (no session header line)", path=where, line=1
            )
        storage = SessionStorage(
            file_path,
            persisted=True,
            version=scan.version,
            size=scan.size,
            known_lines=scan.newlines,
            torn_from=scan.size - scan.unterminated_bytes if scan.torn_tail else None,
        )
        return cls.from_scan(
            scan, storage=storage, ids=ids, clock=clock, lock_timeout=lock_timeout, fsync=fsync
        )

    @classmethod
    def from_scan(
        cls,
        scan: ScanResult,
        *,
        storage: SessionStorage | PendingEntries | None = None,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
        lock_timeout: float | None = _DEFAULT_LOCK_TIMEOUT,
        fsync: bool = True,
    ) -> Session:
        """The session a scan with a header read: its entries taken over (the tree appends to
        them), a v1/v2 session migrated in memory, the scan's problems kept."""
        header = scan.header
        if header is None:
            raise SessionFormatError("not a valid pi session (no session header line)", line=1)
        entries: Sequence[Entry] = scan.entries
        if scan.version < CURRENT_VERSION:
            header, entries = migrate_entries(header, entries, ids or new_entry_id)
        return cls(
            header,
            entries,
            storage=storage,
            problems=scan.problems,
            logs=[scan.log],
            ids=ids,
            clock=clock,
            lock_timeout=lock_timeout,
            fsync=fsync,
        )

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str] | None,
        *,
        cwd: str,
        session_id: str | None = None,
        timestamp: str | None = None,
        parent_session: str | None = None,
        lock_timeout: float | None = _DEFAULT_LOCK_TIMEOUT,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
        fsync: bool = True,
    ) -> Session:
        """A new session. Its file (if ``path`` is given) is created with the first user or
        assistant message; an existing file at ``path`` is never overwritten.

        ``session_id`` and ``timestamp`` (ISO-8601, as in the header) default to a fresh UUIDv7
        and the clock's time; pass both to name the file after them, as pi does.
        """
        file_path = Path(path) if path is not None else None
        if file_path is not None and file_path.exists():
            raise SessionError("session file already exists; not overwriting it", path=file_path)
        if session_id is not None and not _SESSION_ID.fullmatch(session_id):
            raise SessionError(f"invalid session id {session_id!r}")
        if timestamp is not None and js_date_ms(timestamp) is None:
            raise SessionError(f"invalid session timestamp {timestamp!r}")
        header = cls._new_header(cwd, session_id, timestamp, parent_session, clock or _wall_ms)
        storage = SessionStorage(file_path) if file_path is not None else None
        return cls(
            header, storage=storage, ids=ids, clock=clock, lock_timeout=lock_timeout, fsync=fsync
        )

    @classmethod
    def in_memory(
        cls,
        cwd: str,
        *,
        session_id: str | None = None,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> Session:
        """A session that is never written to disk."""
        return cls.create(None, cwd=cwd, session_id=session_id, ids=ids, clock=clock)

    @staticmethod
    def _new_header(
        cwd: str,
        session_id: str | None,
        timestamp: str | None,
        parent_session: str | None,
        clock: Callable[[], int],
    ) -> dict[str, Any]:
        header: dict[str, Any] = {
            "type": "session",
            "version": CURRENT_VERSION,
            "id": session_id or new_session_id(),
            "timestamp": timestamp or _iso_from_ms(clock()),
            "cwd": cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        return header

    # -- reading ------------------------------------------------------------------------------

    @property
    def _where(self) -> str | None:
        return str(self.file_path) if self.file_path is not None else None

    @property
    def file_version(self) -> int:
        """The header version of the file on disk (3 once a legacy file has been rewritten)."""
        return self._storage.version if self._storage is not None else CURRENT_VERSION

    @property
    def id(self) -> str:
        return str(self.header.get("id"))

    @property
    def cwd(self) -> str | None:
        value = self.header.get("cwd")
        return value if isinstance(value, str) else None

    @property
    def entries(self) -> Sequence[Entry]:
        """All entries in file order."""
        return self._tree.entries

    @property
    def tree(self) -> TreeIndex:
        return self._tree

    def get(self, entry_id: str) -> Entry | None:
        """The entry with this id (the later one when a file repeats an id)."""
        return self._tree.get(entry_id)

    def __len__(self) -> int:
        return len(self._tree.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._tree.entries)

    @property
    def leaf_id(self) -> str | None:
        return self._leaf.id if self._leaf is not None else None

    @property
    def leaf(self) -> Entry | None:
        return self._leaf

    def branch_entries(self, leaf_id: str | None = None) -> list[Entry]:
        """Root→leaf path (pi's ``getBranch``); the current leaf by default.

        A new list each call (O(path length)); :meth:`branch_view` reads the same path without
        copying. Raises :class:`~pi_context.errors.TreeError` for an unknown id (pi returns
        ``[]``).
        """
        if leaf_id is None:
            return list(self._live.path)
        return self._tree.path(self._tree.require(leaf_id))

    def branch_view(self, leaf_id: str | None = None) -> Sequence[Entry]:
        """The same path as :meth:`branch_entries`, read-only and without a copy.

        Taking the view of the current leaf costs O(1) however long the path is; the view keeps
        showing that path after later appends and leaf moves. Use it where the path is only
        read (per-turn accounting, compaction preparation).
        """
        if leaf_id is None:
            return self._live.path
        positions = self._tree.path_positions(self._tree.require_position(leaf_id))
        return PathView(positions, self._tree.entries)

    def on_branch(self, entry_id: str) -> bool:
        """Whether ``entry_id`` is on the current leaf's path (an id lookup, not a path scan)."""
        return self._live.on_path(entry_id)

    def children(self, entry_id: str) -> list[Entry]:
        return self._tree.children(entry_id)

    def leaves(self) -> list[Entry]:
        """Entries without children, in file order."""
        return self._tree.leaves()

    def roots(self) -> list[Entry]:
        return self._tree.roots()

    @property
    def labels(self) -> dict[str, str]:
        """Entry id → label (latest label entry per target in file order; cleared ones absent)."""
        return dict(self._tree.labels)

    def label_of(self, entry_id: str) -> str | None:
        return self._tree.labels.get(entry_id)

    @property
    def name(self) -> str | None:
        """The display name from the latest ``session_info`` entry."""
        return self._tree.name

    def common_ancestor(self, a: str, b: str) -> str | None:
        """The deepest entry on both root paths (``None`` when in different trees)."""
        return self._tree.common_ancestor(a, b)

    def projection(self, leaf_id: str | None = None) -> Projection:
        """What the model sees at ``leaf_id`` (default: the current leaf).

        The entries and messages handed out are copies, made as they are read: changing them
        never changes the session or the next request.

        Raises :class:`~pi_context.errors.TreeError` for an unknown id (pi silently falls back
        to the last entry).
        """
        return self.stored_projection(leaf_id).handed_out_view()

    def stored_projection(self, leaf_id: str | None = None) -> Projection:
        """:meth:`projection` holding the session's own entry and message objects, no copies.

        For the engine's incremental work (the agent's request pipeline, the compactor), which
        reuses results for the objects and keys it saw before. The objects are the session's
        memory: treat everything in it as read-only (:meth:`projection` is the safe view).
        """
        if leaf_id is None or (self._leaf is not None and leaf_id == self._leaf.id):
            return self._live.snapshot()
        live = LiveProjection(self._tree)
        live.reset(self._tree.require(leaf_id))
        return live.snapshot()

    def messages(self, leaf_id: str | None = None) -> list[AgentMessage]:
        """Copies of the projected messages at ``leaf_id`` (default: the current leaf)."""
        return list(self.projection(leaf_id).messages)

    @property
    def problems(self) -> list[LoadProblem]:
        """What is wrong with the file, by line: lines skipped on load, tree repairs, and
        entries found faulty when first decoded (so far; :meth:`check` decodes them all).
        Each line is reported once."""
        found = list(self._load_problems)
        for log in self._logs:
            found.extend(log.problems)
        found.sort(key=lambda p: p.line)
        return found

    def check(self) -> list[LoadProblem]:
        """Decode and check every entry (without keeping the decoded mappings) and return all
        problems: those found on load, unreadable lines and fields of the wrong type."""
        for entry in self._tree.entries:
            entry.peek()
        return self.problems

    # -- search ----------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        only_replaced: bool = False,
        roles: Collection[str] | None = None,
        leaf_id: str | None = None,
        snippet_chars: int = SNIPPET_CHARS,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> list[SearchHit]:
        """Ranked hits for ``query`` (plain words) over the text of every message entry, on
        the branch of ``leaf_id`` (default: the current leaf) or, with ``all_branches``, the
        whole tree; see :mod:`pi_context.session.search.query` for what a hit reports.

        The file stays the only record: its index is a cache in ``cache_dir`` (default
        ``$XDG_CACHE_HOME/pi-context/search``), caught up with what was appended since the
        last search and rebuilt when the file no longer matches it. A session without a
        current v3 file is indexed in memory.
        """
        from pi_context.session.search.query import search as search_index

        index = self._search_index_ready(cache_dir)
        if leaf_id is not None:
            self._tree.require(leaf_id)
        return search_index(
            index,
            query,
            leaf_id=leaf_id if leaf_id is not None else self.leaf_id,
            limit=limit,
            all_branches=all_branches,
            only_replaced=only_replaced,
            roles=roles,
            snippet_chars=snippet_chars,
        )

    def search_index(self, cache_dir: str | os.PathLike[str] | None = None) -> SearchIndex:
        """The session's search index, up to date with the session (for callers that read
        entries by the rows of its hits, like the recall tool)."""
        return self._search_index_ready(cache_dir)

    def _search_index_ready(self, cache_dir: str | os.PathLike[str] | None) -> SearchIndex:
        if self._closed:
            raise SessionError("session is closed", path=self.file_path)
        use_file = self._storage is not None and self._storage.persisted and not self.is_legacy
        index = self._search_index
        wanted = Path(cache_dir) if cache_dir is not None else None
        if index is not None and (
            (index.file is not None) != use_file
            or (
                wanted is not None
                and index.database is not None
                and index.database.parent != wanted
            )
        ):
            index.close()
            index = None
        if index is None:
            from pi_context.session.search.index import SearchIndex

            if use_file and self.file_path is not None:
                index = SearchIndex.for_file(self.file_path, wanted)
            else:
                index = SearchIndex.for_entries()
            self._search_index = index
        if index.file is not None:
            index.refresh()
        else:
            index.catch_up(self._tree.entries)
        return index

    # -- leaf ------------------------------------------------------------------------------------

    def move_leaf(self, entry_id: str | None) -> None:
        """Make ``entry_id`` the current leaf (pi's ``branch``); ``None`` = pi's ``resetLeaf``:
        the next append starts a new root."""
        entry = None if entry_id is None else self._tree.require(entry_id)
        if entry is self._leaf:
            return
        self._leaf = entry
        self._live.reset(entry)

    # -- appending ---------------------------------------------------------------------------------

    def now_ms(self) -> int:
        """The session's clock in Unix milliseconds: it stamps every entry, and the agent
        stamps the messages it makes for this session with it (``clock`` of the constructor)."""
        return self._clock()

    def _timestamp(self) -> str:
        return _iso_from_ms(self._clock())

    def _fresh_id(self) -> str:
        for _ in range(100):
            candidate = self._ids()
            if candidate not in self._tree.positions:
                return candidate
        return str(uuid.uuid4())

    def _new(self, kind: str, fields: Mapping[str, Any]) -> Entry:
        """A new entry under the current leaf, keys in pi's order."""
        return make_entry(kind, self._fresh_id(), self.leaf_id, fields, timestamp=self._timestamp())

    def append_entry(self, entry: Entry) -> Entry:
        """Append a prepared entry (its parent should be the current leaf) and make it the leaf."""
        if self._closed:
            raise SessionError("session is closed", path=self.file_path)
        if entry.id in self._tree.positions:
            raise TreeError(f"duplicate entry id {entry.id!r}")
        if entry.parent_id is not None and entry.parent_id not in self._tree.positions:
            raise TreeError(f"parent {entry.parent_id!r} of the new entry does not exist")
        self._persist(entry)
        line = self._storage.lines if self._storage is not None else None
        entry.leave_out_if_too_deep(self._appended_log, line)
        self._tree.add(entry)
        if self._leaf is not None and entry.parent_id == self._leaf.id:
            self._leaf = entry
            self._live.push(entry)
        else:
            self._leaf = entry
            self._live.reset(entry)
        return entry

    def append_message(self, message: AgentMessage | Mapping[str, Any]) -> Entry:
        """Append a ``message`` entry (any role except the runtime-only summary roles)."""
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise SessionError("a message must be a mapping with a string 'role'")
        if message["role"] in ("compactionSummary", "branchSummary"):
            raise SessionError(
                f"{message['role']} messages are derived; append a compaction or branch summary"
            )
        return self.append_entry(self._new("message", {"message": dict(message)}))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int | None,
        *,
        details: Any = None,
        usage: Mapping[str, Any] | None = None,
        from_hook: bool = False,
        system_message: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Append a compaction. ``first_kept_entry_id=None`` keeps nothing (stores its own id)."""
        if first_kept_entry_id is not None and not self._live.on_path(first_kept_entry_id):
            raise TreeError(
                f"firstKeptEntryId {first_kept_entry_id!r} is not on the current branch"
            )
        entry_id = self._fresh_id()
        fields: dict[str, Any] = {
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id or entry_id,
            "tokensBefore": tokens_before,
            "details": details,
            "usage": dict(usage) if usage is not None else None,
            "fromHook": from_hook,
            "systemMessage": dict(system_message) if system_message is not None else None,
        }
        entry = make_entry(
            "compaction", entry_id, self.leaf_id, fields, timestamp=self._timestamp()
        )
        appended = self.append_entry(entry)
        self.sync()  # a compaction is costly to redo: make it durable at once
        return appended

    def append_branch_summary(
        self,
        from_id: str | None,
        summary: str,
        *,
        parent_id: str | None,
        details: Any = None,
        usage: Mapping[str, Any] | None = None,
        from_hook: bool = False,
    ) -> Entry:
        """Move the leaf to ``parent_id`` and append a branch summary there (pi's
        ``branchWithSummary``); ``from_id`` is the abandoned leaf (``None`` → ``"root"``)."""
        self.move_leaf(parent_id)
        fields: dict[str, Any] = {
            "fromId": from_id if from_id is not None else "root",
            "summary": summary,
            "details": details,
            "usage": dict(usage) if usage is not None else None,
            "fromHook": from_hook,
        }
        return self.append_entry(self._new("branch_summary", fields))

    def append_context_edit(self, target_id: str, replacement: Mapping[str, Any] | None) -> Entry:
        """Replace (``{"content": ...}``) or omit (``None``) a model-visible entry on the branch."""
        target = self._tree.require(target_id)
        if not self._live.on_path(target_id):
            raise TreeError(f"context_edit target {target_id!r} is not on the current branch")
        role = target.role if target.type == "message" else None
        if target.type == "message" and role is None:
            message = target.data.get("message")
            role = message.get("role") if isinstance(message, dict) else None
        if not (target.type == "custom_message" or role in MODEL_VISIBLE_ROLES):
            raise TreeError(
                f"context_edit target {target_id!r} must be a user, assistant or toolResult "
                "message or a custom_message"
            )
        value: Any = ...
        if replacement is not None:
            value = dict(replacement)
            content = value.get("content")
            if isinstance(content, str) and role in ("assistant", "toolResult"):
                value["content"] = [{"type": "text", "text": content}]
        return self.append_entry(
            self._new("context_edit", {"targetId": target_id, "replacement": value})
        )

    def append_label(self, target_id: str, label: str | None) -> Entry:
        """Label an entry (``None`` or ``""`` clears its label)."""
        self._tree.require(target_id)
        return self.append_entry(
            self._new("label", {"targetId": target_id, "label": label or None})
        )

    def append_model_change(self, provider: str, model_id: str) -> Entry:
        return self.append_entry(
            self._new("model_change", {"provider": provider, "modelId": model_id})
        )

    def append_thinking_level_change(self, level: str) -> Entry:
        return self.append_entry(self._new("thinking_level_change", {"thinkingLevel": level}))

    def append_session_info(self, name: str) -> Entry:
        """Set the display name (line breaks become spaces; empty clears)."""
        clean = normalize_name(name)
        return self.append_entry(self._new("session_info", {"name": clean}))

    def append_custom(self, custom_type: str, data: Any = None) -> Entry:
        """Extension state (never shown to the model)."""
        return self.append_entry(self._new("custom", {"customType": custom_type, "data": data}))

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool = True, details: Any = None
    ) -> Entry:
        """An extension message the model sees as a user message (``details`` stay hidden)."""
        fields = {
            "customType": custom_type,
            "content": content,
            "display": display,
            "details": details,
        }
        return self.append_entry(self._new("custom_message", fields))

    def append_usage(
        self,
        kind: str,
        provider: str,
        model: str,
        usage: Mapping[str, Any],
        note: str | None = None,
    ) -> Entry:
        """Model usage outside the conversation (e.g. cache warming); counted in totals only."""
        fields = {
            "kind": kind,
            "provider": provider,
            "model": model,
            "usage": dict(usage),
            "note": note,
        }
        return self.append_entry(self._new("usage", fields))

    # -- persistence ------------------------------------------------------------------------------

    @property
    def is_legacy(self) -> bool:
        """True while the file on disk is v1/v2 (migrated in memory; rewritten on append)."""
        return self._storage is not None and self._storage.legacy

    @property
    def is_persisted(self) -> bool:
        """True once the header is in the file."""
        return self._storage is not None and self._storage.persisted

    def _has_conversation(self, extra: Entry | None = None) -> bool:
        """Whether the entries (and ``extra``) hold a user or assistant message: the point at
        which pi first writes a session file."""
        if extra is not None and extra.type == "message" and extra.role in ("user", "assistant"):
            return True
        columns = self._tree.entries
        return any(
            columns.role_at(p) in ("user", "assistant")
            for p in columns.positions_of_type("message")
        )

    def _persist(self, entry: Entry) -> None:
        storage = self._storage
        if storage is None:
            return
        if isinstance(storage, PendingEntries):
            storage.add(entry)  # stored by the session's owner (a store binding), later
            return
        if not storage.persisted:
            if self._has_conversation(entry):
                # lazy creation: the file appears with the first conversation message
                storage.create(self._file_bytes([*self._tree.entries, entry]), self.lock_timeout)
        elif storage.legacy:
            storage.rewrite(self._file_bytes([*self._tree.entries, entry]), self.lock_timeout)
        else:
            storage.append(entry.raw, self._take_foreign, self.lock_timeout)

    def _file_bytes(self, entries: Sequence[Entry]) -> bytes:
        parts = [_json.dumps(self.header)]
        parts.extend(e.raw for e in entries)
        parts.append(b"")
        return b"\n".join(parts)

    def _take_foreign(self, scan: ScanResult, retracted_line: int | None) -> None:
        """Take in entries another process appended (see :class:`SessionStorage`)."""
        if retracted_line is not None:
            self._load_problems = [p for p in self._load_problems if p.line != retracted_line]
        self._load_problems.extend(scan.problems)
        self._logs.append(scan.log)
        self._tree.extend(scan.entries)

    def sync(self) -> None:
        """Make every line this session appended durable (``fsync``), unless :attr:`fsync` is
        off (the ``sessionFsync: false`` setting). Appends are not synced one by one; the agent
        calls this at the end of each turn, and :meth:`append_compaction` calls it itself."""
        if self.fsync and self._storage is not None:
            self._storage.sync()

    def flush(self) -> None:
        """Write a file-backed session's pending entries now, even without a conversation yet."""
        storage = self._storage
        if storage is None or isinstance(storage, PendingEntries) or storage.persisted:
            return
        storage.create(self._file_bytes(list(self._tree.entries)), self.lock_timeout)

    def fork(
        self,
        new_path: str | os.PathLike[str] | None,
        leaf_id: str | None = None,
        *,
        session_id: str | None = None,
        timestamp: str | None = None,
    ) -> Session:
        """A new session holding the root→leaf path (pi's ``createBranchedSession``).

        The header names this session's file as ``parentSession``; ``session_id`` and
        ``timestamp`` are as in :meth:`create`. Label entries are dropped from the copied path
        (parents re-chained around them) and re-created at the end, one per labelled entry on
        the path.
        """
        path = self.branch_view(leaf_id)
        forked = Session.create(
            new_path,
            cwd=self.cwd or os.getcwd(),
            session_id=session_id,
            timestamp=timestamp,
            parent_session=str(self.file_path) if self.file_path is not None else None,
            lock_timeout=self.lock_timeout,
            ids=self._ids,
            clock=self._clock,
        )
        kept_ids = [e.id for e in path if e.type != "label"]
        labels_on_path = self._tree.labels
        previous: str | None = None
        redirect: dict[str, str] = {}
        pending_labels: list[str] = []
        for entry in path:
            if entry.type == "label":
                pending_labels.append(entry.id)
                continue
            for label_id in pending_labels:
                redirect[label_id] = entry.id
            pending_labels.clear()
            data_changed = entry.parent_id != previous
            first_kept = entry.get("firstKeptEntryId") if entry.type == "compaction" else None
            if isinstance(first_kept, str) and first_kept in redirect:
                data_changed = True
            if data_changed:
                data = dict(entry.data)
                data["parentId"] = previous
                if isinstance(first_kept, str) and first_kept in redirect:
                    data["firstKeptEntryId"] = redirect[first_kept]
                copy = Entry.from_data(data)
            else:
                copy = Entry(entry.type, entry.id, entry.parent_id, role=entry.role, raw=entry.raw)
            forked._tree.add(copy)
            forked._leaf = copy
            previous = entry.id
        forked._live.reset(forked._leaf)
        for entry_id in kept_ids:
            label = labels_on_path.get(entry_id)
            if label:
                forked.append_label(entry_id, label)
        if forked._has_conversation():
            forked.flush()
        return forked

    def close(self) -> None:
        """Release the file handle. Pending (unwritten) entries of a new session are dropped,
        as pi drops a session that never got a message."""
        if self._storage is not None:
            self._storage.close()
        if self._search_index is not None:
            self._search_index.close()
            self._search_index = None
        self._closed = True

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = str(self.file_path) if self.file_path else "memory"
        return f"<Session {self.id} {where} entries={len(self)} leaf={self.leaf_id}>"

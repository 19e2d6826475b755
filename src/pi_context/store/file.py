"""The file store: each session a pi JSONL file in a directory, written as a session file is.

The default tenant's sessions are ``DIR/<id>.jsonl``; another tenant's are
``DIR/<tenant>/<id>.jsonl``. An append writes its batch's lines under the session file's own
advisory lock, in one write, with a session file's byte rules, then ``fsync``; its checks read
only what another writer added since the store's last append to the file (``_file_state``); a
search goes through the file's own search index, and every file operation runs in a worker
thread: the event loop never waits on a lock or a disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pi_context import _json
from pi_context.errors import (
    SessionBusyError,
    SessionError,
    SessionNotFoundError,
    StoreError,
)
from pi_context.session._file.writer import appended_bytes
from pi_context.session.entries import Entry
from pi_context.session.search.text import SNIPPET_CHARS
from pi_context.session.store import Session
from pi_context.store._file_state import KnownFile, KnownFiles, Listed, listing_key, read_file
from pi_context.store.base import (
    ANY_LEAF,
    AppendResult,
    FileLines,
    Lease,
    PreparedEntry,
    SessionPage,
    SessionRef,
    SessionSummary,
    StoredSession,
    TenantHit,
    _AnyLeaf,
    append_lines,
    check_tenant,
    decide_append,
    parse_file,
    plan_append,
    prepare_entries,
    read_import,
    search_sessions,
    stored_view,
)

if TYPE_CHECKING:
    from pi_context.session._file.writer import SessionFile
    from pi_context.session.search.query import SearchHit

__all__ = ["FileStore"]

_LOCK_TIMEOUT: Final = 10.0
"""Seconds an append waits for the session file's lock (held by another writer)."""
_FILE_ID: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


class FileStore:
    """Sessions as pi JSONL files under ``root`` (``open_store(DIR)`` or ``"file:DIR"``)."""

    def __init__(self, root: str | os.PathLike[str], *, cache_dir: str | None = None) -> None:
        self.root = Path(root)
        self.url = f"file:{self.root}"
        self.cache_dir = cache_dir
        self._files = KnownFiles()

    # -- paths ---------------------------------------------------------------------------------

    def _dir(self, tenant: str) -> Path:
        check_tenant(tenant)
        return self.root / tenant if tenant else self.root

    def _path(self, ref: SessionRef) -> Path:
        if not _FILE_ID.fullmatch(ref.id) or len(ref.id) > 200:
            raise SessionNotFoundError(f"no session {ref.id!r} in tenant {ref.tenant!r}")
        return self._dir(ref.tenant) / f"{ref.id}.jsonl"

    def _existing(self, ref: SessionRef) -> Path:
        path = self._path(ref)
        if not path.is_file():
            raise SessionNotFoundError(f"no session {ref.id!r} in tenant {ref.tenant!r}")
        return path

    def _read(self, ref: SessionRef) -> bytes:
        path = self._existing(ref)
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise SessionNotFoundError(f"no session {ref.id!r} in tenant {ref.tenant!r}") from exc

    # -- operations ------------------------------------------------------------------------------

    async def migrate(self) -> None:
        await asyncio.to_thread(self.root.mkdir, parents=True, exist_ok=True)

    async def create(
        self, *, tenant: str = "", cwd: str, session_id: str | None = None
    ) -> SessionRef:
        check_tenant(tenant)
        header = Session.in_memory(cwd, session_id=session_id).header
        return await self.import_bytes(_json.dumps(header) + b"\n", tenant=tenant)

    async def import_jsonl(self, path: str | os.PathLike[str], *, tenant: str = "") -> SessionRef:
        data = await asyncio.to_thread(read_import, path)
        return await self.import_bytes(data, tenant=tenant, where=str(path))

    async def import_bytes(self, data: bytes, *, tenant: str = "", where: str = "") -> SessionRef:
        check_tenant(tenant)
        scan = parse_file(data, where or "<bytes>")
        assert scan.header is not None
        ref = SessionRef(tenant, scan.header["id"])
        if not _FILE_ID.fullmatch(ref.id):
            raise StoreError(f"{where or ref.id}: session id {ref.id!r} cannot name a file")
        try:
            await asyncio.to_thread(self._write_new, self._path(ref), data, ref)
        except OSError as exc:  # the disk, or a name taken by something else than a session
            raise StoreError(f"session {ref}: cannot store its file: {exc.strerror}") from exc
        return ref

    @staticmethod
    def _write_new(path: Path, data: bytes, ref: SessionRef) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            if path.read_bytes() == data:
                return
            raise StoreError(f"session {ref} is already stored with other content")
        # unique per write: two imports at once in one process, or a leftover of a process
        # that died with the same pid, never share it
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
        with temporary.open("xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)  # never replaces a file another writer created meanwhile
        except FileExistsError as exc:
            if path.read_bytes() == data:  # another writer stored the same bytes meanwhile
                return
            raise StoreError(f"session {ref} is already stored with other content") from exc
        finally:
            temporary.unlink()

    async def export_bytes(self, ref: SessionRef) -> bytes:
        return await asyncio.to_thread(self._read, ref)

    async def export_jsonl(self, ref: SessionRef, out_path: str | os.PathLike[str]) -> None:
        data = await self.export_bytes(ref)
        await asyncio.to_thread(Path(out_path).write_bytes, data)

    async def append(
        self,
        ref: SessionRef,
        entries: Sequence[Mapping[str, Any] | Entry],
        *,
        if_leaf: str | _AnyLeaf | None = ANY_LEAF,
    ) -> AppendResult:
        batch = prepare_entries(entries)
        return await asyncio.to_thread(self._append, ref, batch, if_leaf)

    def _append(
        self, ref: SessionRef, batch: Sequence[PreparedEntry], if_leaf: str | _AnyLeaf | None
    ) -> AppendResult:
        from pi_context.session._file.writer import SessionFile

        path = self._existing(ref)
        # The store's writers take a lock of their own around the check and the write, so an
        # if_leaf check and the duplicate-id check hold until the entries are in the file;
        # inside it, the session file's own lock (the one pi's writers take) is held while
        # the file is read, checked and the whole batch written in one write, then fsynced:
        # a crash leaves all of the batch or none of it (at worst a torn last line, which
        # the reader skips). What the checks need is kept from the last append (see
        # _file_state): only what another writer added since is read.
        key = str(path)
        with self._locked(path.with_name(f".{path.stem}.append-lock")):
            try:
                handle = SessionFile(path)
            except SessionError as exc:
                raise StoreError(str(exc)) from exc
            known = self._files.take(key)
            keep: KnownFile | None = None  # what is true of the file when the append ends
            try:
                with handle.locked(_LOCK_TIMEOUT) as size:
                    stat = os.fstat(handle.fd)
                    if known is not None and known.same_file(handle.fd, stat):
                        unread = known.catch_up(handle.fd, size)
                        known.mtime_ns = stat.st_mtime_ns
                    else:
                        state = read_file(ref, handle.fd, size, stat)
                        if isinstance(state, bytes):  # not even a complete header line
                            return self._append_whole(ref, handle, state, batch, if_leaf)
                        known, unread = state
                    keep = known
                    done = decide_append(
                        ref,
                        known.version,
                        known.stored_lines(handle.fd, unread),
                        known.seq_of(unread),
                        unread.leaf,
                        batch,
                        if_leaf,
                    )
                    if done is not None:
                        return done
                    before = known.lines + (1 if unread.data else 0)
                    written = appended_bytes([e.line for e in batch], after_newline=not unread.data)
                    keep = None  # not true of the file until the write is whole
                    handle.append(written)
                    handle.sync()
                    known.wrote(unread, batch, written)
                    after = os.fstat(handle.fd)
                    if after.st_size == known.size:  # else another writer appended meanwhile
                        known.mtime_ns = after.st_mtime_ns
                        keep = known
                        self._files.list_as(
                            key, Listed(listing_key(after), known.lines, known.leaf_if_last)
                        )
            except SessionError as exc:
                raise StoreError(str(exc)) from exc
            finally:
                if keep is not None:
                    self._files.put(key, keep)
                handle.close()
        return AppendResult(batch[-1].id, tuple(range(before + 1, before + len(batch) + 1)))

    @staticmethod
    def _append_whole(
        ref: SessionRef,
        handle: SessionFile,
        data: bytes,
        batch: Sequence[PreparedEntry],
        if_leaf: str | _AnyLeaf | None,
    ) -> AppendResult:
        """An append checked against the whole file's bytes ``data`` (a file whose header line
        is not complete yet: nothing is kept of it)."""
        done = plan_append(ref, data, batch, if_leaf)
        if done is not None:
            return done
        before = len(FileLines.of(data, str(ref)).lines)
        handle.append(append_lines(data, [e.line for e in batch])[len(data) :])
        handle.sync()
        return AppendResult(batch[-1].id, tuple(range(before + 1, before + len(batch) + 1)))

    async def load(self, ref: SessionRef) -> StoredSession:
        # read and parsed on one worker thread: the event loop runs on meanwhile
        return await asyncio.to_thread(lambda: stored_view(ref, self._read(ref)))

    async def search(
        self,
        ref: SessionRef,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[SearchHit]:
        def run() -> list[SearchHit]:
            with Session.open(self._existing(ref)) as session:
                return session.search(
                    query,
                    limit=limit,
                    all_branches=all_branches,
                    snippet_chars=snippet_chars,
                    cache_dir=self.cache_dir,
                )

        return await asyncio.to_thread(run)

    async def search_tenant(
        self,
        tenant: str,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[TenantHit]:
        """The best hits over every session of ``tenant`` (each session searched as
        :meth:`search` does, the hits merged by score)."""
        return await search_sessions(
            self,
            tenant,
            query,
            limit=limit,
            all_branches=all_branches,
            snippet_chars=snippet_chars,
        )

    # -- leases ----------------------------------------------------------------------------------

    def lease(self, ref: SessionRef, *, owner: str, ttl: float = 30.0) -> Lease:
        return Lease(self, ref, owner, ttl)

    def _lease_path(self, ref: SessionRef) -> Path:
        path = self._existing(ref)
        return path.with_name(f".{path.stem}.lease")

    @staticmethod
    @contextlib.contextmanager
    def _locked(path: Path) -> Iterator[int]:
        """An exclusive ``flock`` on the sidecar file ``path`` (created if missing)."""
        import fcntl

        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)

    async def _acquire(self, lease: Lease) -> None:
        def run() -> None:
            with self._locked(self._lease_path(lease.ref)) as fd:
                held = _read_lease(fd)
                now = time.time()
                if held is not None and held[0] != lease.token and held[1] > now:
                    raise SessionBusyError(f"session {lease.ref} is leased by another holder")
                _write_lease(
                    fd, {"token": lease.token, "owner": lease.owner, "expires": now + lease.ttl}
                )

        await asyncio.to_thread(run)

    async def _release(self, lease: Lease) -> None:
        def run() -> None:
            with (
                contextlib.suppress(SessionNotFoundError, FileNotFoundError),
                self._locked(self._lease_path(lease.ref)) as fd,
            ):
                held = _read_lease(fd)
                if held is not None and held[0] == lease.token:
                    os.ftruncate(fd, 0)

        await asyncio.to_thread(run)

    # -- listing and removal -------------------------------------------------------------------

    async def list_sessions(
        self, *, tenant: str = "", limit: int = 50, cursor: str | None = None
    ) -> SessionPage:
        folder = self._dir(tenant)

        def run() -> SessionPage:
            names = sorted(p.stem for p in folder.glob("*.jsonl") if p.is_file())
            if cursor is not None:
                names = [n for n in names if n > cursor]
            page = names[: max(0, limit)]
            rows = []
            for name in page:
                ref = SessionRef(tenant, name)
                path = folder / f"{name}.jsonl"
                try:
                    row = self._listed(path)
                except (OSError, SessionError):
                    continue
                rows.append(SessionSummary(ref, row[0].lines, row[0].leaf, row[1]))
            more = len(names) > len(page)
            return SessionPage(rows, page[-1] if more and page else None)

        return await asyncio.to_thread(run)

    def _listed(self, path: Path) -> tuple[Listed, float]:
        """A listing row of the file at ``path`` and its mtime: kept from the last listing or
        append while the file's device, inode, size and mtime are the same, else read."""
        stat = path.stat()
        key = listing_key(stat)
        row = self._files.listed(str(path), key)
        if row is None:
            data = path.read_bytes()
            stat = path.stat()
            cut = FileLines.of(data, str(path))
            leaf = cut.scan.entries[-1].id if len(cut.scan.entries) else None
            row = Listed(listing_key(stat), len(cut.lines), leaf)
            if row.key == key:  # else written while it was read: not kept
                self._files.list_as(str(path), row)
        return row, stat.st_mtime

    async def delete(self, ref: SessionRef) -> None:
        def run() -> None:
            path = self._existing(ref)
            self._files.forget(str(path))
            path.unlink()
            for sidecar in (f".{path.stem}.lease", f".{path.stem}.append-lock"):
                with contextlib.suppress(FileNotFoundError):
                    path.with_name(sidecar).unlink()

        await asyncio.to_thread(run)

    async def prune(self, *, idle_seconds: float, tenant: str | None = None) -> int:
        cutoff = time.time() - idle_seconds

        def run() -> int:
            folders = [self._dir(tenant)] if tenant is not None else [self.root]
            if tenant is None and self.root.is_dir():
                folders += [p for p in self.root.iterdir() if p.is_dir()]
            gone = 0
            for folder in folders:
                for path in folder.glob("*.jsonl"):
                    with contextlib.suppress(FileNotFoundError):
                        if path.stat().st_mtime < cutoff:
                            self._files.forget(str(path))
                            path.unlink()
                            gone += 1
            return gone

        return await asyncio.to_thread(run)

    async def aclose(self) -> None:
        return None


def _read_lease(fd: int) -> tuple[str, float] | None:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096)
    if not raw:
        return None
    try:
        data = _json.loads(raw)
        return str(data["token"]), float(data["expires"])
    except (ValueError, KeyError, TypeError):
        return None


def _write_lease(fd: int, value: dict[str, Any]) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, _json.dumps(value))

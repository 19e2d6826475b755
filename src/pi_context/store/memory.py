"""A store in memory: each session's file bytes in a dict, for fast tests and one process."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_context import _json
from pi_context.errors import SessionBusyError, SessionNotFoundError, StoreError
from pi_context.session.entries import Entry
from pi_context.session.search.text import SNIPPET_CHARS
from pi_context.session.store import Session
from pi_context.store.base import (
    ANY_LEAF,
    AppendResult,
    Lease,
    SessionPage,
    SessionRef,
    SessionSummary,
    StoredSession,
    TenantHit,
    _AnyLeaf,
    append_lines,
    check_tenant,
    load_view,
    parse_file,
    plan_append,
    prepare_entries,
    read_import,
    search_sessions,
    seqs_after,
    stored_view,
)

if TYPE_CHECKING:
    from pi_context.session.search.query import SearchHit

__all__ = ["MemoryStore"]


class MemoryStore:
    """Sessions as file bytes in this process's memory (``open_store("memory:")``)."""

    def __init__(self) -> None:
        self.url = "memory:"
        self._files: dict[SessionRef, bytes] = {}
        self._updated: dict[SessionRef, float] = {}
        self._leases: dict[SessionRef, tuple[str, float]] = {}

    def _data(self, ref: SessionRef) -> bytes:
        data = self._files.get(ref)
        if data is None:
            raise SessionNotFoundError(f"no session {ref.id!r} in tenant {ref.tenant!r}")
        return data

    def _put(self, ref: SessionRef, data: bytes) -> None:
        self._files[ref] = data
        self._updated[ref] = time.time()

    async def migrate(self) -> None:
        return None

    async def create(
        self, *, tenant: str = "", cwd: str, session_id: str | None = None
    ) -> SessionRef:
        check_tenant(tenant)
        header = Session.in_memory(cwd, session_id=session_id).header
        return await self.import_bytes(_json.dumps(header) + b"\n", tenant=tenant)

    async def import_jsonl(self, path: str | os.PathLike[str], *, tenant: str = "") -> SessionRef:
        return await self.import_bytes(read_import(path), tenant=tenant, where=str(path))

    async def import_bytes(self, data: bytes, *, tenant: str = "", where: str = "") -> SessionRef:
        check_tenant(tenant)
        scan = parse_file(data, where or "<bytes>")
        assert scan.header is not None
        ref = SessionRef(tenant, scan.header["id"])
        existing = self._files.get(ref)
        if existing is not None and existing != data:
            raise StoreError(f"session {ref} is already stored with other content")
        self._put(ref, data)
        return ref

    async def export_bytes(self, ref: SessionRef) -> bytes:
        return self._data(ref)

    async def export_jsonl(self, ref: SessionRef, out_path: str | os.PathLike[str]) -> None:
        Path(out_path).write_bytes(self._data(ref))

    async def append(
        self,
        ref: SessionRef,
        entries: Sequence[Mapping[str, Any] | Entry],
        *,
        if_leaf: str | _AnyLeaf | None = ANY_LEAF,
    ) -> AppendResult:
        data = self._data(ref)
        batch = prepare_entries(entries)
        done = plan_append(ref, data, batch, if_leaf)
        if done is not None:
            return done
        data = append_lines(data, [e.line for e in batch])
        self._put(ref, data)
        return AppendResult(batch[-1].id, seqs_after(data, str(ref), len(batch)))

    async def load(self, ref: SessionRef) -> StoredSession:
        return await load_view(ref, self._data(ref))

    async def search(
        self,
        ref: SessionRef,
        query: str,
        *,
        limit: int = 10,
        all_branches: bool = False,
        snippet_chars: int = SNIPPET_CHARS,
    ) -> list[SearchHit]:
        session = stored_view(ref, self._data(ref)).session()
        return session.search(
            query, limit=limit, all_branches=all_branches, snippet_chars=snippet_chars
        )

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

    def lease(self, ref: SessionRef, *, owner: str, ttl: float = 30.0) -> Lease:
        return Lease(self, ref, owner, ttl)

    async def _acquire(self, lease: Lease) -> None:
        self._data(lease.ref)
        now = time.monotonic()
        held = self._leases.get(lease.ref)
        if held is not None and held[0] != lease.token and held[1] > now:
            raise SessionBusyError(f"session {lease.ref} is leased by another holder")
        self._leases[lease.ref] = (lease.token, now + lease.ttl)

    async def _release(self, lease: Lease) -> None:
        held = self._leases.get(lease.ref)
        if held is not None and held[0] == lease.token:
            del self._leases[lease.ref]

    async def list_sessions(
        self, *, tenant: str = "", limit: int = 50, cursor: str | None = None
    ) -> SessionPage:
        check_tenant(tenant)
        ids = sorted(r.id for r in self._files if r.tenant == tenant)
        if cursor is not None:
            ids = [i for i in ids if i > cursor]
        page = ids[: max(0, limit)]
        rows = []
        for session_id in page:
            ref = SessionRef(tenant, session_id)
            view = stored_view(ref, self._files[ref])
            lines = view.data.count(b"\n") + (0 if view.data.endswith(b"\n") else 1)
            rows.append(
                SessionSummary(
                    ref, lines - (view.scan.header_line or 1), view.leaf_id, self._updated[ref]
                )
            )
        more = len(ids) > len(page)
        return SessionPage(rows, page[-1] if more and page else None)

    async def delete(self, ref: SessionRef) -> None:
        self._data(ref)
        del self._files[ref]
        self._updated.pop(ref, None)
        self._leases.pop(ref, None)

    async def prune(self, *, idle_seconds: float, tenant: str | None = None) -> int:
        cutoff = time.time() - idle_seconds
        gone = [
            r
            for r, t in self._updated.items()
            if t < cutoff and (tenant is None or r.tenant == tenant)
        ]
        for ref in gone:
            await self.delete(ref)
        return len(gone)

    async def aclose(self) -> None:
        return None

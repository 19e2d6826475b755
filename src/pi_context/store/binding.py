"""A :class:`~pi_context.session.Session` whose entries live in a session store.

``Session``'s appends are synchronous and a store is not, so a bound session's appends only
queue their entries in memory; :meth:`StoreBinding.commit` stores what is queued, one
``store.append`` per batch. The session is the very ``Session`` a file gives (the same tree,
projection, compaction and search code): only where its entries go differs.

**When an entry is durable**: once the :meth:`~StoreBinding.commit` that carried it has
returned. Until then it is in this process's memory only. The agent commits at the end of
every turn, after every compaction and branch summary, and before a run returns or raises; code
that appends to ``binding.session`` itself commits when it needs the entries kept.

A commit appends with ``if_leaf`` set to the last entry it stored, so an entry some other
writer stored meanwhile is :class:`~pi_context.errors.LeafMovedError`, never an interleaved
chain. A failed commit raises the store's typed error and keeps every queued entry: the next
commit repeats the failed batch as it was (same ids, same bytes), which the store recognizes
when the first attempt was stored after all (an acknowledgement lost with its connection), and
then appends what was queued since.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

from pi_context import _json
from pi_context.errors import SessionNotFoundError, StoreError
from pi_context.session._load.scan import CURRENT_VERSION
from pi_context.session._pending import PendingEntries
from pi_context.session.entries import Entry
from pi_context.session.store import Session
from pi_context.store.base import (
    AppendResult,
    Lease,
    SessionRef,
    SessionStore,
    legacy_refusal,
    off_loop,
)

__all__ = ["TURN_LEASE_TTL", "StoreBinding"]

TURN_LEASE_TTL: Final = 30.0
"""Seconds a turn's lease lasts unless renewed; :meth:`StoreBinding.turn` renews it every
third of that while the turn runs, so a turn may take any time, and a replica that died frees
its sessions within this many seconds."""


class StoreBinding:
    """One session of a store, open in this process: :attr:`session` to read and append,
    :meth:`commit` to store the appends, :meth:`turn` to hold the session's lease.

    Build with :meth:`open` (a stored session) or :meth:`create` (a new one).
    """

    def __init__(
        self,
        store: SessionStore,
        ref: SessionRef,
        session: Session,
        pending: PendingEntries,
        stored_leaf: str | None,
    ) -> None:
        self.store = store
        self.ref = ref
        self.session = session
        self._pending = pending
        self._stored_leaf = stored_leaf
        self._in_flight = 0
        """The size of the batch whose append failed, repeated as it was by the next commit."""
        self._lock = asyncio.Lock()
        self._turns = 0
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"
        """The lease owner this binding names: unique per process and bound session."""

    @classmethod
    async def open(
        cls,
        store: SessionStore,
        ref: SessionRef,
        *,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> StoreBinding:
        """The stored session ``ref`` (:class:`~pi_context.errors.SessionNotFoundError` when
        its tenant holds no such id). A v1/v2 session is refused: the store keeps it as it was
        imported and appends nothing to it."""
        if not isinstance(ref, SessionRef):
            raise TypeError(f"ref must be a SessionRef, not {type(ref).__name__}")
        stored = await store.load(ref)
        if stored.scan.version < CURRENT_VERSION:
            raise legacy_refusal(ref, stored.scan.version)
        leaf = stored.leaf_id
        pending = PendingEntries()
        # building the tree and projection of a large session is CPU work: off the loop
        session = await off_loop(
            stored.size, lambda: stored.session(storage=pending, ids=ids, clock=clock)
        )
        return cls(store, ref, session, pending, leaf)

    @classmethod
    async def create(
        cls,
        store: SessionStore,
        *,
        tenant: str = "",
        cwd: str,
        session_id: str | None = None,
        timestamp: str | None = None,
        parent_session: str | None = None,
        ids: Callable[[], str] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> StoreBinding:
        """A new session, stored at once (its header; entries as they are committed), with
        the header a new session file would get. An id the tenant holds already is a
        :class:`~pi_context.errors.StoreError`."""
        header = Session.create(
            None,
            cwd=cwd,
            session_id=session_id,
            timestamp=timestamp,
            parent_session=parent_session,
            clock=clock,
        ).header
        ref = SessionRef(tenant, str(header["id"]))
        try:
            await store.load(ref)
        except SessionNotFoundError:
            pass
        else:
            raise StoreError(f"session {ref} is already stored; open it instead")
        await store.import_bytes(_json.dumps(header) + b"\n", tenant=tenant, where=str(ref))
        pending = PendingEntries()
        session = Session(header, storage=pending, ids=ids, clock=clock)
        return cls(store, ref, session, pending, None)

    @property
    def pending(self) -> Sequence[Entry]:
        """Entries appended and not stored yet, oldest first."""
        return self._pending.pending

    async def commit(self) -> AppendResult | None:
        """Store every entry appended so far (``None`` when there was nothing to store).

        One ``store.append`` per batch, with ``if_leaf`` the last entry stored. On an error
        (the store's, typed: :class:`~pi_context.errors.StoreUnavailableError`,
        :class:`~pi_context.errors.LeafMovedError`, ...) nothing queued is dropped; calling
        again retries the failed batch unchanged, then stores the rest."""
        async with self._lock:
            result: AppendResult | None = None
            for _ in range(2):  # the failed batch once more, as it was; then everything else
                queued = self._pending.pending
                if not queued:
                    break
                retrying = self._in_flight > 0
                batch = queued[: self._in_flight] if retrying else queued
                self._in_flight = len(batch)
                result = await self.store.append(self.ref, batch, if_leaf=self._stored_leaf)
                self._pending.drop(len(batch))
                self._in_flight = 0
                self._stored_leaf = batch[-1].id
                if not retrying:
                    break
            return result

    @contextlib.asynccontextmanager
    async def turn(self, *, ttl: float = TURN_LEASE_TTL) -> AsyncIterator[Lease | None]:
        """Hold the session's lease (owner :attr:`owner`) for the block, renewed every
        ``ttl / 3`` seconds: another holder's lease is
        :class:`~pi_context.errors.SessionBusyError` at once. A block inside another of this
        binding's blocks holds nothing more (and yields ``None``). A release that fails (the
        store unreachable) is not an error of the block: the lease expires within ``ttl``."""
        if self._turns:
            self._turns += 1
            try:
                yield None
            finally:
                self._turns -= 1
            return
        lease = await self.store.lease(self.ref, owner=self.owner, ttl=ttl).__aenter__()
        try:
            self._turns = 1
            renewing = asyncio.get_running_loop().create_task(_renew(lease, ttl / 3))
            try:
                yield lease
            finally:
                self._turns = 0
                renewing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewing
        finally:
            # A release the store fails (its connection lost) changes nothing of what the
            # block did, stored or raised: the lease expires within its ttl.
            with contextlib.suppress(StoreError):
                await lease.__aexit__(None, None, None)

    def __repr__(self) -> str:
        store = type(self.store).__name__  # never the URL: it may hold a password
        return f"<StoreBinding {self.ref} in {store} pending={len(self._pending.pending)}>"


async def _renew(lease: Lease, every: float) -> None:
    """Renew ``lease`` every ``every`` seconds until cancelled. A renewal the store refuses
    (the lease expired and another holder took it) ends the renewals: the commits' ``if_leaf``
    still keeps the other holder's entries and ours from interleaving."""
    while True:
        await asyncio.sleep(every)
        try:
            await lease.renew()
        except StoreError:
            return

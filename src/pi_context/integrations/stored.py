"""The adapters over a session store: a conversation's id is its stored session's id.

With ``store=`` (a :class:`~pi_context.store.SessionStore`) and ``tenant=``, an adapter keeps
each conversation in the store instead of a session file: the framework's conversation or
thread id is the stored session's id (the header ``id``), in that tenant. The stored session
is created by the first turn of a conversation and opened by the first turn in each process
after that (its bytes parsed once, on a worker thread when the session is large, so the loop
serves other conversations meanwhile).

* **Durable** once the hook that wrote it has returned: every write an adapter makes goes
  through :meth:`~pi_context.integrations.ContextEngine.call` or a compaction, each followed
  by a commit of the session's queued entries (one ``store.append``), awaited on the
  framework's event loop; nothing blocks the loop. A failed commit raises the store's typed
  error and keeps the entries: the next commit stores them. When that commit finds that
  another writer appended meanwhile, the conversation is opened again as stored and the kept
  entries' messages are recorded again on top of it (new ids, under the stored leaf), before
  the current hook's: none is dropped, and one the store has after all (the failed commit
  reached it, its acknowledgement lost) is not recorded twice. Only messages are carried
  over: a kept compaction or tree move described the stale history.
* **Never interleaved, never repeated**: a commit appends only while the stored session ends
  where this process left it. When another adapter instance (another replica) appended
  meanwhile, the commit fails with :class:`~pi_context.errors.LeafMovedError`; the adapter
  opens the conversation again and records what the framework handed it once more, against
  the history as stored: what the other instance stored is recognized, not appended twice.
  openai-agents reads the history from the session itself, so ``PiSession`` also checks the
  store at the start of each run (one ``load``).
* Two runs of one conversation at the same moment are the application's to prevent: hold the
  store's lease around a turn (``async with store.lease(ref, owner=..., ttl=...)``).
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final, Generic, Protocol, TypeVar, cast

from pi_context.errors import LeafMovedError, SessionNotFoundError, StoreError
from pi_context.integrations.engine import ContextEngine, EngineOptions
from pi_context.store.base import SessionRef, check_tenant, entry_meta

if TYPE_CHECKING:
    from pi_context.session.entries import Entry
    from pi_context.store import SessionStore

__all__ = ["KEPT_CONVERSATIONS", "Bound", "Conversations", "stored_options"]

KEPT_CONVERSATIONS: Final = 256
"""Conversations an adapter keeps open in memory; the least recently used beyond that is
closed (its entries are all stored) and reopened from the store when it comes back."""


def stored_options(options: EngineOptions) -> tuple[SessionStore, str] | None:
    """``(store, tenant)`` when ``options`` name a store, else ``None`` (a session file);
    a mistake is an error at the call: ``store=`` with ``session_file=`` or ``session=``,
    ``tenant=`` without ``store=``, an invalid tenant."""
    store = options.get("store")
    tenant = options.get("tenant")
    if store is None:
        if tenant is not None:
            raise ValueError("tenant= names a tenant of a store: pass store= too")
        return None
    for other in ("session_file", "session"):
        if options.get(other) is not None:
            raise ValueError(
                f"pass either store= or {other}=, not both (a stored conversation has no file)"
            )
    if not callable(getattr(store, "append", None)) or not callable(getattr(store, "load", None)):
        raise TypeError(
            f"store must be a pi_context.store SessionStore (open_store(...)), not "
            f"{type(store).__name__}"
        )
    tenant = "" if tenant is None else tenant
    try:
        check_tenant(tenant)
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    return store, tenant


def _last_entry_id(data: bytes) -> str | None:
    """The id of the last line of a stored file that is an entry (``None``: none is)."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        meta = entry_meta(data[start:end].rstrip(b" \r\n"))
        if meta is not None:
            return meta.id
        end = start
    return None


def _record_again(engine: ContextEngine, kept: Sequence[Entry]) -> None:
    """Append the messages of ``kept`` (entries of a stale session its commits never stored)
    under ``engine``'s leaf, with new ids; a kept entry whose id the stored session has (its
    failed commit reached the store after all) is stored already and skipped. Entries of
    other kinds (a compaction, a branch summary, a tree move) describe the stale history and
    are not carried over: the next compaction is worked out on the history as stored."""
    session = engine.session
    messages = [
        entry.message
        for entry in kept
        if entry.type == "message" and entry.message is not None and session.get(entry.id) is None
    ]
    if messages:
        engine.locked(engine.append, messages)


def _session_id(session_id: object, what: str) -> str:
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"a stored conversation needs its {what} (a non-empty string)")
    return session_id


class Bound(Protocol):
    """What an adapter keeps per stored conversation: it works on one engine at a time, and
    :meth:`_use` moves it to the engine of the session opened again."""

    def _use(self, engine: ContextEngine) -> None: ...


_T = TypeVar("_T", bound=Bound)
_R = TypeVar("_R")


class Conversations(Generic[_T]):
    """One adapter's conversations in a store, by id: what the adapter keeps per conversation
    (``make(engine)``), opened on first use and opened again when another writer appended.

    ``options`` are the adapter's :class:`~pi_context.integrations.EngineOptions`; every
    conversation's engine is built with them (the store's own keys left out).
    """

    def __init__(
        self,
        store: SessionStore,
        tenant: str,
        options: EngineOptions,
        make: Callable[[ContextEngine], _T],
        *,
        keep: int = KEPT_CONVERSATIONS,
    ) -> None:
        self.store = store
        self.tenant = tenant
        self._options = cast(
            EngineOptions,
            {
                key: value
                for key, value in options.items()
                if key not in ("store", "tenant", "session_file", "session")
            },
        )
        ContextEngine.check_options(**self._options)
        self._make = make
        self._keep = keep
        self._open: OrderedDict[str, tuple[ContextEngine, _T]] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    def ref(self, session_id: str) -> SessionRef:
        return SessionRef(self.tenant, session_id)

    async def get(self, session_id: str, *, what: str, fresh: bool = False) -> _T:
        """The conversation ``session_id``, opened (or created) on first use; with ``fresh``,
        checked against the store first and opened again when another writer appended."""
        session_id = _session_id(session_id, what)
        async with self._lock(session_id):
            held = self._open.get(session_id)
            if held is None:
                engine = await self._engine(session_id)
                held = (engine, self._make(engine))
            elif fresh and not await self._current(held[0]):
                held = await self._reopened(session_id, held[1])
            self._keep_open(session_id, held)
            return held[1]

    async def run(
        self,
        session_id: str,
        body: Callable[[_T], Awaitable[_R]],
        *,
        what: str,
        fresh: bool = False,
    ) -> _R:
        """``body(conversation)``; when its commit finds that another writer appended to the
        stored session (:class:`~pi_context.errors.LeafMovedError`), the session is opened
        again and ``body`` runs once more on it. The entries the first attempt queued are
        left with the stale session: an adapter records what the framework hands it, and the
        second attempt records it again against the history as stored. The messages an
        earlier hook queued and could not store (kept by its failed commit) are recorded again
        first, on top of the stored history, unless the store has them already."""
        one = await self.get(session_id, what=what, fresh=fresh)
        binding = self._open[session_id][0].binding
        kept = list(binding.pending) if binding is not None else []
        try:
            return await body(one)
        except LeafMovedError:
            async with self._lock(session_id):
                engine, _ = held = await self._reopened(session_id, one)
                _record_again(engine, kept)
                self._keep_open(session_id, held)
            return await body(one)

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    async def _reopened(self, session_id: str, one: _T) -> tuple[ContextEngine, _T]:
        engine = await self._engine(session_id)
        one._use(engine)
        return engine, one

    def _keep_open(self, session_id: str, held: tuple[ContextEngine, _T]) -> None:
        self._open[session_id] = held
        self._open.move_to_end(session_id)
        while len(self._open) > self._keep:
            for other, (engine, _) in self._open.items():
                binding = engine.binding
                if (
                    other != session_id
                    and not self._lock(other).locked()
                    and not (binding is not None and binding.pending)
                ):
                    del self._open[other]
                    del self._locks[other]
                    break
            else:
                return  # every other one is busy or still has entries to store

    async def _current(self, engine: ContextEngine) -> bool:
        """Whether the stored session ends where ``engine``'s does (entries still queued after
        a failed commit keep the engine: its next commit retries them). Only the stored file's
        last entry line is decoded, not the session."""
        binding = engine.binding
        assert binding is not None
        if binding.pending:
            return True
        data = await self.store.export_bytes(binding.ref)
        entries = engine.session.entries
        return _last_entry_id(data) == (entries[-1].id if len(entries) else None)

    async def _engine(self, session_id: str) -> ContextEngine:
        from pi_context.store.binding import StoreBinding

        ref = self.ref(session_id)
        try:
            binding = await StoreBinding.open(self.store, ref)
        except SessionNotFoundError:
            cwd = self._options.get("cwd") or os.getcwd()
            try:
                binding = await StoreBinding.create(
                    self.store, tenant=self.tenant, cwd=str(cwd), session_id=session_id
                )
            except StoreError:
                # another process created it between the two calls: open theirs
                binding = await StoreBinding.open(self.store, ref)
        return ContextEngine.bound(binding, **self._options)

"""Session stores: pi sessions kept in a directory of JSONL files, in PostgreSQL, or in memory.

::

    store = await open_store("postgresql://...")   # or a directory, "file:DIR", "memory:"
    await store.migrate()
    ref = await store.import_jsonl("session.jsonl", tenant="acme")
    result = await store.append(ref, [entry], if_leaf=leaf)
    stored = await store.load(ref)                  # .header, .entries, .session()
    hits = await store.search(ref, "release tag")
    async with store.lease(ref, owner="replica-1", ttl=30): ...

Every store keeps a session as the lines of its pi file, byte for byte: an imported file
exports as it was; ``load`` reads those bytes with the session package's reader, so a stored
session projects exactly as its file does. The rules of an append, whatever the store:

* the entries are pi entry mappings (or :class:`~pi_context.session.Entry`): a string
  ``type`` and ``id``, a ``parentId`` naming an entry of the session or of the batch before it
  (or null); a broken rule is :class:`InvalidEntryError` naming the entry, nothing stored;
* ``if_leaf=X`` appends only while the session's leaf (its last entry) is ``X``, else
  :class:`LeafMovedError`; without it two writers on one parent make siblings, never an
  interleaved chain;
* a batch whose ids are all stored with the same bytes returns the stored result (a retry
  after a lost acknowledgement); a stored id with other bytes is an error;
* a ref of another tenant is :class:`SessionNotFoundError` and writes nothing.

A v1/v2 session file is imported and exported as it is, but not appended to (the file store
would rewrite it as v3). The file store's batch is written entry by entry under the session
file's lock; the PostgreSQL store's in one statement.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pi_context import _lazy
from pi_context.errors import (
    InvalidEntryError,
    LeafMovedError,
    SessionBusyError,
    SessionNotFoundError,
    StoreError,
    StoreSchemaError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from pi_context.store.base import (
    ANY_LEAF,
    AppendResult,
    Lease,
    SessionPage,
    SessionRef,
    SessionStore,
    SessionSummary,
    StoredSession,
)

if TYPE_CHECKING:
    from pi_context.store.file import FileStore
    from pi_context.store.memory import MemoryStore
    from pi_context.store.postgres import PostgresStore

__all__ = [
    "ANY_LEAF",
    "AppendResult",
    "FileStore",
    "InvalidEntryError",
    "LeafMovedError",
    "Lease",
    "MemoryStore",
    "PostgresStore",
    "SessionBusyError",
    "SessionNotFoundError",
    "SessionPage",
    "SessionRef",
    "SessionStore",
    "SessionSummary",
    "StoreError",
    "StoreSchemaError",
    "StoreTimeoutError",
    "StoreUnavailableError",
    "StoredSession",
    "open_store",
]

_HOMES = _lazy.homes(
    {
        "pi_context.store.file": ("FileStore",),
        "pi_context.store.memory": ("MemoryStore",),
        "pi_context.store.postgres": ("PostgresStore",),
    }
)
"""Where each store class lives; imported from there when first used."""

__getattr__, __dir__ = _lazy.hooks(globals(), _HOMES, __all__)


async def open_store(
    url: str | os.PathLike[str], *, max_connections: int = 10, connect_timeout: float = 10.0
) -> SessionStore:
    """The store ``url`` names: ``postgresql://...`` (or ``postgres://``) the PostgreSQL
    store (credentials from the URL or libpq's environment), ``memory:`` a store in this
    process, ``file:DIR`` or a directory path the pi JSONL files in it. Anything else that
    looks like a URL is a :class:`StoreError`."""
    text = os.fspath(url)
    scheme, sep, rest = text.partition(":")
    if sep and scheme.lower() in ("postgresql", "postgres"):
        from pi_context.store.postgres import PostgresStore

        return await PostgresStore.connect(
            text, max_size=max_connections, connect_timeout=connect_timeout
        )
    if text == "memory:":
        from pi_context.store.memory import MemoryStore

        return MemoryStore()
    if sep and scheme.lower() == "file":
        path = rest[2:] if rest.startswith("//") else rest
        if not path:
            raise StoreError(f"not a store URL: {text!r} (file:DIR needs a directory)")
    elif sep and len(scheme) > 1 and "/" not in scheme and "\\" not in scheme:
        raise StoreError(
            f"not a store URL: {text!r} (use a directory, file:DIR, memory: or postgresql://...)"
        )
    else:
        path = text
    from pi_context.store.file import FileStore

    return FileStore(path)

"""``open_store``: the store a URL or directory names."""

from __future__ import annotations

import os

from pi_context.errors import StoreError
from pi_context.store.base import SessionStore

__all__ = ["open_store"]


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

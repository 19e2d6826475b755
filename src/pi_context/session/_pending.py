"""The storage of a session whose entries are kept elsewhere (a session store): appends wait.

:class:`PendingEntries` stands where a session file's :class:`~._file.storage.SessionStorage`
stands. A :class:`~pi_context.session.Session`'s appends are synchronous and a store's writes
are not, so an append only queues its entry here; the owner of the session (the store's
binding) takes the queued entries in append order and drops them once the store has them.
Nothing here writes, blocks or knows the store.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_context.session._load.scan import CURRENT_VERSION
from pi_context.session.entries import Entry

__all__ = ["PendingEntries"]


class PendingEntries:
    """Entries appended to a session and not yet stored, in append order.

    It answers what :class:`~pi_context.session.Session` asks of a storage: the session's
    header is stored already (``persisted``), in the current version, at no path; ``sync``
    does nothing (an entry is durable once its owner has stored it).
    """

    path = None
    persisted = True
    legacy = False
    version = CURRENT_VERSION
    lines = None

    def __init__(self) -> None:
        self._pending: list[Entry] = []

    def add(self, entry: Entry) -> None:
        """Queue an appended entry."""
        self._pending.append(entry)

    @property
    def pending(self) -> Sequence[Entry]:
        """The queued entries, oldest first (a copy: later appends do not change it)."""
        return tuple(self._pending)

    def drop(self, count: int) -> None:
        """Forget the ``count`` oldest queued entries (their owner has stored them)."""
        del self._pending[:count]

    def sync(self) -> None:
        return None

    def close(self) -> None:
        return None

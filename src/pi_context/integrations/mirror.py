"""Keeping a pi session in step with a framework's own message list.

pydantic-ai and LangChain keep the conversation themselves (``message_history``, the graph
state); the adapter is handed that list before each model call. :func:`sync` makes the
session's current branch say the same thing with the fewest appends: the longest prefix the
list shares with the session's projection is recognized, and only what follows is appended.
A list that diverges from the projection (the user edited or replayed history) becomes a pi
branch at the last shared message, as pi's ``/tree`` would make it: nothing in the file is
rewritten. A divergence inside what a compaction kept cannot be expressed as a branch of the
compacted path, so the list is then recorded as a new root.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pi_context.integrations.engine import ContextEngine

__all__ = ["Codec", "SyncReport", "projected_items", "sync"]

_log = logging.getLogger("pi_context.integrations")


class Codec(Protocol):
    """A framework's message mapping, both ways, over whole lists (groupings differ)."""

    def to_pi(self, items: Sequence[Any]) -> list[dict[str, Any]]:
        """Framework items → pi messages."""
        ...

    def from_pi(self, messages: Sequence[dict[str, Any]]) -> list[tuple[Any, int]]:
        """pi messages → framework items, each with the index of the last message it used."""
        ...

    def same(self, a: Any, b: Any) -> bool:
        """Whether two framework items are the same message."""
        ...


@dataclass(frozen=True, slots=True)
class SyncReport:
    shared: int
    """Items of the list the session already had."""
    appended: int
    """pi messages appended."""
    branched: bool
    """The list diverged from the session: the new items start a branch (or a new root)."""


def projected_items(engine: ContextEngine, codec: Codec) -> list[tuple[Any, int]]:
    """The session's current branch as framework items (with their last message's index)."""
    return codec.from_pi([message for _, message in engine.projected()])


def sync(engine: ContextEngine, items: Sequence[Any], codec: Codec) -> SyncReport:
    """Make the session's current branch hold ``items`` (see the module docstring)."""
    projected = engine.projected()
    known = codec.from_pi([message for _, message in projected])
    shared = 0
    for (mine, _), theirs in zip(known, items, strict=False):
        if not codec.same(mine, theirs):
            break
        shared += 1
    branched = shared < len(known)
    if branched:
        leaf: str | None = None
        if shared:
            entry = projected[known[shared - 1][1]][0]
            path = [e.id for e in engine.session.branch_view()]
            compactions = [
                i for i, e in enumerate(engine.session.branch_view()) if e.type == "compaction"
            ]
            position = path.index(entry.id) if entry.id in path else -1
            if compactions and position < compactions[-1]:
                _log.warning(
                    "pi-context: the history diverges inside what a compaction kept; "
                    "recording it as a new root of the session"
                )
                shared = 0
            else:
                leaf = entry.id
        engine.move_to(leaf)
    messages = codec.to_pi(items[shared:])
    engine.append(messages)
    return SyncReport(shared, len(messages), branched)

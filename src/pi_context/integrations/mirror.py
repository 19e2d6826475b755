"""Keeping a pi session in step with a framework's own message list.

pydantic-ai and LangChain keep the conversation themselves (``message_history``, the graph
state); the adapter is handed that list before each model call. :func:`sync` makes the
session's current branch say the same thing with the fewest appends: the longest prefix the
list shares with the session's projection is recognized, and only what follows is appended.
A list that diverges from the projection (the user edited or replayed history) becomes a pi
branch at the last shared message, as pi's ``/tree`` would make it: nothing in the file is
rewritten. A divergence inside what a compaction kept cannot be expressed as a branch of the
compacted path, so the list is then recorded as a new root.

:class:`Mirror` remembers the list it last recorded (or handed out) and the leaf it left: when
the next list extends that one with the very same objects, only the new ones are converted
and appended, without walking the history again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pi_context.integrations.engine import ContextEngine, log
from pi_context.integrations.pairs import PairLedger, PairRepair

__all__ = ["Codec", "Mirror", "SyncReport", "projected_items", "sync"]


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
            if engine.inside_compacted(entry.id):
                log.warning(
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


@dataclass
class Mirror:
    """:func:`sync` for one adapter, remembering what the session's branch holds."""

    engine: ContextEngine
    codec: Codec
    _held: list[Any] = field(default_factory=list)
    """The framework items the branch holds, as the framework last passed or was handed them."""
    _leaf: str | None = None
    """The session's leaf when ``_held`` was taken (``None``: nothing remembered)."""
    _repaired: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    """Call ids of the results left out and of the calls answered in the list held, when it
    is a repaired projection: the branch still has them as they arrived."""
    _ledger: PairLedger = field(default_factory=PairLedger)
    """What a repair would change in the branch's projection, kept as messages are appended."""
    extended: bool = False
    """The last :meth:`sync` found the list extending the one held: the branch's projection
    now converts to exactly that list, without converting it to find out."""

    def _extends(self, items: Sequence[Any]) -> bool:
        held = self._held
        return (
            self._leaf is not None
            and self._leaf == self.engine.session.leaf_id
            and len(items) >= len(held)
            and all(a is b for a, b in zip(held, items, strict=False))
        )

    def sync(self, items: Sequence[Any]) -> SyncReport:
        """:func:`sync`, appending only the new items when ``items`` extends the list last seen."""
        self.extended = self._extends(items)
        if self.extended:
            shared = len(self._held)
            messages = self.codec.to_pi(items[shared:])
            self.engine.append(messages)
            self._ledger.add(messages)
            self._held = list(items)
            self._leaf = self.engine.session.leaf_id
            return SyncReport(shared, len(messages), False)
        report = sync(self.engine, items, self.codec)
        self._repaired = (frozenset(), frozenset())
        self.hold(items)
        return report

    def pairs_hold(self) -> bool:
        """Whether the list last synced keeps every tool result with its call: the branch's
        projection does, apart from what the list held was repaired of (kept up to date as
        messages are appended, no walk of the history)."""
        dropped, answered = self._repaired
        ledger = self._ledger
        return ledger.dropped_results <= dropped and ledger.answered_calls <= answered

    def holds_valid(self) -> bool:
        """Whether the list last synced is what the session would hand out: it extended the
        list held, and the pairs hold."""
        return self.extended and self.pairs_hold()

    def hold(self, items: Sequence[Any], repair: PairRepair | None = None) -> None:
        """Remember that the branch now holds ``items`` (after a sync), or the list handed to
        the framework in place of its own, made with ``repair``."""
        self._held = list(items)
        self._leaf = self.engine.session.leaf_id
        self._ledger = PairLedger([message for _, message in self.engine.projected()])
        if repair is not None:
            self._repaired = (frozenset(repair.dropped_results), frozenset(repair.answered_calls))

"""Context-size accounting: how big the context is, and when to compact.

pi trusts the provider's reported usage of the last successful assistant response and adds the
chars/4 estimate of what came after it (:func:`estimate_context_tokens`). After a context edit
or a compaction that usage no longer describes the context, so the canonical estimate
(:func:`estimate_projected_context_tokens`) falls back to a pure estimate over the projection,
counting the replayed system state once.

:class:`TokenCache` keeps per-entry estimates so repeated preparations on a long session do not
re-measure every message (the estimate of an unedited message entry never changes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pi_context.compaction.file_ops import FileOperations
from pi_context.prompt import get_current_system_message
from pi_context.session.entries import Entry
from pi_context.session.projection import EntryKey
from pi_context.tokens import (
    ContextEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
    has_valid_usage,
    should_compact,
)

__all__ = [
    "ContextEstimate",
    "TokenCache",
    "calculate_context_tokens",
    "estimate_context_tokens",
    "estimate_kept_context_tokens",
    "estimate_projected_context_tokens",
    "get_last_assistant_usage",
    "has_valid_usage",
    "should_compact",
]


class _Item(Protocol):
    @property
    def entry(self) -> Entry: ...

    @property
    def messages(self) -> Sequence[Any]: ...

    @property
    def key(self) -> EntryKey: ...


class _ProjectionLike(Protocol):
    @property
    def entries(self) -> Sequence[Any]: ...

    @property
    def messages(self) -> Sequence[Any]: ...


def _same_line(a: Entry, b: Entry) -> bool:
    """Two entries with the same JSON line (a fork's copy of an entry)."""
    return a.raw == b.raw


class TokenCache:
    """Per-entry token estimates and file operations, reused while an entry's messages are the same.

    Items are keyed by their :data:`~pi_context.session.projection.EntryKey` (entry id, edit
    generation): the same key means the same messages, so an entry is measured once whichever
    projection it comes from (kept incrementally, rebuilt after a compaction, or of another
    leaf), and a ``context_edit`` of it, a new generation, is measured again. A hit is trusted
    for the very entry it was recorded for, or an entry with the same JSON line (a fork's copy);
    an entry of another session that happens to share the id is measured again. One slot per
    entry id (the id's string hash is cached, so a lookup costs what an identity lookup does).
    """

    __slots__ = ("_ops", "_tokens", "history")

    def __init__(self) -> None:
        self._tokens: dict[str, tuple[EntryKey, Entry, int]] = {}
        self._ops: dict[str, tuple[EntryKey, Entry, tuple[tuple[str, str], ...]]] = {}
        self.history: Any = None
        """The last preparation's summarized range, extended in place by the next one."""

    def item_tokens(self, item: _Item) -> int:
        """Σ estimate of the item's messages."""
        messages = item.messages
        if not messages:
            return 0
        entry = item.entry
        key = item.key
        hit = self._tokens.get(entry.id)
        if (
            hit is not None
            and (hit[0] is key or hit[0] == key)
            and (hit[1] is entry or _same_line(hit[1], entry))
        ):
            return hit[2]
        total = sum(estimate_tokens(m) for m in messages)
        self._tokens[entry.id] = (key, entry, total)
        return total

    def item_file_ops(self, item: _Item) -> tuple[tuple[str, str], ...]:
        """``(tool, path)`` of the read/write/edit calls in the item's non-system messages."""
        entry = item.entry
        key = item.key
        hit = self._ops.get(entry.id)
        if (
            hit is not None
            and (hit[0] is key or hit[0] == key)
            and (hit[1] is entry or _same_line(hit[1], entry))
        ):
            return hit[2]
        ops = FileOperations()
        for message in item.messages:
            if message.get("role") != "system":
                ops.add_message(message)
        found = tuple(
            [("read", p) for p in ops.read]
            + [("write", p) for p in ops.written]
            + [("edit", p) for p in ops.edited]
        )
        self._ops[entry.id] = (key, entry, found)
        return found

    def clear(self) -> None:
        self._tokens.clear()
        self._ops.clear()
        self.history = None


def _current_system_tokens(messages: Sequence[Any]) -> int:
    current = get_current_system_message(messages)
    return estimate_tokens(current) if current is not None else 0


def estimate_projected_context_tokens(
    projection: _ProjectionLike,
    branch_entries: Sequence[Entry],
    cache: TokenCache | None = None,
) -> ContextEstimate:
    """pi's canonical context estimate (``estimateProjectedContextTokens``).

    The usage-based estimate stands when its usage was measured after the last ``context_edit``
    or ``compaction`` on the branch; otherwise a pure estimate: the replayed system state once
    plus every non-system projected message.
    """
    cache = cache or TokenCache()
    items: Sequence[_Item] = projection.entries
    # Find the last valid usage by walking projected entries backwards (no flattening needed).
    usage_item: int | None = None
    usage_msg: int | None = None
    for i in range(len(items) - 1, -1, -1):
        msgs = items[i].messages
        for j in range(len(msgs) - 1, -1, -1):
            if has_valid_usage(msgs[j]):
                usage_item, usage_msg = i, j
                break
        if usage_item is not None:
            break
    if usage_item is not None and usage_msg is not None:
        usage_id = items[usage_item].entry.id
        u = inv = -1
        for k in range(len(branch_entries) - 1, -1, -1):
            entry = branch_entries[k]
            if inv == -1 and entry.type in ("context_edit", "compaction"):
                inv = k
            if entry.id == usage_id:
                u = k
                break
        if u > inv:
            item = items[usage_item]
            usage_tokens = int(calculate_context_tokens(item.messages[usage_msg]["usage"]))
            trailing = sum(estimate_tokens(m) for m in item.messages[usage_msg + 1 :])
            trailing += sum(cache.item_tokens(it) for it in items[usage_item + 1 :])
            after = (
                len(item.messages)
                - usage_msg
                + sum(len(it.messages) for it in items[usage_item + 1 :])
            )
            index = len(projection.messages) - after
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    total = _current_system_tokens(projection.messages)
    total += sum(_non_system_tokens(item, cache) for item in items)
    return ContextEstimate(total, 0, total, None)


def _non_system_tokens(item: _Item, cache: TokenCache) -> int:
    """The item's messages without its system messages (the system state is counted once)."""
    messages = item.messages
    if any(isinstance(m, Mapping) and m.get("role") == "system" for m in messages):
        return sum(estimate_tokens(m) for m in messages if m.get("role") != "system")
    return cache.item_tokens(item)


def estimate_kept_context_tokens(
    projection: _ProjectionLike,
    first_kept_index: int,
    cache: TokenCache | None = None,
    *,
    summary: str | None = None,
) -> int:
    """The estimated context once a compaction keeps ``projection.entries[first_kept_index:]``.

    The current system state once, the new summary (when given; a dry run has none yet) and
    the kept non-system messages; older compactions no longer contribute.
    """
    cache = cache or TokenCache()
    total = _current_system_tokens(projection.messages)
    if summary is not None:
        total += estimate_tokens({"role": "compactionSummary", "summary": summary})
    for item in projection.entries[first_kept_index:]:
        if item.entry.type != "compaction":
            total += _non_system_tokens(item, cache)
    return total

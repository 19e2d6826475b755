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
from dataclasses import dataclass
from typing import Any, Protocol

from pi_context.compaction.settings import CompactionSettings
from pi_context.session.entries import Entry
from pi_context.tokens import estimate_tokens

__all__ = [
    "ContextEstimate",
    "TokenCache",
    "calculate_context_tokens",
    "estimate_context_tokens",
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


class _ProjectionLike(Protocol):
    @property
    def entries(self) -> Sequence[Any]: ...

    @property
    def messages(self) -> Sequence[Any]: ...


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    """pi's ``{tokens, usageTokens, trailingTokens, lastUsageIndex}``."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "lastUsageIndex": self.last_usage_index,
        }


def _num(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return value


def calculate_context_tokens(usage: Mapping[str, Any]) -> int | float:
    """``totalTokens`` when non-zero, else ``input + output + cacheRead + cacheWrite``."""
    total = _num(usage.get("totalTokens"))
    if total:
        return total
    return (
        _num(usage.get("input"))
        + _num(usage.get("output"))
        + _num(usage.get("cacheRead"))
        + _num(usage.get("cacheWrite"))
    )


def has_valid_usage(message: Mapping[str, Any]) -> bool:
    """An assistant message that finished (not aborted/error) and reported a non-zero usage."""
    if message.get("role") != "assistant":
        return False
    if message.get("stopReason") in ("aborted", "error"):
        return False
    usage = message.get("usage")
    return isinstance(usage, Mapping) and calculate_context_tokens(usage) > 0


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> ContextEstimate:
    """Last valid usage plus the estimate of the messages after it (pi's ``estimateContextTokens``)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if has_valid_usage(message):
            usage_tokens = int(calculate_context_tokens(message["usage"]))
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    total = sum(estimate_tokens(m) for m in messages)
    return ContextEstimate(total, 0, total, None)


def get_last_assistant_usage(entries: Sequence[Entry]) -> dict[str, Any] | None:
    """The usage of the last message entry holding an assistant message with valid usage."""
    for entry in reversed(entries):
        if entry.type != "message" or entry.role != "assistant":
            continue
        message = entry.message
        if message is not None and has_valid_usage(message):
            return dict(message["usage"])  # type: ignore[typeddict-item]
    return None


def should_compact(
    context_tokens: float, context_window: float, settings: CompactionSettings
) -> bool:
    """pi's threshold: enabled and ``context_tokens > context_window - reserve_tokens`` (strict)."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens


class TokenCache:
    """Per-entry token estimates, reused while an entry's messages are its own unedited ones."""

    __slots__ = ("_by_entry",)

    def __init__(self) -> None:
        self._by_entry: dict[int, tuple[Entry, int]] = {}

    def item_tokens(self, item: _Item) -> int:
        """Σ estimate of the item's messages (cached for a message entry's own message)."""
        entry = item.entry
        messages = item.messages
        if not messages:
            return 0
        own = len(messages) == 1 and entry.type == "message" and messages[0] is entry.message
        if own:
            hit = self._by_entry.get(id(entry))
            if hit is not None and hit[0] is entry:
                return hit[1]
        total = sum(estimate_tokens(m) for m in messages)
        if own:
            self._by_entry[id(entry)] = (entry, total)
        return total

    def message_tokens(self, item: _Item) -> list[int]:
        if len(item.messages) == 1:
            return [self.item_tokens(item)]
        return [estimate_tokens(m) for m in item.messages]

    def clear(self) -> None:
        self._by_entry.clear()


def _current_system_tokens(messages: Sequence[Any]) -> int:
    from pi_context.prompt import get_current_system_message

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
            index = sum(len(it.messages) for it in items[:usage_item]) + usage_msg
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    total = _current_system_tokens(projection.messages)
    for item in items:
        msgs = item.messages
        if not msgs:
            continue
        if any(isinstance(m, Mapping) and m.get("role") == "system" for m in msgs):
            total += sum(estimate_tokens(m) for m in msgs if m.get("role") != "system")
        else:
            total += cache.item_tokens(item)
    return ContextEstimate(total, 0, total, None)

"""When to compact automatically: pi's ``_checkCompaction`` as a pure decision.

The agent session calls :func:`check_compaction` before a new prompt (with aborted responses
considered) and after a run (aborted responses skipped); the between-turn threshold test is
:func:`threshold_exceeded`; :func:`idle_compaction_due` is this project's early compaction
after a pause that let the provider's prompt cache expire. The decision says what to do; the session does it (omit a failed
attempt, compact, retry once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from msgspec import Struct

from pi_context.compaction.accounting import (
    TokenCache,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_projected_context_tokens,
    should_compact,
)
from pi_context.messages import AssistantMessage
from pi_context.model import ModelInfo
from pi_context.model.classify import is_context_overflow
from pi_context.resources.settings import CompactionSettings
from pi_context.session.entries import Entry
from pi_context.session.projection import Projection, js_date_ms

from .branch_positions import BranchPositions

__all__ = [
    "CompactionDecision",
    "check_compaction",
    "idle_compaction_due",
    "latest_compaction_ms",
    "threshold_exceeded",
]


class CompactionDecision(Struct, frozen=True):
    """``none``; ``threshold``; ``overflow`` (``will_retry``: omit the attempt, compact, retry);
    ``exhausted`` (a second overflow after one recovery: report ``error_message``, do nothing)."""

    action: Literal["none", "threshold", "overflow", "exhausted"]
    will_retry: bool = False
    error_message: str | None = None


NONE = CompactionDecision("none")


def latest_compaction_ms(
    branch: Sequence[Entry], facts: BranchPositions | None = None
) -> float | None:
    """The time (ms) of the last compaction on the branch, if any."""
    last = (facts or BranchPositions()).last_compaction(branch)
    if last < 0:
        return None
    value = js_date_ms(branch[last].get("timestamp"))
    return float(value) if value is not None else None


def _older_than_compaction(
    message: AssistantMessage,
    entry_id: str | None,
    branch: Sequence[Entry],
    at: float | None,
    facts: BranchPositions,
) -> bool:
    """pi compares the message timestamp with the latest compaction's; a response stored in
    the same millisecond would count as stale. With the entry known, its position on the
    branch decides instead (deterministic)."""
    if at is None:
        return False
    if entry_id is not None:
        position = facts.position(branch, entry_id)
        if position is not None:
            return position < facts.last_compaction(branch)
    timestamp = message.get("timestamp")
    return isinstance(timestamp, int | float) and timestamp <= at


def threshold_exceeded(
    projection: Projection,
    branch: Sequence[Entry],
    info: ModelInfo,
    settings: CompactionSettings,
    cache: TokenCache | None = None,
) -> bool:
    """The between-turn test: the projected estimate is over ``window - reserveTokens``.

    ``cache`` (kept across calls) spares re-measuring unchanged entries."""
    if info.context_window <= 0 or not settings.enabled:
        return False
    tokens = estimate_projected_context_tokens(projection, branch, cache).tokens
    return bool(should_compact(tokens, info.context_window, settings))


def idle_compaction_due(
    message: AssistantMessage,
    now_ms: int,
    projection: Projection,
    branch: Sequence[Entry],
    info: ModelInfo,
    settings: CompactionSettings,
    cache: TokenCache | None = None,
) -> bool:
    """Whether a prompt arriving at ``now_ms`` after ``message`` (the newest response) should
    compact first because the prompt cache has expired (``compaction.idleCompactPercent``).

    A provider keeps a prompt's cached prefix for a few minutes after its last use; after a
    longer pause the next request is billed for its whole prompt however it is built. The
    context is then shrunk by a summary when it is past ``idleCompactPercent`` of the
    threshold: the summary request and the first request after it cost about what the lone
    rewrite would, and every request until the next compaction re-reads a smaller prompt.
    The pause is measured from the response's timestamp (when its request was sent)."""
    percent = settings.idle_compact_percent
    window = info.context_window
    if not settings.enabled or percent <= 0 or window <= 0:
        return False
    sent = message.get("timestamp")
    if not isinstance(sent, int | float) or now_ms - sent <= settings.idle_seconds * 1000:
        return False
    threshold = window - settings.reserve_tokens
    tokens = estimate_projected_context_tokens(projection, branch, cache).tokens
    return tokens > threshold * percent / 100


def check_compaction(
    message: AssistantMessage,
    entry_id: str | None,
    *,
    branch: Sequence[Entry],
    projection: Projection,
    info: ModelInfo,
    settings: CompactionSettings,
    skip_aborted: bool = True,
    recovery_attempted: bool = False,
    cache: TokenCache | None = None,
    facts: BranchPositions | None = None,
) -> CompactionDecision:
    """Decide what the session does after ``message`` (pi's ``_checkCompaction``, in its order).

    ``cache`` and ``facts`` (kept across calls) spare re-measuring and re-scanning what did not
    change since the previous check."""
    facts = facts or BranchPositions()
    if not settings.enabled:
        return NONE
    stop = message.get("stopReason")
    if skip_aborted and stop == "aborted":
        return NONE
    same_model = message.get("provider") == info.provider and message.get("model") == info.id
    window = info.context_window
    if window <= 0:
        return NONE
    compacted_at = latest_compaction_ms(branch, facts)
    if _older_than_compaction(message, entry_id, branch, compacted_at, facts):
        return NONE

    # The message is normally at the end: scan from there.
    projected = entry_id is None or any(
        p.entry.id == entry_id and any(m.get("role") == "assistant" for m in p.messages)
        for p in reversed(projection.entries)
    )
    after: Sequence[Entry] = ()
    if entry_id is not None:
        for i in range(len(branch) - 1, -1, -1):
            if branch[i].id == entry_id:
                after = branch[i + 1 :]
                break
    edit_after = any(e.type == "context_edit" for e in after)
    last_edit_on_msg: Entry | None = None
    for e in after:
        if e.type == "context_edit" and e.get("targetId") == entry_id:
            last_edit_on_msg = e
    retained = entry_id is None or (
        not any(e.type == "compaction" for e in after)
        and (last_edit_on_msg is None or last_edit_on_msg.get("replacement") is not None)
    )
    usage_matches = projected and not edit_after
    explicit = stop == "error" and is_context_overflow(message)
    overflow = same_model and (
        (explicit and retained) or (usage_matches and is_context_overflow(message, window))
    )
    raw_usage: Any = message.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    recoverable_length = (
        same_model
        and projected
        and stop == "length"
        and info.max_tokens > 0
        and int(usage.get("output", 0) or 0) < info.max_tokens
    )
    if overflow or recoverable_length:
        will_retry = stop != "stop"
        if not will_retry:
            return CompactionDecision("overflow", will_retry=False)
        if recovery_attempted:
            what = "Context overflow" if overflow else "Truncated-response"
            return CompactionDecision(
                "exhausted",
                error_message=(
                    f"{what} recovery failed after one compact-and-retry attempt; "
                    "the request still does not fit the model's context window"
                ),
            )
        return CompactionDecision("overflow", will_retry=True)

    if facts.has_context_edit(projection.entries):
        tokens = estimate_projected_context_tokens(projection, branch, cache).tokens
    elif stop == "error" or calculate_context_tokens(usage) == 0:
        estimate = estimate_context_tokens(projection.messages)
        if estimate.last_usage_index is not None and compacted_at is not None:
            used = projection.messages[estimate.last_usage_index]
            ts = used.get("timestamp")
            if isinstance(ts, int | float) and ts <= compacted_at:
                return NONE
        tokens = estimate.tokens
    else:
        tokens = int(calculate_context_tokens(usage))
    if should_compact(tokens, window, settings):
        return CompactionDecision("threshold")
    return NONE

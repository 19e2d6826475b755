"""Numbers the terminal shows: the status line and the counts of ``/session``.

Token, cost and cache totals and the context size come from the agent
(:func:`pi_context.agent.stats.session_stats`: every entry of the file, as pi's ``/session``),
so the terminal and the library report one set of numbers. This module adds what only the
terminal shows: how many messages, tool calls and compactions the file holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pi_context.cli.app.agent_api import SessionStats
from pi_context.session.entries import Entry

__all__ = ["MessageCounts", "cache_ratio", "count_messages", "format_tokens", "status_line"]


@dataclass(frozen=True, slots=True)
class MessageCounts:
    """What a session file holds, by kind (all branches)."""

    entries: int
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_results: int
    compactions: int


def count_messages(entries: Iterable[Entry]) -> MessageCounts:
    """Count the entries, messages by role, tool calls and compactions of a session."""
    count = users = assistants = calls = results = compactions = 0
    for entry in entries:
        count += 1
        if entry.type == "compaction":
            compactions += 1
        message = entry.message
        if message is None:
            continue
        role = message.get("role")
        if role == "user":
            users += 1
        elif role == "toolResult":
            results += 1
        elif role == "assistant":
            assistants += 1
            content = message.get("content")
            if isinstance(content, list):
                calls += sum(
                    1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall"
                )
    return MessageCounts(count, users, assistants, calls, results, compactions)


def cache_ratio(stats: SessionStats) -> float | None:
    """The cache hit ratio, or ``None`` while no request reported prompt tokens."""
    if stats.input + stats.cache_read + stats.cache_write == 0:
        return None
    return stats.hit_ratio


def format_tokens(count: float) -> str:
    """``950``, ``12.3k``, ``1.2M``."""
    if count < 1000:
        return str(int(count))
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def status_line(stats: SessionStats, model: str) -> str:
    """``model · ctx 12.3k/128.0k (9.6%) · cache 85% · $0.0123``.

    The context reads ``ctx ?`` right after a compaction, until a response reports usage.
    """
    parts = [model]
    window = stats.context_window
    limit = f"/{format_tokens(window)}" if window else ""
    if stats.context_tokens is None:
        parts.append(f"ctx ?{limit}")
    else:
        ctx = f"ctx {format_tokens(stats.context_tokens)}{limit}"
        if window:
            ctx += f" ({100 * stats.context_tokens / window:.1f}%)"
        parts.append(ctx)
    ratio = cache_ratio(stats)
    parts.append(f"cache {ratio * 100:.0f}%" if ratio is not None else "cache –")
    parts.append(f"${stats.cost:.4f}")
    return " · ".join(parts)

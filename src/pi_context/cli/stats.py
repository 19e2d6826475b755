"""Numbers the terminal shows: the status line and ``/session``.

Computed from the session entries alone (every entry of the file, not only the branch, as
pi's totals): token and cost totals include compaction, branch-summary and ``usage`` entries;
the cache hit ratio is ``cacheRead / (input + cacheRead + cacheWrite)``; the context size is
pi's estimate for the current projection (last valid usage plus the messages after it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pi_context.session.entries import Entry

__all__ = ["SessionStats", "collect_stats", "format_tokens", "status_line"]


@dataclass(frozen=True, slots=True)
class SessionStats:
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_results: int
    entries: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float
    context_tokens: int | None
    compactions: int

    @property
    def cache_hit_ratio(self) -> float | None:
        """Share of prompt tokens read from the cache, or ``None`` before any request."""
        prompt = self.input + self.cache_read + self.cache_write
        return self.cache_read / prompt if prompt else None


def _add_usage(totals: list[float], usage: Any) -> None:
    if not isinstance(usage, Mapping):
        return
    for index, key in enumerate(("input", "output", "cacheRead", "cacheWrite")):
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            totals[index] += value
    cost = usage.get("cost")
    if isinstance(cost, Mapping) and isinstance(cost.get("total"), int | float):
        totals[4] += float(cost["total"])


def collect_stats(entries: Iterable[Entry], context_tokens: int | None = None) -> SessionStats:
    """Totals over ``entries``; ``context_tokens`` is passed through (the agent knows it)."""
    totals = [0.0, 0.0, 0.0, 0.0, 0.0]
    users = assistants = calls = results = count = compactions = 0
    for entry in entries:
        count += 1
        if entry.type == "message":
            message = entry.data.get("message")
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "user":
                users += 1
            elif role == "assistant":
                assistants += 1
                content = message.get("content")
                if isinstance(content, list):
                    calls += sum(
                        1 for b in content if isinstance(b, dict) and b.get("type") == "toolCall"
                    )
                _add_usage(totals, message.get("usage"))
            elif role == "toolResult":
                results += 1
                _add_usage(totals, message.get("usage"))
        elif entry.type in ("compaction", "branch_summary", "usage"):
            compactions += entry.type == "compaction"
            _add_usage(totals, entry.data.get("usage"))
    return SessionStats(
        user_messages=users,
        assistant_messages=assistants,
        tool_calls=calls,
        tool_results=results,
        entries=count,
        input=int(totals[0]),
        output=int(totals[1]),
        cache_read=int(totals[2]),
        cache_write=int(totals[3]),
        cost=totals[4],
        context_tokens=context_tokens,
        compactions=compactions,
    )


def format_tokens(count: float) -> str:
    """``950``, ``12.3k``, ``1.2M``."""
    if count < 1000:
        return str(int(count))
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def status_line(stats: SessionStats, model: str, context_window: int | None) -> str:
    """``model · ctx 12.3k/128.0k (9.6%) · cache 85% · $0.0123``.

    The context reads ``ctx ?`` right after a compaction, until a response reports usage.
    """
    parts = [model]
    window = f"/{format_tokens(context_window)}" if context_window else ""
    if stats.context_tokens is None:
        parts.append(f"ctx ?{window}")
    else:
        ctx = f"ctx {format_tokens(stats.context_tokens)}{window}"
        if context_window:
            ctx += f" ({100 * stats.context_tokens / context_window:.1f}%)"
        parts.append(ctx)
    ratio = stats.cache_hit_ratio
    parts.append(f"cache {ratio * 100:.0f}%" if ratio is not None else "cache –")
    parts.append(f"${stats.cost:.4f}")
    return " · ".join(parts)

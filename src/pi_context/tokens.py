"""pi's token estimate: characters / 4, rounded up, counted in UTF-16 code units.

pi 1.6.0 (``estimateTokens``) counts per role: text of string or text-block content, 4800
characters per image, thinking text, tool calls as ``len(name) + len(JSON.stringify(arguments))``,
a system message's content plus its non-empty section texts plus ``JSON.stringify(toolsAdded)``,
bash command plus output, and summary text. Anything else counts 0. Compaction decisions and
the numbers in the goldens depend on these exact rules, so they are reproduced literally.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from msgspec import Struct

from pi_context._json import js_stringify, utf16_len

__all__ = [
    "IMAGE_CHARS",
    "ContextEstimate",
    "calculate_context_tokens",
    "estimate_chars",
    "estimate_context_tokens",
    "estimate_tokens",
    "get_last_assistant_usage",
    "has_valid_usage",
    "should_compact",
]

IMAGE_CHARS: Final = 4800
"""Characters an image block counts for (about 1200 tokens)."""


def _str_len(value: Any) -> int:
    return utf16_len(value) if isinstance(value, str) else 0


def _content_chars(content: Any, *, assistant: bool = False) -> int:
    """Characters of a content value; assistant content counts thinking and tool calls, not
    images, and is never a plain string."""
    if isinstance(content, str):
        return 0 if assistant else utf16_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += _str_len(block.get("text"))
        elif not assistant:
            if kind == "image":
                chars += IMAGE_CHARS
        elif kind == "thinking":
            chars += _str_len(block.get("thinking"))
        elif kind == "toolCall":
            chars += _str_len(block.get("name"))
            # JSON.stringify(null) is "null": pi counts 4 characters for null arguments
            chars += utf16_len(js_stringify(block.get("arguments")))
    return chars


def _system_chars(message: Mapping[str, Any]) -> int:
    chars = _content_chars(message.get("content"))
    sections = message.get("sections")
    if isinstance(sections, Mapping):
        for value in sections.values():
            chars += _str_len(value)
    tools = message.get("toolsAdded")
    if tools is not None:
        chars += utf16_len(js_stringify(tools))
    return chars


def estimate_chars(message: Mapping[str, Any]) -> int:
    """The character count behind :func:`estimate_tokens`."""
    role = message.get("role")
    if role in ("user", "toolResult", "custom"):
        return _content_chars(message.get("content"))
    if role == "assistant":
        return _content_chars(message.get("content"), assistant=True)
    if role == "system":
        return _system_chars(message)
    if role == "bashExecution":
        return _str_len(message.get("command")) + _str_len(message.get("output"))
    if role in ("branchSummary", "compactionSummary"):
        return _str_len(message.get("summary"))
    return 0


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """pi's ``estimateTokens(message)``: ``ceil(chars / 4)``."""
    return math.ceil(estimate_chars(message) / 4)


# -- context-level accounting (pi's compaction/utils: usage-based context size) --------------


class _EntryLike(Protocol):
    """A session entry as far as usage lookup needs it."""

    type: str
    role: str | None

    @property
    def message(self) -> Any: ...


class _Threshold(Protocol):
    """Settings with pi's ``enabled`` and ``reserveTokens`` (e.g. ``CompactionSettings``)."""

    @property
    def enabled(self) -> bool: ...

    @property
    def reserve_tokens(self) -> int: ...


class ContextEstimate(Struct, frozen=True):
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
    """An assistant message that finished (not aborted/error) and reported a non-zero, finite
    usage (an infinite count describes no context and would break the integer arithmetic of
    every estimate built on it)."""
    if message.get("role") != "assistant":
        return False
    if message.get("stopReason") in ("aborted", "error"):
        return False
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return False
    tokens = calculate_context_tokens(usage)
    return tokens > 0 and math.isfinite(tokens)


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


def get_last_assistant_usage(entries: Sequence[_EntryLike]) -> dict[str, Any] | None:
    """The usage of the last message entry holding an assistant message with valid usage."""
    for entry in reversed(entries):
        if entry.type != "message" or entry.role != "assistant":
            continue
        message = entry.message
        if message is not None and has_valid_usage(message):
            return dict(message["usage"])
    return None


def should_compact(context_tokens: float, context_window: float, settings: _Threshold) -> bool:
    """pi's threshold: enabled and ``context_tokens > context_window - reserve_tokens`` (strict)."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens

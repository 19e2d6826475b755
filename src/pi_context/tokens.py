"""pi's token estimate: characters / 4, rounded up, counted in UTF-16 code units.

pi 1.6.0 (``estimateTokens``) counts per role: text of string or text-block content, 4800
characters per image, thinking text, tool calls as ``len(name) + len(JSON.stringify(arguments))``,
a system message's content plus its non-empty section texts plus ``JSON.stringify(toolsAdded)``,
bash command plus output, and summary text. Anything else counts 0. Compaction decisions and
the numbers in the goldens depend on these exact rules, so they are reproduced literally.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from pi_context._json import js_stringify, utf16_len

__all__ = ["IMAGE_CHARS", "estimate_chars", "estimate_tokens"]

IMAGE_CHARS: Final = 4800
"""Characters an image block counts for (about 1200 tokens)."""


def _str_len(value: Any) -> int:
    return utf16_len(value) if isinstance(value, str) else 0


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return utf16_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += _str_len(block.get("text"))
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def _assistant_chars(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += _str_len(block.get("text"))
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
        return _assistant_chars(message.get("content"))
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

"""The searchable text of one session entry, and the role it is listed under.

Search covers what the conversation said, as it was said: user prompts, the assistant's text,
thinking and tool calls (the tool's name and its arguments as JSON), tool results, shell
commands run by the user with their output, extension messages, and the summaries compaction
and branch navigation wrote. Images and usage records are not text. Entries that carry no
conversation (labels, model changes, extension state, context edits) have none.

The same function serves the index (what is ranked) and the snippet and recall views (what is
shown), so a hit's snippet always comes from the text that matched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pi_context import _json

__all__ = ["ENTRY_ROLES", "SNIPPET_CHARS", "entry_text"]

SNIPPET_CHARS: Final = 200
"""Characters of text a search hit's snippet shows around the first match (whitespace
collapsed). Here rather than in :mod:`~pi_context.session.search.query`, so that ``Session`` can name
the default without importing the search (and SQLite) before a search runs."""

ENTRY_ROLES: Final = {
    "compaction": "compactionSummary",
    "branch_summary": "branchSummary",
    "custom_message": "custom",
}
"""The role a non-message entry is listed under (the role of the message it projects to)."""

_BLOCK_SEPARATOR: Final = "\n"


def _content_text(content: Any) -> list[str]:
    """Text of a message content: a string, or the text-bearing blocks of a block list."""
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        return []
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
        elif kind == "thinking":
            thinking = block.get("thinking")
            if isinstance(thinking, str) and thinking:
                parts.append(thinking)
        elif kind == "toolCall":
            parts.append(_tool_call_text(block))
    return parts


def _tool_call_text(block: Mapping[str, Any]) -> str:
    """``name {arguments as JSON}``: a path or a command in the arguments is searchable."""
    name = block.get("name")
    arguments = block.get("arguments")
    try:
        shown = _json.dumps(arguments).decode("utf-8") if arguments is not None else ""
    except (TypeError, ValueError):
        shown = ""
    return f"{name if isinstance(name, str) else ''} {shown}".strip()


def _message_text(message: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    role = message.get("role")
    if not isinstance(role, str):
        return None
    if role == "bashExecution":
        parts = [str(message.get(key)) for key in ("command", "output") if message.get(key)]
        return role, parts
    parts = _content_text(message.get("content"))
    if role == "toolResult":
        name = message.get("toolName")
        if isinstance(name, str) and name and parts:
            parts.insert(0, name)
    elif role in ("compactionSummary", "branchSummary"):
        summary = message.get("summary")
        parts = [summary] if isinstance(summary, str) and summary else []
    return role, parts


def entry_text(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(role, text)`` of an entry's decoded mapping, or ``None`` for an entry without any
    conversation text (a label, a model change, an empty message)."""
    kind = data.get("type")
    role: str
    parts: list[str]
    if kind == "message":
        message = data.get("message")
        if not isinstance(message, dict):
            return None
        found = _message_text(message)
        if found is None:
            return None
        role, parts = found
    elif kind in ("compaction", "branch_summary"):
        role = ENTRY_ROLES[kind]
        summary = data.get("summary")
        parts = [summary] if isinstance(summary, str) and summary else []
    elif kind == "custom_message":
        role = ENTRY_ROLES[kind]
        parts = _content_text(data.get("content"))
    else:
        return None
    text = _BLOCK_SEPARATOR.join(parts)
    return (role, text) if text.strip() else None

"""Small builders shared by the session tests."""

from __future__ import annotations

from typing import Any

from pi_context.messages import (
    AssistantMessage,
    UserMessage,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)

__all__ = ["assistant", "message_line", "tool_result", "user"]


def user(text: str) -> UserMessage:
    return user_message(text, timestamp=1_700_000_000_000)


def assistant(
    text: str = "ok",
    *,
    calls: list[tuple[str, dict[str, Any]]] | None = None,
    provider: str = "anthropic",
    model: str = "claude-x",
) -> AssistantMessage:
    content: list[Any] = [text_block(text)]
    for n, (name, args) in enumerate(calls or [], start=1):
        content.append(tool_call(f"call_{n}", name, args))
    return assistant_message(
        content,
        api="anthropic-messages",
        provider=provider,
        model=model,
        stop_reason="toolUse" if calls else "stop",
        timestamp=1_700_000_000_001,
    )


def tool_result(text: str, call_id: str = "call_1", name: str = "read") -> Any:
    return tool_result_message(call_id, name, [text_block(text)], timestamp=1_700_000_000_002)


def message_line(entry_id: str, parent: str | None, text: str = "x") -> dict[str, Any]:
    """A user message entry as pi writes it in a file (its keys in pi's order)."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-05T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }

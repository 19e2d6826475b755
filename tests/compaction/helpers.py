"""Builders for sessions with realistic turns (user → assistant tool calls → results → reply)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context.messages import (
    AssistantMessage,
    assistant_message,
    empty_usage,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.session import Session
from pi_context.testing import FixedClock, SequentialIds


def new_session(path: Path | None = None) -> Session:
    if path is None:
        return Session.in_memory("/work/project", ids=SequentialIds(), clock=FixedClock())
    return Session.create(path, cwd="/work/project", ids=SequentialIds(), clock=FixedClock())


def assistant_with_usage(
    text: str | None = None,
    calls: list[tuple[str, str, dict[str, Any]]] | None = None,
    *,
    total_tokens: int = 0,
) -> AssistantMessage:
    """A typed assistant message whose usage reports ``total_tokens`` (as input), with tool
    calls given with their ids (``(id, name, arguments)``); no text block unless ``text``."""
    content: list[Any] = []
    if text is not None:
        content.append(text_block(text))
    for call_id, name, args in calls or []:
        content.append(tool_call(call_id, name, args))
    usage = empty_usage()
    usage["input"] = total_tokens
    usage["totalTokens"] = total_tokens
    return assistant_message(
        content,
        api="test",
        provider="test",
        model="m",
        usage=usage,
        stop_reason="toolUse" if calls else "stop",
        timestamp=1,
    )


def add_turn(
    session: Session,
    n: int,
    *,
    result_chars: int = 2000,
    tool: str = "read",
    path: str | None = None,
    is_error: bool = False,
) -> None:
    """One turn: a request, a tool call with a large result, and a final reply."""
    session.append_message(user_message(f"Request {n}: please look at file{n}.py", timestamp=1))
    call_id = f"call{n}"
    target = path or f"src/file{n}.py"
    session.append_message(
        assistant_with_usage(f"Looking at {target}", [(call_id, tool, {"path": target})])
    )
    session.append_message(
        tool_result_message(
            call_id, tool, [text_block("x" * result_chars)], is_error=is_error, timestamp=1
        )
    )
    session.append_message(assistant_with_usage(f"Done with request {n}."))


def build_session(turns: int, path: Path | None = None, **kwargs: Any) -> Session:
    session = new_session(path)
    for n in range(turns):
        add_turn(session, n, **kwargs)
    return session


def last_turn_tokens(session: Session) -> int:
    """Tokens of the last four messages (one helper turn): a keep budget that cuts at a turn."""
    from pi_context.tokens import estimate_tokens

    return sum(estimate_tokens(m) for m in session.projection().messages[-4:])


def orphan_tool_results(messages: Sequence[Any]) -> list[str]:
    """Tool results whose call is not in an earlier assistant message of the context."""
    seen: set[str] = set()
    orphans = []
    for message in messages:
        if message.get("role") == "assistant":
            for block in message.get("content", []):
                if block.get("type") == "toolCall":
                    seen.add(block["id"])
        elif message.get("role") == "toolResult" and message["toolCallId"] not in seen:
            orphans.append(message["toolCallId"])
    return orphans

"""Streamed Chat Completions answers for the replay server, shared by the RPC tests and the
client scenario (which pi 1.6.0 is recorded against, too)."""

from __future__ import annotations

from typing import Any

from tests.providers.replay_server import Reply, openai_sse, stream


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` carrying ``delta`` (and the finish reason, if any)."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "tiny",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    """The closing chunk that reports the token usage."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "tiny",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def text_reply(text: str, *, prompt_tokens: int = 100, completion_tokens: int = 5) -> Reply:
    """A streamed Chat Completions answer."""
    return stream(
        openai_sse(
            [
                chunk({"role": "assistant", "content": text}),
                chunk({}, "stop"),
                usage_chunk(prompt_tokens, completion_tokens),
            ]
        )
    )

"""Anthropic Messages API streams for the replay server: the model description, and the
server-sent events of a reply (message start, content blocks, finish)."""

from __future__ import annotations

from typing import Any

from pi_context.model import ModelCost, ModelInfo
from tests.providers.replay_server import anthropic_sse, stream


def info(**kw: Any) -> ModelInfo:
    """A Claude model description (``kw`` over the defaults: reasoning, 200k context, priced)."""
    base: dict[str, Any] = {
        "provider": "anthropic",
        "id": "claude-test",
        "api": "anthropic-messages",
        "context_window": 200_000,
        "max_tokens": 8_000,
        "reasoning": True,
        "cost": ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    }
    base.update(kw)
    return ModelInfo(**base)


def message_start(input_tokens: int = 10, read: int = 0, write: int = 0) -> dict[str, Any]:
    """The ``message_start`` event, with the prompt's usage (cache ``read``/``write``)."""
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": 1,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write,
            },
        },
    }


def content_block(
    index: int, block: dict[str, Any], *deltas: dict[str, Any]
) -> list[dict[str, Any]]:
    """The start, delta and stop events of one content block."""
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def text_block_events(index: int, *pieces: str) -> list[dict[str, Any]]:
    """The events of a text block streamed as ``pieces``."""
    return content_block(
        index, {"type": "text", "text": ""}, *({"type": "text_delta", "text": p} for p in pieces)
    )


def finish(stop: str = "end_turn", output: int = 5) -> list[dict[str, Any]]:
    """The closing ``message_delta`` (stop reason, output tokens) and ``message_stop`` events."""
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output},
        },
        {"type": "message_stop"},
    ]


def reply_text(text: str, **usage: int) -> Any:
    """A replay-server response streaming one text answer (``usage`` as in :func:`message_start`)."""
    return stream(anthropic_sse([message_start(**usage), *text_block_events(0, text), *finish()]))

"""Both APIs on the wire: a request becomes the billing shape and the responder's view; a reply
becomes the API's server-sent events.

Billing shape: Anthropic requests become cache blocks (:class:`~.cache_anthropic.Block`, in
the order the API caches them: tools, system, then message content); OpenAI requests become
one token sequence (tools, then each message). Token counts come from the shared tokenizer
over each block's text (tool definitions and tool-call arguments as JSON) plus a small fixed
overhead per block or message, the same for every contender.

Responder's view (:class:`Conversation`): the user-side texts, the tool-call ids the
assistant made, whether tools were declared, and the last user text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.economy.cache_anthropic import Block
from benchmarks.economy.tokens import Tokenizer

__all__ = [
    "Conversation",
    "Reply",
    "ReplyCall",
    "anthropic_blocks",
    "anthropic_conversation",
    "anthropic_error",
    "anthropic_events",
    "openai_conversation",
    "openai_error",
    "openai_events",
    "openai_tokens",
    "sse",
    "thinking_config",
]

BLOCK_OVERHEAD = 3
MESSAGE_OVERHEAD = 4
IMAGE_TOKENS = 1000


@dataclass(slots=True)
class Conversation:
    user_texts: list[str] = field(default_factory=list)
    tool_call_ids: list[str] = field(default_factory=list)
    has_tools: bool = False
    last_user_text: str = ""
    tool_names: list[str] = field(default_factory=list)
    """The tools the request declares."""
    text: str = ""
    """Every message of the request as JSON (what a probe's answer is looked up in)."""


@dataclass(frozen=True, slots=True)
class ReplyCall:
    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    calls: Sequence[ReplyCall] = ()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _without_cache_control(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _content_text(content: Any) -> str:
    """Text of a string or a list of content blocks (tool results may nest blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, Mapping):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif "content" in block:
                parts.append(_content_text(block["content"]))
    return "\n".join(parts)


def _anthropic_block_text(block: Mapping[str, Any]) -> tuple[str, int]:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", "")), 0
    if kind == "tool_use":
        return f"{block.get('name', '')} {_dumps(block.get('input', {}))}", 0
    if kind == "tool_result":
        return _content_text(block.get("content", "")), 0
    if kind == "thinking":
        return str(block.get("thinking", "")), 0
    if kind == "image":
        return "", IMAGE_TOKENS
    return _dumps(block), 0


def anthropic_blocks(body: Mapping[str, Any], tokenizer: Tokenizer) -> list[Block]:
    """The request as cache blocks: tools, system, a thinking marker, message content."""
    blocks: list[Block] = []
    for tool in body.get("tools") or []:
        plain = _dumps(_without_cache_control(tool))
        blocks.append(
            Block(plain.encode(), tokenizer.count(plain) + BLOCK_OVERHEAD, "cache_control" in tool)
        )
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system or []:
        text = str(block.get("text", ""))
        key = _dumps(_without_cache_control(block))
        blocks.append(
            Block(
                b"system" + key.encode(),
                tokenizer.count(text) + BLOCK_OVERHEAD,
                "cache_control" in block,
            )
        )
    # a thinking change invalidates the cached messages, not tools or system
    blocks.append(Block(b"thinking" + _dumps(body.get("thinking")).encode(), 0))
    for message in body.get("messages") or []:
        role = str(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            text, extra = _anthropic_block_text(block)
            key = role + _dumps(_without_cache_control(block))
            blocks.append(
                Block(
                    key.encode(),
                    tokenizer.count(text) + extra + BLOCK_OVERHEAD,
                    "cache_control" in block,
                )
            )
    return blocks


def _tool_names(body: Mapping[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
            names.append(str(name))
    return names


def anthropic_conversation(body: Mapping[str, Any]) -> Conversation:
    conv = Conversation(has_tools=bool(body.get("tools")))
    conv.tool_names = _tool_names(body)
    conv.text = _dumps(body.get("messages") or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if message.get("role") == "user":
            texts = [str(b.get("text", "")) for b in content or [] if b.get("type") == "text"]
            conv.user_texts.extend(texts)
            if texts:
                conv.last_user_text = texts[0]
        else:
            conv.tool_call_ids.extend(
                str(b.get("id", "")) for b in content or [] if b.get("type") == "tool_use"
            )
    return conv


def thinking_config(body: Mapping[str, Any]) -> str:
    """The request's thinking configuration (Anthropic ``thinking``, else OpenAI
    ``reasoning_effort``) as compact JSON, empty when the request has none."""
    value = body.get("thinking", body.get("reasoning_effort"))
    return "" if value is None else _dumps(value)


def openai_tokens(body: Mapping[str, Any], tokenizer: Tokenizer) -> list[int]:
    """The prompt as one token sequence: tools, then every message with its role marker."""
    tokens: list[int] = []
    tools = body.get("tools")
    if tools:
        tokens += tokenizer.encode("<|tools|>" + _dumps(tools))
    for message in body.get("messages") or []:
        tokens += tokenizer.encode(f"<|im_start|>{message.get('role', '')}\n")
        content = message.get("content")
        text = _content_text(content)
        if isinstance(content, list):
            tokens += [0] * (IMAGE_TOKENS * sum(1 for b in content if b.get("type") == "image_url"))
        if text:
            tokens += tokenizer.encode(text)
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            tokens += tokenizer.encode(
                f"{call.get('id', '')} {function.get('name', '')} {function.get('arguments', '')}"
            )
        if message.get("tool_call_id"):
            tokens += tokenizer.encode(str(message["tool_call_id"]))
        tokens += tokenizer.encode("<|im_end|>")
    return tokens


def openai_conversation(body: Mapping[str, Any]) -> Conversation:
    conv = Conversation(has_tools=bool(body.get("tools")))
    conv.tool_names = _tool_names(body)
    conv.text = _dumps(body.get("messages") or [])
    for message in body.get("messages") or []:
        role = message.get("role")
        if role == "user":
            text = _content_text(message.get("content"))
            conv.user_texts.append(text)
            conv.last_user_text = text
        elif role == "assistant":
            conv.tool_call_ids.extend(
                str(call.get("id", "")) for call in message.get("tool_calls") or []
            )
    return conv


# --- replies -------------------------------------------------------------------------------


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else _dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def _chunks(text: str, size: int = 400) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def anthropic_events(
    reply: Reply, *, model: str, message_id: str, usage: Mapping[str, int]
) -> Iterator[bytes]:
    """A Messages stream: message_start (input usage), blocks, message_delta, message_stop."""
    start_usage = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
        "cache_read_input_tokens": usage["cache_read_input_tokens"],
        "output_tokens": 1,
    }
    yield sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        },
    )
    index = 0
    if reply.text:
        yield sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        for piece in _chunks(reply.text):
            yield sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
    for call in reply.calls:
        yield sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": {},
                },
            },
        )
        yield sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": _dumps(call.arguments)},
            },
        )
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": "tool_use" if reply.calls else "end_turn",
                "stop_sequence": None,
            },
            "usage": dict(usage),
        },
    )
    yield sse("message_stop", {"type": "message_stop"})


def anthropic_error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def openai_events(
    reply: Reply, *, model: str, completion_id: str, usage: Mapping[str, int]
) -> Iterator[bytes]:
    """A chat.completion.chunk stream ending with the usage chunk and ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            None,
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    yield chunk({"role": "assistant", "content": ""})
    for piece in _chunks(reply.text):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.calls):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _dumps(call.arguments)},
                    }
                ]
            }
        )
    yield chunk({}, "tool_calls" if reply.calls else "stop")
    yield sse(
        None,
        {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": usage["prompt_tokens"],
                "completion_tokens": usage["completion_tokens"],
                "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
                "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
            },
        },
    )
    yield sse(None, "[DONE]")


def openai_error(message: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }

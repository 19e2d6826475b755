"""pydantic-ai messages ↔ pi messages, over their JSON form.

A ``ModelResponse`` is one pi ``assistant`` message (``TextPart`` text, ``ThinkingPart``
thinking with its signature, ``ToolCallPart`` a ``toolCall``, the usage pi's trigger reads). A
``ModelRequest`` is one pi message per part: a ``UserPromptPart`` is ``user``, a tool return or
a retry that answers a call is a ``toolResult`` (``isError`` for a failure or a retry), other
retry feedback a ``user`` message, a ``SystemPromptPart`` a hidden custom message. Parts pi
has no message for (provider compaction, built-in tool parts, files) come back untouched. A pi
summary comes back as a ``ModelRequest`` with one ``UserPromptPart`` holding the ``<summary>``
text, as pi sends it.

The mapping works on the JSON ``ModelMessagesTypeAdapter`` writes, so it needs no part class
that one pydantic-ai version has and the next deprecates. What a message has beyond its pi
messages (timestamps, run ids, provider details) is kept beside the first of them, with the
number of pi messages it became, so the round trip gives the same JSON back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from pi_context.integrations.residual import diff, patch
from pi_context.messages import empty_usage, text_of
from pi_context.session import convert_to_llm

__all__ = ["OPAQUE_TYPE", "RESIDUAL_KEY", "PydanticAICodec", "dump", "load"]

RESIDUAL_KEY = "pydanticAi"
OPAQUE_TYPE = "pydantic-ai.part"
SYSTEM_TYPE = "pydantic-ai.system"


def dump(message: ModelMessage) -> dict[str, Any]:
    """A message's JSON, as ``ModelMessagesTypeAdapter`` writes it."""
    (out,) = ModelMessagesTypeAdapter.dump_python([message], mode="json")
    return dict(out)


def load(data: Mapping[str, Any]) -> ModelMessage:
    (out,) = ModelMessagesTypeAdapter.validate_python([data])
    return out


def _iso(ms: Any) -> str:
    value = ms if isinstance(ms, int | float) else 0
    return datetime.fromtimestamp(value / 1000, UTC).isoformat().replace("+00:00", "Z")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _user_blocks(content: Any) -> Any:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for part in content or []:
        if isinstance(part, str):
            out.append({"type": "text", "text": part})
        else:
            kind = part.get("kind") if isinstance(part, Mapping) else None
            out.append({"type": "text", "text": f"[{kind or 'content'}]"})
    return out


def _arguments(args: Any) -> dict[str, Any]:
    if isinstance(args, Mapping):
        return dict(args)
    try:
        value = json.loads(args) if isinstance(args, str) else {}
    except ValueError:
        return {"_raw": args}
    return value if isinstance(value, dict) else {"_raw": args}


def _usage(data: Mapping[str, Any]) -> dict[str, Any]:
    usage: dict[str, Any] = dict(empty_usage())
    reported = data.get("usage") or {}
    read = int(reported.get("cache_read_tokens") or 0)
    write = int(reported.get("cache_write_tokens") or 0)
    usage["input"] = max(0, int(reported.get("input_tokens") or 0) - read - write)
    usage["output"] = int(reported.get("output_tokens") or 0)
    usage["cacheRead"] = read
    usage["cacheWrite"] = write
    usage["totalTokens"] = usage["input"] + usage["output"] + read + write
    return usage


class PydanticAICodec:
    """The mapping, with the clock that stamps new pi messages."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock

    # -- pydantic-ai → pi ------------------------------------------------------------------

    def _response(self, data: Mapping[str, Any], now: int) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        for part in data.get("parts") or []:
            kind = part.get("part_kind")
            if kind == "text":
                content.append({"type": "text", "text": str(part.get("content", ""))})
            elif kind == "thinking":
                block: dict[str, Any] = {
                    "type": "thinking",
                    "thinking": str(part.get("content", "")),
                }
                if part.get("signature"):
                    block["thinkingSignature"] = part["signature"]
                content.append(block)
            elif kind == "tool-call":
                content.append(
                    {
                        "type": "toolCall",
                        "id": str(part.get("tool_call_id")),
                        "name": str(part.get("tool_name")),
                        "arguments": _arguments(part.get("args")),
                    }
                )
            else:
                content.append({"type": "text", "text": f"[{kind} part]"})
        calls = any(b["type"] == "toolCall" for b in content)
        return [
            {
                "role": "assistant",
                "content": content,
                "api": "pydantic-ai",
                "provider": str(data.get("provider_name") or "pydantic-ai"),
                "model": str(data.get("model_name") or "unknown"),
                "usage": _usage(data),
                "stopReason": "toolUse" if calls else "stop",
                "timestamp": now,
            }
        ]

    def _request(self, data: Mapping[str, Any], now: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for part in data.get("parts") or []:
            kind = part.get("part_kind")
            if kind == "user-prompt":
                out.append(
                    {"role": "user", "content": _user_blocks(part.get("content")), "timestamp": now}
                )
            elif (
                kind in ("tool-return", "retry-prompt")
                and part.get("tool_call_id")
                and (kind == "tool-return" or part.get("tool_name"))
            ):
                failed = kind == "retry-prompt" or part.get("outcome") in ("failed", "retried")
                out.append(
                    {
                        "role": "toolResult",
                        "toolCallId": str(part.get("tool_call_id")),
                        "toolName": str(part.get("tool_name") or "tool"),
                        "content": [{"type": "text", "text": _text(part.get("content"))}],
                        "isError": failed,
                        "timestamp": now,
                    }
                )
            elif kind in ("retry-prompt", "retry-feedback"):
                out.append(
                    {"role": "user", "content": _text(part.get("content")), "timestamp": now}
                )
            else:
                system = kind == "system-prompt"
                out.append(
                    {
                        "role": "custom",
                        "customType": SYSTEM_TYPE if system else OPAQUE_TYPE,
                        "content": _text(part.get("content")) if system else f"[{kind} part]",
                        "display": False,
                        "details": {"partKind": kind},
                        "timestamp": now,
                    }
                )
        if not out:  # a request with no parts (instructions only): kept as it is
            out.append(
                {
                    "role": "custom",
                    "customType": OPAQUE_TYPE,
                    "content": "[empty request]",
                    "display": False,
                    "details": {"partKind": None},
                    "timestamp": now,
                }
            )
        return out

    def to_pi(self, items: Sequence[ModelMessage]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for message in items:
            data = dump(message)
            now = self.clock()
            if data.get("kind") == "response":
                pis = self._response(data, now)
            else:
                pis = self._request(data, now)
            back = self._message(pis)
            change = diff(data, back)
            marker: dict[str, Any] = {"n": len(pis)}
            if change is not None:
                marker["diff"] = change
            pis[0][RESIDUAL_KEY] = marker
            out.extend(pis)
        return out

    # -- pi → pydantic-ai ------------------------------------------------------------------

    def _parts(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        role = message.get("role")
        stamp = _iso(message.get("timestamp"))
        content = message.get("content")
        if role == "toolResult":
            return [
                {
                    "part_kind": "tool-return",
                    "tool_name": message.get("toolName"),
                    "tool_call_id": message.get("toolCallId"),
                    "content": text_of(content),
                    "timestamp": stamp,
                    "outcome": "failed" if message.get("isError") else "success",
                }
            ]
        if role == "user":
            if not isinstance(content, str):
                content = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
            return [{"part_kind": "user-prompt", "content": content, "timestamp": stamp}]
        if role == "custom" and message.get("customType") == SYSTEM_TYPE:
            return [{"part_kind": "system-prompt", "content": text_of(content), "timestamp": stamp}]
        if role == "custom" and message.get("customType") == OPAQUE_TYPE:
            return []  # restored from the stored difference
        (converted,) = convert_to_llm([message])
        return [
            {
                "part_kind": "user-prompt",
                "content": text_of(converted["content"]),
                "timestamp": stamp,
            }
        ]

    def _message(self, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """One pydantic-ai message's JSON from the pi messages it became (no difference applied)."""
        first = messages[0]
        if first.get("role") == "assistant":
            parts: list[dict[str, Any]] = []
            for block in first.get("content") or []:
                kind = block.get("type")
                if kind == "text":
                    parts.append({"part_kind": "text", "content": block.get("text", "")})
                elif kind == "thinking":
                    parts.append(
                        {
                            "part_kind": "thinking",
                            "content": block.get("thinking", ""),
                            "signature": block.get("thinkingSignature"),
                        }
                    )
                elif kind == "toolCall":
                    parts.append(
                        {
                            "part_kind": "tool-call",
                            "tool_name": block.get("name"),
                            "args": block.get("arguments") or {},
                            "tool_call_id": block.get("id"),
                        }
                    )
            usage = first.get("usage") or {}
            data: dict[str, Any] = {
                "kind": "response",
                "parts": parts,
                "timestamp": _iso(first.get("timestamp")),
                "usage": {
                    "input_tokens": int(usage.get("input", 0))
                    + int(usage.get("cacheRead", 0))
                    + int(usage.get("cacheWrite", 0)),
                    "output_tokens": int(usage.get("output", 0)),
                    "cache_read_tokens": int(usage.get("cacheRead", 0)),
                    "cache_write_tokens": int(usage.get("cacheWrite", 0)),
                },
            }
        else:
            parts = [part for message in messages for part in self._parts(message)]
            data = {"kind": "request", "parts": parts}
        return dump(load(data))

    def from_pi(self, messages: Sequence[Mapping[str, Any]]) -> list[tuple[ModelMessage, int]]:
        out: list[tuple[ModelMessage, int]] = []
        index = 0
        while index < len(messages):
            message = messages[index]
            if message.get("role") == "system":
                index += 1
                continue
            marker = message.get(RESIDUAL_KEY)
            size = 1
            if (
                isinstance(marker, Mapping)
                and isinstance(marker.get("n"), int)
                and marker["n"] >= 1
            ):
                size = marker["n"]
            group = list(messages[index : index + size])
            if len(group) < size or any(RESIDUAL_KEY in m for m in group[1:]):
                group, size = [message], 1  # the group was cut: map what is there on its own
                marker = None
            data = self._message(group)
            if isinstance(marker, Mapping) and marker.get("diff") is not None:
                data = patch(data, marker["diff"])
            out.append((load(data), index + size - 1))
            index += size
        return out

    def same(self, a: ModelMessage, b: ModelMessage) -> bool:
        return dump(a) == dump(b)

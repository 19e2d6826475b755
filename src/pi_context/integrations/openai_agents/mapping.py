"""openai-agents items ↔ pi messages.

A user message item (``{"role": "user", "content": ...}``) is pi's ``user`` message. The model
output items of one response (``reasoning``, an assistant ``message``, ``function_call``) are one
pi ``assistant`` message, as pi records one response: items carry no response id, so a run of
consecutive output items between two input items is taken as one response. A
``function_call_output`` is a ``toolResult``. Anything else (system or developer messages,
provider items such as ``compaction``, hosted tool calls) is a hidden custom message that comes
back untouched. A pi summary comes back as a user message item.

What an item has beyond its pi message (item ids, status, annotations, the exact argument
string) is stored beside the pi message (:mod:`pi_context.integrations.residual`), so the items
come back equal to those added.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pi_context.integrations.residual import diff, patch
from pi_context.messages import empty_usage, text_of
from pi_context.session import convert_to_llm

__all__ = ["OPAQUE_TYPE", "RESIDUAL_KEY", "OpenAIAgentsCodec"]

RESIDUAL_KEY = "openaiAgents"
"""The pi message key holding what the items have beyond the pi message."""

OPAQUE_TYPE = "openai-agents.item"
"""``customType`` of an item pi has no message for (kept as it came)."""

_OUTPUT_TYPES = ("reasoning", "function_call")


def _is_output(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    if kind in _OUTPUT_TYPES:
        return True
    return item.get("role") == "assistant" and kind in (None, "message")


def _is_user(item: Mapping[str, Any]) -> bool:
    return item.get("role") == "user" and item.get("type") in (None, "message")


def _texts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for part in content or []:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            out.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "refusal":
            out.append({"type": "text", "text": str(part.get("refusal", ""))})
        else:
            out.append({"type": "text", "text": f"[{kind} part]"})
    return out


def _model_of(group: Sequence[Mapping[str, Any]]) -> str:
    """The model that wrote a response: models other than the Responses API's (LiteLLM,
    any-llm, chat completions) name it in each output item's ``provider_data``."""
    for item in group:
        data = item.get("provider_data")
        if isinstance(data, Mapping) and isinstance(data.get("model"), str) and data["model"]:
            return str(data["model"])
    return "unknown"


def _arguments(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_raw": text}


class OpenAIAgentsCodec:
    """The mapping, with the clock that stamps new pi messages."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock

    # -- items → pi ------------------------------------------------------------------------

    def _assistant(self, group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for item in group:
            kind = item.get("type")
            if kind == "reasoning":
                summary = "\n".join(str(s.get("text", "")) for s in item.get("summary") or [])
                block: dict[str, Any] = {"type": "thinking", "thinking": summary}
                if item.get("encrypted_content"):
                    block["thinkingSignature"] = item["encrypted_content"]
                content.append(block)
            elif kind == "function_call":
                content.append(
                    {
                        "type": "toolCall",
                        "id": str(item.get("call_id")),
                        "name": str(item.get("name")),
                        "arguments": _arguments(item.get("arguments")),
                    }
                )
            else:
                content.extend(_texts(item.get("content")))
        calls = any(b["type"] == "toolCall" for b in content)
        return {
            "role": "assistant",
            "content": content,
            "api": "openai-agents",
            "provider": "openai-agents",
            "model": _model_of(group),
            "usage": dict(empty_usage()),
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": self.clock(),
        }

    def _plain(self, item: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
        now = self.clock()
        if _is_user(item):
            content = item.get("content")
            return {
                "role": "user",
                "content": content if isinstance(content, str) else _texts(content),
                "timestamp": now,
            }
        if item.get("type") == "function_call_output":
            output = item.get("output")
            call_id = str(item.get("call_id"))
            return {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": names.get(call_id, "tool"),
                "content": _texts(output)
                if not isinstance(output, str)
                else [{"type": "text", "text": output}],
                "isError": False,
                "timestamp": now,
            }
        label = item.get("type") or item.get("role") or "item"
        return {
            "role": "custom",
            "customType": OPAQUE_TYPE,
            "content": f"[{label}]",
            "display": False,
            "details": {"itemType": label},
            "timestamp": now,
        }

    def _groups(self, items: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
        groups: list[list[Mapping[str, Any]]] = []
        for item in items:
            if _is_output(item) and groups and _is_output(groups[-1][-1]):
                groups[-1].append(item)
            else:
                groups.append([item])
        return groups

    def to_pi(
        self, items: Sequence[Mapping[str, Any]], names: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """pi messages for ``items``; ``names`` maps earlier call ids to their tool names."""
        known = dict(names or {})
        out: list[dict[str, Any]] = []
        for group in self._groups(items):
            originals = [dict(item) for item in group]
            if _is_output(group[0]):
                for item in group:
                    if item.get("type") == "function_call":
                        known[str(item.get("call_id"))] = str(item.get("name"))
                pi = self._assistant(group)
            else:
                pi = self._plain(group[0], known)
            change = diff(originals, self._items(pi))
            if change is not None:
                pi[RESIDUAL_KEY] = change
            out.append(pi)
        return out

    # -- pi → items ------------------------------------------------------------------------

    def _items(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            items: list[dict[str, Any]] = []
            for block in content if isinstance(content, list) else []:
                kind = block.get("type")
                if kind == "thinking":
                    reasoning: dict[str, Any] = {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": block.get("thinking", "")}],
                    }
                    if block.get("thinkingSignature"):
                        reasoning["encrypted_content"] = block["thinkingSignature"]
                    items.append(reasoning)
                elif kind == "toolCall":
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": block.get("id"),
                            "name": block.get("name"),
                            "arguments": json.dumps(block.get("arguments") or {}),
                        }
                    )
                elif kind == "text":
                    part = {"type": "output_text", "text": block.get("text", ""), "annotations": []}
                    if items and items[-1].get("type") == "message":
                        items[-1]["content"].append(part)
                    else:
                        items.append(
                            {
                                "type": "message",
                                "role": "assistant",
                                "content": [part],
                                "status": "completed",
                            }
                        )
            return items
        if role == "toolResult":
            return [
                {
                    "type": "function_call_output",
                    "call_id": message.get("toolCallId"),
                    "output": text_of(content),
                }
            ]
        if role == "user":
            return [
                {
                    "role": "user",
                    "content": content if isinstance(content, str) else text_of(content),
                }
            ]
        (converted,) = convert_to_llm([message])
        return [{"role": "user", "content": text_of(converted["content"])}]

    def from_pi(self, messages: Sequence[Mapping[str, Any]]) -> list[tuple[dict[str, Any], int]]:
        out: list[tuple[dict[str, Any], int]] = []
        for index, message in enumerate(messages):
            if message.get("role") == "system":
                continue
            items = self._items(message)
            change = message.get(RESIDUAL_KEY)
            if change is not None:
                items = patch(items, change)
            out.extend((item, index) for item in items)
        return out

    def same(self, a: Any, b: Any) -> bool:
        return bool(a == b)

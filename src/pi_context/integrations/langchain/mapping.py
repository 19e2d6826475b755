"""LangChain messages ↔ pi messages.

``HumanMessage`` is pi's ``user``, ``AIMessage`` an ``assistant`` message (text, reasoning
blocks as ``thinking``, ``tool_calls`` as ``toolCall`` blocks, ``usage_metadata`` as the usage
pi's trigger reads), ``ToolMessage`` a ``toolResult`` (``status="error"`` is ``isError``), a
``SystemMessage`` in the state a hidden custom message. A pi summary comes back as the
``HumanMessage`` LangChain's own summarizer writes (``lc_source: summarization``). Whatever a
message has beyond that (ids, metadata, content block shapes) is kept beside the pi message
(:mod:`pi_context.integrations.residual`), so a round trip gives the same message back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

from pi_context.integrations.residual import diff, patch
from pi_context.messages import empty_usage, text_of
from pi_context.session import convert_to_llm

__all__ = ["RESIDUAL_KEY", "LangChainCodec"]

RESIDUAL_KEY = "langchain"
"""The pi message key holding what the LangChain message has beyond the pi message."""

SYSTEM_TYPE = "langchain.system"


def _blocks(content: Any) -> list[dict[str, Any]]:
    """pi content blocks for LangChain content (text kept; other blocks named)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    for block in content or []:
        if isinstance(block, str):
            out.append({"type": "text", "text": block})
        elif isinstance(block, Mapping) and block.get("type") == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif isinstance(block, Mapping) and block.get("type") in ("reasoning", "thinking"):
            text = block.get("reasoning") or block.get("thinking") or ""
            out.append({"type": "thinking", "thinking": str(text)})
        elif isinstance(block, Mapping):
            out.append({"type": "text", "text": f"[{block.get('type', 'content')} block]"})
    return out


def _usage(message: AIMessage) -> dict[str, Any]:
    usage: dict[str, Any] = dict(empty_usage())
    meta = message.usage_metadata
    if meta:
        details = meta.get("input_token_details") or {}
        cache_read = int(details.get("cache_read") or 0)
        cache_write = int(details.get("cache_creation") or 0)
        usage["input"] = max(0, int(meta.get("input_tokens", 0)) - cache_read - cache_write)
        usage["output"] = int(meta.get("output_tokens", 0))
        usage["cacheRead"] = cache_read
        usage["cacheWrite"] = cache_write
        usage["totalTokens"] = int(meta.get("total_tokens", 0))
    return usage


class LangChainCodec:
    """The mapping, with the clock that stamps new pi messages."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock

    # -- LangChain → pi ----------------------------------------------------------------------

    def _plain(self, message: BaseMessage, names: Mapping[str, str]) -> dict[str, Any]:
        now = self.clock()
        if isinstance(message, AIMessage):
            content: list[dict[str, Any]] = _blocks(message.content)
            for call in message.tool_calls:
                content.append(
                    {
                        "type": "toolCall",
                        "id": call.get("id") or "",
                        "name": call["name"],
                        "arguments": dict(call.get("args") or {}),
                    }
                )
            return {
                "role": "assistant",
                "content": content,
                "api": "langchain",
                "provider": str(message.response_metadata.get("model_provider") or "langchain"),
                "model": str(message.response_metadata.get("model_name") or "unknown"),
                "usage": _usage(message),
                "stopReason": "toolUse" if message.tool_calls else "stop",
                "timestamp": now,
            }
        if isinstance(message, ToolMessage):
            return {
                "role": "toolResult",
                "toolCallId": message.tool_call_id,
                "toolName": message.name or names.get(message.tool_call_id, "tool"),
                "content": _blocks(message.content) or [{"type": "text", "text": ""}],
                "isError": message.status == "error",
                "timestamp": now,
            }
        if isinstance(message, SystemMessage):
            return {
                "role": "custom",
                "customType": SYSTEM_TYPE,
                "content": text_of(_blocks(message.content)),
                "display": False,
                "timestamp": now,
            }
        content_blocks = message.content
        return {
            "role": "user",
            "content": content_blocks
            if isinstance(content_blocks, str)
            else _blocks(content_blocks),
            "timestamp": now,
        }

    def to_pi(self, items: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        names: dict[str, str] = {}
        out: list[dict[str, Any]] = []
        for message in items:
            if isinstance(message, AIMessage):
                names.update({c.get("id") or "": c["name"] for c in message.tool_calls})
            pi = self._plain(message, names)
            back = message_to_dict(self._one(pi))
            change = diff(message_to_dict(message), back)
            if change is not None:
                pi[RESIDUAL_KEY] = change
            out.append(pi)
        return out

    # -- pi → LangChain ----------------------------------------------------------------------

    def _one(self, message: Mapping[str, Any]) -> BaseMessage:
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            blocks = content if isinstance(content, list) else []
            calls = [
                {
                    "name": b.get("name"),
                    "args": b.get("arguments") or {},
                    "id": b.get("id"),
                    "type": "tool_call",
                }
                for b in blocks
                if b.get("type") == "toolCall"
            ]
            return AIMessage(content=text_of(blocks), tool_calls=calls)
        if role == "toolResult":
            return ToolMessage(
                content=text_of(content),
                tool_call_id=str(message.get("toolCallId")),
                name=message.get("toolName"),
                status="error" if message.get("isError") else "success",
            )
        if role == "custom" and message.get("customType") == SYSTEM_TYPE:
            return SystemMessage(content=text_of(content))
        if role in ("compactionSummary", "branchSummary", "custom", "bashExecution"):
            (converted,) = convert_to_llm([message])
            return HumanMessage(
                content=text_of(converted["content"]),
                additional_kwargs={"lc_source": "summarization"} if role != "custom" else {},
            )
        if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
            return HumanMessage(content=content[0].get("text", ""))
        if isinstance(content, list):
            return HumanMessage(content=[dict(b) for b in content])
        return HumanMessage(content=content or "")

    def from_pi(self, messages: Sequence[Mapping[str, Any]]) -> list[tuple[BaseMessage, int]]:
        out: list[tuple[BaseMessage, int]] = []
        for index, message in enumerate(messages):
            if message.get("role") not in (
                "user",
                "assistant",
                "toolResult",
                "custom",
                "compactionSummary",
                "branchSummary",
                "bashExecution",
            ):
                continue
            lc = self._one(message)
            change = message.get(RESIDUAL_KEY)
            if change is not None:
                (lc,) = messages_from_dict([patch(message_to_dict(lc), change)])
            out.append((lc, index))
        return out

    def same(self, a: BaseMessage, b: BaseMessage) -> bool:
        """Equal apart from the id (LangGraph gives every message without one a fresh id)."""
        da, db = message_to_dict(a), message_to_dict(b)
        da["data"].pop("id", None)
        db["data"].pop("id", None)
        return da == db

"""The assistant message assembled from streamed blocks, whoever streams them.

Provider adapters feed :class:`MessageBuilder` their translated events and take the final
message from :meth:`MessageBuilder.finish`; the agent loop feeds one the stream's deltas so an
aborted or failed stream still leaves the text and thinking received so far.
"""

from __future__ import annotations

import time
from typing import Any, cast

from msgspec import Struct, field

from pi_context import _json
from pi_context.messages import (
    AssistantContent,
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)
from pi_context.model.protocol import ModelInfo
from pi_context.model.usage import make_usage, price_usage

__all__ = ["MessageBuilder"]


class _PendingCall(Struct):
    id: str
    name: str
    arguments: str = ""
    error: str | None = None
    signature: str | None = None


class MessageBuilder(Struct):
    """Accumulates streamed blocks; :meth:`finish` returns the assistant message.

    Blocks keep the order in which they started. Consecutive text (or thinking) deltas with
    the same index join one block.
    """

    info: ModelInfo
    blocks: list[AssistantContent | _PendingCall] = field(default_factory=list)
    usage: Usage | None = None
    response_id: str | None = None
    response_model: str | None = None
    started: float = field(default_factory=time.monotonic)
    _open: dict[tuple[str, int], int] = field(default_factory=dict)

    def text(self, delta: str, index: int = 0) -> None:
        slot = self._open.get(("text", index))
        if slot is None:
            self._close_kind("thinking")
            self._open[("text", index)] = len(self.blocks)
            self.blocks.append(cast(TextContent, {"type": "text", "text": delta}))
        else:
            block = cast(TextContent, self.blocks[slot])
            block["text"] += delta

    def thinking(self, delta: str, index: int = 0, signature: str | None = None) -> None:
        slot = self._open.get(("thinking", index))
        if slot is None:
            self._close_kind("text")
            self._open[("thinking", index)] = len(self.blocks)
            block: ThinkingContent = {"type": "thinking", "thinking": delta}
            self.blocks.append(block)
        else:
            existing = cast(ThinkingContent, self.blocks[slot])
            existing["thinking"] += delta
            block = existing
        if signature:
            block["thinkingSignature"] = block.get("thinkingSignature", "") + signature

    def redacted_thinking(self, data: str) -> None:
        self.blocks.append(
            cast(
                ThinkingContent,
                {"type": "thinking", "thinking": "", "thinkingSignature": data, "redacted": True},
            )
        )

    def tool_start(self, call_id: str, name: str) -> None:
        self._close_kind("text")
        self._close_kind("thinking")
        self.blocks.append(_PendingCall(call_id, name))

    def tool_arguments(self, call_id: str, delta: str) -> None:
        call = self._call(call_id)
        if call is not None:
            call.arguments += delta

    def set_tool_arguments(self, call_id: str, arguments: str) -> None:
        """Replace a call's streamed arguments with the provider's final text."""
        call = self._call(call_id)
        if call is not None:
            call.arguments = arguments

    def tool_signature(self, call_id: str, signature: str) -> None:
        """Keep the provider's signature of a call (Gemini's ``thoughtSignature``)."""
        call = self._call(call_id)
        if call is not None:
            call.signature = signature

    def last_block(self, kind: str) -> dict[str, Any] | None:
        """The latest text or thinking block of ``kind`` (to finish it from a final item)."""
        for block in reversed(self.blocks):
            if not isinstance(block, _PendingCall) and block["type"] == kind:
                return cast(dict[str, Any], block)
        return None

    def tool_error(self, call_id: str, error: str) -> None:
        """Mark a call as malformed; the message is kept as ``argumentsError``."""
        call = self._call(call_id)
        if call is not None:
            call.error = error

    def _call(self, call_id: str) -> _PendingCall | None:
        """The latest started call with this id (unknown ids are ignored)."""
        for block in reversed(self.blocks):
            if isinstance(block, _PendingCall) and block.id == call_id:
                return block
        return None

    def _close_kind(self, kind: str) -> None:
        for key in [k for k in self._open if k[0] == kind]:
            del self._open[key]

    def content(self, *, calls: bool = True) -> list[AssistantContent]:
        """The blocks so far; ``calls=False`` leaves out the tool calls (an unfinished
        stream's may be incomplete)."""
        out: list[AssistantContent] = []
        for block in self.blocks:
            if isinstance(block, _PendingCall):
                if calls:
                    out.append(_finish_call(block))
            else:
                out.append(block)
        return out

    def has_tool_calls(self) -> bool:
        return any(isinstance(b, _PendingCall) for b in self.blocks)

    def finish(
        self,
        stop: StopReason,
        *,
        raw_stop: str | None = None,
        error: str | None = None,
    ) -> AssistantMessage:
        usage = self.usage if self.usage is not None else make_usage()
        price_usage(usage, self.info.cost)
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": self.content(),
            "api": self.info.api,
            "provider": self.info.provider,
            "model": self.info.id,
        }
        if self.response_model and self.response_model != self.info.id:
            msg["responseModel"] = self.response_model
        if self.response_id:
            msg["responseId"] = self.response_id
        msg["usage"] = usage
        msg["stopReason"] = stop
        if error is not None:
            msg["errorMessage"] = error
        if raw_stop is not None:
            msg["rawStopReason"] = raw_stop
        msg["timestamp"] = now_ms()
        msg["durationMs"] = int((time.monotonic() - self.started) * 1000)
        return cast(AssistantMessage, msg)


def _finish_call(call: _PendingCall) -> ToolCall:
    result = _call_content(call)
    if call.signature is not None:
        result["thoughtSignature"] = call.signature
    return cast(ToolCall, result)


def _call_content(call: _PendingCall) -> dict[str, Any]:
    result: dict[str, Any] = {"type": "toolCall", "id": call.id, "name": call.name}
    if call.error is not None:
        result["arguments"] = {}
        result["argumentsError"] = call.error
        return result
    text = call.arguments.strip()
    if not text:
        result["arguments"] = {}
        return result
    try:
        parsed = _json.loads(text)
    except ValueError as exc:
        result["arguments"] = {}
        result["argumentsError"] = f"invalid JSON arguments: {exc}: {text[:200]}"
        return result
    if isinstance(parsed, dict):
        result["arguments"] = parsed
    else:
        result["arguments"] = {}
        result["argumentsError"] = f"arguments are not a JSON object: {text[:200]}"
    return result

"""Anthropic Messages (the request the official SDK sends, over plain HTTP: see
:mod:`~pi_context.providers.anthropic_wire`), with prompt-cache breakpoints.

System prompt delivery (chosen so every request extends the previous one):

* The **leading** system message of the transcript (the full prompt, as sections) becomes the
  ``system`` parameter, rendered once with pi's ``getSystemMessageText``. It is never rewritten
  while the conversation grows: later patches do not touch it.
* Every **later** system message (a section patch) stays at its place in the conversation as a
  user-side text block with pi's update framing (``Updated system prompt section "name":``...),
  appended to the user turn it falls in (after any ``tool_result`` blocks of that turn).
* After a compaction the transcript starts with the compaction's replayed system snapshot, so
  the ``system`` parameter is rebuilt once there, as it must be.

Cache breakpoints (``cache_control: ephemeral``), at most two:

1. on the last ``system`` block: tools + system prompt, the stable head, cached on its own;
2. on the last content block of the last message: the whole conversation so far, so the next
   request (which extends it) reads it back. Only this one marker moves, so each body equals
   the previous one byte for byte up to the previous marker. (A turn that adds more than the
   20 blocks Anthropic looks back from a breakpoint reads back only the system prefix; a
   second moving marker would fix that but break the byte-for-byte prefix.)

Anthropic's cache order is tools -> system -> messages, so a change to the tool list is a full
miss; a section patch costs only the bytes after the previous breakpoint. Requests with
``options.cache == "none"`` (summaries) carry no breakpoint and write nothing.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import httpx2

from pi_context.errors import ProviderError
from pi_context.messages import (
    AssistantMessage,
    ImageContent,
    StopReason,
    ToolResultMessage,
    UserMessage,
)
from pi_context.model import (
    ModelInfo,
    ModelRequest,
    StreamEvent,
    SystemDelivery,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_context.model.classify import make_error
from pi_context.model.message_builder import MessageBuilder
from pi_context.model.usage import make_usage
from pi_context.providers._sdk import SDKModel, error_body
from pi_context.providers.anthropic_wire import MessagesClient, StatusError
from pi_context.providers.delivery import (
    Delivery,
    SystemUpdate,
    sanitize_tool_id,
    user_blocks,
)
from pi_context.providers.output_cap import clamp_output_to_context, estimate_request_tokens
from pi_context.providers.reasoning import anthropic_thinking

__all__ = ["AnthropicModel", "anthropic_messages", "anthropic_tools"]

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}

_STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
}


def _image(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image["mimeType"], "data": image["data"]},
    }


def _user_content(blocks: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] == "text":
            out.append({"type": "text", "text": block["text"]})
        else:
            out.append(_image(cast(ImageContent, block)))
    return out


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "text":
            if block["text"]:
                content.append({"type": "text", "text": block["text"]})
        else:
            content.append(_image(block))
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": sanitize_tool_id(message["toolCallId"]),
        "content": content or [{"type": "text", "text": "(no output)"}],
    }
    if message.get("isError"):
        result["is_error"] = True
    return result


def _assistant_content(message: AssistantMessage) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in message["content"]:
        if block["type"] == "text":
            text = block["text"]
            if text:
                out.append({"type": "text", "text": text})
        elif block["type"] == "thinking":
            thinking = block
            signature = thinking.get("thinkingSignature")
            if thinking.get("redacted") and signature:
                out.append({"type": "redacted_thinking", "data": signature})
            elif signature:
                out.append(
                    {"type": "thinking", "thinking": thinking["thinking"], "signature": signature}
                )
            # Unsigned thinking (from another provider) cannot be replayed; it is left out.
        else:
            call = block
            out.append(
                {
                    "type": "tool_use",
                    "id": sanitize_tool_id(call["id"]),
                    "name": call["name"],
                    "input": call.get("arguments") or {},
                }
            )
    return out


def _marker(long: bool) -> dict[str, str]:
    return {**EPHEMERAL, "ttl": "1h"} if long else dict(EPHEMERAL)


def anthropic_messages(
    delivery: Delivery, *, cache: bool = True, long: bool = False
) -> list[dict[str, Any]]:
    """The ``messages`` array: user-side items merged into alternating turns, breakpoint last."""
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for item in delivery.items:
        if isinstance(item, SystemUpdate):
            add("user", [{"type": "text", "text": item.text}])
            continue
        role = item["role"]
        if role == "user":
            blocks = user_blocks(cast(UserMessage, item)["content"])
            add("user", _user_content(list(blocks)) or [{"type": "text", "text": "(empty)"}])
        elif role == "toolResult":
            add("user", [_tool_result(cast(ToolResultMessage, item))])
        elif role == "assistant":
            add("assistant", _assistant_content(cast(AssistantMessage, item)))
    if cache and turns:
        turns[-1]["content"][-1]["cache_control"] = _marker(long)
    return turns


def anthropic_system(
    delivery: Delivery, *, cache: bool = True, long: bool = False
) -> list[dict[str, Any]] | None:
    """The ``system`` parameter: one text block with the leading prompt, breakpoint on it."""
    if not delivery.system:
        return None
    block: dict[str, Any] = {"type": "text", "text": delivery.system}
    if cache:
        block["cache_control"] = _marker(long)
    return [block]


def anthropic_tools(delivery: Delivery) -> list[dict[str, Any]]:
    return [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in delivery.tools
    ]


class AnthropicModel(SDKModel):
    """A :class:`~pi_context.model.Model` over the Anthropic Messages API."""

    connection_errors = (httpx2.HTTPError, OSError)
    sdk_errors = (StatusError, *connection_errors)

    def __init__(
        self,
        info: ModelInfo,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        max_retries: int = 0,
        max_retry_delay: float | None = 60.0,
        timeout: float | None = 300.0,
        credential_error: str | None = None,
        key_source: str | None = None,
        long_cache_retention: bool = False,
    ) -> None:
        self.system_delivery: SystemDelivery = "user_turn"
        self.long_cache_retention = long_cache_retention
        """``PI_CACHE_RETENTION=long``: cache breakpoints ask for the 1-hour TTL."""
        self._client = MessagesClient(
            api_key=api_key if api_key or auth_token else "missing-key",
            auth_token=auth_token,
            base_url=base_url
            or info.base_url
            or os.environ.get("ANTHROPIC_BASE_URL")
            or "https://api.anthropic.com",
            default_headers=dict(headers or {}),
            timeout=timeout,
            max_retries=max_retries,
            max_retry_delay=max_retry_delay,
        )
        super().__init__(
            info,
            base_url=str(self._client.base_url),
            credential_error=credential_error,
            key_source=key_source,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``messages.create``."""
        delivery = self._delivery(request)
        opts = request.options
        cache = opts.cache != "none"
        long = (
            cache
            and self.long_cache_retention
            and self._info.compat.get("supportsLongCacheRetention") is not False
        )
        input_tokens = estimate_request_tokens(request, self._info)
        max_tokens = clamp_output_to_context(
            self._info, input_tokens, opts.max_tokens or self._info.max_tokens
        )
        params: dict[str, Any] = {
            "model": self._info.id,
            "max_tokens": max_tokens,
            "messages": anthropic_messages(delivery, cache=cache, long=long),
            "stream": True,
        }
        system = anthropic_system(delivery, cache=cache, long=long)
        if system is not None:
            params["system"] = system
        tools = anthropic_tools(delivery)
        if tools:
            params["tools"] = tools
            choice = opts.tool_choice
            if choice in ("none", "required"):
                params["tool_choice"] = {"type": "none" if choice == "none" else "any"}
            elif choice != "auto":
                params["tool_choice"] = {"type": "tool", "name": choice}
        thinking = anthropic_thinking(
            self._info,
            opts.thinking_level,
            max_tokens,
            opts.thinking_budgets,
            input_tokens=input_tokens,
        )
        if thinking.max_tokens is not None:
            params["max_tokens"] = thinking.max_tokens
        extra_body = dict(thinking.params)
        if "thinking" in extra_body:
            params["thinking"] = extra_body.pop("thinking")
        if extra_body:
            params["extra_body"] = extra_body
        if thinking.betas:
            params["extra_headers"] = {"anthropic-beta": ",".join(thinking.betas)}
        if not thinking.thinking_enabled and opts.temperature is not None:
            params["temperature"] = opts.temperature
        return params

    def _status_error(self, exc: BaseException) -> ProviderError | None:
        if not isinstance(exc, StatusError):
            return None
        return make_error(
            _status_text(exc),
            status=exc.status_code if exc.status_code != 200 else None,
            headers=exc.headers,
            provider=self._info.provider,
        )

    def _outgoing_headers(self, params: Mapping[str, Any]) -> dict[str, str | None] | None:
        return self._client.headers_for(params)

    async def _run(
        self, params: dict[str, Any], builder: MessageBuilder
    ) -> AsyncIterator[StreamEvent]:
        state = _StreamState(builder)
        async for raw in self._client.stream(params):
            for event in state.feed(raw):
                yield event
        usage = state.usage
        builder.usage = make_usage(
            input=usage.get("input_tokens", 0),
            output=usage.get("output_tokens", 0),
            cache_read=usage.get("cache_read_input_tokens", 0),
            cache_write=usage.get("cache_creation_input_tokens", 0),
        )
        if not state.finished:
            yield self._incomplete(builder)
            return
        stop_raw = state.stop_raw
        yield self._finished(builder, _STOP.get(stop_raw or "end_turn", "stop"), stop_raw)


class _StreamState:
    """One Messages stream being translated: tool ids by block index, usage, stop reason."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.stop_raw: str | None = None
        self.finished = False
        self.usage: dict[str, int] = {}
        self.ids: dict[int, str] = {}

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Record one SSE event; returns the stream events it produces."""
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.builder.response_id = message.get("id")
            self.builder.response_model = message.get("model")
            _merge_usage(self.usage, message.get("usage") or {})
        elif kind == "content_block_start":
            return self._block_start(int(event.get("index") or 0), event.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._block_delta(int(event.get("index") or 0), event.get("delta") or {})
        elif kind == "message_delta":
            self.stop_raw = (event.get("delta") or {}).get("stop_reason") or self.stop_raw
            _merge_usage(self.usage, event.get("usage") or {})
        elif kind == "message_stop":
            self.finished = True
        return []

    def _block_start(self, index: int, block: dict[str, Any]) -> list[StreamEvent]:
        builder = self.builder
        btype = block.get("type", "")
        if btype == "tool_use":
            self.ids[index] = block.get("id") or f"toolu_{index}"
            builder.tool_start(self.ids[index], block.get("name") or "")
            return [ToolCallStart(self.ids[index], block.get("name") or "", index)]
        if btype == "redacted_thinking":
            builder.redacted_thinking(block.get("data") or "")
        elif btype == "text" and block.get("text"):
            builder.text(block["text"], index)
            return [TextDelta(block["text"], index)]
        return []

    def _block_delta(self, index: int, delta: dict[str, Any]) -> list[StreamEvent]:
        builder = self.builder
        dtype = delta.get("type")
        if dtype == "text_delta":
            text = delta.get("text") or ""
            builder.text(text, index)
            return [TextDelta(text, index)]
        if dtype == "thinking_delta":
            thinking = delta.get("thinking") or ""
            builder.thinking(thinking, index)
            return [ThinkingDelta(thinking, index)]
        if dtype == "signature_delta":
            builder.thinking("", index, signature=delta.get("signature") or "")
        elif dtype == "input_json_delta" and index in self.ids:
            partial = delta.get("partial_json") or ""
            builder.tool_arguments(self.ids[index], partial)
            if partial:
                return [ToolCallDelta(self.ids[index], partial, index)]
        return []


def _merge_usage(into: dict[str, int], usage: Mapping[str, Any]) -> None:
    """Later usage reports are cumulative: a present, non-null field replaces the earlier one."""
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        value = usage.get(key)
        if isinstance(value, int):
            into[key] = value


def _status_text(exc: StatusError) -> str:
    parsed = error_body(exc.body)
    if parsed is None:
        return str(exc.message)
    kind, message = parsed
    prefix = f"{exc.status_code} " if exc.status_code != 200 else ""
    return f"{prefix}{kind + ': ' if kind else ''}{message}"

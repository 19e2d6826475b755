"""OpenAI-compatible Chat Completions (the request the official ``openai`` SDK sends, over plain
HTTP: see :mod:`~pi_context.providers.openai_wire`).

Works with OpenAI and with local servers (vLLM, llama.cpp's ``llama-server``, Ollama, LM Studio)
by base URL. Streams text, reasoning text (``reasoning_content``/``reasoning`` deltas that
local servers send), tool calls and usage (``prompt_tokens_details.cached_tokens`` becomes
``cacheRead``; ``input`` excludes it).

Prompt cache: OpenAI caches request prefixes automatically. The body is built so that each
request of a growing conversation extends the previous one: system patches are delivered in
place (as ``system`` messages when the model accepts them mid-conversation, else as ``user``
messages), tool-call arguments are serialized exactly as stored, and tools keep their order.
For OpenAI itself (or with ``compat.promptCacheKeyMode: "enabled"``) the session id is sent as
``prompt_cache_key`` to keep a session on warm cache shards.

The client's own retries are off by default (``max_retries=0``): a 429 or 5xx surfaces as a
``transient`` :class:`~pi_context.errors.ProviderError` with ``retry_after`` and the agent's
retry policy decides.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import httpx2

from pi_context.errors import ProviderError
from pi_context.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    StopReason,
    ToolResultMessage,
    UserMessage,
)
from pi_context.model import (
    ModelRequest,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)
from pi_context.model.classify import make_error
from pi_context.model.message_builder import MessageBuilder
from pi_context.model.usage import make_usage
from pi_context.providers._openai_client import OpenAIClientModel
from pi_context.providers._sdk import error_body
from pi_context.providers.delivery import (
    Delivery,
    SystemUpdate,
    tool_arguments_json,
    user_blocks,
)
from pi_context.providers.http_stream import StatusError, StreamError
from pi_context.providers.openai_wire import ChatCompletionsClient
from pi_context.providers.output_cap import output_cap
from pi_context.providers.reasoning import completions_reasoning

__all__ = ["OpenAIChatModel", "openai_messages", "openai_tools"]

_STOP: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "content_filter": "error",
}


def _image_part(image: ImageContent) -> dict[str, Any]:
    url = f"data:{image['mimeType']};base64,{image['data']}"
    return {"type": "image_url", "image_url": {"url": url}}


def _user_content(blocks: list[Any]) -> str | list[dict[str, Any]]:
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return cast(str, blocks[0]["text"])
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] == "text":
            parts.append({"type": "text", "text": block["text"]})
        else:
            parts.append(_image_part(cast(ImageContent, block)))
    return parts


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    text = "".join(b["text"] for b in message["content"] if b["type"] == "text")
    calls = [b for b in message["content"] if b["type"] == "toolCall"]
    out: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": tool_arguments_json(call)},
            }
            for call in calls
        ]
    return out


def _tool_result(message: ToolResultMessage) -> tuple[dict[str, Any], list[ImageContent]]:
    texts = [b["text"] for b in message["content"] if b["type"] == "text"]
    images = [b for b in message["content"] if b["type"] == "image"]
    text = "\n".join(texts)
    if images and not text:
        text = "(see attached image)"
    return {"role": "tool", "tool_call_id": message["toolCallId"], "content": text}, images


def openai_messages(delivery: Delivery) -> list[dict[str, Any]]:
    """The ``messages`` array of a Chat Completions request for a planned delivery."""
    out: list[dict[str, Any]] = []
    if delivery.system is not None:
        out.append({"role": "system", "content": delivery.system})
    pending_images: list[ImageContent] = []

    def flush_images() -> None:
        if pending_images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": "Images from tool results:"}]
            parts.extend(_image_part(img) for img in pending_images)
            out.append({"role": "user", "content": parts})
            pending_images.clear()

    for item in delivery.items:
        if isinstance(item, SystemUpdate):
            flush_images()
            role = "system" if delivery.mode == "in_place" else "user"
            out.append({"role": role, "content": item.text})
            continue
        message: Message = item
        role = message["role"]
        if role == "toolResult":
            result, images = _tool_result(cast(ToolResultMessage, message))
            out.append(result)
            pending_images.extend(images)
            continue
        flush_images()
        if role == "user":
            blocks = user_blocks(cast(UserMessage, message)["content"])
            out.append({"role": "user", "content": _user_content(list(blocks)) if blocks else ""})
        elif role == "assistant":
            out.append(_assistant(cast(AssistantMessage, message)))
    flush_images()
    return out


def openai_tools(delivery: Delivery) -> list[dict[str, Any]]:
    """Tool declarations as Chat Completions ``function`` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool["description"],
                "parameters": tool["parameters"],
            },
        }
        for tool in delivery.tools
    ]


class OpenAIChatModel(OpenAIClientModel[ChatCompletionsClient]):
    """A :class:`~pi_context.model.Model` over an OpenAI-compatible chat endpoint."""

    connection_errors = (httpx2.HTTPError, OSError)
    sdk_errors = (StatusError, StreamError, *connection_errors)

    def _connect(
        self,
        *,
        api_key: str,
        base_url: str | None,
        headers: dict[str, str],
        max_retries: int,
        max_retry_delay: float | None,
        timeout: float | None,
    ) -> ChatCompletionsClient:
        return ChatCompletionsClient(
            api_key=api_key,
            base_url=base_url,
            default_headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_delay=max_retry_delay,
        )

    async def listed_model_ids(self, *, timeout: float = 2.0) -> list[str] | None:
        """The model ids the server's ``GET /models`` lists; ``None`` when it does not answer
        with a list (no such endpoint, an error, a timeout): one try, no retries."""
        return await self._client.list_model_ids(timeout=timeout)

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (exposed for tests and tools)."""
        delivery = self._delivery(request)
        opts = request.options
        params: dict[str, Any] = {
            "model": self._info.id,
            "messages": openai_messages(delivery),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        tools = openai_tools(delivery)
        if tools:
            params["tools"] = tools
            choice = opts.tool_choice
            if choice in ("none", "required"):
                params["tool_choice"] = choice
            elif choice != "auto":
                params["tool_choice"] = {"type": "function", "function": {"name": choice}}
        is_openai = self._info.provider == "openai"
        max_tokens = opts.max_tokens
        if max_tokens is not None:
            max_tokens = output_cap(self._info, request)
            params["max_completion_tokens" if is_openai else "max_tokens"] = max_tokens
        if opts.temperature is not None:
            params["temperature"] = opts.temperature
        params.update(completions_reasoning(self._info, opts.thinking_level))
        if opts.session_id and opts.cache != "none" and self._sends_cache_key():
            params["prompt_cache_key"] = opts.session_id[:64]
        if opts.cache != "none" and self._long_retention():
            params["prompt_cache_retention"] = "24h"
        return params

    def _sends_cache_key(self) -> bool:
        """pi's ``compat.promptCacheKeyMode``: ``auto`` sends the key to OpenAI itself."""
        mode = self._info.compat.get("promptCacheKeyMode", "auto")
        if mode in ("enabled", "disabled"):
            return bool(mode == "enabled")
        return (
            self._info.provider == "openai"
            or "api.openai.com" in self.base_url
            or self._long_retention()
        )

    def _long_retention(self) -> bool:
        supported = self._info.compat.get("supportsLongCacheRetention") is not False
        return self.long_cache_retention and supported

    def _status_error(self, exc: BaseException) -> ProviderError | None:
        if not isinstance(exc, StatusError):
            return None
        return make_error(
            _status_text(exc),
            status=exc.status_code,
            headers=exc.headers,
            provider=self._info.provider,
        )

    def _outgoing_headers(self, params: Mapping[str, Any]) -> dict[str, str | None] | None:
        return self._client.headers_for(params)

    async def _run(
        self, params: dict[str, Any], builder: MessageBuilder
    ) -> AsyncIterator[StreamEvent]:
        finish: str | None = None
        calls: dict[int, str] = {}
        async for data in self._client.stream(params):
            builder.response_id = builder.response_id or data.get("id")
            builder.response_model = builder.response_model or data.get("model")
            usage = data.get("usage")
            if usage:
                cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
                builder.usage = make_usage(
                    input=int(usage.get("prompt_tokens") or 0) - cached,
                    output=int(usage.get("completion_tokens") or 0),
                    cache_read=cached,
                    reasoning=int(
                        (usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
                    ),
                )
            for choice in data.get("choices") or []:
                delta = choice.get("delta") or {}
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    builder.thinking(reasoning)
                    yield ThinkingDelta(reasoning)
                text = delta.get("content")
                if isinstance(text, str) and text:
                    builder.text(text)
                    yield TextDelta(text)
                for call in delta.get("tool_calls") or []:
                    for event in _tool_call_events(call, calls, builder):
                        yield event
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
        if finish is None:
            yield self._incomplete(builder)
            return
        stop = _STOP.get(finish, "stop")
        if stop == "stop" and builder.has_tool_calls():
            stop = "toolUse"
        yield self._finished(builder, stop, finish)


def _tool_call_events(
    call: dict[str, Any], calls: dict[int, str], builder: MessageBuilder
) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    index = int(call.get("index") or 0)
    function = call.get("function") or {}
    if index not in calls:
        call_id = call.get("id") or f"call_{index}"
        calls[index] = call_id
        name = function.get("name") or ""
        builder.tool_start(call_id, name)
        events.append(ToolCallStart(call_id, name, index))
    arguments = function.get("arguments")
    if arguments:
        builder.tool_arguments(calls[index], arguments)
        events.append(ToolCallDelta(calls[index], arguments, index))
    return events


def _status_text(exc: StatusError) -> str:
    parsed = error_body(exc.body)
    return f"{exc.status_code} {parsed[1] if parsed is not None else exc.message}"

"""OpenAI's Responses API through the official ``openai`` SDK (pi's ``openai-responses``).

Request: ``input`` items in transcript order, ``store: false`` (the conversation
travels whole every time, so reasoning is carried as the encrypted reasoning items the API
returned), ``prompt_cache_key`` = the session id, ``max_output_tokens``, ``reasoning`` and
``include: ["reasoning.encrypted_content"]`` from the thinking level
(:func:`~pi_context.providers.reasoning.responses_reasoning`).

What an assistant message keeps so the next request can replay it exactly, as pi stores it:

* a reasoning item -> a thinking block whose ``thinkingSignature`` is the item's JSON; replayed
  verbatim (``encrypted_content`` included) for the same provider, API and model only;
* a message item -> a text block whose ``textSignature`` is ``{"v":1,"id":...,"phase"?}``;
* a function call -> a tool call whose id is ``<call_id>|<item id>``.

Prompt cache: only ``input`` grows between the requests of a conversation; the SDK writes the
body's keys in a fixed order, so each body extends the previous one up to the end of its
``input`` array and everything after it is identical. Usage: ``input`` excludes the cached
(``cacheRead``) and cache-written tokens; ``reasoning`` is recorded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import httpx2
import openai

from pi_context import _json
from pi_context.errors import ProviderError
from pi_context.messages import (
    AssistantMessage,
    ImageContent,
    StopReason,
    ToolCall,
    ToolResultMessage,
    Usage,
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
from pi_context.providers._openai_client import OpenAIClientModel
from pi_context.providers._sdk import error_body
from pi_context.providers.delivery import (
    Delivery,
    SystemUpdate,
    tool_arguments_json,
    user_blocks,
)
from pi_context.providers.output_cap import output_cap
from pi_context.providers.reasoning import responses_reasoning

__all__ = [
    "OpenAIResponsesModel",
    "responses_input",
    "responses_tools",
    "responses_usage",
    "system_role",
]

_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")
_ID_PROVIDERS = ("openai", "openai-codex", "opencode")
"""Target providers whose call ids keep the ``call|item`` halves apart when normalized."""


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _normalize_id_part(part: str) -> str:
    return _ID_BAD.sub("_", part)[:64].rstrip("_")


def _image_url(image: ImageContent) -> str:
    return f"data:{image['mimeType']};base64,{image['data']}"


def _input_image(image: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": _image_url(image)}


class _Converter:
    """One request's ``input``: message numbering and the tool-call ids rewritten so far."""

    def __init__(self, info: ModelInfo, role: str) -> None:
        self.info = info
        self.system_role = role
        self.items: list[dict[str, Any]] = []
        self.call_ids: dict[str, str] = {}
        """pi tool-call id -> the ``call_id`` sent for it (results are re-keyed to it)."""

    def same_model(self, message: AssistantMessage) -> bool:
        info = self.info
        return (
            message.get("provider") == info.provider
            and message.get("api") == info.api
            and message.get("model") == info.id
        )

    def same_provider_api(self, message: AssistantMessage) -> bool:
        return message.get("provider") == self.info.provider and message.get("api") == self.info.api

    def user(self, message: UserMessage) -> None:
        content: list[dict[str, Any]] = []
        for block in user_blocks(message["content"]):
            if block["type"] == "text":
                content.append({"type": "input_text", "text": block["text"]})
            elif self.info.images:
                content.append(_input_image(block))
        if content:
            self.items.append({"role": "user", "content": content})

    def update(self, text: str, mode: SystemDelivery) -> None:
        if not text:
            return
        if mode == "in_place":
            self.items.append({"role": self.system_role, "content": text})
        else:
            self.items.append({"role": "user", "content": [{"type": "input_text", "text": text}]})

    def _tool_call(self, call: ToolCall, message: AssistantMessage) -> dict[str, Any]:
        call_id, _, item_id = call["id"].partition("|")
        if self.same_model(message):
            sent_item: str | None = item_id if item_id.startswith("fc_") else None
        elif self.same_provider_api(message):
            sent_item = None
        elif self.info.provider in _ID_PROVIDERS:
            call_id = _normalize_id_part(call_id)
            sent_item = None
            if item_id:
                normalized = _normalize_id_part(item_id)
                sent_item = normalized if normalized.startswith("fc_") else None
                if sent_item is None:
                    sent_item = f"fc_{_short_hash(item_id)}"
        else:
            call_id = _normalize_id_part(call["id"])
            sent_item = None
        self.call_ids[call["id"]] = call_id
        out: dict[str, Any] = {"type": "function_call"}
        if sent_item:
            out["id"] = sent_item
        out.update(
            {"call_id": call_id, "name": call["name"], "arguments": tool_arguments_json(call)}
        )
        return out

    def assistant(self, message: AssistantMessage, number: int) -> None:
        same = self.same_model(message)
        texts = 0
        for block in message["content"]:
            if block["type"] == "thinking":
                signature = block.get("thinkingSignature")
                if not same or not signature:
                    continue
                try:
                    item = _json.loads(signature)
                except ValueError:
                    continue  # not a stored reasoning item: nothing the API could verify
                if isinstance(item, dict):
                    self.items.append(item)
            elif block["type"] == "text":
                item_id, phase = _text_id(block.get("textSignature") if same else None)
                if item_id is None:
                    item_id = f"msg_pi_{number}" if texts == 0 else f"msg_pi_{number}_{texts}"
                elif len(item_id) > 64:
                    item_id = f"msg_{_short_hash(item_id)}"
                texts += 1
                text_item: dict[str, Any] = {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                    "status": "completed",
                    "id": item_id,
                }
                if phase is not None:
                    text_item["phase"] = phase
                self.items.append(text_item)
            else:
                self.items.append(self._tool_call(block, message))

    def tool_result(self, message: ToolResultMessage) -> None:
        pi_id = message["toolCallId"]
        call_id = self.call_ids.get(pi_id, pi_id.partition("|")[0])
        texts = [b["text"] for b in message["content"] if b["type"] == "text"]
        images = [b for b in message["content"] if b["type"] == "image"]
        text = "\n".join(texts)
        output: str | list[dict[str, Any]]
        if images and self.info.images:
            parts: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if text else []
            parts.extend(_input_image(image) for image in images)
            output = parts
        elif text:
            output = text
        else:
            output = "(see attached image)" if images else "(no tool output)"
        self.items.append({"type": "function_call_output", "call_id": call_id, "output": output})


def _text_id(signature: str | None) -> tuple[str | None, str | None]:
    """``(id, phase)`` from a text signature (``{"v":1,...}`` JSON or a legacy plain id)."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = _json.loads(signature)
        except ValueError:
            return None, None
        if isinstance(parsed, dict) and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if isinstance(phase, str) else None
        return None, None
    return signature, None


def system_role(info: ModelInfo) -> str:
    """``developer`` for reasoning models (unless ``compat.supportsDeveloperRole`` is false)."""
    developer = info.reasoning and info.compat.get("supportsDeveloperRole") is not False
    return "developer" if developer else "system"


def responses_input(delivery: Delivery, info: ModelInfo) -> list[dict[str, Any]]:
    """The ``input`` items of a Responses request for a planned delivery."""
    convert = _Converter(info, system_role(info))
    if delivery.system:
        convert.items.append({"role": convert.system_role, "content": delivery.system})
    for number, item in enumerate(delivery.items):
        if isinstance(item, SystemUpdate):
            text = item.text
            removed = [tool["name"] for tool in item.message.get("toolsRemoved") or []]
            if removed and delivery.mode == "in_place":
                notice = "The following tools are no longer available. Do not call them:\n"
                notice += "\n".join(f"- {name}" for name in removed)
                text = f"{text}\n\n{notice}" if text else notice
            convert.update(text, delivery.mode)
            continue
        role = item["role"]
        if role == "user":
            convert.user(cast(UserMessage, item))
        elif role == "assistant":
            convert.assistant(cast(AssistantMessage, item), number)
        elif role == "toolResult":
            convert.tool_result(cast(ToolResultMessage, item))
    return convert.items


def responses_tools(delivery: Delivery) -> list[dict[str, Any]]:
    """Tool declarations as Responses ``function`` tools."""
    return [
        {
            "type": "function",
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool["parameters"],
        }
        for tool in delivery.tools
    ]


class OpenAIResponsesModel(OpenAIClientModel[openai.AsyncOpenAI]):
    """A :class:`~pi_context.model.Model` over the OpenAI Responses API (``/responses``)."""

    connection_errors = (openai.APIConnectionError, httpx2.HTTPError, OSError)
    sdk_errors = (openai.APIError, *connection_errors)

    def _connect(
        self,
        *,
        api_key: str,
        base_url: str | None,
        headers: dict[str, str],
        max_retries: int,
        max_retry_delay: float | None,
        timeout: float | None,
    ) -> openai.AsyncOpenAI:
        del max_retry_delay  # the SDK's own retries honour a server's wait of up to a minute
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            default_headers=headers,
            max_retries=max_retries,
            timeout=timeout,
        )

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``responses.create``."""
        delivery = self._delivery(request)
        opts = request.options
        info = self._info
        params: dict[str, Any] = {
            "model": info.id,
            "input": responses_input(delivery, info),
            "stream": True,
            "store": False,
        }
        key_mode = info.compat.get("promptCacheKeyMode")
        if opts.session_id and opts.cache != "none" and key_mode != "disabled":
            params["prompt_cache_key"] = opts.session_id[:64]
            params["extra_headers"] = {
                "session-id": opts.session_id,
                "x-client-request-id": opts.session_id,
            }
        if (
            opts.cache != "none"
            and self.long_cache_retention
            and info.compat.get("supportsLongCacheRetention") is not False
            and not info.compat.get("supportsExplicitPromptCacheMode")
        ):
            params["prompt_cache_retention"] = "24h"
        max_tokens = output_cap(info, request)
        if info.compat.get("supportsMaxOutputTokens") is not False:
            params["max_output_tokens"] = max(max_tokens, 16)
        if opts.temperature is not None:
            params["temperature"] = opts.temperature
        tools = responses_tools(delivery)
        if tools:
            params["tools"] = tools
            choice = opts.tool_choice
            if choice in ("none", "required"):
                params["tool_choice"] = choice
            elif choice != "auto":
                params["tool_choice"] = {"type": "function", "name": choice}
        params.update(responses_reasoning(info, opts.thinking_level))
        return params

    def _status_error(self, exc: BaseException) -> ProviderError | None:
        if not isinstance(exc, openai.APIStatusError):
            return None
        parsed = error_body(exc.body)
        text = f"{exc.status_code} {parsed[1] if parsed is not None else exc.message}"
        return make_error(
            text,
            status=exc.status_code,
            headers=dict(exc.response.headers),
            provider=self._info.provider,
        )

    async def _run(
        self, params: dict[str, Any], builder: MessageBuilder
    ) -> AsyncIterator[StreamEvent]:
        stream = await self._client.responses.create(**params)
        state = _ResponsesStream(builder)
        try:
            async for raw in stream:
                event = raw.model_dump(mode="json", exclude_unset=True)
                for out in state.feed(event):
                    yield out
                if state.terminal:
                    break
        finally:
            await stream.close()
        provider = self._info.provider
        if state.failure is not None:
            yield self._failed(builder, make_error(state.failure, provider=provider))
            return
        if not state.terminal:
            error = ProviderError(
                "OpenAI Responses stream ended before a terminal response event",
                kind="transient",
            )
            yield self._failed(builder, error)
            return
        yield self._finished(builder, state.stop, state.raw_stop)


class _ResponsesStream:
    """One Responses event stream being translated into our events and the final message."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.terminal = False
        self.failure: str | None = None
        self.stop: StopReason = "stop"
        self.raw_stop: str | None = None
        self.calls: dict[str, str] = {}
        """item id -> our tool-call id (``call_id|item_id``)."""
        self.reasoning: dict[str, dict[str, Any]] = {}
        """reasoning item id -> its thinking block (signature back-filled on completion)."""
        self.open_calls: set[str] = set()

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        kind = event.get("type", "")
        builder = self.builder
        index = int(event.get("output_index") or 0)
        if kind == "response.created":
            response = event.get("response") or {}
            builder.response_id = response.get("id") or builder.response_id
            builder.response_model = response.get("model") or builder.response_model
        elif kind == "response.output_item.added":
            return self._item_added(index, event.get("item") or {})
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            delta = str(event.get("delta") or "")
            if delta:
                builder.thinking(delta, index)
                return [ThinkingDelta(delta, index)]
        elif kind == "response.reasoning_summary_part.done":
            builder.thinking("\n\n", index)
            return [ThinkingDelta("\n\n", index)]
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            delta = str(event.get("delta") or "")
            if delta:
                builder.text(delta, index)
                return [TextDelta(delta, index)]
        elif kind == "response.function_call_arguments.delta":
            call_id = self.calls.get(str(event.get("item_id") or ""))
            delta = str(event.get("delta") or "")
            if call_id is not None and delta:
                builder.tool_arguments(call_id, delta)
                return [ToolCallDelta(call_id, delta, index)]
        elif kind == "response.output_item.done":
            self._item_done(index, event.get("item") or {})
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._finish(event.get("response") or {})
        elif kind == "error":
            self.terminal = True
            self.failure = f"Error Code {event.get('code')}: {event.get('message')}"
        return []

    def _item_added(self, index: int, item: dict[str, Any]) -> list[StreamEvent]:
        builder = self.builder
        kind = item.get("type")
        if kind == "reasoning":
            builder.thinking("", index)
        elif kind == "message":
            builder.text("", index)
        elif kind == "function_call":
            call_id = f"{item.get('call_id') or ''}|{item.get('id') or ''}"
            self.calls[str(item.get("id") or "")] = call_id
            self.open_calls.add(call_id)
            name = str(item.get("name") or "")
            builder.tool_start(call_id, name)
            events: list[StreamEvent] = [ToolCallStart(call_id, name, index)]
            arguments = item.get("arguments")
            if arguments:
                builder.tool_arguments(call_id, arguments)
                events.append(ToolCallDelta(call_id, arguments, index))
            return events
        return []

    def _block(self, kind: str, index: int) -> dict[str, Any]:
        """The block the finished item streamed into (opened now if nothing streamed)."""
        block = self.builder.last_block(kind)
        if block is None:
            if kind == "thinking":
                self.builder.thinking("", index)
            else:
                self.builder.text("", index)
            block = self.builder.last_block(kind)
        assert block is not None
        return block

    def _item_done(self, index: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "reasoning":
            block = self._block("thinking", index)
            summary = [str(p.get("text") or "") for p in item.get("summary") or []]
            content = [str(p.get("text") or "") for p in item.get("content") or []]
            block["thinking"] = "\n\n".join(summary) if summary else "\n\n".join(content)
            block["thinkingSignature"] = _json.js_stringify(item)
            if item.get("id"):
                self.reasoning[str(item["id"])] = block
        elif kind == "message":
            block = self._block("text", index)
            parts = item.get("content") or []
            texts = [
                str(p.get("text") if p.get("type") == "output_text" else p.get("refusal") or "")
                for p in parts
            ]
            block["text"] = "".join(texts)
            signature: dict[str, Any] = {"v": 1, "id": item.get("id")}
            if item.get("phase"):
                signature["phase"] = item["phase"]
            block["textSignature"] = _json.js_stringify(signature)
        elif kind == "function_call":
            call_id = self.calls.get(str(item.get("id") or ""))
            if call_id is None:
                return
            if isinstance(item.get("arguments"), str):
                self.builder.set_tool_arguments(call_id, item["arguments"])
            self.open_calls.discard(call_id)

    def _finish(self, response: dict[str, Any]) -> None:
        self.terminal = True
        builder = self.builder
        builder.response_id = response.get("id") or builder.response_id
        self._backfill(response.get("output") or [])
        usage = response.get("usage") or {}
        if usage:
            builder.usage = responses_usage(usage)
        status = response.get("status")
        self.raw_stop = str(status) if status else None
        if status == "completed":
            if self.open_calls:
                self.failure = "Response completed with unfinished tool calls"
            self.stop = "toolUse" if builder.has_tool_calls() else "stop"
        elif status == "incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason")
            if reason == "max_output_tokens":
                self.stop = "length"
            else:
                self.failure = f"Response incomplete: {reason}"
        else:
            error = response.get("error") or {}
            self.failure = f"{error.get('code')}: {error.get('message')}" if error else str(status)

    def _backfill(self, output: list[dict[str, Any]]) -> None:
        """Reasoning items streamed without ``encrypted_content`` take it from the response."""
        for item in output:
            if item.get("type") != "reasoning" or not item.get("encrypted_content"):
                continue
            block = self.reasoning.get(str(item.get("id") or ""))
            if block is None:
                continue
            stored = _json.loads(block["thinkingSignature"])
            if isinstance(stored, dict) and not stored.get("encrypted_content"):
                stored["encrypted_content"] = item["encrypted_content"]
                block["thinkingSignature"] = _json.js_stringify(stored)


def responses_usage(usage: Mapping[str, Any]) -> Usage:
    """pi's usage record from a Responses ``usage`` object (cached tokens split out)."""
    details = usage.get("input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    written = int(details.get("cache_write_tokens") or 0)
    reasoning = (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
    total = usage.get("total_tokens")
    return make_usage(
        input=int(usage.get("input_tokens") or 0) - cached - written,
        output=int(usage.get("output_tokens") or 0),
        cache_read=cached,
        cache_write=written,
        reasoning=reasoning if isinstance(reasoning, int) else 0,
        total=total if isinstance(total, int) else None,
    )

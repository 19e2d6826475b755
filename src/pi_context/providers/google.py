"""Gemini through the official ``google-genai`` SDK (pi's ``google-generative-ai``).

Request: ``contents`` (``user``/``model`` turns), ``systemInstruction`` with the
leading prompt, ``tools`` as ``functionDeclarations`` with JSON-Schema parameters, an optional
``toolConfig``, and ``generationConfig`` with ``maxOutputTokens``, ``temperature`` and the
``thinkingConfig`` of the thinking level
(:func:`~pi_context.providers.reasoning.google_thinking_config`).

Gemini caches implicitly: a request whose prompt starts like a recent one is billed the shared
prefix at the cached rate (``usageMetadata.cachedContentTokenCount`` becomes ``cacheRead``).
The SDK writes ``contents`` first, so each body extends the previous one up to the end of its
``contents``; system prompt patches travel as user-side text where they happen (pi collapses
them into ``systemInstruction``, which rewrites the head of every later request).

Thought signatures (which let Gemini continue its reasoning across tool calls) are kept per
block as pi keeps them: ``thoughtSignature`` on text, ``thinkingSignature`` on thinking and
``thoughtSignature`` on tool calls, and replayed only to the same provider and model.
"""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit, urlunsplit

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from pi_context.errors import ProviderError
from pi_context.messages import (
    AssistantMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
    now_ms,
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
from pi_context.providers._sdk import SDKModel
from pi_context.providers.delivery import (
    Delivery,
    SystemUpdate,
    tool_arguments_json,
    user_blocks,
)
from pi_context.providers.output_cap import output_cap
from pi_context.providers.reasoning import google_thinking_config

__all__ = ["GoogleModel", "google_contents", "google_tools", "split_base_url"]

_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_GEMINI_MAJOR = re.compile(r"^gemini-(\d+)")
_TOOL_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")
_VERSION = re.compile(r"^v\d+\w*$")
IMAGE_OMITTED = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED = "(tool image omitted: model does not support images)"


def _gemini_major(model_id: str) -> int | None:
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def _sends_tool_ids(model_id: str) -> bool:
    """pi sends function-call ids only to Claude, gpt-oss and Gemini 3+ model ids."""
    lowered = model_id.lower()
    major = _gemini_major(lowered)
    return lowered.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def _valid_signature(signature: str | None) -> str | None:
    if signature and len(signature) % 4 == 0 and _BASE64.match(signature):
        return signature
    return None


def _tool_id(call_id: str) -> str:
    return _TOOL_ID_BAD.sub("_", call_id)[:64]


class _Contents:
    """The ``contents`` of one request being assembled (turns of ``user`` and ``model``)."""

    def __init__(self, info: ModelInfo) -> None:
        self.info = info
        self.turns: list[dict[str, Any]] = []
        self.send_ids = _sends_tool_ids(info.id)
        major = _gemini_major(info.id)
        self.inline_tool_images = major is None or major >= 3
        self.results_open = False
        """True while the last turn holds tool results (later results join it)."""

    def _user_turn(self, parts: list[dict[str, Any]], *, results: bool = False) -> None:
        if parts:
            self.turns.append({"role": "user", "parts": parts})
        self.results_open = results and bool(parts)

    def _image_parts(self, images: list[Any], omitted: str) -> list[dict[str, Any]]:
        if not images:
            return []
        if not self.info.images:
            return [{"text": omitted}]
        return [{"inlineData": {"mimeType": i["mimeType"], "data": i["data"]}} for i in images]

    def user(self, message: UserMessage) -> None:
        parts: list[dict[str, Any]] = []
        images: list[Any] = []
        for block in user_blocks(message["content"]):
            if block["type"] == "image":
                images.append(block)
                continue
            parts.extend(self._image_parts(images, IMAGE_OMITTED))
            images = []
            parts.append({"text": block["text"]})
        parts.extend(self._image_parts(images, IMAGE_OMITTED))
        self._user_turn(parts)

    def update(self, text: str) -> None:
        """A system patch, as user-side text inside the user turn it falls in."""
        if self.results_open:
            self.turns[-1]["parts"].append({"text": text})
        else:
            self._user_turn([{"text": text}])

    def assistant(self, message: AssistantMessage) -> None:
        info = self.info
        same = message.get("provider") == info.provider and message.get("model") == info.id
        parts: list[dict[str, Any]] = []
        for block in message["content"]:
            if block["type"] == "text":
                signature = _valid_signature(block.get("textSignature")) if same else None
                if not block["text"] and signature is None:
                    continue
                part: dict[str, Any] = {"text": block["text"]}
                if signature is not None:
                    part["thoughtSignature"] = signature
                parts.append(part)
            elif block["type"] == "thinking":
                if not same:
                    continue
                signature = _valid_signature(block.get("thinkingSignature"))
                if not block["thinking"] and signature is None:
                    continue
                part = {"thought": True, "text": block["thinking"]}
                if signature is not None:
                    part["thoughtSignature"] = signature
                parts.append(part)
            else:
                call: dict[str, Any] = {"name": block["name"], "args": block.get("arguments") or {}}
                if self.send_ids:
                    call["id"] = _tool_id(block["id"])
                part = {"functionCall": call}
                signature = _valid_signature(block.get("thoughtSignature")) if same else None
                if signature is not None:
                    part["thoughtSignature"] = signature
                parts.append(part)
        self.results_open = False
        if parts:
            self.turns.append({"role": "model", "parts": parts})

    def tool_result(self, message: ToolResultMessage) -> None:
        texts = [b["text"] for b in message["content"] if b["type"] == "text"]
        images = [b for b in message["content"] if b["type"] == "image"]
        text = "\n".join(texts) or ("(see attached image)" if images else "")
        key = "error" if message.get("isError") else "output"
        response: dict[str, Any] = {"name": message["toolName"], "response": {key: text}}
        extra_turn: list[dict[str, Any]] = []
        if images and self.info.images and self.inline_tool_images:
            response["parts"] = [
                {"inlineData": {"mimeType": i["mimeType"], "data": i["data"]}} for i in images
            ]
        elif images:
            omitted = self._image_parts(images, TOOL_IMAGE_OMITTED)
            extra_turn = omitted if not self.info.images else [{"text": "Tool result image:"}]
            if self.info.images:
                extra_turn += omitted
        if self.send_ids:
            response["id"] = _tool_id(message["toolCallId"])
        part = {"functionResponse": response}
        if self.results_open:
            self.turns[-1]["parts"].append(part)
        else:
            self._user_turn([part], results=True)
        if extra_turn:
            self._user_turn(extra_turn)


def google_contents(delivery: Delivery, info: ModelInfo) -> list[dict[str, Any]]:
    """The ``contents`` of a Gemini request (wire spelling) for a planned delivery."""
    contents = _Contents(info)
    for item in delivery.items:
        if isinstance(item, SystemUpdate):
            contents.update(item.text)
            continue
        role = item["role"]
        if role == "user":
            contents.user(cast(UserMessage, item))
        elif role == "assistant":
            contents.assistant(cast(AssistantMessage, item))
        elif role == "toolResult":
            contents.tool_result(cast(ToolResultMessage, item))
    return contents.turns


def _const_to_enum(schema: Any) -> Any:
    """JSON Schema with string/number ``const`` rewritten as a one-value ``enum`` (as pi)."""
    if isinstance(schema, list):
        return [_const_to_enum(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "const" and isinstance(value, str | int | float) and not isinstance(value, bool):
            out["enum"] = [value]
        else:
            out[key] = _const_to_enum(value)
    return out


def google_tools(delivery: Delivery) -> list[dict[str, Any]]:
    """The ``tools`` parameter: one ``functionDeclarations`` list, or nothing."""
    if not delivery.tools:
        return []
    declarations = [
        {
            "name": tool["name"],
            "description": tool["description"],
            "parametersJsonSchema": _const_to_enum(tool["parameters"]),
        }
        for tool in delivery.tools
    ]
    return [{"functionDeclarations": declarations}]


_STRICT = ("prefer", "require", "always", True)


def _validated_tools(info: ModelInfo, delivery: Delivery) -> bool:
    """pi's ``VALIDATED`` calling mode: Gemini 3+ and a tool that prefers strict sampling."""
    major = _gemini_major(info.id)
    if major is None or major < 3:
        return False
    for tool in delivery.tools:
        sampling = tool.get("constrainedSampling") or {}
        if sampling.get("type") == "json_schema" and sampling.get("strict") in _STRICT:
            return True
    return False


def split_base_url(url: str) -> tuple[str, str]:
    """``(base, api_version)`` from a base URL such as ``https://host/v1beta``."""
    parts = urlsplit(url.rstrip("/"))
    head, _, last = parts.path.rpartition("/")
    if _VERSION.match(last):
        return urlunsplit(parts._replace(path=head)), last
    return url.rstrip("/"), "v1beta"


class GoogleModel(SDKModel):
    """A :class:`~pi_context.model.Model` over the Gemini API (``streamGenerateContent``)."""

    takes_extra_body: ClassVar[bool] = False

    connection_errors = (httpx2.HTTPError, OSError)
    sdk_errors = (genai_errors.APIError, *connection_errors)

    def __init__(
        self,
        info: ModelInfo,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = 300.0,
        max_retries: int = 0,
        max_retry_delay: float | None = 60.0,
        credential_error: str | None = None,
        key_source: str | None = None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        url = base_url or info.base_url or "https://generativelanguage.googleapis.com/v1beta"
        base, version = split_base_url(url)
        self._client = genai.Client(
            vertexai=False,
            api_key=api_key or "missing-key",
            http_options=genai_types.HttpOptions(
                base_url=base,
                api_version=version,
                headers=dict(headers or {}),
                timeout=int(timeout * 1000) if timeout is not None else None,
                retry_options=genai_types.HttpRetryOptions(
                    attempts=max_retries + 1,
                    max_delay=max_retry_delay,
                    http_status_codes=[408, 409, 429, 500, 502, 503, 504],
                )
                if max_retries > 0
                else None,
            ),
        )
        super().__init__(
            info, base_url=url, credential_error=credential_error, key_source=key_source
        )
        self.system_delivery: SystemDelivery = "user_turn"
        self._clock = clock

    async def aclose(self) -> None:
        await self._client.aio.aclose()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``aio.models.generate_content_stream`` (wire spelling)."""
        delivery = self._delivery(request)
        opts = request.options
        info = self._info
        config: dict[str, Any] = {}
        if delivery.system:
            config["systemInstruction"] = {"role": "user", "parts": [{"text": delivery.system}]}
        tools = google_tools(delivery)
        if tools:
            config["tools"] = tools
            mode = {"none": "NONE", "required": "ANY"}.get(opts.tool_choice)
            if mode is None and opts.tool_choice != "auto":
                config["toolConfig"] = {
                    "functionCallingConfig": {
                        "mode": "ANY",
                        "allowedFunctionNames": [opts.tool_choice],
                    }
                }
            elif mode is not None:
                config["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
            elif _validated_tools(info, delivery):
                config["toolConfig"] = {"functionCallingConfig": {"mode": "VALIDATED"}}
        config["maxOutputTokens"] = output_cap(info, request)
        if opts.temperature is not None:
            config["temperature"] = opts.temperature
        thinking = google_thinking_config(info, opts.thinking_level, opts.thinking_budgets)
        if thinking is not None:
            config["thinkingConfig"] = thinking
        return {"model": info.id, "contents": google_contents(delivery, info), "config": config}

    def _status_error(self, exc: BaseException) -> ProviderError | None:
        if not isinstance(exc, genai_errors.APIError):
            return None
        status = exc.code if isinstance(exc.code, int) else None
        message = exc.message or exc.status or str(exc)
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        return make_error(
            f"{status} {message}" if status else str(message),
            status=status,
            headers=dict(headers) if headers is not None else None,
            provider=self._info.provider,
        )

    async def _run(
        self, params: dict[str, Any], builder: MessageBuilder
    ) -> AsyncIterator[StreamEvent]:
        if not params["contents"]:
            yield self._failed(builder, ProviderError("nothing to send: no contents"))
            return
        stream = await self._client.aio.models.generate_content_stream(**params)
        state = _GeminiStream(builder, self._clock)
        async for chunk in stream:
            for event in state.feed(chunk):
                yield event
        if state.finish is None:
            yield self._incomplete(builder)
            return
        if state.finish in ("STOP", "MAX_TOKENS", "CONTINUATION"):
            stop: StopReason = "length" if state.finish != "STOP" else "stop"
            if stop == "stop" and builder.has_tool_calls():
                stop = "toolUse"
            yield self._finished(builder, stop, state.finish)
            return
        error = make_error(f"Provider stopped with: {state.finish}", provider=self._info.provider)
        yield self._failed(builder, error, state.finish)


class _GeminiStream:
    """One streamed Gemini response: blocks by kind, tool-call ids, the last usage report."""

    def __init__(self, builder: MessageBuilder, clock: Callable[[], int]) -> None:
        self.builder = builder
        self.clock = clock
        self.finish: str | None = None
        self.block = 0
        self.kind: str | None = None
        self.ids: set[str] = set()
        self.counter = 0

    def feed(self, chunk: genai_types.GenerateContentResponse) -> list[StreamEvent]:
        builder = self.builder
        if chunk.response_id and not builder.response_id:
            builder.response_id = chunk.response_id
        if chunk.model_version and not builder.response_model:
            builder.response_model = chunk.model_version
        usage = chunk.usage_metadata
        if usage is not None:
            cached = usage.cached_content_token_count or 0
            thoughts = usage.thoughts_token_count
            record = make_usage(
                input=(usage.prompt_token_count or 0) - cached,
                output=(usage.candidates_token_count or 0) + (thoughts or 0),
                cache_read=cached,
                reasoning=thoughts or 0,
                total=usage.total_token_count,
            )
            builder.usage = record
        events: list[StreamEvent] = []
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            # The prompt itself was refused: no candidate follows.
            blocked = feedback.block_reason
            self.finish = str(getattr(blocked, "value", blocked))
        for candidate in chunk.candidates or []:
            content = candidate.content
            for part in (content.parts if content is not None else None) or []:
                events.extend(self._part(part))
            if candidate.finish_reason is not None:
                reason = candidate.finish_reason
                self.finish = str(getattr(reason, "value", reason))
        return events

    def _open(self, kind: str) -> int:
        if self.kind != kind:
            self.block += 1
            self.kind = kind
        return self.block

    def _part(self, part: genai_types.Part) -> list[StreamEvent]:
        builder = self.builder
        signature = (
            base64.b64encode(part.thought_signature).decode("ascii")
            if part.thought_signature
            else None
        )
        if part.function_call is not None:
            self.kind = None
            call = part.function_call
            name = call.name or ""
            call_id = call.id or ""
            if not call_id or call_id in self.ids:
                self.counter += 1
                call_id = f"{name}_{self.clock()}_{self.counter}"
            self.ids.add(call_id)
            arguments = tool_arguments_json(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": call.args or {}}
            )
            builder.tool_start(call_id, name)
            builder.tool_arguments(call_id, arguments)
            if signature is not None:
                builder.tool_signature(call_id, signature)
            index = self._open("tool")
            self.kind = None
            return [ToolCallStart(call_id, name, index), ToolCallDelta(call_id, arguments, index)]
        if part.text is None:
            return []
        if part.thought:
            index = self._open("thinking")
            builder.thinking(part.text, index)
            block = builder.last_block("thinking")
            if signature and block is not None:
                block["thinkingSignature"] = signature
            return [ThinkingDelta(part.text, index)] if part.text else []
        index = self._open("text")
        builder.text(part.text, index)
        block = builder.last_block("text")
        if signature and block is not None:
            block["textSignature"] = signature
        return [TextDelta(part.text, index)] if part.text else []

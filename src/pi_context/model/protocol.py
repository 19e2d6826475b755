"""The model interface every provider adapter implements, and every caller uses.

A :class:`Model` streams one response for a :class:`ModelRequest`. The stream is a sequence
of :data:`StreamEvent` values ending with exactly one :class:`StreamDone`, which carries the
final assistant message (``stopReason`` ``error`` or ``aborted`` on failure, with the
classified :class:`~pi_context.errors.ProviderError` beside it). Cancellation is asyncio
cancellation of the consuming task.

Compaction, branch summaries and the agent loop all talk to models only through this module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, cast, runtime_checkable

from msgspec import Struct

from pi_context.errors import ProviderError
from pi_context.messages import AssistantMessage, Message, ThinkingLevel, ToolDeclaration

__all__ = [
    "CacheMode",
    "HeadersHook",
    "Model",
    "ModelCost",
    "ModelInfo",
    "ModelRequest",
    "PayloadHook",
    "RequestOptions",
    "StreamDone",
    "StreamEvent",
    "SystemDelivery",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallStart",
    "complete",
    "system_delivery_of",
]

CacheMode = Literal["default", "none"]


@dataclass(frozen=True, slots=True)
class ModelCost:
    """Prices in dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What a caller needs to know about a model to budget its context."""

    provider: str
    id: str
    api: str
    context_window: int
    max_tokens: int
    name: str | None = None
    base_url: str | None = None
    reasoning: bool = False
    images: bool = False
    cost: ModelCost = field(default_factory=ModelCost)
    system_messages_mid_conversation: bool = False
    """True when the provider accepts system messages after the first one; prompt patches
    are then delivered in place as system messages. The bundled adapters deliver patches in
    place either way (as user-side text otherwise); :func:`system_delivery_of`
    says what a model really does."""
    thinking_level_map: Mapping[str, str | None] = field(default_factory=dict)
    """pi's ``thinkingLevelMap``: a level mapped to ``None`` is unsupported, a string is the
    provider's own value for it; ``xhigh``/``max`` exist only when mapped to a string
    (see :mod:`pi_context.model.thinking`)."""
    compat: Mapping[str, Any] = field(default_factory=dict)
    """pi's per-model ``compat`` object (models.json), read by the adapters as pi reads it,
    e.g. ``forceAdaptiveThinking``, ``thinkingFormat``, ``supportsReasoningEffort``."""
    input_limits: Mapping[str, Any] = field(default_factory=dict)
    """pi's per-model ``inputLimits`` object (models.json); ``images.resize`` bounds the
    images sent to it (see :func:`pi_context.images.image_limits_from`)."""


PayloadHook: TypeAlias = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sees the JSON body an HTTP adapter is about to send and returns the body to send."""

HeadersHook: TypeAlias = Callable[[dict[str, str | None]], Awaitable[None]]
"""Changes the HTTP headers of a request in place (a value of ``None`` removes the header)."""


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """Per-request knobs: output limit, temperature, thinking level, prompt-cache mode, the
    session id providers use for cache routing, and the tool choice."""

    max_tokens: int | None = None
    temperature: float | None = None
    thinking_level: ThinkingLevel = "off"
    cache: CacheMode = "default"
    """``none`` for one-off requests (summaries) that must never write the prompt cache."""
    session_id: str | None = None
    tool_choice: str = "auto"
    """``auto`` (the model decides), ``none``, ``required`` (some tool), or a tool name."""
    thinking_budgets: Mapping[str, int] | None = None
    """Settings ``thinkingBudgets``: token budgets per level replacing the defaults."""
    headers_hook: HeadersHook | None = field(default=None, compare=False)
    """Extension ``before_provider_headers``: the adapters whose transport assembles the
    headers themselves (Anthropic Messages, OpenAI Chat Completions) let it change them."""
    payload_hook: PayloadHook | None = field(default=None, compare=False)
    """Extension ``before_provider_request``: the HTTP adapters hand it the body they built
    and send what it returns (adapters without such a body ignore it)."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request: a fixed system prompt and/or system messages inside ``messages``."""

    messages: Sequence[Message]
    system_prompt: str | None = None
    tools: Sequence[ToolDeclaration] = ()
    options: RequestOptions = field(default_factory=RequestOptions)


class TextDelta(Struct, frozen=True):
    """A piece of the answer's text; deltas with the same ``index`` (the provider's block
    index) join one block."""

    text: str
    index: int = 0


class ThinkingDelta(Struct, frozen=True):
    """A piece of the model's reasoning; joined by ``index`` as :class:`TextDelta` is."""

    text: str
    index: int = 0


class ToolCallStart(Struct, frozen=True):
    """A tool call begins: its id and tool name."""

    id: str
    name: str
    index: int = 0


class ToolCallDelta(Struct, frozen=True):
    """A piece of call ``id``'s arguments as JSON text (the pieces concatenate)."""

    id: str
    arguments_json: str
    index: int = 0


class StreamDone(Struct, frozen=True):
    """The end of a stream: the final assistant message and, for a failure (``stopReason``
    ``error``), the classified error."""

    message: AssistantMessage
    error: ProviderError | None = None


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallStart | ToolCallDelta | StreamDone


@runtime_checkable
class Model(Protocol):
    """A streaming model. Implementations must end every stream with one ``StreamDone``."""

    @property
    def info(self) -> ModelInfo: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...


async def complete(model: Model, request: ModelRequest) -> StreamDone:
    """Run a request to the end and return its ``StreamDone``."""
    done: StreamDone | None = None
    async for event in model.stream(request):
        if isinstance(event, StreamDone):
            done = event
    if done is None:
        raise ProviderError(f"{model.info.provider}/{model.info.id}: stream ended without a result")
    return done


SystemDelivery = Literal["in_place", "user_turn", "collapse"]
"""How a model delivers the system prompt's later patches: ``in_place`` as system messages
where they occur, ``user_turn`` as user-side text where they occur, ``collapse`` folded into
one leading prompt (the wire format of each is :mod:`pi_context.providers.delivery`'s)."""


def system_delivery_of(model: Model) -> SystemDelivery:
    """How ``model`` delivers system patches: its ``system_delivery`` attribute when it has one
    (the bundled adapters do), else ``in_place`` when it accepts mid-conversation system
    messages and pi's ``collapse`` otherwise. Cache accounting fingerprints what is really sent
    with it, without knowing the adapter."""
    declared = getattr(model, "system_delivery", None)
    if declared in ("in_place", "user_turn", "collapse"):
        return cast(SystemDelivery, declared)
    return "in_place" if model.info.system_messages_mid_conversation else "collapse"

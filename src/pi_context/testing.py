"""Fakes for tests: a scripted model, a fixed clock, predictable ids.

Ship them in the package so users test their own extensions and agents the same way we do::

    model = ScriptedModel([reply("hello"), reply(tool_calls=[("read", {"path": "a.py"})])])
    ...
    model.assert_complete()
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_context import _json
from pi_context.errors import ProviderError, ProviderErrorKind
from pi_context.messages import (
    AssistantContent,
    AssistantMessage,
    StopReason,
    Usage,
    assistant_message,
    empty_usage,
    text_block,
    tool_call,
)
from pi_context.model import (
    ModelInfo,
    ModelRequest,
    StreamDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
)

__all__ = [
    "FixedClock",
    "ScriptedModel",
    "ScriptedReply",
    "SequentialIds",
    "failure",
    "reply",
]


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One scripted response: content blocks, a stop reason, usage, or an error to raise."""

    content: Sequence[AssistantContent] = ()
    stop_reason: StopReason = "stop"
    usage: Usage | None = None
    error: ProviderError | None = None
    delay: float = 0.0


def reply(
    text: str | None = None,
    *,
    thinking: str | None = None,
    tool_calls: Iterable[tuple[str, dict[str, Any]]] = (),
    stop_reason: StopReason | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    delay: float = 0.0,
) -> ScriptedReply:
    """A successful reply. Tool calls get ids ``call_1``, ``call_2``, ... per reply."""
    content: list[AssistantContent] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking})
    if text is not None:
        content.append(text_block(text))
    calls = list(tool_calls)
    for n, (name, args) in enumerate(calls, start=1):
        content.append(tool_call(f"call_{n}", name, args))
    usage = empty_usage()
    usage["input"] = input_tokens
    usage["output"] = output_tokens
    usage["cacheRead"] = cache_read
    usage["cacheWrite"] = cache_write
    usage["totalTokens"] = input_tokens + output_tokens + cache_read + cache_write
    return ScriptedReply(
        content=content,
        stop_reason=stop_reason or ("toolUse" if calls else "stop"),
        usage=usage,
        delay=delay,
    )


def failure(
    message: str, kind: ProviderErrorKind = "other", *, status: int | None = None
) -> ScriptedReply:
    """A reply that fails with a classified provider error."""
    return ScriptedReply(
        error=ProviderError(message, kind=kind, status=status), stop_reason="error"
    )


@dataclass
class ScriptedModel:
    """A deterministic :class:`~pi_context.model.Model` that plays back replies in order.

    ``replies`` may hold :class:`ScriptedReply` values or callables that receive the request and
    return one (to answer based on what was asked). Every request is recorded in ``requests``.
    ``clock`` stamps the replies (Unix milliseconds; ``None``: the wall clock); share the
    session's :class:`FixedClock` to make a whole run reproducible.
    """

    replies: list[ScriptedReply | Callable[[ModelRequest], ScriptedReply]]
    model_info: ModelInfo = field(
        default_factory=lambda: ModelInfo(
            provider="scripted",
            id="scripted-model",
            api="scripted",
            context_window=128_000,
            max_tokens=16_384,
        )
    )
    requests: list[ModelRequest] = field(default_factory=list)
    clock: Callable[[], int] | None = None
    _next: int = 0

    @property
    def info(self) -> ModelInfo:
        return self.model_info

    def add(self, *replies: ScriptedReply | Callable[[ModelRequest], ScriptedReply]) -> None:
        self.replies.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self.replies) - self._next

    def assert_complete(self) -> None:
        """Fail unless every scripted reply was consumed."""
        if self.remaining:
            raise AssertionError(f"{self.remaining} scripted replies were never requested")

    def _message(
        self,
        content: Sequence[AssistantContent],
        stop: StopReason,
        usage: Usage | None,
        error: str | None = None,
    ) -> AssistantMessage:
        return assistant_message(
            content,
            api=self.model_info.api,
            provider=self.model_info.provider,
            model=self.model_info.id,
            usage=usage,
            stop_reason=stop,
            error_message=error,
            timestamp=self.clock() if self.clock is not None else None,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if self._next >= len(self.replies):
            raise AssertionError(f"ScriptedModel: no reply left for request #{len(self.requests)}")
        item = self.replies[self._next]
        self._next += 1
        scripted = item(request) if callable(item) else item
        if scripted.delay:
            await asyncio.sleep(scripted.delay)
        if scripted.error is not None:
            yield StreamDone(self._message([], "error", None, str(scripted.error)), scripted.error)
            return
        for index, block in enumerate(scripted.content):
            if block["type"] == "text":
                yield TextDelta(block["text"], index)
            elif block["type"] == "thinking":
                yield ThinkingDelta(block["thinking"], index)
            else:
                yield ToolCallStart(block["id"], block["name"], index)
                yield ToolCallDelta(block["id"], _json.js_stringify(block["arguments"]), index)
            await asyncio.sleep(0)
        yield StreamDone(self._message(scripted.content, scripted.stop_reason, scripted.usage))


@dataclass
class FixedClock:
    """A clock that starts at ``start_ms`` and advances ``step_ms`` on every reading."""

    start_ms: int = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    step_ms: int = 1

    def __post_init__(self) -> None:
        self._now = self.start_ms - self.step_ms

    def __call__(self) -> int:
        self._now += self.step_ms
        return self._now


class SequentialIds:
    """Entry ids ``00000001``, ``00000002``, ... (8 hex digits, as pi's ids)."""

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)

    def __call__(self) -> str:
        return f"{next(self._counter):08x}"

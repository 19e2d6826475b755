"""A minimal loop environment for tests: a list as session, tools as async functions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pi_context.agent._loop import AgentLoop, ToolOutcome
from pi_context.agent._transform import TransformChain
from pi_context.events import AgentEvent
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    Message,
    ToolCall,
    ToolDeclaration,
    ToolResultMessage,
    text_block,
)
from pi_context.model import Model, ModelRequest, RequestOptions
from pi_context.testing import ScriptedModel
from pi_context.tools.base import UpdateCallback

ToolFn = Callable[[dict[str, Any]], Awaitable[str]]
LiveToolFn = Callable[[dict[str, Any], UpdateCallback], Awaitable[str]]
"""A tool that reports partial results while it runs."""


@dataclass
class FakeHost:
    """The loop's callbacks, request source and queue in one object (:func:`loop_of`)."""

    model: Model
    tools: dict[str, ToolFn] = field(default_factory=dict)
    live_tools: dict[str, LiveToolFn] = field(default_factory=dict)
    stored: list[AgentMessage] = field(default_factory=list)
    chain: TransformChain = field(default_factory=TransformChain)
    queued: list[AgentMessage] = field(default_factory=list)
    follow_ups: list[AgentMessage] = field(default_factory=list)
    next_turn: list[list[AgentMessage]] = field(default_factory=list)
    turns_prepared: int = 0
    requests: list[ModelRequest] = field(default_factory=list)
    turn_ends: list[tuple[AssistantMessage, Sequence[ToolResultMessage]]] = field(
        default_factory=list
    )
    notified: list[str] = field(default_factory=list)

    def assistant(self, index: int) -> AssistantMessage:
        """The stored message at ``index``, which must be an assistant message."""
        message = self.stored[index]
        assert message["role"] == "assistant"
        return message

    def tool_result(self, index: int) -> ToolResultMessage:
        """The stored message at ``index``, which must be a tool result."""
        message = self.stored[index]
        assert message["role"] == "toolResult"
        return message

    def persist(self, message: AgentMessage) -> str | None:
        self.stored.append(message)
        return f"e{len(self.stored)}"

    async def build(self) -> ModelRequest:
        messages = await self.chain(list(self.stored))
        tools: list[ToolDeclaration] = [
            {"name": n, "description": n, "parameters": {"type": "object"}} for n in self.tools
        ]
        return ModelRequest(
            messages=[cast(Message, m) for m in messages],
            tools=tuple(tools),
            options=RequestOptions(),
        )

    async def execute_tool(self, call: ToolCall, on_update: UpdateCallback) -> ToolOutcome:
        live = self.live_tools.get(call["name"])
        if live is not None:
            return ToolOutcome([text_block(await live(call["arguments"], on_update))])
        fn = self.tools.get(call["name"])
        if fn is None:
            return ToolOutcome([text_block(f"Tool {call['name']} not found")], {}, True)
        return ToolOutcome([text_block(await fn(call["arguments"]))])

    async def prepare_next_turn(self) -> list[AgentMessage]:
        self.turns_prepared += 1
        return self.next_turn.pop(0) if self.next_turn else []

    def take_steering(self) -> list[AgentMessage]:
        out, self.queued = self.queued, []
        return out

    def take_follow_up(self) -> list[AgentMessage]:
        out, self.follow_ups = self.follow_ups, []
        return out

    def after_request(self, request: ModelRequest, message: AssistantMessage) -> None:
        self.requests.append(request)

    async def after_turn(
        self, index: int, message: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        self.turn_ends.append((message, tool_results))
        return False

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        return message

    def will_retry(self, result: Any) -> bool:
        return False

    async def notify(self, event: AgentEvent) -> None:
        self.notified.append(event.type)

    def stream_listener(self) -> None:
        return None


def loop_of(host: FakeHost, emit: Callable[[AgentEvent], None]) -> AgentLoop:
    """A loop whose callbacks, request source and queue are all ``host``."""
    return AgentLoop(host, emit, requests=host, queue=host)


def key_of(message: object, key: str) -> Any:
    """``message[key]`` of a stored message whatever its role (tests read across roles)."""
    assert isinstance(message, Mapping), message
    return message[key]


def scripted(*replies: Any) -> ScriptedModel:
    return ScriptedModel(list(replies))


class Recorder:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]


async def sleep_forever(_: dict[str, Any]) -> str:
    await asyncio.sleep(3600)
    return "never"

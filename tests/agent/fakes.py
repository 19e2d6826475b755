"""A minimal loop host for tests: a list as session, tools as async functions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pi_context.agent.events import AgentEvent
from pi_context.agent.loop import ToolOutcome
from pi_context.agent.transform import TransformChain
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

ToolFn = Callable[[dict[str, Any]], Awaitable[str]]


@dataclass
class FakeHost:
    model: Model
    tools: dict[str, ToolFn] = field(default_factory=dict)
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

    def request_options(self) -> RequestOptions:
        return RequestOptions()

    def persist(self, message: AgentMessage) -> str | None:
        self.stored.append(message)
        return f"e{len(self.stored)}"

    def context_messages(self) -> list[AgentMessage]:
        return list(self.stored)

    async def transform(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        return await self.chain(messages)

    def to_llm(self, messages: list[AgentMessage]) -> list[Message]:
        return [cast(Message, m) for m in messages]

    def declared_tools(self) -> list[ToolDeclaration]:
        return [{"name": n, "description": n, "parameters": {"type": "object"}} for n in self.tools]

    async def execute_tool(self, call: ToolCall) -> ToolOutcome:
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
        self, message: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        self.turn_ends.append((message, tool_results))
        return False

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        return message

    def will_retry(self, result: Any) -> bool:
        return False

    async def notify(self, event: AgentEvent) -> None:
        self.notified.append(event.type)


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

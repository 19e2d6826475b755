"""``PiContext``: pi's compaction as a pydantic-ai v2 capability.

pydantic-ai v2 removed ``Agent(history_processors=...)`` (passing it raises ``TypeError``);
history editing is a capability. ``PiContext`` is one (``capabilities=[PiContext(...)]``),
:meth:`PiContext.process` is the same engine as a plain function for ``ProcessHistory``, and
:meth:`PiContext.compact` makes it a harness ``CompactionStrategy`` structurally (a
``TieredCompaction`` / ``FallbackCompaction`` tier) without importing the harness, which pins
one exact pydantic-ai-slim.

Before each model request the run's messages (``message_history`` and what the run added) are
recorded in the pi session; past pi's threshold the session is compacted, and both the
persistent history (``ctx.messages``, hence ``result.all_messages()``) and the request get
the pi projection: the summary as a ``UserPromptPart`` and the kept messages. Every list it
returns keeps each tool return with its call, so core's ``repair_messages`` never has to drop
one silently.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext, Tool

from pi_context.integrations.engine import (
    CompactionOutcome,
    ContextEngine,
    EngineOptions,
    overhead_tokens,
)
from pi_context.integrations.mirror import Mirror
from pi_context.integrations.pydantic_ai.mapping import PydanticAICodec, dump
from pi_context.integrations.recall import RECALL_DESCRIPTION, RECALL_NAME, recall_function

__all__ = ["PiContext"]


def _provider_compaction(messages: Sequence[ModelMessage]) -> bool:
    """A provider's compaction part (``OpenAICompaction``, ``AnthropicCompaction``) is present."""
    return any(
        getattr(part, "part_kind", None) == "compaction"
        for message in messages
        for part in getattr(message, "parts", ()) or ()
    )


@dataclass(init=False)
class PiContext(AbstractCapability[Any]):
    """pi's context engine for ``Agent(..., capabilities=[PiContext(...)])``.

    The keywords are :class:`~pi_context.integrations.EngineOptions` (``session_file``,
    ``context_window``, ``file_tools``, ...). ``last_outcome`` tells what the last compaction
    attempt did and why. The hooks do their session work on the engine's worker thread, so
    the run's event loop is never held by it.
    """

    engine: ContextEngine = field(repr=False)
    codec: PydanticAICodec = field(repr=False)
    overhead: int = 0
    last_outcome: CompactionOutcome | None = None

    def __init__(self, **options: Unpack[EngineOptions]) -> None:
        self.engine = ContextEngine(**options)
        self.codec = PydanticAICodec(self.engine.session.now_ms)
        self.overhead = 0
        self.last_outcome = None
        self._mirror = Mirror(self.engine, self.codec)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a session and a model: not a spec-serializable capability

    # -- the engine over a message list ------------------------------------------------------

    def _projected(self) -> list[ModelMessage]:
        return [message for message, _ in self.codec.from_pi(self.engine.deliverable())]

    def _record(self, messages: list[ModelMessage]) -> bool:
        """Record ``messages``; whether a provider's compaction owns them."""
        self._mirror.sync(messages)
        return _provider_compaction(messages)

    def _sent(self, messages: list[ModelMessage], compacted: bool) -> list[ModelMessage]:
        """What to send after recording ``messages``: ``messages`` themselves when nothing was
        compacted and they already are what the session gives (they extended the list last
        seen and keep every pair), else the session's projection, now the list held."""
        if not compacted and self._mirror.holds_valid():
            return messages
        projected = self._projected()
        if not compacted and [dump(m) for m in projected] == [dump(m) for m in messages]:
            self._mirror.hold(messages)
            return messages
        self._mirror.hold(projected, self.engine.last_repair)
        return projected

    async def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Record ``messages``, compact at pi's threshold, and return what to send: ``messages``
        themselves when nothing changed (a ``ProcessHistory`` processor)."""
        if await self.engine.call(self._record, messages):
            self.last_outcome = CompactionOutcome(
                None, "the provider's compaction owns this history"
            )
            return messages
        outcome = await self.engine.exclusive_compact(overhead=self.overhead)
        self.last_outcome = outcome
        return await self.engine.call(self._sent, messages, outcome.compacted)

    async def compact(
        self, messages: list[ModelMessage], ctx: RunContext[Any]
    ) -> list[ModelMessage]:
        """The harness's ``CompactionStrategy``: compact now, whatever the threshold says."""
        if await self.engine.call(self._record, messages):
            return messages
        self.last_outcome = await self.engine.exclusive_compact(force=True, overhead=self.overhead)
        if not self.last_outcome.compacted:
            return messages
        return await self.engine.call(self._sent, messages, True)

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> Tool[Any]:
        """A tool the agent can call to get back what compaction replaced, verbatim
        (``Agent(tools=[pi.recall_tool()])``)."""
        return Tool(
            recall_function(self.engine, cache_dir=cache_dir),
            name=RECALL_NAME,
            description=RECALL_DESCRIPTION,
            takes_ctx=False,
        )

    # -- the capability hooks ----------------------------------------------------------------

    def _measure(self, request_context: ModelRequestContext) -> None:
        parameters = request_context.model_request_parameters
        instructions = "".join(
            str(getattr(part, "content", ""))
            for part in getattr(parameters, "instruction_parts", None) or []
        )
        tools = [
            {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": tool.parameters_json_schema,
            }
            for tool in [*parameters.function_tools, *parameters.output_tools]
        ]
        self.overhead = overhead_tokens(instructions, tools)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._measure(request_context)
        messages = list(request_context.messages)
        out = await self.process(messages)
        if out is not messages:
            ctx.messages[:] = out
            request_context.messages = list(out)
        return request_context

    async def after_run(self, ctx: RunContext[Any], *, result: Any) -> Any:
        """Record the run's last response, so the file is current between runs."""
        await self.engine.call(self._mirror.sync, list(result.all_messages()))
        return result

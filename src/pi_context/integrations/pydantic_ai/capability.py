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

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext, Tool

from pi_context.compaction import CompactionEvent
from pi_context.integrations.engine import CompactionOutcome, ContextEngine, FileTools, Summarizer
from pi_context.integrations.mirror import sync
from pi_context.integrations.pydantic_ai.mapping import PydanticAICodec, dump
from pi_context.integrations.recall import RECALL_DESCRIPTION, RECALL_NAME, recall
from pi_context.session import Session

__all__ = ["PiContext"]

_log = logging.getLogger("pi_context.integrations")


def _provider_compaction(messages: Sequence[ModelMessage]) -> bool:
    """A provider's compaction part (``OpenAICompaction``, ``AnthropicCompaction``) is present."""
    return any(
        part.get("part_kind") == "compaction"
        for message in messages
        for part in dump(message).get("parts") or []
    )


@dataclass
class PiContext(AbstractCapability[Any]):
    """pi's context engine for ``Agent(..., capabilities=[PiContext(...)])``.

    ``session_file``: the pi JSONL record; ``context_window``: the model's window in tokens
    (required: ``TestModel`` and local models resolve none); ``keep_recent_tokens`` /
    ``reserve_tokens``: pi's defaults fitted to the window unless given; ``summarizer``: a
    pi-context model or ``"offline"``; ``file_tools``: tool name → (pi operation, path
    argument). ``last_outcome`` tells what the last compaction attempt did and why.
    """

    session_file: str | os.PathLike[str] | None = None
    context_window: int = 0
    keep_recent_tokens: int | None = None
    reserve_tokens: int | None = None
    summarizer: Summarizer = "offline"
    file_tools: FileTools | None = None
    session: Session | None = None
    on_compaction_event: Callable[[CompactionEvent], None] | None = None
    engine: ContextEngine = field(init=False, repr=False)
    codec: PydanticAICodec = field(init=False, repr=False)
    overhead: int = field(init=False, default=0)
    last_outcome: CompactionOutcome | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.engine = ContextEngine(
            self.session_file,
            context_window=self.context_window,
            keep_recent_tokens=self.keep_recent_tokens,
            reserve_tokens=self.reserve_tokens,
            summarizer=self.summarizer,
            file_tools=self.file_tools,
            session=self.session,
            on_event=self.on_compaction_event,
        )
        self.codec = PydanticAICodec(self.engine.session.now_ms)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a session and a model: not a spec-serializable capability

    # -- the engine over a message list ------------------------------------------------------

    def _projected(self) -> list[ModelMessage]:
        return [message for message, _ in self.codec.from_pi(self.engine.deliverable())]

    async def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Record ``messages``, compact at pi's threshold, and return what to send: ``messages``
        themselves when nothing changed (a ``ProcessHistory`` processor)."""
        sync(self.engine, messages, self.codec)
        if _provider_compaction(messages):
            self.last_outcome = CompactionOutcome(
                None, "the provider's compaction owns this history"
            )
            return messages
        outcome = await self.engine.compact(overhead=self.overhead)
        self.last_outcome = outcome
        projected = self._projected()
        if not outcome.compacted and [dump(m) for m in projected] == [dump(m) for m in messages]:
            return messages
        return projected

    async def compact(
        self, messages: list[ModelMessage], ctx: RunContext[Any]
    ) -> list[ModelMessage]:
        """The harness's ``CompactionStrategy``: compact now, whatever the threshold says."""
        sync(self.engine, messages, self.codec)
        if _provider_compaction(messages):
            return messages
        self.last_outcome = await self.engine.compact(force=True, overhead=self.overhead)
        return self._projected() if self.last_outcome.compacted else messages

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> Tool[Any]:
        """A tool the agent can call to get back what compaction replaced, verbatim
        (``Agent(tools=[pi.recall_tool()])``)."""
        engine = self.engine

        async def run(query: str, limit: int = 5) -> str:
            return await recall(engine, query, limit, cache_dir=cache_dir)

        return Tool(run, name=RECALL_NAME, description=RECALL_DESCRIPTION, takes_ctx=False)

    # -- the capability hooks ----------------------------------------------------------------

    def _measure(self, request_context: ModelRequestContext) -> None:
        parameters = request_context.model_request_parameters
        chars = 0
        for part in getattr(parameters, "instruction_parts", None) or []:
            chars += len(str(getattr(part, "content", "")))
        for tool in [*parameters.function_tools, *parameters.output_tools]:
            chars += len(tool.name) + len(tool.description or "")
            chars += len(json.dumps(tool.parameters_json_schema))
        self.overhead = (chars + 3) // 4

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
        sync(self.engine, list(result.all_messages()), self.codec)
        return result

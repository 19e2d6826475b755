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

With ``store=`` (and ``tenant=``) instead of a file, each run works on the stored session whose
id is the run's ``conversation_id`` (pydantic-ai's: the ``conversation_id`` argument of
``Agent.run``, else the one ``message_history`` carries, else a fresh one): ``for_run`` gives
the run a capability over that conversation, opened in this process by its first run
(created by the conversation's first run anywhere), its writes committed by each hook (see
:mod:`pi_context.integrations.stored`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, Unpack

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
from pi_context.integrations.recall import (
    RECALL_DESCRIPTION,
    RECALL_NAME,
    recall,
    recall_function,
)
from pi_context.integrations.stored import Conversations, stored_options

__all__ = ["PiContext"]

_R = TypeVar("_R")


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

    With ``store=`` and ``tenant=`` the capability serves every conversation of the agent:
    each run gets one over its ``conversation_id``'s stored session (:meth:`for_run`), and
    ``last_outcome`` is that of the latest run's last attempt.
    """

    _engine: ContextEngine | None = field(default=None, repr=False)
    _codec: PydanticAICodec | None = field(default=None, repr=False)
    overhead: int = 0
    last_outcome: CompactionOutcome | None = None

    def __init__(self, **options: Unpack[EngineOptions]) -> None:
        stored = stored_options(options)
        self.overhead = 0
        self.last_outcome = None
        self._owner: PiContext | None = None
        self._conversations: Conversations[PiContext] | None = None
        self._engine = None
        self._codec = None
        if stored is None:
            self._use(ContextEngine(**options))
            return
        self._conversations = Conversations(stored[0], stored[1], options, self._conversation)

    def _use(self, engine: ContextEngine) -> None:
        self._engine = engine
        self._codec = PydanticAICodec(engine.session.now_ms)
        self._mirror = Mirror(engine, self._codec)

    def _conversation(self, engine: ContextEngine) -> PiContext:
        """The capability of one stored conversation (what :meth:`for_run` hands a run)."""
        one = PiContext.__new__(PiContext)
        one.overhead = 0
        one.last_outcome = None
        one._owner = self
        one._conversations = None
        one._use(engine)
        return one

    @property
    def engine(self) -> ContextEngine:
        """The engine over the session (over a store: that of each run's conversation)."""
        if self._engine is None:
            raise RuntimeError(
                "PiContext(store=...) works per conversation: use it in an Agent run "
                "(capabilities=[...]), where each run gets the capability of its conversation_id"
            )
        return self._engine

    @property
    def codec(self) -> PydanticAICodec:
        """The message mapping of the session (:attr:`engine`'s)."""
        if self._codec is None:
            self.engine  # noqa: B018 - raises the error that says why
        assert self._codec is not None
        return self._codec

    def _outcome(self, outcome: CompactionOutcome) -> CompactionOutcome:
        self.last_outcome = outcome
        if self._owner is not None:
            self._owner.last_outcome = outcome
        return outcome

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        """Over a store, the capability of the run's conversation (opened, or created on its
        first run); else this capability itself."""
        if self._conversations is None:
            return self
        return await self._conversations.get(str(ctx.conversation_id or ""), what="conversation_id")

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

    async def _run(self, body: Callable[[PiContext], Awaitable[_R]]) -> _R:
        """``body(self)``; over a store, opened again and repeated once when the commit finds
        that another writer appended to the conversation meanwhile."""
        owner = self._owner
        if owner is None or owner._conversations is None:
            return await body(self)
        conversation = self.engine.binding.ref.id if self.engine.binding else ""
        return await owner._conversations.run(conversation, body, what="conversation_id")

    async def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Record ``messages``, compact at pi's threshold, and return what to send: ``messages``
        themselves when nothing changed (a ``ProcessHistory`` processor)."""
        return await self._run(lambda one: one._process(messages))

    async def _process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        if await self.engine.call(self._record, messages):
            self._outcome(CompactionOutcome(None, "the provider's compaction owns this history"))
            return messages
        outcome = self._outcome(await self.engine.exclusive_compact(overhead=self.overhead))
        return await self.engine.call(self._sent, messages, outcome.compacted)

    async def compact(
        self, messages: list[ModelMessage], ctx: RunContext[Any]
    ) -> list[ModelMessage]:
        """The harness's ``CompactionStrategy``: compact now, whatever the threshold says."""
        if self._conversations is not None:
            one = await self._conversations.get(
                str(ctx.conversation_id or ""), what="conversation_id"
            )
            return await one.compact(messages, ctx)
        return await self._run(lambda one: one._compact_now(messages))

    async def _compact_now(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        if await self.engine.call(self._record, messages):
            return messages
        outcome = self._outcome(
            await self.engine.exclusive_compact(force=True, overhead=self.overhead)
        )
        if not outcome.compacted:
            return messages
        return await self.engine.call(self._sent, messages, True)

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> Tool[Any]:
        """A tool the agent can call to get back what compaction replaced, verbatim
        (``Agent(tools=[pi.recall_tool()])``); over a store, from the run's conversation."""
        conversations = self._conversations
        if conversations is not None:

            async def recall_in_run(ctx: RunContext[Any], query: str, limit: int = 5) -> str:
                one = await conversations.get(
                    str(ctx.conversation_id or ""), what="conversation_id"
                )
                return await recall(one.engine, query, limit, cache_dir=cache_dir)

            return Tool(
                recall_in_run,
                name=RECALL_NAME,
                description=RECALL_DESCRIPTION,
                takes_ctx=True,
            )
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
        messages = list(result.all_messages())
        await self._run(lambda one: one.engine.call(one._mirror.sync, messages))
        return result

"""``PiSummarizationMiddleware``: pi's compaction in a LangChain v1 agent.

It sits where ``SummarizationMiddleware`` sits and works the same way (``before_model``,
replacing the state's messages), with pi's rules instead of LangChain's:

* **on by default**, at pi's threshold (``context_window - reserve_tokens``), counting the
  provider-reported usage of the last reply plus an estimate of what follows, and the system
  prompt and tool schemas while no usage is known (measured in ``wrap_model_call``).
  LangChain's own middleware never summarizes unless ``trigger=`` is set;
* cuts only where pi cuts, so a tool result never loses its call (LangChain's cut keeps a
  result whose call sat in an earlier ``AIMessage``); a history that arrives with orphans is
  repaired in what the model is sent, and the repair is logged;
* a failed or empty summary writes nothing (LangChain has written a fixed placeholder and
  error text as the summary); file lists come from the tool calls' arguments;
* the previous summary is updated, not summarized again as a message.

The record is the pi session file: LangGraph's checkpoint holds the projection of it (the
summary and the kept messages), and the originals stay in the file (``pictx session tree``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, Unpack

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from pi_context.integrations.engine import (
    CompactionOutcome,
    ContextEngine,
    EngineOptions,
    overhead_tokens,
)
from pi_context.integrations.langchain.mapping import LangChainCodec
from pi_context.integrations.mirror import Mirror
from pi_context.integrations.recall import RECALL_DESCRIPTION, RECALL_NAME, recall_function

__all__ = ["PiSummarizationMiddleware"]


def _overhead(request: ModelRequest) -> int:
    """The system prompt and the tool schemas the request declares, in pi's estimate."""
    tools: list[Any] = []
    for tool in request.tools:
        try:
            tools.append(convert_to_openai_tool(tool))
        except (TypeError, ValueError, NotImplementedError):
            # a tool LangChain itself cannot describe: count its name
            tools.append(str(getattr(tool, "name", tool)))
    system = request.system_message
    return overhead_tokens(str(system.content) if system is not None else "", tools)


class PiSummarizationMiddleware(AgentMiddleware):
    """pi's context engine for ``create_agent(..., middleware=[...])``.

    The keywords are :class:`~pi_context.integrations.EngineOptions` (``session_file``,
    ``context_window``, ``file_tools``, ...). ``last_outcome`` tells what the last compaction
    attempt did and why. The async hooks do their session work on the engine's worker thread,
    so the graph's event loop is never held by it.
    """

    def __init__(self, **options: Unpack[EngineOptions]) -> None:
        super().__init__()
        self.engine = ContextEngine(**options)
        self.codec = LangChainCodec(self.engine.session.now_ms)
        self._mirror = Mirror(self.engine, self.codec)
        self.overhead = 0
        """The last request's system prompt and tool schemas, in estimated tokens."""
        self.last_outcome: CompactionOutcome | None = None

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> BaseTool:
        """A LangChain tool the agent can call to get back what compaction replaced,
        verbatim (``create_agent(model, [..., mw.recall_tool()], middleware=[mw])``)."""
        from pi_context.integrations._sync import run_sync

        arun = recall_function(self.engine, cache_dir=cache_dir)

        def srun(query: str, limit: int = 5) -> str:
            return run_sync(arun(query, limit))

        return StructuredTool.from_function(
            func=srun, coroutine=arun, name=RECALL_NAME, description=RECALL_DESCRIPTION
        )

    # -- the hook ----------------------------------------------------------------------------

    def _emitted(self) -> list[BaseMessage]:
        return [message for message, _ in self.codec.from_pi(self.engine.deliverable())]

    def _prepare(self, state: Any) -> bool:
        """Record the state's messages; whether the state already satisfies the pair rule."""
        self._mirror.sync(list(state["messages"]))
        return self._mirror.pairs_hold()

    def _update(self, compacted: bool, valid: bool) -> dict[str, Any] | None:
        if not compacted and valid:
            return None
        emitted = self._emitted()
        self._mirror.hold(emitted, self.engine.last_repair)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *emitted]}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        from pi_context.integrations._sync import run_sync

        valid = self.engine.locked(self._prepare, state)
        outcome = run_sync(self.engine.exclusive_compact(overhead=self.overhead))
        self.last_outcome = outcome
        return self.engine.locked(self._update, outcome.compacted, valid)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        valid = await self.engine.call(self._prepare, state)
        outcome = await self.engine.exclusive_compact(overhead=self.overhead)
        self.last_outcome = outcome
        return await self.engine.call(self._update, outcome.compacted, valid)

    def _record(self, state: Any) -> None:
        self._mirror.sync(list(state["messages"]))

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Record the model's reply at once, so the file is current between calls."""
        self.engine.locked(self._record, state)
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        await self.engine.call(self._record, state)
        return None

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        self.overhead = _overhead(request)
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        self.overhead = _overhead(request)
        return await handler(request)

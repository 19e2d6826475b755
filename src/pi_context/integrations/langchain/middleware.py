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

import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from pi_context.compaction import CompactionEvent
from pi_context.integrations.engine import CompactionOutcome, ContextEngine, FileTools, Summarizer
from pi_context.integrations.langchain.mapping import LangChainCodec
from pi_context.integrations.mirror import sync
from pi_context.integrations.pairs import repair_pairs
from pi_context.integrations.recall import RECALL_DESCRIPTION, RECALL_NAME, recall
from pi_context.session import Session

__all__ = ["PiSummarizationMiddleware"]

_log = logging.getLogger("pi_context.integrations")


def _overhead(request: ModelRequest) -> int:
    """chars/4 of the system prompt and the tool schemas the request declares."""
    chars = 0
    if request.system_message is not None:
        chars += len(str(request.system_message.content))
    for tool in request.tools:
        try:
            chars += len(json.dumps(convert_to_openai_tool(tool)))
        except (TypeError, ValueError, NotImplementedError):
            # a tool LangChain itself cannot describe: count its name
            chars += len(str(getattr(tool, "name", tool)))
    return (chars + 3) // 4


class PiSummarizationMiddleware(AgentMiddleware):
    """pi's context engine for ``create_agent(..., middleware=[...])``.

    ``session_file`` is the pi session that records the conversation; ``context_window`` the
    model's window in tokens (required: fakes and local models report none);
    ``keep_recent_tokens``/``reserve_tokens`` default to pi's values fitted to the window;
    ``summarizer`` is a pi-context model or ``"offline"``; ``file_tools`` maps tool names to
    pi's file operations, e.g. ``{"read_file": ("read", "path")}``. ``last_outcome`` tells what
    the last compaction attempt did and why.
    """

    def __init__(
        self,
        *,
        session_file: str | os.PathLike[str] | None = None,
        context_window: int,
        keep_recent_tokens: int | None = None,
        reserve_tokens: int | None = None,
        summarizer: Summarizer = "offline",
        file_tools: FileTools | None = None,
        session: Session | None = None,
        on_event: Callable[[CompactionEvent], None] | None = None,
    ) -> None:
        super().__init__()
        self.engine = ContextEngine(
            session_file,
            context_window=context_window,
            keep_recent_tokens=keep_recent_tokens,
            reserve_tokens=reserve_tokens,
            summarizer=summarizer,
            file_tools=file_tools,
            session=session,
            on_event=on_event,
        )
        self.codec = LangChainCodec(self.engine.session.now_ms)
        self.overhead = 0
        """The last request's system prompt and tool schemas, in estimated tokens."""
        self.last_outcome: CompactionOutcome | None = None

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> BaseTool:
        """A LangChain tool the agent can call to get back what compaction replaced,
        verbatim (``create_agent(model, [..., mw.recall_tool()], middleware=[mw])``)."""
        from pi_context.integrations._sync import run_sync

        engine = self.engine

        async def arun(query: str, limit: int = 5) -> str:
            return await recall(engine, query, limit, cache_dir=cache_dir)

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
        messages = list(state["messages"])
        sync(self.engine, messages, self.codec)
        projected = [message for _, message in self.engine.projected()]
        return not repair_pairs(projected).changed

    def _update(self, compacted: bool, valid: bool) -> dict[str, Any] | None:
        if not compacted and valid:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *self._emitted()]}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        from pi_context.integrations._sync import run_sync

        valid = self._prepare(state)
        outcome = run_sync(self.engine.compact(overhead=self.overhead))
        self.last_outcome = outcome
        return self._update(outcome.compacted, valid)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        valid = self._prepare(state)
        outcome = await self.engine.compact(overhead=self.overhead)
        self.last_outcome = outcome
        return self._update(outcome.compacted, valid)

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Record the model's reply at once, so the file is current between calls."""
        sync(self.engine, list(state["messages"]), self.codec)
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        sync(self.engine, list(state["messages"]), self.codec)
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

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

With ``store=`` (and ``tenant=``) instead of a file, the record of each LangGraph thread is the
stored session whose id is the thread id (``config={"configurable": {"thread_id": ...}}``):
one middleware serves every thread of the agent, opening a thread's session at its first model
call (creating it on the thread's first) and committing each hook's writes before the hook
returns (see :mod:`pi_context.integrations.stored`). Over a store the agent runs with its async
API (``ainvoke``, ``astream``): a store's connections belong to the event loop.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, Unpack

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
from pi_context.integrations.stored import Conversations, stored_options

__all__ = ["PiSummarizationMiddleware"]

_R = TypeVar("_R")


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


class _Thread:
    """One thread's record: its engine, the message mapping, and the list last mirrored."""

    def __init__(self, engine: ContextEngine) -> None:
        self._use(engine)

    def _use(self, engine: ContextEngine) -> None:
        self.engine = engine
        self.codec = LangChainCodec(engine.session.now_ms)
        self.mirror = Mirror(engine, self.codec)

    def emitted(self) -> list[BaseMessage]:
        return [message for message, _ in self.codec.from_pi(self.engine.deliverable())]

    def prepare(self, state: Any) -> bool:
        """Record the state's messages; whether the state already satisfies the pair rule."""
        self.mirror.sync(list(state["messages"]))
        return self.mirror.pairs_hold()

    def update(self, compacted: bool, valid: bool) -> dict[str, Any] | None:
        if not compacted and valid:
            return None
        emitted = self.emitted()
        self.mirror.hold(emitted, self.engine.last_repair)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *emitted]}

    def record(self, state: Any) -> None:
        self.mirror.sync(list(state["messages"]))


def _thread_id(runtime: Any) -> str:
    """The LangGraph thread the hook runs in (``""`` when none was given)."""
    info = getattr(runtime, "execution_info", None)
    found = getattr(info, "thread_id", None)
    if not found:
        from langgraph.config import get_config

        try:
            found = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # outside a runnable context
            found = None
    return str(found) if found else ""


class PiSummarizationMiddleware(AgentMiddleware):
    """pi's context engine for ``create_agent(..., middleware=[...])``.

    The keywords are :class:`~pi_context.integrations.EngineOptions` (``session_file``,
    ``context_window``, ``file_tools``, ...). ``last_outcome`` tells what the last compaction
    attempt did and why. The async hooks do their session work on the engine's worker thread,
    so the graph's event loop is never held by it.

    With ``store=`` and ``tenant=`` one middleware serves every thread of the agent, each
    recorded in the stored session named by its thread id; ``last_outcome`` is then that of
    the latest attempt on any thread.
    """

    def __init__(self, **options: Unpack[EngineOptions]) -> None:
        super().__init__()
        stored = stored_options(options)
        self._file: _Thread | None = None
        self._threads: Conversations[_Thread] | None = None
        if stored is None:
            self._file = _Thread(ContextEngine(**options))
        else:
            self._threads = Conversations(stored[0], stored[1], options, _Thread)
        self.overhead = 0
        """The last request's system prompt and tool schemas, in estimated tokens."""
        self.last_outcome: CompactionOutcome | None = None

    def _one(self) -> _Thread:
        if self._file is None:
            raise RuntimeError(
                "PiSummarizationMiddleware(store=...) keeps one record per thread: its engine "
                "is that of the thread a hook runs in (give each run a thread_id)"
            )
        return self._file

    @property
    def engine(self) -> ContextEngine:
        """The engine over the session file (over a store there is one per thread)."""
        return self._one().engine

    @property
    def codec(self) -> LangChainCodec:
        return self._one().codec

    async def _run(self, runtime: Any, body: Callable[[_Thread], Awaitable[_R]]) -> _R:
        """``body`` on the hook's thread record: the file's, or over a store the thread's
        stored session (opened at its first use, opened again and ``body`` repeated once when
        the commit finds that another writer appended meanwhile)."""
        if self._threads is None:
            return await body(self._one())
        return await self._threads.run(_thread_id(runtime), body, what="thread_id")

    def _sync_hook(self) -> _Thread:
        if self._threads is not None:
            raise TypeError(
                "PiSummarizationMiddleware(store=...) runs in the agent's async API "
                "(ainvoke, astream): a store's connections belong to its event loop"
            )
        return self._one()

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> BaseTool:
        """A LangChain tool the agent can call to get back what compaction replaced,
        verbatim (``create_agent(model, [..., mw.recall_tool()], middleware=[mw])``)."""
        from pi_context.integrations._sync import run_sync

        threads = self._threads
        if threads is None:
            arun = recall_function(self.engine, cache_dir=cache_dir)
        else:

            async def engine() -> ContextEngine:
                return (await threads.get(_thread_id(None), what="thread_id")).engine

            arun = recall_function(engine, cache_dir=cache_dir)

        def srun(query: str, limit: int = 5) -> str:
            return run_sync(arun(query, limit))

        return StructuredTool.from_function(
            func=srun, coroutine=arun, name=RECALL_NAME, description=RECALL_DESCRIPTION
        )

    # -- the hook ----------------------------------------------------------------------------

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        from pi_context.integrations._sync import run_sync

        one = self._sync_hook()
        valid = one.engine.locked(one.prepare, state)
        outcome = run_sync(one.engine.exclusive_compact(overhead=self.overhead))
        self.last_outcome = outcome
        return one.engine.locked(one.update, outcome.compacted, valid)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        async def body(one: _Thread) -> dict[str, Any] | None:
            valid = await one.engine.call(one.prepare, state)
            outcome = await one.engine.exclusive_compact(overhead=self.overhead)
            self.last_outcome = outcome
            return await one.engine.call(one.update, outcome.compacted, valid)

        return await self._run(runtime, body)

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Record the model's reply at once, so the file is current between calls."""
        one = self._sync_hook()
        one.engine.locked(one.record, state)
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        await self._run(runtime, lambda one: one.engine.call(one.record, state))
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

"""``PiSession``: an openai-agents session backed by a pi JSONL file, compacted as pi does.

The pi session *is* the store: ``Runner.run(..., session=PiSession(...))`` reads the history
from the file's current branch (the pi projection: the latest summary and what it kept) and
appends each turn's items to it. The runner calls :meth:`PiSession.run_compaction` after every
turn that ran no local tool; pi's threshold decides whether anything happens. Inside a tool
loop the runner does not call it, so :meth:`PiSession.input_filter` is the
``RunConfig.call_model_input_filter`` that compacts there (the SDK checks nothing the filter
returns; its output keeps the pair invariant itself).

Server-side compaction (``OpenAIResponsesCompactionSession`` wrapped around this session)
writes encrypted ``compaction`` items pi cannot summarize or search. They are kept untouched
(a hidden custom message that comes back as it came), and from the first one on this session
leaves compaction to the server: two compactors never own one history.

``pop_item`` and ``clear_session`` move the leaf, as a pi branch does: nothing in the file is
removed, and the file never shrinks.

With ``store=`` (and ``tenant=``) instead of a file, ``session_id`` names the stored session:
created by the first run of the conversation, reopened by later ones (in any process), each
hook's writes committed before it returns (see :mod:`pi_context.integrations.stored`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, Unpack

from agents import FunctionTool, function_tool
from agents.run_config import CallModelData, ModelInputData

from pi_context.integrations.engine import (
    CompactionOutcome,
    ContextEngine,
    EngineOptions,
    log,
    overhead_tokens,
)
from pi_context.integrations.openai_agents.mapping import (
    OPAQUE_TYPE,
    OpenAIAgentsCodec,
)
from pi_context.integrations.pairs import PairLedger
from pi_context.integrations.recall import RECALL_DESCRIPTION, RECALL_NAME, recall_function
from pi_context.integrations.stored import Conversations, stored_options

__all__ = ["PiSession"]

_R = TypeVar("_R")

_APPENDING = frozenset(
    {
        "message",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "thinking_level_change",
        "model_change",
        "usage",
    }
)
"""Entry types that add messages at the end of the projection or none at all."""


@dataclass(slots=True)
class _History:
    """The history as items, as of a leaf and a projection length."""

    leaf: str | None
    length: int
    items: list[dict[str, Any]]
    ledger: PairLedger


def _plain(value: Any) -> Any:
    """An item as the JSON the runner stores (pydantic objects dumped as the SDK dumps them)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(exclude_unset=True))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _usage_of(wrapper: Any) -> dict[str, Any] | None:
    """pi's usage of the last model request of the run, from the runner's context."""
    entries = getattr(getattr(wrapper, "usage", None), "request_usage_entries", None)
    if not entries:
        return None
    last = entries[-1]
    cached = int(getattr(last.input_tokens_details, "cached_tokens", 0) or 0)
    return {
        "input": max(0, int(last.input_tokens) - cached),
        "output": int(last.output_tokens),
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": int(last.total_tokens),
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


class PiSession:
    """A structural ``agents.memory.Session`` (``isinstance`` holds) over a pi session file.

    ``session_id`` defaults to the pi session's id; the keywords are
    :class:`~pi_context.integrations.EngineOptions` (``session_file``, ``context_window``,
    ``file_tools``, ...). The hooks do their session work on the engine's worker thread, so
    the runner's event loop is never held by a write.

    With ``store=`` and ``tenant=`` (no file), ``session_id`` is required: the stored
    session's id. It is opened by the first hook (created when the store has none) and checked
    against the store at each :meth:`get_items`, the runner's first call of a run.
    """

    session_settings: Any = None

    def __init__(self, session_id: str | None = None, **options: Unpack[EngineOptions]) -> None:
        stored = stored_options(options)
        self._engine: ContextEngine | None = None
        self._conversations: Conversations[PiSession] | None = None
        self.overhead = 0
        """The last request's instructions and tool schemas, in estimated tokens."""
        self.last_outcome: CompactionOutcome | None = None
        self._history: _History | None = None
        self.provider_compaction = False
        """A provider's compaction item is in the history: pi does not compact it again."""
        if stored is None:
            self._use(ContextEngine(**options))
            self.session_id = session_id or self.engine.session.id
            return
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("PiSession(session_id, store=...) needs the conversation's id")
        self.session_id = session_id
        self._conversations = Conversations(stored[0], stored[1], options, self._opened)

    def _opened(self, engine: ContextEngine) -> PiSession:
        self._use(engine)
        return self

    def _use(self, engine: ContextEngine) -> None:
        """Work on ``engine`` from now on (a stored conversation opened again starts over)."""
        self._engine = engine
        self.codec = OpenAIAgentsCodec(engine.session.now_ms)
        self._history = None
        self.provider_compaction = any(
            message.get("customType") == OPAQUE_TYPE
            and (message.get("details") or {}).get("itemType") == "compaction"
            for _, message in engine.projected()
        )

    @property
    def engine(self) -> ContextEngine:
        """The engine over the session (a stored one: open after the first hook)."""
        if self._engine is None:
            raise RuntimeError(
                f"the stored conversation {self.session_id!r} opens at the session's first use "
                "(await get_items() or a Runner.run)"
            )
        return self._engine

    async def _ready(self) -> ContextEngine:
        """The engine; a stored conversation is opened at its first use."""
        conversations = self._conversations
        if conversations is not None and self._engine is None:
            await conversations.get(self.session_id, what="session_id")
        return self.engine

    async def _run(
        self, body: Callable[[ContextEngine], Awaitable[_R]], *, fresh: bool = False
    ) -> _R:
        """``body(engine)``; a stored conversation is opened at its first use (with
        ``fresh``, checked against the store first), and opened again and ``body`` repeated
        when its commit finds that another writer appended meanwhile."""
        conversations = self._conversations
        if conversations is None:
            return await body(self.engine)
        return await conversations.run(
            self.session_id, lambda one: body(one.engine), what="session_id", fresh=fresh
        )

    # -- the Session protocol --------------------------------------------------------------

    def _projected(self) -> list[dict[str, Any]]:
        """The history as items (the session's own: copy before handing them out).

        Converted once: while the branch only grows by appends and keeps every pair, the items
        of the new messages are added to those of the last call; anything else (a compaction,
        a leaf move, a history that needs repair) converts the whole projection again.
        """
        session = self.engine.session
        view = session.stored_projection().messages
        held = self._history
        if held is not None and len(view) >= held.length and self._appended_since(held.leaf):
            new = [m for m in view[held.length :] if m.get("role") != "system"]
            held.ledger.add(new)
            if not (held.ledger.dropped_results or held.ledger.answered_calls):
                held.items.extend(item for item, _ in self.codec.from_pi(new))
                held.leaf, held.length = session.leaf_id, len(view)
                return held.items
        items = [item for item, _ in self.codec.from_pi(self.engine.deliverable())]
        ledger = PairLedger([m for m in view if m.get("role") != "system"])
        self._history = _History(session.leaf_id, len(view), items, ledger)
        return items

    def _appended_since(self, leaf: str | None) -> bool:
        """Whether the branch is ``leaf``'s path plus entries that only add messages at the end
        of the projection (looked at back from the leaf as far as ``leaf``)."""
        session = self.engine.session
        if leaf is None or not session.on_branch(leaf):
            return False
        path = session.branch_view()
        for index in range(len(path) - 1, -1, -1):
            entry = path[index]
            if entry.id == leaf:
                return True
            if entry.type not in _APPENDING:
                return False
        return False

    def _items_copy(self) -> list[dict[str, Any]]:
        """The history for the runner: each item a dict of its own (what the items hold inside
        is shared with the history kept here, as the runner only reads it)."""
        return [dict(item) for item in self._projected()]

    async def get_items(self, limit: int | None = None, *, wrapper: Any = None) -> list[Any]:
        """The history the model sees: the latest summary and everything after it.

        With ``limit``, the latest items, never starting with a tool output whose call was
        cut off (nor with a reasoning item's dependent): the suffix starts after them.
        """
        items = await self._run(lambda engine: engine.call(self._items_copy), fresh=True)
        if limit is None:
            return items
        if limit <= 0:
            return []
        suffix = items[-limit:]
        while suffix and suffix[0].get("type") == "function_call_output":
            suffix = suffix[1:]
        return suffix

    async def add_items(self, items: list[Any], *, wrapper: Any = None) -> None:
        """Append the items (one pi message per response, per input item)."""
        if items:
            given, usage = list(items), _usage_of(wrapper)
            await self._run(lambda engine: engine.call(self._add, given, usage))

    def _names(self, items: list[Any]) -> dict[str, str]:
        """Tool names of the calls that outputs among ``items`` answer and that are not among
        them, looked up from the newest message back (usually the last turn)."""
        wanted = {
            str(item.get("call_id"))
            for item in items
            if isinstance(item, Mapping) and item.get("type") == "function_call_output"
        }
        wanted -= {
            str(item.get("call_id"))
            for item in items
            if isinstance(item, Mapping) and item.get("type") == "function_call"
        }
        names: dict[str, str] = {}
        messages = self.engine.session.stored_projection().messages
        for index in range(len(messages) - 1, -1, -1):
            if not wanted:
                break
            message: Mapping[str, Any] = messages[index]
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, Mapping) and block.get("type") == "toolCall":
                    call_id = str(block.get("id"))
                    if call_id in wanted:
                        names[call_id] = str(block.get("name"))
                        wanted.discard(call_id)
        return names

    def _add(self, items: list[Any], usage: dict[str, Any] | None) -> None:
        items = [_plain(item) for item in items]
        names = self._names(items)
        if any(isinstance(item, Mapping) and item.get("type") == "compaction" for item in items):
            if not self.provider_compaction:
                log.warning(
                    "pi-context: a provider's compaction item arrived; it is kept as it is and "
                    "compaction is left to the provider from now on"
                )
            self.provider_compaction = True
        messages = self.codec.to_pi(items, names)
        if usage is not None:
            for message in reversed(messages):
                if message.get("role") == "assistant":
                    message["usage"] = usage
                    break
        self.engine.append(messages)

    async def pop_item(self, *, wrapper: Any = None) -> Any:
        """Remove the latest item from the history, the file staying as it is.

        The leaf moves back to the entry before it (a pi branch). An entry a compaction kept
        sits before the compaction in the file, where moving the leaf would undo the
        compaction; it is left out by a ``context_edit`` instead. The rest of a response whose
        last item is popped is recorded again at once.
        """
        return await self._run(lambda engine: engine.call(self._pop))

    def _pop(self) -> Any:
        projected = self.engine.session.stored_projection()
        found = next(
            (
                (item.entry, message)
                for item in reversed(projected.entries)
                for message in reversed(item.messages)
                if message.get("role") != "system"
            ),
            None,
        )
        if found is None:
            return None
        entry, message = found
        items = [item for item, _ in self.codec.from_pi([message])]
        if not items:
            return None
        popped = items[-1]
        if entry.type == "compaction":
            self.engine.move_to(None)
        elif self.engine.inside_compacted(entry.id):
            self.engine.session.append_context_edit(entry.id, None)
        else:
            self.engine.move_to(entry.parent_id)
        if len(items) > 1:  # one item of a response: the rest of it stays
            self.engine.append(self.codec.to_pi(items[:-1]))
        return popped

    async def clear_session(self, *, wrapper: Any = None) -> None:
        """Start over: the next item begins a new root of the same file."""
        await self._run(lambda engine: engine.call(engine.move_to, None))

    # -- compaction --------------------------------------------------------------------------

    async def run_compaction(
        self, args: Mapping[str, Any] | None = None, *, wrapper: Any = None
    ) -> None:
        """The runner's call after a turn without local tool outputs: compact at pi's
        threshold (``args["force"]`` compacts now). A failure writes nothing; ``last_outcome``
        says why."""
        force = bool((args or {}).get("force"))
        self.last_outcome = await self._compact(force)

    async def _compact(self, force: bool = False) -> CompactionOutcome:
        def attempt(engine: ContextEngine) -> Awaitable[CompactionOutcome]:
            if self.provider_compaction:
                return _settled(
                    CompactionOutcome(None, "the provider's compaction owns this history")
                )
            return engine.exclusive_compact(force=force, overhead=self.overhead)

        return await self._run(attempt)

    def _measure(self, data: CallModelData[Any]) -> None:
        tools: list[dict[str, Any]] = []
        for tool in getattr(data.agent, "tools", []) or []:
            if isinstance(tool, FunctionTool):
                tools.append(
                    {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": tool.params_json_schema,
                    }
                )
            else:
                tools.append({"name": getattr(tool, "name", "") or ""})
        self.overhead = overhead_tokens(data.model_data.instructions or "", tools)

    async def filter_input(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig(call_model_input_filter=session.filter_input)``: compact inside a tool
        loop when the context passes pi's threshold.

        The runner writes each turn to the session before the next model call, so the session
        holds what the input holds; when it compacts, the input becomes the session's new
        history plus any items not written yet. While nothing is compacted the input is passed
        as it came, so each request extends the previous one.
        """
        self._measure(data)
        given = list(data.model_data.input)
        outcome = await self._compact()
        if outcome.compacted:
            self.last_outcome = outcome
        sent = await self._run(lambda engine: engine.call(self._input_for, given))
        if sent is None:
            return data.model_data
        return ModelInputData(input=sent, instructions=data.model_data.instructions)

    def _input_for(self, given: list[Any]) -> list[Any] | None:
        """The session's history plus what ``given`` has after it, or ``None`` to send
        ``given`` as it came."""
        history = self._projected()
        if given[: len(history)] == history:
            return None
        tail = _unwritten(given, history)
        if tail is None:
            log.warning("pi-context: the model input does not match the session; sent as is")
            return None
        return self._items_copy() + tail

    def recall_tool(self, *, cache_dir: str | os.PathLike[str] | None = None) -> FunctionTool:
        """A ``function_tool`` the agent can call to get back what compaction replaced,
        verbatim (``Agent(tools=[..., session.recall_tool()])``)."""
        engine = self._ready if self._conversations is not None else self.engine
        return function_tool(
            recall_function(engine, cache_dir=cache_dir),
            name_override=RECALL_NAME,
            description_override=RECALL_DESCRIPTION,
        )

    @property
    def input_filter(self) -> Callable[[CallModelData[Any]], Any]:
        """The ``call_model_input_filter`` for this session (see :meth:`filter_input`)."""
        return self.filter_input


async def _settled(value: _R) -> _R:
    return value


def _unwritten(given: list[Any], history: list[Any]) -> list[Any] | None:
    """The items at the end of ``given`` that come after the session's newest item."""
    if not history:
        return given
    last = history[-1]
    for index in range(len(given) - 1, -1, -1):
        if given[index] == last:
            return given[index + 1 :]
    return None

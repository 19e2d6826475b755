"""The loop's callbacks into the session (:class:`~pi_context.agent._loop.LoopCallbacks`).

:class:`SessionLoopCallbacks` connects the loop to the session's collaborators: messages are persisted in the session file, tools run from the
loadout behind the extensions' ``tool_call`` gate and ``tool_result`` rewrite, between turns the
compaction control checks the threshold and the loadout patches the system prompt, the cache
tracker accounts each request, and the loop's notifications reach the extensions. The library
user never sees this object; :class:`~pi_context.agent.session.AgentSession` is their facade.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pi_context.events import CacheUpdate, ExtensionFailure
from pi_context.messages import (
    AgentMessage,
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    text_block,
)
from pi_context.model import ModelRequest, system_delivery_of
from pi_context.resources.settings import session_fsync_for
from pi_context.tools import ToolOutcome, UpdateCallback, run_tool

from . import _extension_hooks
from ._loop import RunResult
from ._state import AgentState
from .compaction_control import CompactionControl
from .loadout import Loadout
from .recovery import Recovery
from .stats import CacheTracker

if TYPE_CHECKING:
    from pi_context.events import AgentEvent

__all__ = ["SessionLoopCallbacks"]


class SessionLoopCallbacks:
    """Implements :class:`~pi_context.agent._loop.LoopCallbacks` over one agent session."""

    def __init__(
        self,
        state: AgentState,
        *,
        loadout: Loadout,
        compaction: CompactionControl,
        recovery: Recovery,
        cache: CacheTracker,
    ) -> None:
        self._state = state
        self._loadout = loadout
        self._compaction = compaction
        self._recovery = recovery
        self._cache = cache

    def persist(self, message: AgentMessage) -> str | None:
        session = self._state.session
        if message.get("role") == "custom":
            custom = cast(dict[str, Any], message)
            return session.append_custom_message(
                custom["customType"],
                custom["content"],
                custom.get("display", True),
                custom.get("details"),
            ).id
        return session.append_message(message).id

    async def execute_tool(self, call: ToolCall, on_update: UpdateCallback) -> ToolOutcome:
        tool = self._loadout.active_tool(call["name"])
        if tool is None:
            return ToolOutcome([text_block(f"Tool {call['name']} not found")], {}, True)
        runner = self._state.extensions
        blocked = await _extension_hooks.gate_tool_call(runner, call)
        if blocked is not None:
            return blocked
        outcome = await run_tool(
            tool, call["id"], call["arguments"], cwd=Path(self._state.cwd), on_update=on_update
        )
        return await _extension_hooks.rewrite_tool_result(runner, call, outcome)

    async def prepare_next_turn(self) -> list[AgentMessage]:
        """Between turns: the threshold compaction (or a batch of masked tool results), then
        the system-prompt patch."""
        session = self._state.session
        projection = session.stored_projection()
        if self._compaction.over_threshold(projection, session.branch_view()):
            await self._compaction.auto("threshold", will_retry=False)
            projection = session.stored_projection()
        elif self._compaction.mask_batch():
            projection = session.stored_projection()
        options = self._loadout.next_turn_options()
        patch = self._loadout.system_patch(options, projection.entries)
        return [patch] if patch is not None else []

    def after_request(self, request: ModelRequest, message: AssistantMessage) -> None:
        collapse = system_delivery_of(self._state.require_model()) == "collapse"
        record = self._cache.record(
            request.messages, request.tools, message["usage"], collapse=collapse
        )
        self._state.events.emit(
            CacheUpdate(
                record.index,
                record.input,
                record.cache_read,
                record.cache_write,
                self._cache.hit_ratio,
                record.miss_cause,
            )
        )

    async def after_turn(
        self, index: int, message: AssistantMessage, tool_results: Sequence[ToolResultMessage]
    ) -> bool:
        # The turn's entries are in the file: make them durable (the ``sessionFsync`` setting).
        session = self._state.session
        session.fsync = session_fsync_for(self._state.settings_data)
        session.sync()
        return await _extension_hooks.turn_end(
            self._state.extensions,
            self._state.session,
            index,
            message,
            tool_results,
            lambda error: self._state.events.emit(ExtensionFailure("turn_end", error)),
        )

    async def finalize_message(self, message: AgentMessage) -> AgentMessage:
        return await _extension_hooks.finalize_message(self._state.extensions, message)

    def will_retry(self, result: RunResult) -> bool:
        return self._recovery.will_retry(result)

    async def notify(self, event: AgentEvent) -> None:
        await _extension_hooks.notify(self._state.extensions, event)

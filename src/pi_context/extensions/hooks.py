"""Typed extension hooks: a class of async no-op methods, one per event.

::

    class Notes(ExtensionHooks):
        async def on_before_agent_start(
            self, event: BeforeAgentStartEvent, ctx: ExtensionContext
        ) -> BeforeAgentStartResult | None:
            event.set_section("team_notes", "Run `make check` before you finish.")
            return None

    def register(pi: ExtensionAPI) -> None:
        pi.add_hooks(Notes())

Override only the methods you need; each returns ``None`` or the event's typed result (which
replaces the proposal, as :mod:`pi_context.extensions.runner` describes per event). The
methods are registered like ``pi.on(name, fn)`` handlers (``on_<event name>``), in class order,
so both styles mix freely and follow the same rules. A method named ``on_...`` that matches no
event is an error naming the extension and the method.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pi_context.compaction.events import BeforeCompact, CompactionFailed, SessionCompact
from pi_context.errors import ExtensionError
from pi_context.events import (
    AgentEnd,
    AgentSettled,
    AgentStart,
    MessageStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnStart,
)
from pi_context.extensions.context import ExtensionContext
from pi_context.extensions.events import (
    EVENT_TYPES,
    AgentBeforeSettleEvent,
    BeforeAgentStartEvent,
    BeforeAgentStartResult,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    BoundaryResult,
    ContextEvent,
    ContextResult,
    ContextWithSystemEvent,
    InputEvent,
    InputResult,
    MessageEndEvent,
    MessageEndResult,
    MessageUpdateEvent,
    ModelSelectEvent,
    ResourcesDiscoverEvent,
    ResourcesDiscoverResult,
    SessionBeforeCompactResult,
    SessionBeforeForkEvent,
    SessionBeforeForkResult,
    SessionBeforeSwitchEvent,
    SessionBeforeSwitchResult,
    SessionBeforeTreeEvent,
    SessionBeforeTreeResult,
    SessionInfoChangedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    SessionTreeEvent,
    ThinkingLevelSelectEvent,
    ToolCallEvent,
    ToolCallResult,
    ToolResultEvent,
    ToolResultResult,
    TurnEndEvent,
)
from pi_context.extensions.ui_prompts import UIPromptEndEvent, UIPromptStartEvent

__all__ = ["ExtensionHooks", "hook_handlers"]


class ExtensionHooks:
    """Subclass and override the ``on_*`` methods you need; the rest do nothing."""

    # -- notifications: return values are ignored -------------------------------------------------

    async def on_session_start(self, event: SessionStartEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_session_shutdown(self, event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_agent_start(self, event: AgentStart, ctx: ExtensionContext) -> None:
        return None

    async def on_turn_start(self, event: TurnStart, ctx: ExtensionContext) -> None:
        return None

    async def on_message_start(self, event: MessageStart, ctx: ExtensionContext) -> None:
        return None

    async def on_message_update(self, event: MessageUpdateEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_tool_execution_start(
        self, event: ToolExecutionStart, ctx: ExtensionContext
    ) -> None:
        return None

    async def on_tool_execution_update(
        self, event: ToolExecutionUpdate, ctx: ExtensionContext
    ) -> None:
        return None

    async def on_tool_execution_end(self, event: ToolExecutionEnd, ctx: ExtensionContext) -> None:
        return None

    async def on_agent_end(self, event: AgentEnd, ctx: ExtensionContext) -> None:
        return None

    async def on_agent_settled(self, event: AgentSettled, ctx: ExtensionContext) -> None:
        return None

    async def on_session_compact(self, event: SessionCompact, ctx: ExtensionContext) -> None:
        return None

    async def on_session_compact_failed(
        self, event: CompactionFailed, ctx: ExtensionContext
    ) -> None:
        return None

    async def on_session_tree(self, event: SessionTreeEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_session_info_changed(
        self, event: SessionInfoChangedEvent, ctx: ExtensionContext
    ) -> None:
        return None

    async def on_model_select(self, event: ModelSelectEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_ui_prompt_start(self, event: UIPromptStartEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_ui_prompt_end(self, event: UIPromptEndEvent, ctx: ExtensionContext) -> None:
        return None

    async def on_thinking_level_select(
        self, event: ThinkingLevelSelectEvent, ctx: ExtensionContext
    ) -> None:
        return None

    # -- hooks that answer ----------------------------------------------------------------------

    async def on_input(self, event: InputEvent, ctx: ExtensionContext) -> InputResult | None:
        return None

    async def on_before_agent_start(
        self, event: BeforeAgentStartEvent, ctx: ExtensionContext
    ) -> BeforeAgentStartResult | None:
        return None

    async def on_context(self, event: ContextEvent, ctx: ExtensionContext) -> ContextResult | None:
        return None

    async def on_context_with_system(
        self, event: ContextWithSystemEvent, ctx: ExtensionContext
    ) -> ContextResult | None:
        return None

    async def on_before_provider_headers(
        self, event: BeforeProviderHeadersEvent, ctx: ExtensionContext
    ) -> None:
        return None

    async def on_before_provider_request(
        self, event: BeforeProviderRequestEvent, ctx: ExtensionContext
    ) -> dict[str, Any] | None:
        return None

    async def on_message_end(
        self, event: MessageEndEvent, ctx: ExtensionContext
    ) -> MessageEndResult | None:
        return None

    async def on_tool_call(
        self, event: ToolCallEvent, ctx: ExtensionContext
    ) -> ToolCallResult | None:
        return None

    async def on_tool_result(
        self, event: ToolResultEvent, ctx: ExtensionContext
    ) -> ToolResultResult | None:
        return None

    async def on_turn_end(
        self, event: TurnEndEvent, ctx: ExtensionContext
    ) -> BoundaryResult | None:
        return None

    async def on_agent_before_settle(
        self, event: AgentBeforeSettleEvent, ctx: ExtensionContext
    ) -> BoundaryResult | None:
        return None

    async def on_session_before_compact(
        self, event: BeforeCompact, ctx: ExtensionContext
    ) -> SessionBeforeCompactResult | None:
        return None

    async def on_session_before_tree(
        self, event: SessionBeforeTreeEvent, ctx: ExtensionContext
    ) -> SessionBeforeTreeResult | None:
        return None

    async def on_session_before_switch(
        self, event: SessionBeforeSwitchEvent, ctx: ExtensionContext
    ) -> SessionBeforeSwitchResult | None:
        return None

    async def on_session_before_fork(
        self, event: SessionBeforeForkEvent, ctx: ExtensionContext
    ) -> SessionBeforeForkResult | None:
        return None

    async def on_resources_discover(
        self, event: ResourcesDiscoverEvent, ctx: ExtensionContext
    ) -> ResourcesDiscoverResult | None:
        return None


HookHandler = Callable[[Any, ExtensionContext], Awaitable[Any]]


def hook_handlers(hooks: ExtensionHooks, extension: str) -> list[tuple[str, HookHandler]]:
    """``(event name, bound method)`` for every method ``hooks`` overrides, in event order.

    Raises :class:`~pi_context.errors.ExtensionError` for an ``on_*`` method that matches no
    event (a misspelt hook would otherwise never run)."""
    if not isinstance(hooks, ExtensionHooks):
        raise ExtensionError(
            f"add_hooks needs an ExtensionHooks instance, got {type(hooks).__name__}",
            extension=extension,
        )
    found: list[tuple[str, HookHandler]] = []
    for klass in type(hooks).__mro__:
        if klass is ExtensionHooks or klass is object:
            continue
        for name in vars(klass):
            if name.startswith("on_") and name[3:] not in EVENT_TYPES:
                raise ExtensionError(
                    f"hook method {name!r} of {type(hooks).__name__} matches no event",
                    extension=extension,
                )
    for name in vars(ExtensionHooks):
        if not name.startswith("on_"):
            continue
        if getattr(type(hooks), name) is not getattr(ExtensionHooks, name):
            found.append((name[3:], getattr(hooks, name)))
    return found

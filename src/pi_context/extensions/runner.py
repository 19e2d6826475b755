"""Dispatching events to extension handlers with pi's return-value rules.

Handlers run in extension load order, then registration order. A handler that raises is
reported (:class:`ExtensionFailure`, to every ``on_error`` listener) and skipped; the session
goes on. Per event family:

* notifications (:meth:`ExtensionRunner.emit`): return values are ignored;
* ``session_before_compact`` / ``_tree`` / ``_switch`` / ``_fork``: the last truthy result wins, and a
  result with ``cancel`` returns at once (later handlers do not run);
* ``before_agent_start``: every handler's ``message`` is collected in order; a
  ``system_prompt`` forces the run's prompt and is visible to later handlers;
* ``context`` then ``context_with_system``: see :meth:`ExtensionRunner.emit_context`;
* ``turn_end`` / ``agent_before_settle``: each returned field replaces the proposal;
* ``before_provider_headers``: handlers change the headers in place;
* ``before_provider_request``: a returned value replaces the payload (chained);
* ``message_end``: a returned message of the same role replaces the message;
* ``tool_call``: the first block wins; ``tool_result``: each returned field replaces;
* ``input``: text transforms chain, ``handled`` stops; ``resources_discover``: paths add up.
"""

from __future__ import annotations

import copy
import inspect
import re
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar, cast

from pi_context.compaction.events import BeforeCompact
from pi_context.events import ExtensionFailure
from pi_context.extensions.api import Extension, Handler, RegisteredCommand
from pi_context.extensions.context import (
    ExtensionActions,
    ExtensionCommandContext,
    ExtensionContext,
)
from pi_context.extensions.events import (
    AgentBeforeSettleEvent,
    BeforeAgentStartEvent,
    BeforeAgentStartResult,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    BoundaryResult,
    BranchSummaryDraft,
    CompactionDraft,
    ContextEvent,
    ContextResult,
    ContextWithSystemEvent,
    CustomMessageDraft,
    Event,
    InputEvent,
    InputResult,
    MessageEndEvent,
    MessageEndResult,
    ResourcesDiscoverEvent,
    ResourcesDiscoverResult,
    SessionBeforeCompactResult,
    SessionBeforeForkEvent,
    SessionBeforeForkResult,
    SessionBeforeSwitchEvent,
    SessionBeforeSwitchResult,
    SessionBeforeTreeEvent,
    SessionBeforeTreeResult,
    ToolCallEvent,
    ToolCallResult,
    ToolResultEvent,
    ToolResultResult,
    TurnEndEvent,
)
from pi_context.messages import AgentMessage
from pi_context.prompt.replay import get_current_system_message
from pi_context.tools.base import Tool

__all__ = ["BeforeAgentStartOutcome", "ExtensionRunner", "UnknownResultKeyError"]

R = TypeVar("R")
_FAILED = object()


@dataclass(frozen=True, slots=True)
class BeforeAgentStartOutcome:
    messages: list[CustomMessageDraft]
    """Every handler's custom message, in order (appended to the run's starting messages)."""
    system_prompt: str | None
    """The forced prompt for this run, when a handler set one."""
    selected_tools_changed: bool = False
    """Whether handlers changed ``selectedTools`` (same names in order = unchanged). When not,
    pi replaces the list by the live active tools, so ``pi.set_active_tools()`` wins."""


def _snake(key: str) -> str:
    if key == "continue":
        return "continue_"
    return re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), key)


_NESTED: dict[tuple[type, str], type] = {
    (BeforeAgentStartResult, "message"): CustomMessageDraft,
    (SessionBeforeCompactResult, "compaction"): CompactionDraft,
    (SessionBeforeTreeResult, "summary"): BranchSummaryDraft,
}
"""Result fields holding a draft, which a mapping result spells as a nested mapping."""


class UnknownResultKeyError(TypeError):
    """A handler's mapping result has a key its result type does not know (a typo such as
    ``{"cancell": True}`` would otherwise be ignored silently)."""


def _from_mapping(cls: type[R], value: dict[str, Any]) -> R:
    """Build a result dataclass from a JS-style mapping (camelCase keys accepted)."""
    names = {f.name for f in fields(cast(Any, cls))}
    kwargs: dict[str, Any] = {}
    for key, item in value.items():
        name = _snake(key) if isinstance(key, str) else str(key)
        if name not in names:
            known = ", ".join(sorted(names))
            raise UnknownResultKeyError(
                f"unknown key {key!r} in the {cls.__name__} result (known: {known})"
            )
        nested = _NESTED.get((cls, name))
        kwargs[name] = _from_mapping(nested, item) if nested and isinstance(item, dict) else item
    return cls(**kwargs)


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness: any object (even an empty one) is truthy."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return bool(value)
    return True


class ExtensionRunner:
    """Holds the loaded extensions and dispatches events to their handlers."""

    def __init__(
        self,
        extensions: Sequence[Extension] = (),
        *,
        cwd: Path | str = ".",
        load_errors: Sequence[Exception] = (),
    ) -> None:
        self.extensions = list(extensions)
        self.cwd = Path(cwd)
        self.load_errors: list[Exception] = list(load_errors)
        """Extensions that failed to import or register (each names its file)."""
        self.failures: list[ExtensionFailure] = []
        self._listeners: list[Callable[[ExtensionFailure], None]] = []
        self._host: ExtensionActions | None = None
        self._context_factory: Callable[[], ExtensionContext] = lambda: ExtensionContext(self.cwd)

    # --- wiring ---------------------------------------------------------------------------

    def bind_host(
        self,
        host: ExtensionActions | None,
        context_factory: Callable[[], ExtensionContext] | None = None,
    ) -> None:
        """Connect the live session: API actions go to ``host``; ``context_factory`` makes
        the ``ctx`` handlers receive."""
        self._host = host
        if context_factory is not None:
            self._context_factory = context_factory

    def host(self) -> ExtensionActions | None:
        return self._host

    def on_error(self, listener: Callable[[ExtensionFailure], None]) -> None:
        """Be told about every failing handler (the UI shows them; the run goes on)."""
        self._listeners.append(listener)

    def tools(self) -> list[Tool]:
        """Tools extensions registered, in load order."""
        return [tool for ext in self.extensions for tool in ext.tools]

    def commands(self) -> list[RegisteredCommand]:
        """Slash commands extensions registered, in load order, each under its invocation
        name: a name registered once stays bare; a name registered more than once (by several
        extensions or one twice) is ``<name>:<k>`` for its k-th registration in load order,
        ``k`` bumped past a name already taken, as pi names them."""
        registered = [cmd for ext in self.extensions for cmd in ext.commands]
        counts: dict[str, int] = {}
        for cmd in registered:
            counts[cmd.name] = counts.get(cmd.name, 0) + 1
        taken = {cmd.name for cmd in registered if counts[cmd.name] == 1}
        seen: dict[str, int] = {}
        named: list[RegisteredCommand] = []
        for cmd in registered:
            if counts[cmd.name] == 1:
                named.append(cmd)
                continue
            k = seen.get(cmd.name, 0) + 1
            while f"{cmd.name}:{k}" in taken:
                k += 1
            seen[cmd.name] = k
            taken.add(f"{cmd.name}:{k}")
            named.append(replace(cmd, name=f"{cmd.name}:{k}"))
        return named

    def command(self, name: str) -> RegisteredCommand | None:
        """The registered ``/name`` command, if any."""
        return next((cmd for cmd in self.commands() if cmd.name == name), None)

    async def run_command(self, name: str, args: str) -> bool:
        """Run the registered ``/name`` command with its argument text; ``False`` when no
        extension registered it. A command that raises is reported like a failing handler."""
        command = self.command(name)
        if command is None:
            return False
        ext = next(e for e in self.extensions if e.name == command.extension)
        try:
            result = command.handler(args, ExtensionCommandContext.of(self._context_factory()))
            if inspect.isawaitable(result):
                await result
        except Exception as exc:  # noqa: BLE001 - extension code must not break the session
            self._report(ext, f"/{name}", f"{type(exc).__name__}: {exc}", traceback.format_exc())
        return True

    def has_handlers(self, event_type: str) -> bool:
        return any(ext.handlers.get(event_type) for ext in self.extensions)

    def _handlers(self, event_type: str) -> Iterator[tuple[Extension, Handler]]:
        for ext in self.extensions:
            for handler in list(ext.handlers.get(event_type, ())):
                yield ext, handler

    def _report(self, ext: Extension, event_type: str, error: str, tb: str = "") -> None:
        failure = ExtensionFailure(event_type, error, extension=ext.name, traceback=tb)
        self.failures.append(failure)
        for listener in list(self._listeners):
            listener(failure)

    async def _call(self, ext: Extension, handler: Handler, event: Event) -> Any:
        """Run one handler; a raising handler is reported and yields ``_FAILED``."""
        try:
            result = handler(event, self._context_factory())
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # noqa: BLE001 - extension code must not break the session
            self._report(ext, event.type, f"{type(exc).__name__}: {exc}", traceback.format_exc())
            return _FAILED
        return result

    async def _ask(self, ext: Extension, handler: Handler, event: Event, cls: type[R]) -> R | None:
        """Run one handler and read what it returned as a ``cls`` (``None``: nothing usable)."""
        return self._result(ext, event, cls, await self._call(ext, handler, event))

    def _result(self, ext: Extension, event: Event, cls: type[R], value: Any) -> R | None:
        if value is None or value is _FAILED:
            return None
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            try:
                return _from_mapping(cls, value)
            except UnknownResultKeyError as exc:
                self._report(ext, event.type, f"extension {ext.name!r}: {exc}")
                return None
            except TypeError as exc:
                self._report(ext, event.type, f"bad result: {exc}")
                return None
        if not _js_truthy(value):
            return None
        self._report(
            ext, event.type, f"bad result type {type(value).__name__}, expected {cls.__name__}"
        )
        return None

    # --- notification events --------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        """Notify every handler of ``event``; return values are ignored."""
        for ext, handler in self._handlers(event.type):
            await self._call(ext, handler, event)

    # --- run start ------------------------------------------------------------------------

    async def emit_before_agent_start(
        self, event: BeforeAgentStartEvent
    ) -> BeforeAgentStartOutcome:
        messages: list[CustomMessageDraft] = []
        forced: str | None = None
        tools_before = event.selected_tools
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, BeforeAgentStartResult)
            if result is None:
                continue
            if result.message is not None:
                messages.append(result.message)
            if isinstance(result.system_prompt, str):
                forced = result.system_prompt
                event.system_prompt = forced
                _set_force_prompt(event.system_prompt_options, forced)
        return BeforeAgentStartOutcome(messages, forced, event.selected_tools != tools_before)

    # --- context chain --------------------------------------------------------------------

    async def emit_context(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        """The extension part of the transform-context chain (pi's ``emitContext``).

        Phase 1, ``context``: each handler sees the messages without system messages. When
        it changes them, the result is ``[replayed system head] + returned`` (the head
        carries the current prompt sections and tools), so a handler can prune or window the
        conversation without losing the system state; when it returns them unchanged, the
        system messages stay where they were. Phase 2, ``context_with_system``: handlers see
        and own the full transcript. The input list and its messages are never modified.
        """
        if not (
            self.has_handlers(ContextEvent.type) or self.has_handlers(ContextWithSystemEvent.type)
        ):
            return list(messages)
        current: list[AgentMessage] = copy.deepcopy(list(messages))
        for ext, handler in self._handlers(ContextEvent.type):
            visible = [m for m in current if m.get("role") != "system"]
            snapshot = list(visible)
            event = ContextEvent(visible)
            result = await self._ask(ext, handler, event, ContextResult)
            if result is not None and result.messages is not None:
                returned = list(result.messages)
            elif _changed(event.messages, snapshot):
                returned = list(event.messages)
            else:
                continue
            if not _changed(returned, snapshot):
                continue
            head = get_current_system_message(current)
            current = ([head] if head is not None else []) + returned
        for ext, handler in self._handlers(ContextWithSystemEvent.type):
            started_with_system = bool(current) and current[0].get("role") == "system"
            event2 = ContextWithSystemEvent(current)
            result = await self._ask(ext, handler, event2, ContextResult)
            current = (
                list(result.messages) if result and result.messages is not None else event2.messages
            )
            if started_with_system and not (current and current[0].get("role") == "system"):
                self._report(
                    ext, event2.type, "the transcript no longer starts with its system message"
                )
        return current

    async def emit_before_provider_headers(self, headers: dict[str, str | None]) -> None:
        """Every handler changes ``headers`` in place, in order (later ones see the changes)."""
        await self.emit(BeforeProviderHeadersEvent(headers))

    async def emit_before_provider_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload to send: each handler sees the one before it returned (``None`` keeps
        it). A value that is not an object is reported and the payload stays as it was."""
        current = payload
        for ext, handler in self._handlers(BeforeProviderRequestEvent.type):
            event = BeforeProviderRequestEvent(current)
            result = await self._call(ext, handler, event)
            if result is _FAILED or result is None:
                current = event.payload
                continue
            if not isinstance(result, dict):
                self._report(
                    ext,
                    event.type,
                    f"bad result type {type(result).__name__}, expected the payload object",
                )
                continue
            current = result
        return current

    # --- session_before_* -----------------------------------------------------------------

    async def _before(self, event: Event, cls: type[R]) -> R | None:
        kept: R | None = None
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, cls)
            if result is None:
                continue
            kept = result
            if getattr(result, "cancel", False):
                return result
        return kept

    async def emit_session_before_compact(
        self, event: BeforeCompact
    ) -> SessionBeforeCompactResult | None:
        """``cancel`` aborts the compaction; ``compaction`` replaces pi's summarizer."""
        return await self._before(event, SessionBeforeCompactResult)

    async def emit_session_before_tree(
        self, event: SessionBeforeTreeEvent
    ) -> SessionBeforeTreeResult | None:
        """``cancel`` stops the navigation; ``summary`` and the instruction/label overrides
        replace the navigation options."""
        return await self._before(event, SessionBeforeTreeResult)

    async def emit_session_before_switch(
        self, event: SessionBeforeSwitchEvent
    ) -> SessionBeforeSwitchResult | None:
        """``cancel`` keeps the current session (``/new``, ``/resume``)."""
        return await self._before(event, SessionBeforeSwitchResult)

    async def emit_session_before_fork(
        self, event: SessionBeforeForkEvent
    ) -> SessionBeforeForkResult | None:
        """``cancel`` keeps the current session (``/fork``, ``/clone``)."""
        return await self._before(event, SessionBeforeForkResult)

    # --- boundaries -----------------------------------------------------------------------

    async def emit_boundary(self, event: TurnEndEvent | AgentBeforeSettleEvent) -> BoundaryResult:
        """Let handlers replace the proposal (``entries`` to append, ``continue_``)."""
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, BoundaryResult)
            if result is None:
                continue
            if result.entries is not None:
                event.entries = list(result.entries)
            if result.continue_ is not None:
                event.continue_ = bool(result.continue_)
        return BoundaryResult(list(event.entries), event.continue_)

    # --- messages, tools, input -----------------------------------------------------------

    async def emit_message_end(self, event: MessageEndEvent) -> AgentMessage:
        """The finalized message, possibly replaced by handlers (same role only)."""
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, MessageEndResult)
            if result is None or result.message is None:
                continue
            if result.message.get("role") != event.message.get("role"):
                self._report(
                    ext,
                    event.type,
                    f"message_end may not change the role ({event.message.get('role')} -> "
                    f"{result.message.get('role')})",
                )
                continue
            event.message = result.message
        return event.message

    async def emit_tool_call(self, event: ToolCallEvent) -> ToolCallResult | None:
        """The first handler that blocks the call wins."""
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, ToolCallResult)
            if result is not None and result.block:
                return result
        return None

    async def emit_tool_result(self, event: ToolResultEvent) -> ToolResultResult:
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, ToolResultResult)
            if result is None:
                continue
            if result.content is not None:
                event.content = list(result.content)
            if result.details is not None:
                event.details = result.details
            if result.is_error is not None:
                event.is_error = result.is_error
        return ToolResultResult(event.content, event.details, event.is_error)

    async def emit_input(self, event: InputEvent) -> InputResult:
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, InputResult)
            if result is None:
                continue
            if result.handled:
                return InputResult(event.text, True)
            if result.text is not None:
                event.text = result.text
        return InputResult(event.text, False)

    async def emit_resources_discover(
        self, event: ResourcesDiscoverEvent
    ) -> ResourcesDiscoverResult:
        total = ResourcesDiscoverResult()
        for ext, handler in self._handlers(event.type):
            result = await self._ask(ext, handler, event, ResourcesDiscoverResult)
            if result is None:
                continue
            total.skill_paths.extend(result.skill_paths)
            total.prompt_paths.extend(result.prompt_paths)
            total.theme_paths.extend(result.theme_paths)
        return total


def _changed(current: Sequence[Any], snapshot: Sequence[Any]) -> bool:
    return len(current) != len(snapshot) or any(
        a is not b for a, b in zip(current, snapshot, strict=True)
    )


def _set_force_prompt(options: Any, text: str) -> None:
    """Record the forced prompt on the run's options (a mapping or an attribute object)."""
    if isinstance(options, dict):
        options["forceSystemPrompt"] = text
        return
    for name in ("force_system_prompt", "forceSystemPrompt"):
        if hasattr(options, name):
            setattr(options, name, text)
            return

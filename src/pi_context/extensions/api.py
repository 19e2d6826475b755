"""The API an extension sees: ``register(pi)`` receives an :class:`ExtensionAPI`.

::

    def register(pi):
        @pi.on("before_agent_start")
        def add_notes(event, ctx):
            event.set_section("team_notes", "Run `make check` before you finish.")

``pi.on(name, fn)`` is the pi-style adapter; the typed style is a subclass of
:class:`~pi_context.extensions.hooks.ExtensionHooks` given to ``pi.add_hooks(...)``. Handlers take ``(event, ctx)``, may be sync or async, and return ``None`` or the event's result
type (a plain ``dict`` with the same keys, camelCase or snake_case, is accepted too). Actions
that change the live session (tool loadout, messages, entries) go through the *host* — the
agent session binds one with :meth:`ExtensionRunner.bind_host`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from pi_context.errors import ExtensionError
from pi_context.extensions.context import (
    ExtensionActions,
    ExtensionCommandContext,
    ExtensionContext,
    ToolInfo,
)
from pi_context.extensions.events import EVENT_TYPES, CustomMessageDraft
from pi_context.extensions.hooks import ExtensionHooks, hook_handlers
from pi_context.tools.base import Tool
from pi_context.tools.registry import BUILTIN_TOOL_NAMES

__all__ = [
    "CommandHandler",
    "Extension",
    "ExtensionAPI",
    "Handler",
    "RegisteredCommand",
]

Handler = Callable[[Any, "ExtensionContext"], Any | Awaitable[Any]]
"""``(event, ctx) -> result | None`` (or an awaitable of it)."""

H = TypeVar("H", bound=Callable[..., Any])

CommandHandler = Callable[[str, "ExtensionCommandContext"], Any | Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class RegisteredCommand:
    name: str
    description: str
    handler: CommandHandler
    extension: str


@dataclass
class Extension:
    """One loaded extension: its name, where it came from, and what it registered."""

    name: str
    source: str
    """``agent``, ``project``, ``entry_point`` or ``path``."""
    path: str | None = None
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: list[Tool] = field(default_factory=list)
    commands: list[RegisteredCommand] = field(default_factory=list)


class ExtensionAPI:
    """The ``pi`` object handed to one extension's ``register(pi)``."""

    def __init__(self, extension: Extension, host: Callable[[], ExtensionActions | None]) -> None:
        self._extension = extension
        self._host = host

    @property
    def extension_name(self) -> str:
        return self._extension.name

    @overload
    def on(self, event: str) -> Callable[[H], H]: ...

    @overload
    def on(self, event: str, handler: H) -> H: ...

    def on(self, event: str, handler: H | None = None) -> H | Callable[[H], H]:
        """Subscribe ``handler`` to ``event``; without a handler, works as a decorator."""
        if event not in EVENT_TYPES:
            raise ExtensionError(f"unknown event {event!r}", extension=self._extension.name)
        if handler is None:

            def decorate(fn: H) -> H:
                return self.on(event, fn)

            return decorate
        self._extension.handlers.setdefault(event, []).append(handler)
        return handler

    def add_hooks(self, hooks: ExtensionHooks) -> None:
        """Register every ``on_*`` method ``hooks`` overrides (see
        :class:`~pi_context.extensions.hooks.ExtensionHooks`)."""
        for event, handler in hook_handlers(hooks, self._extension.name):
            self._extension.handlers.setdefault(event, []).append(handler)

    def register_tool(self, tool: Tool) -> None:
        """Offer a tool to the model. A tool with a built-in's name (``read``, ``bash``,
        ``edit``, ``write``) replaces the built-in when it says so (``replaces_builtin``, e.g.
        ``FunctionTool(..., replaces_builtin=True)``); otherwise it is refused."""
        if not isinstance(tool, Tool):
            raise ExtensionError(
                "register_tool needs a pi_context.tools.Tool", extension=self.extension_name
            )
        if tool.name in BUILTIN_TOOL_NAMES and not tool.replaces_builtin:
            raise ExtensionError(
                f"register_tool: {tool.name!r} is a built-in tool's name; set "
                "replaces_builtin=True on the tool to replace the built-in",
                extension=self.extension_name,
            )
        self._extension.tools.append(tool)

    def register_command(
        self, name: str, handler: CommandHandler, *, description: str = ""
    ) -> None:
        """Add a ``/name`` slash command (a leading ``/`` is dropped). An empty name or a
        handler that cannot be called is refused here, at registration."""
        if not isinstance(name, str) or not name.lstrip("/"):
            raise ExtensionError(
                "register_command needs a non-empty name", extension=self.extension_name
            )
        if not callable(handler):
            raise ExtensionError(
                f"register_command /{name}: the handler is not callable",
                extension=self.extension_name,
            )
        self._extension.commands.append(
            RegisteredCommand(name.lstrip("/"), description, handler, self.extension_name)
        )

    def _require_host(self, action: str) -> ExtensionActions:
        host = self._host()
        if host is None:
            raise ExtensionError(
                f"{action} is only available once a session runs (not during register)",
                extension=self.extension_name,
            )
        return host

    def get_active_tools(self) -> list[str]:
        return self._require_host("get_active_tools").get_active_tools()

    def get_all_tools(self) -> list[ToolInfo]:
        """Every tool the session has, active or not, in registration order."""
        return self._require_host("get_all_tools").get_all_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Change the active loadout; the prompt and declarations are patched next run or turn."""
        self._require_host("set_active_tools").set_active_tools(list(names))

    def send_message(
        self,
        custom_type: str,
        content: Any,
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool = False,
    ) -> None:
        """Add a ``custom`` message to the session (model-visible as user text)."""
        draft = CustomMessageDraft(custom_type, content, display, details)
        self._require_host("send_message").send_message(draft, trigger_turn=trigger_turn)

    def set_session_name(self, name: str) -> None:
        """Name the session as ``/name`` does (extensions get ``session_info_changed``)."""
        self._require_host("set_session_name").set_session_name(name)

    def get_session_name(self) -> str | None:
        """The session's name, ``None`` when it has none."""
        return self._require_host("get_session_name").get_session_name()

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        """Persist extension state as a ``custom`` entry (never sent to the model)."""
        self._require_host("append_entry").append_entry(custom_type, data)

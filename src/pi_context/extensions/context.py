"""What an extension handler is given: the :class:`ExtensionContext`, and the two seams the
agent session fills in, :class:`ExtensionActions` (actions on the live session) and
:class:`SessionControl` (the session object handlers see as ``ctx.session``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

from pi_context.errors import ExtensionError
from pi_context.extensions.events import CustomMessageDraft
from pi_context.session import Session

__all__ = [
    "ExtensionActions",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionUI",
    "SessionControl",
    "ToolInfo",
]


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """What ``pi.get_all_tools()`` says about one tool of the session, active or not."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """The JSON schema of its arguments."""
    prompt_guidelines: tuple[str, ...] = ()
    exposure: str = "direct"
    extension: str | None = None
    """The extension that registered it; ``None`` for the tools pictx ships (built-ins,
    ``recall``, MCP) and those given to ``AgentSession.create``."""


class ExtensionActions(Protocol):
    """What the running agent session offers extensions. Methods may be called from handlers."""

    def get_active_tools(self) -> list[str]: ...

    def get_all_tools(self) -> list[ToolInfo]: ...

    def set_active_tools(self, names: Sequence[str]) -> None: ...

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None: ...

    def append_entry(self, custom_type: str, data: Any = None) -> None: ...

    def set_session_name(self, name: str) -> None: ...

    def get_session_name(self) -> str | None: ...


class SessionControl(Protocol):
    """The agent session as handlers see it (``ctx.session``)."""

    @property
    def session(self) -> Session:
        """The session file (entries, tree, projection)."""
        ...

    @property
    def busy(self) -> bool: ...

    def abort(self) -> None: ...

    async def compact(self, instructions: str | None = None) -> Mapping[str, Any]: ...

    async def wait_idle(self) -> None: ...

    async def navigate(
        self,
        entry_id: str,
        *,
        summarize: bool = False,
        instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> Any: ...

    async def reload(self) -> None: ...

    def system_prompt_options(self) -> Any: ...


class ExtensionUI(Protocol):
    """``ctx.ui``: dialogs and status the front end offers (RPC mode forwards them to its
    client as ``extension_ui_request`` records). Dialogs return ``None`` / ``False`` when
    cancelled or when ``timeout`` (milliseconds) passes."""

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None: ...

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool: ...

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None: ...

    async def editor(self, title: str, prefill: str | None = None) -> str | None: ...

    def notify(self, message: str, notify_type: Any = None) -> None: ...

    def set_status(self, key: str, text: str | None = None) -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...


@dataclass
class ExtensionContext:
    """Passed to every handler: where the session runs and, when bound, the live session.

    ``session`` is the agent session (for ``ctx.session.compact(...)`` and the like; ``None``
    before one is bound); ``get_system_prompt`` returns the prompt as it currently stands;
    ``ui`` is the front end's :class:`ExtensionUI` when it has one (``has_ui``), and ``mode``
    names the front end (``"rpc"`` in RPC mode). ``is_project_trusted()`` says whether the
    project's own resources (``.pi/``, ``.agents/skills``) are honoured in this session, by a
    saved, command-line or default decision. ``shutdown()`` asks the front end to end the
    process in order (``session_shutdown`` first): in RPC mode once no command is being
    handled and the agent is idle; elsewhere (print mode, library use without a front end
    that listens) it does nothing.
    """

    cwd: Path
    session: SessionControl | None = None
    has_ui: bool = False
    signal: asyncio.Event | None = None
    get_system_prompt: Callable[[], str] = lambda: ""
    ui: ExtensionUI | None = None
    mode: str | None = None
    is_project_trusted: Callable[[], bool] = lambda: False
    shutdown: Callable[[], None] = lambda: None


@dataclass
class ExtensionCommandContext(ExtensionContext):
    """What a command handler gets (``pi.register_command``): the :class:`ExtensionContext`
    plus session control. These wait for the agent or change the session, so they are only
    offered to commands: from an event handler inside a run they would wait for themselves.
    Without a bound session they raise :class:`~pi_context.errors.ExtensionError`."""

    def _control(self, action: str) -> SessionControl:
        if self.session is None:
            raise ExtensionError(f"{action} needs a running session")
        return self.session

    def get_system_prompt_options(self) -> Any:
        """The base inputs of the system prompt as they stand (a read-only
        ``SystemPromptOptions``: change the prompt from ``before_agent_start``)."""
        return self._control("get_system_prompt_options").system_prompt_options()

    async def wait_for_idle(self) -> None:
        """Until the agent has settled (retries, compaction retries, queued messages)."""
        await self._control("wait_for_idle").wait_idle()

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> Any:
        """Move to ``target_id`` in the session tree as ``/tree`` does (``summarize`` leaves
        a summary of the branch left behind); raises while the agent or a compaction runs.
        Returns the navigation's result (``cancelled``, ``new_leaf_id``, ...)."""
        return await self._control("navigate_tree").navigate(
            target_id,
            summarize=summarize,
            instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )

    async def reload(self) -> None:
        """What ``/reload`` does: settings, context files, skills, templates and the system
        prompt files are read again (extensions stay loaded)."""
        await self._control("reload").reload()

    @classmethod
    def of(cls, ctx: ExtensionContext) -> ExtensionCommandContext:
        """The command context over the same session, front end and callbacks as ``ctx``."""
        return cls(**{f.name: getattr(ctx, f.name) for f in fields(ExtensionContext)})

"""What an extension handler is given: the :class:`ExtensionContext`, and the two seams the
agent session fills in, :class:`ExtensionHost` (actions on the live session) and
:class:`SessionControl` (the session object handlers see as ``ctx.session``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pi_context.extensions.events import CustomMessageDraft
from pi_context.session import Session

__all__ = ["ExtensionContext", "ExtensionHost", "SessionControl"]


class ExtensionHost(Protocol):
    """What the running agent session offers extensions. Methods may be called from handlers."""

    def get_active_tools(self) -> list[str]: ...

    def set_active_tools(self, names: Sequence[str]) -> None: ...

    def send_message(self, message: CustomMessageDraft, *, trigger_turn: bool = False) -> None: ...

    def append_entry(self, custom_type: str, data: Any = None) -> None: ...


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


@dataclass
class ExtensionContext:
    """Passed to every handler: where the session runs and, when bound, the live session.

    ``session`` is the agent session (for ``ctx.session.compact(...)`` and the like; ``None``
    before one is bound); ``get_system_prompt`` returns the prompt as it currently stands.
    """

    cwd: Path
    session: SessionControl | None = None
    has_ui: bool = False
    signal: asyncio.Event | None = None
    get_system_prompt: Callable[[], str] = lambda: ""

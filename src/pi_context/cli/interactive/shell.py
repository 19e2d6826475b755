"""What slash commands need from the interactive controller: the :class:`Shell` protocol.

:class:`pi_context.cli.interactive.mode.InteractiveShell` implements it; the commands
(:mod:`pi_context.cli.interactive.slash.commands`,
:mod:`pi_context.cli.interactive.slash.pickers`) use only this, so they can be tested without a
terminal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from rich.console import Console

from pi_context.cli.app.agent_api import AgentHost
from pi_context.cli.interactive.pickers.list import PickerSource

__all__ = ["Shell"]

T = TypeVar("T")


class Shell(Protocol):
    """What slash commands need from the interactive controller."""

    agent: AgentHost
    console: Console
    cwd: Path
    pickers: bool
    """Whether :meth:`pick` can show a picker (the input is a terminal)."""

    async def pick(self, source: PickerSource[T], query: str = "") -> T | None:
        """Show a list picker (:mod:`~pi_context.cli.interactive.pickers.list`); None: cancelled."""
        ...

    async def ask(self, question: str, default: str = "", *, secret: bool = False) -> str:
        """Read one line from the user (empty on cancel); a ``secret`` is not echoed."""
        ...

    async def send(self, text: str) -> None:
        """Run ``text`` as a user prompt, rendering the events."""
        ...

    async def busy(self, label: str, work: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``work`` with a spinner and abort on Esc/Ctrl-C."""
        ...

    def switch(self, agent: AgentHost) -> None:
        """Continue with another session."""
        ...

    def set_editor(self, text: str) -> None:
        """Pre-fill the next input line."""
        ...

    def editor_text(self) -> str:
        """What the next input line is pre-filled with."""
        ...

    def full_screen_io(self) -> tuple[Input, Output] | None:
        """The terminal for full-screen selectors; ``None`` for line-by-line use."""
        ...

    def request_quit(self) -> None: ...

"""What slash commands need from the interactive controller: the :class:`Shell` protocol.

:class:`pi_context.cli.interactive.mode.InteractiveShell` implements it; the slash commands
(:mod:`pi_context.cli.interactive.slash`) and ``/tree``'s selector flow use only this, so they
can be tested without a terminal. :func:`say` and :func:`show_last_exchanges` are the lines
they print alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol, TypeVar

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from rich.console import Console
from rich.text import Text

from pi_context.cli.app.agent_api import AgentApi
from pi_context.cli.interactive.pickers.list import PickerSource
from pi_context.export.document import entry_preview
from pi_context.session.store import Session

__all__ = ["Shell", "last_exchanges", "say", "show_last_exchanges"]

T = TypeVar("T")


class Shell(Protocol):
    """What slash commands need from the interactive controller."""

    agent: AgentApi
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

    async def busy(self, label: str, work: Callable[[], Awaitable[T]]) -> T | None:
        """Run ``work`` with a spinner; Esc/Ctrl-C aborts it (``None``)."""
        ...

    def switch(self, agent: AgentApi) -> None:
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


def say(shell: Shell, text: str, style: str = "") -> None:
    """One line of plain text (never markup) to the user."""
    shell.console.print(Text(text, style=style), soft_wrap=True)


def last_exchanges(session: Session, count: int = 4) -> list[tuple[str, str]]:
    """``(who, one-line preview)`` of the last ``count`` user and assistant messages of the
    current branch, oldest first."""
    shown = []
    for entry in session.branch_view():
        if entry.type == "message" and entry.role in ("user", "assistant"):
            preview = entry_preview(entry.data)
            if preview:
                shown.append(("you" if entry.role == "user" else "assistant", preview))
    return shown[-count:]


def show_last_exchanges(shell: Shell, *, heading: str | None = "Where it left off:") -> None:
    """Where the branch now ends (after ``/resume`` or a ``/tree`` move: pi re-renders the
    chat there)."""
    recent = last_exchanges(shell.agent.session)
    if recent and heading:
        say(shell, heading, "dim")
    for who, preview in recent:
        shell.console.print(Text.assemble((f"  {who}: ", "bold"), preview))

"""The interactive mode's rich console, showing text by the rule of
:mod:`pi_context.cli.terminal_text`: every text segment it renders (Markdown, tool output,
names, labels) goes through :func:`~pi_context.cli.terminal_text.terminal_safe`, and a
hyperlink whose target holds a control character is dropped."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

from pi_context.cli.terminal_text import UNSAFE, terminal_safe

__all__ = ["TerminalConsole"]


class TerminalConsole(Console):
    """A rich console that shows every text segment through :func:`terminal_safe`.

    Control segments (cursor motion of live displays, which rich itself makes) pass unchanged;
    a hyperlink whose target holds a control character is dropped (its text stays).
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control:
                yield segment
                continue
            link = style.link if style is not None else None
            if link and UNSAFE.search(link) and style is not None:
                style = style.update_link(None)
            elif not UNSAFE.search(text):
                yield segment
                continue
            yield Segment(terminal_safe(text), style, control)
